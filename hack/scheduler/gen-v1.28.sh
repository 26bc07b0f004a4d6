#!/usr/bin/env bash
# Regenerate hack/scheduler/v1.28/go.mod + go.sum (the kube-scheduler v1.28 wrapper module) for the
# KUBERNETES_VERSION in v1.28/release.env: one replace per staging module at the matching v0.X.Y tag
# (tests/oracle/gen-replaces.sh reads the list from the release's own go.mod), then `go mod tidy`.
# Update KUBERNETES_BUILD_DATE in release.env by hand from `go list -m -json k8s.io/kubernetes@VERSION`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(sed -n 's/^KUBERNETES_VERSION=\(.*\)$/\1/p' "$here/v1.28/release.env")
bash "$here/../../tests/oracle/gen-replaces.sh" "$version" "$here/v1.28"
(cd "$here/v1.28" && go mod tidy)
