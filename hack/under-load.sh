#!/usr/bin/env bash
# Run a command with `stress-ng --cpu $(nproc)` hogging every core; stop the hog however the command ends.
# Usage: hack/under-load.sh COMMAND [ARGS...]   (make test-under-load runs `make test` through it)
set -euo pipefail
cores=$(nproc)
# its own session and process group (setsid execs in place: $! is the group id), so one signal reaches every
# stress-ng worker
setsid stress-ng --cpu "$cores" --timeout 0 --quiet &
hog=$!
stop_hog() {
  kill -TERM -- "-$hog" 2>/dev/null || true
  for _ in $(seq 1 100); do  # up to 10 s of grace, then SIGKILL
    kill -0 -- "-$hog" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$hog" 2>/dev/null || true
  wait "$hog" 2>/dev/null || true
}
trap stop_hog EXIT
echo "under-load: stress-ng --cpu $cores (process group $hog) running; starting: $*" >&2
start=$(date +%s)
set +e
"$@"
status=$?
set -e
echo "under-load: '$*' exited $status after $(( $(date +%s) - start )) s with a CPU hog on $cores cores" >&2
exit "$status"
