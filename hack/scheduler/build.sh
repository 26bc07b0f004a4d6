#!/usr/bin/env bash
# Build (or reuse) a real kube-scheduler for the local cluster and link it into a bin dir.
#
#   hack/scheduler/build.sh VERSION [LINK_DIR]   build or reuse, then symlink LINK_DIR/kube-scheduler-VERSION
#                                                 (LINK_DIR default: .dev-cluster/bin relative to the cwd)
#   hack/scheduler/build.sh --print-bin VERSION  print the cached binary's path (built or not)
#
# VERSION is a spreadwatch profile name:
#   v1.36  kube-scheduler of KUBERNETES_VERSION (hack/controlplane/versions.env, v1.36.4), built from the
#          control-plane module hack/controlplane/kube (its go.sum already covers cmd/kube-scheduler)
#   v1.28  kube-scheduler v1.28.15, the last release with SelectorSpread, from the module hack/scheduler/v1.28
#          (its configuration must be kubescheduler.config.k8s.io/v1beta3)
# The binary lives outside the repo in
#   ${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/scheduler/<VERSION>-<key>/kube-scheduler
# where <key> hashes the module's go.mod/go.sum, the Go toolchain and the build flags; a complete entry is
# reused without invoking the compiler. GOMODCACHE and GOCACHE stay at Go's defaults.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONTROLPLANE=$(cd "$HERE/../controlplane" && pwd)

die() { echo "scheduler/build.sh: $*" >&2; exit 1; }
log() { echo "scheduler: $*" >&2; }
# shellcheck source=hack/kube-build.sh
source "$HERE/../kube-build.sh"

command -v go >/dev/null || die "go is not on PATH"

print_bin=false
if [[ "${1:-}" == "--print-bin" ]]; then print_bin=true; shift; fi
case "${1:-}" in
  v1.36)
    MODULE_DIR="$CONTROLPLANE/kube"
    KUBE_VERSION=$(env_value "$CONTROLPLANE/versions.env" KUBERNETES_VERSION)
    BUILD_DATE=$(env_value "$CONTROLPLANE/release.env" KUBERNETES_BUILD_DATE)
    ;;
  v1.28)
    MODULE_DIR="$HERE/v1.28"
    KUBE_VERSION=$(env_value "$HERE/v1.28/release.env" KUBERNETES_VERSION)
    BUILD_DATE=$(env_value "$HERE/v1.28/release.env" KUBERNETES_BUILD_DATE)
    ;;
  -h|--help|"") sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; [[ -n "${1:-}" ]]; exit $? ;;
  *) die "unknown version '$1' (expected v1.36 or v1.28)" ;;
esac
VERSION=$1
LINK_DIR="${2:-.dev-cluster/bin}"

LDFLAGS=$(kube_ldflags "$KUBE_VERSION" "$BUILD_DATE")
TAGS=$KUBE_TAGS
FLAGS=(-trimpath -buildvcs=false -mod=readonly)
export CGO_ENABLED=0

key=$(
  {
    cat "$MODULE_DIR/go.mod" "$MODULE_DIR/go.sum"
    go env GOVERSION GOOS GOARCH
    echo "CGO_ENABLED=$CGO_ENABLED ${FLAGS[*]} $TAGS $LDFLAGS"
  } | sha256sum | cut -c1-12
)
ENTRY="${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/scheduler/$VERSION-$KUBE_VERSION-$key"
BIN="$ENTRY/kube-scheduler"
if $print_bin; then echo "$BIN"; exit 0; fi

mkdir -p "$ENTRY"
if [[ ! -x "$BIN" ]]; then
  exec 9>"$ENTRY/lock"  # serialise concurrent builds of the same key
  flock 9
  if [[ ! -x "$BIN" ]]; then
    start=$SECONDS
    tmp="$ENTRY/kube-scheduler.partial.$$"
    trap 'rm -f "$tmp"' EXIT
    log "building kube-scheduler $KUBE_VERSION from $MODULE_DIR (first time: a few minutes)"
    (cd "$MODULE_DIR" && go build "${FLAGS[@]}" -tags "$TAGS" -ldflags "$LDFLAGS" -o "$tmp" \
      k8s.io/kubernetes/cmd/kube-scheduler)
    mv -f "$tmp" "$BIN"
    trap - EXIT
    echo "kube-scheduler $KUBE_VERSION $(go env GOVERSION) built $(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "in $((SECONDS - start))s" >"$ENTRY/build-info.txt"
    log "built $BIN in $((SECONDS - start))s"
  fi
  flock -u 9
else
  log "reusing $BIN"
fi
mkdir -p "$LINK_DIR"
ln -sfn "$BIN" "$LINK_DIR/kube-scheduler-$VERSION"
