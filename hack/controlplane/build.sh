#!/usr/bin/env bash
# Build (or reuse) the local control-plane binaries and link them into a bin dir.
#
#   hack/controlplane/build.sh [LINK_DIR]     build or reuse, then symlink into LINK_DIR
#                                              (default: .dev-cluster/bin relative to the cwd)
#   hack/controlplane/build.sh --print-key     print the cache key
#   hack/controlplane/build.sh --print-bin-dir print the cache bin dir
#
# Binaries: kube-apiserver, kube-controller-manager, kubectl, etcd (module kube/) and
# helm (module helm/). They live outside the repo in
#   ${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/controlplane/<key>/bin/
# where <key> names the pinned versions, the Go toolchain and a hash of the go.mod/go.sum
# files and build flags. A complete cache entry is reused without invoking the compiler.
# The Go module and build caches stay at Go's defaults (GOMODCACHE, GOCACHE) unless set.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBE_BINS=(kube-apiserver kube-controller-manager kubectl etcd)
HELM_BINS=(helm)
ALL_BINS=("${KUBE_BINS[@]}" "${HELM_BINS[@]}")

die() { echo "controlplane/build.sh: $*" >&2; exit 1; }
log() { echo "controlplane: $*" >&2; }

command -v go >/dev/null || die "go is not on PATH (Go >= the go directive in $HERE/kube/go.mod is required)"

versions_value() { # KEY -> value from versions.env
  local value
  value=$(sed -n "s/^$1=\(.*\)$/\1/p" "$HERE/versions.env" | tail -n1)
  [[ -n "$value" ]] || die "$1 missing from $HERE/versions.env"
  echo "$value"
}
gomod_version() { # MODULE GOMOD -> version required there
  awk -v m="$1" '$1 == "require" { $1 = ""; $0 = $0 } $1 == m && $2 ~ /^v/ { print $2; exit }' "$2"
}

KUBERNETES_VERSION=$(versions_value KUBERNETES_VERSION)
HELM_VERSION=$(versions_value HELM_VERSION)
ETCD_VERSION=$(gomod_version go.etcd.io/etcd/server/v3 "$HERE/kube/go.mod")
[[ -n "$ETCD_VERSION" ]] || die "go.etcd.io/etcd/server/v3 not in kube/go.mod; run the controlplane-gen target"
[[ "$(gomod_version k8s.io/kubernetes "$HERE/kube/go.mod")" == "$KUBERNETES_VERSION" ]] \
  || die "kube/go.mod does not match KUBERNETES_VERSION=$KUBERNETES_VERSION; run the controlplane-gen target"
[[ "$(gomod_version helm.sh/helm/v3 "$HERE/helm/go.mod")" == "$HELM_VERSION" ]] \
  || die "helm/go.mod does not match HELM_VERSION=$HELM_VERSION; run the controlplane-gen target"

GO_VERSION=$(go env GOVERSION)
# Fail clearly instead of letting GOTOOLCHAIN=auto try to download a newer Go (no internet).
need_go=$(awk '$1 == "go" { print $2; exit }' "$HERE/kube/go.mod")
have_go=${GO_VERSION#go}
if [[ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -n1)" != "$need_go" ]]; then
  die "Go $need_go or newer is required (the go directive of k8s.io/kubernetes $KUBERNETES_VERSION); found $GO_VERSION"
fi
GOOS=$(go env GOOS)
GOARCH=$(go env GOARCH)

# --- version stamping -------------------------------------------------------------
# buildDate is the release's publication time on the module proxy (release.env, written by
# gen-replaces.py), so that the binaries are reproducible. The proxy carries no git commit,
# so gitCommit is set empty (left alone it would read "$Format:%H$").
release_value() { # KEY -> value from release.env
  local value
  value=$(sed -n "s/^$1=\(.*\)$/\1/p" "$HERE/release.env" 2>/dev/null | tail -n1)
  [[ -n "$value" ]] || die "$1 missing from $HERE/release.env; run the controlplane-gen target"
  echo "$value"
}
[[ "$(release_value ETCD_VERSION)" == "$ETCD_VERSION" ]] \
  || die "release.env and kube/go.mod disagree on the etcd version; run the controlplane-gen target"
kube_minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
KUBE_BUILD_DATE=$(release_value KUBERNETES_BUILD_DATE)
KUBE_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  KUBE_LDFLAGS+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor"
  KUBE_LDFLAGS+=" -X $pkg.gitCommit= -X $pkg.gitTreeState=clean -X $pkg.buildDate=$KUBE_BUILD_DATE"
done
KUBE_LDFLAGS+=" -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION"
KUBE_TAGS="selinux,notest,grpcnotrace" # what upstream hack/lib/golang.sh uses for release builds

helm_k8s=$(gomod_version k8s.io/client-go "$HERE/helm/go.mod") # v0.X.Y -> Kubernetes 1.X
HELM_LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
HELM_LDFLAGS+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  HELM_LDFLAGS+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$(echo "$helm_k8s" | cut -d. -f2)"
done

COMMON_FLAGS=(-trimpath -buildvcs=false)
export CGO_ENABLED=0

# --- cache key --------------------------------------------------------------------
cache_key() {
  local digest
  digest=$(
    {
      cat "$HERE/versions.env" "$HERE/release.env" "$HERE/kube/go.mod" "$HERE/kube/go.sum" "$HERE/helm/go.mod" \
          "$HERE/helm/go.sum" "$HERE/kube/cmd/etcd/main.go"
      echo "$GO_VERSION $GOOS $GOARCH CGO_ENABLED=$CGO_ENABLED ${COMMON_FLAGS[*]}"
      echo "$KUBE_TAGS $KUBE_LDFLAGS"
      echo "$HELM_LDFLAGS"
    } | sha256sum | cut -c1-12
  )
  echo "k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION-$GO_VERSION-$GOOS-$GOARCH-$digest"
}

CACHE_ROOT="${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/controlplane"
KEY=$(cache_key)
ENTRY="$CACHE_ROOT/$KEY"
BIN_DIR="$ENTRY/bin"

case "${1:-}" in
  --print-key) echo "$KEY"; exit 0 ;;
  --print-bin-dir) echo "$BIN_DIR"; exit 0 ;;
  -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
LINK_DIR="${1:-.dev-cluster/bin}"

complete() { # DIR -> all binaries present
  local b
  for b in "${ALL_BINS[@]}"; do [[ -x "$1/$b" ]] || return 1; done
}

build_module() { # MODULE_DIR OUT_DIR TAGS LDFLAGS PKG...
  local dir=$1 out=$2 tags=$3 ldflags=$4; shift 4
  local start=$SECONDS
  log "go build ($(basename "$dir")): $*"
  (cd "$dir" && go build "${COMMON_FLAGS[@]}" -tags "$tags" -ldflags "$ldflags" -o "$out/" "$@")
  log "built $(basename "$dir") module in $((SECONDS - start))s"
}

build_entry() {
  local partial="$ENTRY/bin.partial.$$" start=$SECONDS
  rm -rf "$partial"
  mkdir -p "$partial"
  trap 'rm -rf "$partial"' EXIT
  log "building into $ENTRY (GOCACHE=$(go env GOCACHE), GOMODCACHE=$(go env GOMODCACHE))"
  build_module "$HERE/kube" "$partial" "$KUBE_TAGS" "$KUBE_LDFLAGS" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl ./cmd/etcd
  build_module "$HERE/helm" "$partial" "" "$HELM_LDFLAGS" helm.sh/helm/v3/cmd/helm
  complete "$partial" || die "build finished but binaries are missing in $partial"
  rm -rf "$BIN_DIR"
  mv "$partial" "$BIN_DIR"
  trap - EXIT
  {
    echo "key=$KEY"
    echo "kubernetes=$KUBERNETES_VERSION etcd=$ETCD_VERSION helm=$HELM_VERSION go=$GO_VERSION"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) seconds=$((SECONDS - start))"
  } >"$ENTRY/build-info.txt"
  log "build finished in $((SECONDS - start))s"
}

mkdir -p "$ENTRY"
if complete "$BIN_DIR"; then
  log "reusing $BIN_DIR"
else
  # Serialise concurrent builds of the same key (two make invocations, pytest + make, ...).
  exec 9>"$ENTRY/lock"
  flock 9
  if complete "$BIN_DIR"; then
    log "reusing $BIN_DIR (built by a concurrent run)"
  else
    build_entry
  fi
  flock -u 9
fi

mkdir -p "$LINK_DIR"
for b in "${ALL_BINS[@]}"; do
  ln -sfn "$BIN_DIR/$b" "$LINK_DIR/$b"
done
log "$LINK_DIR -> $BIN_DIR"
