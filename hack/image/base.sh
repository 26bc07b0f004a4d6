#!/usr/bin/env bash
# hack/image/base.sh — the stand-in for the Dockerfile's FROM image, built from Debian packages.
#
# No container registry is reachable here, so python:X.Y.Z-slim-bookworm cannot be pulled. This builds a
# stand-in: `mmdebstrap --variant=minbase` (bookworm, from the host's apt sources, i.e. its mirror
# configuration) with python3, python3-venv and ca-certificates, a venv at /usr/local (pip and console scripts
# in /usr/local/bin, as in python:slim), then hack/image/Containerfile.base on top, tagged with the FROM name in
# the private buildah store (hack/image/common.sh). Its Python is Debian's 3.11 (3.11.2), not python:slim's.
#
# /etc/hosts, an empty /etc/resolv.conf (not the host's) and an empty /etc/xdg/pip exist so that the bind mounts
# of a build (buildah's own, and build.sh's pip configuration) land on existing paths and leave nothing behind
# in the image's layers.
#
# Cached by its inputs: the key hashes this script, Containerfile.base, the FROM name, the host's apt sources
# and the mmdebstrap version. A hit costs ~1 s (re-tag); a miss ~1-2 min (download + unpack ~30 MiB of .debs).
# Prints the key. Deterministic for given package versions: SOURCE_DATE_EPOCH is fixed (file times and
# hash-based .pyc from py3compile and ensurepip).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BASE=$(base_name)
BASE_EPOCH=1704067200  # 2024-01-01T00:00:00Z, fixed: the base's timestamps do not depend on the commit
mapfile -t SOURCES < <(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
    2>/dev/null | while read -r f; do [ -s "$f" ] && grep -qE '^[^#]*(deb|Types:)' "$f" && echo "$f"; done)
[ ${#SOURCES[@]} -gt 0 ] || { echo "base.sh: no apt sources under /etc/apt" >&2; exit 1; }

KEY=$( { cat "$0" "$ROOT/hack/image/Containerfile.base" "${SOURCES[@]}"; echo "$BASE"; mmdebstrap --version;
         dpkg --print-architecture; } | sha256sum | cut -c1-16)
KEYED=localhost/spreadwatch-stand-in-base:$KEY

if ! bah inspect --type image "$KEYED" >/dev/null 2>&1; then
    work=$(mktemp -d "$IMAGE_CACHE/base.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    echo "base.sh: building the stand-in for $BASE with mmdebstrap (key $KEY)" >&2
    # shellcheck disable=SC2016  # $1 is mmdebstrap's hook argument (the root directory)
    SOURCE_DATE_EPOCH=$BASE_EPOCH mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
        --include=python3,python3-venv,ca-certificates \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --customize-hook='chroot "$1" env SOURCE_DATE_EPOCH='"$BASE_EPOCH"' python3 -m venv /usr/local' \
        --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/info/*' \
        --customize-hook='rm -f "$1"/var/log/*.log "$1"/var/cache/ldconfig/aux-cache' \
        --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" > "$1"/etc/hosts' \
        --customize-hook=': > "$1"/etc/resolv.conf; mkdir -p "$1"/etc/xdg/pip' \
        bookworm "$work/rootfs.tar" "${SOURCES[@]}"
    cp "$ROOT/hack/image/Containerfile.base" "$work/Containerfile"
    bah bud --quiet --isolation chroot --pull=never --identity-label=false --timestamp "$BASE_EPOCH" \
        -f "$work/Containerfile" -t "$KEYED" "$work" >/dev/null
    # Stand-ins of older inputs are never used again: drop them (each is a full copy in the vfs store).
    bah images --format '{{.Name}}:{{.Tag}}' | grep '^localhost/spreadwatch-stand-in-base:' | grep -v ":$KEY\$" \
        | xargs -r -n1 buildah --root "$STORE/root" --runroot "$STORE/run" --storage-driver vfs rmi >/dev/null || true
fi
# The FROM name (and its docker.io/library spelling, which short-name lookups also try) → this base.
bah tag "$KEYED" "$BASE" "docker.io/library/$BASE"
echo "$KEY"
