# hack/image/common.sh — sourced by hack/image/{base,build}.sh: paths, the private buildah store, the lock.
# shellcheck shell=bash
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IMAGE_CACHE=${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/image
# A buildah store of our own (vfs: no overlay/fuse needed, works in containers), not the host's default.
STORE=$IMAGE_CACHE/storage
mkdir -p "$STORE"

bah() { buildah --root "$STORE/root" --runroot "$STORE/run" --storage-driver vfs "$@"; }

# One build at a time per cache (two worktrees may share it); build.sh holds it while it runs base.sh.
if [ -z "${SPREADWATCH_IMAGE_LOCKED:-}" ]; then
    exec 9>"$IMAGE_CACHE/lock"
    flock 9
    export SPREADWATCH_IMAGE_LOCKED=1
fi

# The Dockerfile's base image (every stage uses the same one; tests/chart/test_dockerfile.py checks it).
base_name() { awk 'toupper($1) == "FROM" { print $2; exit }' "$ROOT/Dockerfile"; }
