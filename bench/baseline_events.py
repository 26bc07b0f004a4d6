"""Issue 13's "no regression" baseline, measured in the same run: the pod event stream on the code before it.

A p99 of a few hundred µs on a shared 2-core machine moves by tens of percent between hours (the same code
gave 0.162 ms on 2026-11-22 and 0.21-0.33 ms on 2026-11-23), so a regression is judged against the older
code measured *now*, on the same cluster, not against a figure from another day. :func:`measure_baseline`
extracts ``commit``'s ``operator/`` and ``bench/`` (``git archive``) into ``workdir``, writes the run's
objects as JSON, and runs ``bench/baseline_child.py`` in a fresh interpreter, which uses that commit's own
bench code to build the snapshot and stream and time the replays. Costs: one ``git archive`` (~1 MiB), the
dump (~230 MiB at scale 1.0) and the older code's event stream (about a minute at scale 1.0).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

import orjson
from bench_env import ROOT
from bench_results import BaselineEvents
from measure_util import median

__all__ = ["BASELINE_COMMIT", "measure_baseline"]

#: The code of the clean ``make bench`` before issue 13's work (2026-11-22 02:28 UTC: p99 0.162 ms, 8,896/s).
BASELINE_COMMIT = "e7cd7814f2d74977e9b8ad563cdcaf47574ee7ad"

_CHILD = Path(__file__).with_name("baseline_child.py")


def _extract(repo: Path, commit: str, dest: Path) -> None:
    """``commit``'s operator/ and bench/ trees under ``dest``. Raises CalledProcessError (unknown commit)."""
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "operator", "bench"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")


def measure_baseline(
    commit: str,
    objects: Sequence[dict[str, Any]],
    events: int,
    repeats: int,
    profile: str,
    workdir: Path,
    repo: Path = ROOT,
) -> BaselineEvents:
    """Median p99 and events/s of ``repeats`` replays of ``events`` pod events on ``commit``'s code (of the
    git repository ``repo``). Raises CalledProcessError when the commit is unknown or its run fails."""
    tree = workdir / f"baseline-{commit[:12]}"
    _extract(repo, commit, tree)
    dump = workdir / "baseline-objects.json"
    dump.write_bytes(orjson.dumps(list(objects)))
    try:
        out = subprocess.run(
            [sys.executable, str(_CHILD), str(tree), str(dump), str(events), str(repeats), profile],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    finally:
        dump.unlink(missing_ok=True)
    got = json.loads(out.splitlines()[-1])
    if not Path(got["module"]).is_relative_to(tree):
        raise RuntimeError(f"the baseline run imported {got['module']}, not the code of {commit}")
    return BaselineEvents(
        commit=commit,
        events=events,
        p99_us=median(got["p99_us"]),
        events_per_s=median(got["events_per_s"]),
        runs_p99_us=got["p99_us"],
        runs_events_per_s=got["events_per_s"],
    )
