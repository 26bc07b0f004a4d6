#!/usr/bin/env bash
# Build (or reuse) spreadwatch-oracle and print the absolute path of the
# binary as the only line on stdout.  Build logs go to stderr.
#
# Usage: build.sh [pts|profile]
#   (no argument)  the v1.28 SelectorSpread oracle (this directory's module)
#   pts            the PodTopologySpread oracle (module in pts/, built as
#                  spreadwatch-oracle-pts, cached under oracle-pts/<key>/)
#   profile        the whole-profile oracle (module in profile/, built as
#                  spreadwatch-oracle-profile, cached under oracle-profile/<key>/)
#
# The binary is cached in ${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}/oracle/<key>/
# where <key> hashes go.mod, go.sum, every *.go file (the oracle's and shared/'s), the Go toolchain version
# and the build flags, so any change to the oracle rebuilds it and an unchanged
# tree reuses it.  GOMODCACHE/GOCACHE are left at their defaults.
#
# Environment:
#   SPREADWATCH_CACHE        cache root (default $HOME/.cache/spreadwatch)
#   SPREADWATCH_ORACLE_GOFLAGS extra flags for `go build` (part of the key)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shared="$here/shared"  # the code both oracles share (a module of its own, replaced in by path)
name=spreadwatch-oracle
case "${1:-}" in
  "") ;;
  pts) here="$here/pts"; name=spreadwatch-oracle-pts ;;
  profile) here="$here/profile"; name=spreadwatch-oracle-profile ;;
  *) echo "build.sh: unknown oracle '$1' (expected nothing, 'pts' or 'profile')" >&2; exit 2 ;;
esac
cd "$here"

command -v go >/dev/null || { echo "build.sh: go is not on PATH" >&2; exit 1; }

# -trimpath: reproducible binary independent of the checkout location.
# -mod=readonly: never rewrite go.mod/go.sum during a build.
# No -checklinkname=0 is needed with Go 1.26 (see README.md, "Go toolchain").
build_flags=(-trimpath -mod=readonly)
# shellcheck disable=SC2206
extra=(${SPREADWATCH_ORACLE_GOFLAGS:-})

key="$(
  {
    for f in go.mod go.sum $(ls ./*.go | LC_ALL=C sort); do
      printf '%s\0' "$f"; cat "$f"; printf '\0'
    done
    for f in go.mod $(cd "$shared" && ls ./*.go | LC_ALL=C sort); do
      printf 'shared/%s\0' "$f"; cat "$shared/$f"; printf '\0'
    done
    go version
    go env GOOS GOARCH CGO_ENABLED
    printf '%s\0' "${build_flags[@]}" "${extra[@]+"${extra[@]}"}"
  } | sha256sum | cut -c1-16
)"

root="${SPREADWATCH_CACHE:-$HOME/.cache/spreadwatch}"
dir="$root/${name#spreadwatch-}/$key"
bin="$dir/$name"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="$dir/$name"

if [ -x "$bin" ]; then
  echo "build.sh: reusing $bin" >&2
  echo "$bin"
  exit 0
fi

# Serialise concurrent builds of the same key (e.g. two pytest sessions).
exec 9>"$dir/.lock"
flock 9
if [ ! -x "$bin" ]; then
  echo "build.sh: building $name (key $key); a cold build takes several minutes" >&2
  start=$(date +%s)
  tmp="$dir/.$name.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  go build "${build_flags[@]}" "${extra[@]+"${extra[@]}"}" -o "$tmp" . >&2
  "$tmp" --version >&2
  mv -f "$tmp" "$bin"
  trap - EXIT
  echo "build.sh: built $bin in $(( $(date +%s) - start ))s" >&2
fi
echo "$bin"
