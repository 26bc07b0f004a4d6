# hack/kube-build.sh — sourced by hack/node/build.sh and hack/scheduler/build.sh: what their builds of
# Kubernetes components share (each defines die() first).
# shellcheck shell=bash

# env_value FILE KEY -> the value of the last KEY=... line of FILE (dies when there is none)
env_value() {
  local value
  value=$(sed -n "s/^$2=\(.*\)$/\1/p" "$1" | tail -n1)
  [[ -n "$value" ]] || die "$2 missing from $1"
  echo "$value"
}

# kube_ldflags VERSION BUILD_DATE -> -ldflags of a release build: stripped, and the version stamped into the
# packages upstream's hack/lib/version.sh stamps (`kubelet --version` says VERSION)
kube_ldflags() {
  local minor pkg flags="-s -w"
  minor=$(echo "$1" | cut -d. -f2)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$1 -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitCommit= -X $pkg.gitTreeState=clean -X $pkg.buildDate=$2"
  done
  echo "$flags"
}

# The build tags of upstream's release builds (hack/lib/golang.sh).
KUBE_TAGS="selinux,notest,grpcnotrace"
