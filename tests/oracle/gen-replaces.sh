#!/usr/bin/env bash
# Regenerate the `replace` directives of tests/oracle/go.mod from the go.mod of
# the k8s.io/kubernetes release we build against.
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go,
# ...) at the placeholder version v0.0.0 and replaces them with local paths
# under ./staging/src.  A consumer has to replace each of them with the
# published tag that belongs to the release: kubernetes vX.Y.Z <-> staging
# v0.Y.Z.  This script reads the release's own go.mod (fetched through the Go
# module proxy) and writes exactly one replace per staging module.
#
# Usage: tests/oracle/gen-replaces.sh [KUBERNETES_VERSION [MODULE_DIR]]
#        (default: the version currently required in go.mod; MODULE_DIR
#        defaults to tests/oracle; `pts` and `profile` are the v1.36 oracles),
#        then `go mod tidy` in that directory.
set -euo pipefail
cd "$(dirname "$0")"
cd "${2:-.}"

kver="${1:-$(go mod edit -json | python3 -c '
import json, sys
print(next(r["Version"] for r in json.load(sys.stdin)["Require"] if r["Path"] == "k8s.io/kubernetes"))
')}"
case "$kver" in
  v1.*.*) ;;
  *) echo "gen-replaces: unexpected kubernetes version '$kver'" >&2; exit 2 ;;
esac
staging_ver="v0.${kver#v1.}"

gomod="$(go mod download -json "k8s.io/kubernetes@${kver}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')"
[ -s "$gomod" ] || { echo "gen-replaces: cannot fetch go.mod of k8s.io/kubernetes@${kver}" >&2; exit 1; }

# Every "replace X => ./staging/src/..." line of the release's go.mod.
mods="$(go mod edit -json "$gomod" | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    new = r["New"]["Path"]
    if new.startswith("./staging/src/"):
        print(r["Old"]["Path"])
')"
[ -n "$mods" ] || { echo "gen-replaces: no staging replaces found in $gomod" >&2; exit 1; }

# Drop the replaces we generated before, then add the fresh ones.
for old in $(go mod edit -json | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["Old"]["Path"].startswith("k8s.io/"):
        print(r["Old"]["Path"])
'); do
  go mod edit -dropreplace="$old"
done
args=()
for m in $mods; do
  args+=("-replace=${m}=${m}@${staging_ver}")
done
go mod edit -require="k8s.io/kubernetes@${kver}" "${args[@]}"
echo "gen-replaces: k8s.io/kubernetes ${kver}: $(echo "$mods" | wc -l) staging modules replaced at ${staging_ver}" >&2
