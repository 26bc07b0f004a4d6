"""bench/scheduler_agreement.py: the e2e test's agreement file as figures, and the committed result.

The measure itself runs tests/e2e/test_real_scheduler.py (a control plane and kube-scheduler): not here. What is
checked is the reading of that test's file (the format it writes, copied below), that it yields every figure
bench/figures.toml names, and that the stored result holds them and renders into docs/benchmarks.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import render
from bench import scheduler_agreement as agreement_bench
from bench import spec as bench_spec
from repo_tools import REPO_ROOT

MEASURE = "scheduler-default-profile"

# what test_default_profile_agreement writes: two placements of three on a best node, one miss
AGREEMENT: dict[str, Any] = {
    "scheduler": "kube-scheduler v1.36.4, hack/scheduler/config/v1.36-default.yaml",
    "cluster": "11 nodes (3 partly filled)",
    "placements": 3, "inBestSet": 2, "share": 0.667, "spreadScoresExact": True,
    "plugins": ["NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread"],
    "misses": [{
        "pod": "ns/web-abc", "chosen": "node-z", "chosenSpreadScore": 90,
        "bestNodes": ["node-c1", "node-c2"], "bestScore": 100,
        "logged": {
            "node-c1": {"NodeResourcesBalancedAllocation": 74, "NodeResourcesFit": 35, "PodTopologySpread": 200},
            "node-c2": {"NodeResourcesBalancedAllocation": 74, "NodeResourcesFit": 30, "PodTopologySpread": 200},
            "node-z": {"NodeResourcesBalancedAllocation": 74, "NodeResourcesFit": 67, "PodTopologySpread": 180},
        },
    }],
}  # fmt: skip


def _entry() -> dict[str, Any]:
    (entry,) = bench_spec.select(bench_spec.load_spec(), [MEASURE])
    return entry


def test_the_agreement_file_yields_every_figure_and_a_row_per_miss() -> None:
    values = agreement_bench.figures(AGREEMENT)
    entry = _entry()
    assert all(bench_spec.lookup(values, f["key"]) is not None for f in entry["figure"])
    assert (values["share"], values["in_best_set"], values["placements"], values["misses"]) == (0.667, 2, 3, 1)
    (row,) = values["series"]
    assert set(entry["columns"]) <= set(row)
    # the chosen node's logged total beat every best node's: 90 × 2 + 67 + 74 against 200 + 35 + 74
    assert (row["chosen"], row["chosen_total"], row["best_total"]) == ("node-z", 321, 309)
    assert row["best_nodes"] == "node-c1, node-c2"


def test_it_is_named_only_and_runs_the_e2e_test_it_names() -> None:
    entry = _entry()
    assert entry not in bench_spec.select(bench_spec.load_spec(), None)  # needs a control plane and kube-scheduler
    path, _, name = agreement_bench.TEST.partition("::")
    assert f"def {name}(" in (REPO_ROOT / path).read_text()


def test_the_stored_result_holds_every_figure_and_renders(tmp_path: Path) -> None:
    stored = json.loads((REPO_ROOT / "bench" / "results" / f"{MEASURE}.json").read_text())
    values = stored["measures"][MEASURE]["results"]["1"]["values"]
    assert all(bench_spec.lookup(values, f["key"]) is not None for f in _entry()["figure"])
    assert round(values["in_best_set"] / values["placements"], 3) == values["share"]
    out = tmp_path / "benchmarks.md"
    render.write(out)
    share = render.fmt(values["share"], "%")
    assert f"| kube-scheduler's default profile: placements on a best node of the report | {share} |" in out.read_text()
