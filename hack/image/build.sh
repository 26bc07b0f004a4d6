#!/usr/bin/env bash
# hack/image/build.sh [OUT] — `make image`: build the repository's Dockerfile offline and write it as an OCI
# image-layout archive (default build/spreadwatch.oci.tar), image name spreadwatch:<pyproject version>.
#
# 1. hack/image/base.sh: the stand-in for the Dockerfile's FROM image (Debian packages; cached by its inputs).
# 2. `buildah bud --isolation chroot` (daemonless, vfs storage, --pull=never): pip in the builder stage reaches
#    the package index through the host's CA bundle (mounted read-only at /etc/xdg/pip with a pip.conf naming
#    it; neither ends up in the image) and installs only the versions pinned in hack/image/constraints.txt.
# 3. `buildah push` to oci-archive:OUT:spreadwatch:<version>; prints "spreadwatch:<version> <manifest digest>".
#
# Reproducible: SOURCE_DATE_EPOCH (default: the last commit's time) is both --timestamp (image, history and
# every file time) and a build argument (pip then writes hash-based .pyc), so two builds of one tree give the
# same manifest digest (tests/image/test_image_build.py). Costs ~30-60 s with a cached base.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OUT=${1:-$ROOT/build/spreadwatch.oci.tar}
VERSION=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' \
    "$ROOT/pyproject.toml")
NAME=spreadwatch:$VERSION
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}
CA=${SPREADWATCH_IMAGE_CA:-/etc/ssl/certs/ca-certificates.crt}
[ -r "$CA" ] || { echo "build.sh: no CA bundle at $CA (set SPREADWATCH_IMAGE_CA)" >&2; exit 1; }

bash "$ROOT/hack/image/base.sh" >/dev/null

work=$(mktemp -d "$IMAGE_CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# pip's site-wide configuration directory (XDG): an empty directory in the stand-in base, so the mount leaves
# no trace; pip.conf there names the host's CA bundle mounted beside it.
mkdir "$work/pip"
cp "$CA" "$work/pip/ca.crt"
printf '[global]\ncert = /etc/xdg/pip/ca.crt\n' > "$work/pip/pip.conf"
BUILT=localhost/spreadwatch-build:$VERSION
bah bud --quiet --isolation chroot --pull=never --identity-label=false --layers=false \
    --timestamp "$EPOCH" --build-arg "SOURCE_DATE_EPOCH=$EPOCH" \
    -v "$work/pip:/etc/xdg/pip:ro" \
    -f "$ROOT/Dockerfile" -t "$BUILT" "$ROOT" >/dev/null

mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
bah push --quiet --digestfile "$work/digest" "$BUILT" "oci-archive:$OUT:$NAME"
bah rmi "$BUILT" >/dev/null
bah rmi --prune >/dev/null 2>&1 || true  # intermediate (builder) images: the vfs store keeps full copies
echo "$NAME $(cat "$work/digest")"
