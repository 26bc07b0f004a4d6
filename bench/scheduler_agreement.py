"""How often the real kube-scheduler, under its default profile, puts a pod on a best node of the report.

    make bench FIGURES=scheduler-default-profile     # bench/figures.toml; builds kube-scheduler v1.36.4 if needed

The measurement is the e2e test that proves the spreading scores against the real binary,
``tests/e2e/test_real_scheduler.py::test_default_profile_agreement``: a private control plane, kube-scheduler
v1.36.4 with hack/scheduler/config/v1.36-default.yaml, eleven nodes of which three are half filled by another
namespace's pods, four workloads whose pods request resources, each scaled up one replica at a time
(``rounds`` × 4 placements) with spreadwatch's report taken just before. :func:`measure` runs that test in a
pytest subprocess and reads the file it writes (``SPREADWATCH_AGREEMENT_FILE``), so the figure and the test are
one piece of code; the test still fails, and the measure with it, if PodTopologySpread's part of any logged
score differs from the report's. Costs: the control plane and the scheduler for ~1-2 min (a kube-scheduler
build the first time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["TEST", "figures", "measure"]

ROOT = Path(__file__).resolve().parent.parent
#: the e2e test that measures it (pytest node id, relative to the repository root)
TEST = "tests/e2e/test_real_scheduler.py::test_default_profile_agreement"


def figures(agreement: Mapping[str, Any]) -> dict[str, Any]:
    """The test's file (build/scheduler-default-profile.json's format) as figures: the share on a best node,
    the counts, what was measured, and one ``series`` row per placement that missed: the chosen node, its and
    the best nodes' spreading score (0-100) and their totals over every score plugin the scheduler logged
    (score × weight). O(misses)."""
    misses = []
    for miss in agreement["misses"]:
        logged = miss["logged"]
        best_totals = [sum(logged[n].values()) for n in miss["bestNodes"] if n in logged]
        misses.append({
            "pod": miss["pod"], "chosen": miss["chosen"], "chosen_spread_score": miss["chosenSpreadScore"],
            "best_nodes": ", ".join(miss["bestNodes"]), "best_score": miss["bestScore"],
            "chosen_total": sum(logged[miss["chosen"]].values()), "best_total": max(best_totals, default=None),
        })  # fmt: skip
    return {
        "share": agreement["share"],
        "in_best_set": agreement["inBestSet"],
        "in_predicted_set": agreement.get("inPredictedSet"),
        "placements": agreement["placements"],
        "misses": len(misses),
        "scheduler": agreement["scheduler"],
        "cluster": agreement["cluster"],
        "plugins": ", ".join(agreement["plugins"]),
        "series": misses,
    }


def measure(*, scale: float = 1.0, rounds: int = 8) -> dict[str, Any]:
    """Run the e2e test with ``rounds`` placements per workload and return :func:`figures` of its result.
    ``scale`` is not used (the cluster is the test's). Raises RuntimeError, with the end of pytest's output,
    when the test fails."""
    with tempfile.TemporaryDirectory(prefix="spreadwatch-agreement-") as tmp:
        out = Path(tmp) / "agreement.json"
        env = {**os.environ, "SPREADWATCH_AGREEMENT_FILE": str(out), "SPREADWATCH_E2E_SCHEDULER_ROUNDS": str(rounds)}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not out.exists():
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
            raise RuntimeError(f"{TEST} failed (exit {proc.returncode}):\n{tail}")
        agreement: dict[str, Any] = json.loads(out.read_text())
    return figures(agreement)
