#!/usr/bin/env bash
# Build (or reuse) the local node's binaries and its sandbox image, and link them into a bin dir.
#
#   hack/node/build.sh [LINK_DIR]       build or reuse, then symlink into LINK_DIR (default: .dev-cluster/bin)
#   hack/node/build.sh --print-bin-dir  print the cache bin dir
#
# What it makes, in ${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/node/<key>/bin/:
#   kubelet, kube-proxy  k8s.io/kubernetes at the control plane's KUBERNETES_VERSION, built from a copy of
#                        hack/controlplane/kube (its go.mod pins every k8s.io module); `-mod=mod` because the
#                        kubelet's streaming packages need go.sum lines that the control-plane module lacks:
#                        the copy gets them, the repository's go.sum stays as generated.
#   crictl               sigs.k8s.io/cri-tools at CRI_TOOLS_VERSION (hack/node/versions.env), `go install`.
#   pause                hack/node/pause.c, static (gcc), the pods' sandbox process.
#   pause.oci.tar        an OCI image layout (umoci) with /pause as entrypoint: containerd's sandbox_image,
#                        imported at node start, so nothing is pulled.
# <key> hashes the versions, the go.mod/go.sum, pause.c, this script and the Go toolchain. A complete entry is
# reused without invoking a compiler (0.1 s). Needs go, gcc with a static libc (libc6-dev) and umoci.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONTROLPLANE=$(cd "$HERE/../controlplane" && pwd)
BINS=(kubelet kube-proxy crictl pause pause.oci.tar)

die() { echo "node/build.sh: $*" >&2; exit 1; }
log() { echo "node: $*" >&2; }
# shellcheck source=hack/kube-build.sh
source "$HERE/../kube-build.sh"

for tool in go gcc umoci; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH (make node-tools installs the Debian packages)"
done
KUBERNETES_VERSION=$(env_value "$CONTROLPLANE/versions.env" KUBERNETES_VERSION)
KUBE_BUILD_DATE=$(env_value "$CONTROLPLANE/release.env" KUBERNETES_BUILD_DATE)
CRI_TOOLS_VERSION=$(env_value "$HERE/versions.env" CRI_TOOLS_VERSION)
GO_VERSION=$(go env GOVERSION)
LDFLAGS=$(kube_ldflags "$KUBERNETES_VERSION" "$KUBE_BUILD_DATE")
TAGS=$KUBE_TAGS
FLAGS=(-trimpath -buildvcs=false)
export CGO_ENABLED=0

KEY=$(
  {
    cat "$CONTROLPLANE/versions.env" "$CONTROLPLANE/release.env" "$CONTROLPLANE/kube/go.mod" \
        "$CONTROLPLANE/kube/go.sum" "$HERE/versions.env" "$HERE/pause.c" "${BASH_SOURCE[0]}" "$HERE/../kube-build.sh"
    echo "$GO_VERSION $(go env GOOS) $(go env GOARCH) $(gcc -dumpfullversion)"
  } | sha256sum | cut -c1-12
)
ENTRY="${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/node/k8s-$KUBERNETES_VERSION-crictl-$CRI_TOOLS_VERSION-$KEY"
BIN_DIR="$ENTRY/bin"
case "${1:-}" in
  --print-bin-dir) echo "$BIN_DIR"; exit 0 ;;
  -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
LINK_DIR="${1:-.dev-cluster/bin}"

complete() { local b; for b in "${BINS[@]}"; do [[ -s "$1/$b" ]] || return 1; done; }

pause_image() { # OUT_DIR: pause (static) and pause.oci.tar
  local out=$1 work
  work=$(mktemp -d "$ENTRY/pause.XXXXXX")
  gcc -static -O2 -Wall -Wextra -Werror -o "$out/pause" "$HERE/pause.c"
  umoci init --layout "$work/layout"
  umoci new --image "$work/layout:latest"
  umoci unpack --image "$work/layout:latest" "$work/bundle" >/dev/null
  install -m 0755 "$out/pause" "$work/bundle/rootfs/pause"
  umoci repack --image "$work/layout:latest" "$work/bundle"
  umoci config --image "$work/layout:latest" --config.entrypoint /pause --config.user 65535:65535
  umoci gc --layout "$work/layout"
  tar -C "$work/layout" -cf "$out/pause.oci.tar" .
  rm -rf "$work"
}

build_entry() {
  local partial="$ENTRY/bin.partial.$$" src="$ENTRY/src.$$" start=$SECONDS
  rm -rf "$partial" "$src"
  mkdir -p "$partial" "$src"
  trap 'rm -rf "$partial" "$src"' EXIT
  log "building into $ENTRY"
  cp -r "$CONTROLPLANE/kube/go.mod" "$CONTROLPLANE/kube/go.sum" "$CONTROLPLANE/kube/cmd" "$src/"
  log "go build: kubelet, kube-proxy ($KUBERNETES_VERSION)"
  (cd "$src" && go build -mod=mod "${FLAGS[@]}" -tags "$TAGS" -ldflags "$LDFLAGS" -o "$partial/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
  log "go install: crictl ($CRI_TOOLS_VERSION)"
  GOBIN="$partial" go install "${FLAGS[@]}" -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION" \
    "sigs.k8s.io/cri-tools/cmd/crictl@$CRI_TOOLS_VERSION"
  pause_image "$partial"
  complete "$partial" || die "build finished but files are missing in $partial"
  rm -rf "$BIN_DIR" "$src"
  mv "$partial" "$BIN_DIR"
  trap - EXIT
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ) seconds=$((SECONDS - start)) go=$GO_VERSION" >"$ENTRY/build-info.txt"
  log "build finished in $((SECONDS - start))s"
}

mkdir -p "$ENTRY"
if ! complete "$BIN_DIR"; then
  exec 9>"$ENTRY/lock"  # one build of a key at a time (make + pytest, two worktrees)
  flock 9
  complete "$BIN_DIR" || build_entry
  flock -u 9
fi
mkdir -p "$LINK_DIR"
for b in "${BINS[@]}"; do ln -sfn "$BIN_DIR/$b" "$LINK_DIR/$b"; done
log "$LINK_DIR -> $BIN_DIR (kubelet, kube-proxy, crictl, pause)"
