"""Profile v1.29 through the CLI: analyze (report contract, derivable scores), explain (step table), metrics."""

from __future__ import annotations

import io
import json
from pathlib import Path

from spreadwatch.cli import main

CLUSTER = str(Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml")
GOLDEN = {"node-a1": 77, "node-a2": 77, "node-b1": 11, "node-b2": 50, "node-c1": 55, "node-legacy": 100}
ZONES = {
    "node-a1": "eu-west-1a",
    "node-a2": "eu-west-1a",
    "node-b1": "eu-west-1b",
    "node-b2": "eu-west-1b",
    "node-c1": "eu-west-1c",
    "node-legacy": "",
}


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_analyze_v129_report_derives_every_golden_score() -> None:
    code, out, err = _run("analyze", "--cluster", CLUSTER, "--profile", "v1.29", "-o", "json")
    assert (code, err) == (0, "")
    (report,) = [r for r in json.loads(out)["reports"] if r["workload"]["name"] == "checkout"]
    assert report["profile"] == "v1.29"
    listed = {n["node"]: n["score"] for n in report["nodes"]}
    empty = {z["zone"]: z["emptyNodeScore"] for z in report["zones"]}
    derived = {n: listed.get(n, empty[z] if z else report["emptyNodeScore"]) for n, z in ZONES.items()}
    assert derived == GOLDEN
    assert (report["bestScore"], report["bestNodes"], report["worstScore"]) == (100, ["node-legacy"], 11)


def test_explain_v129_shows_terms_weights_and_normalisation() -> None:
    code, out, _ = _run("explain", "--cluster", CLUSTER, "--profile", "v1.29", "deployment/shop/checkout")
    assert code == 0
    assert "kubernetes.io/hostname maxSkew 3" in out and "weight log(6+2) = 2.0794" in out
    assert "topology.kubernetes.io/zone maxSkew 5" in out and "4 domains -> weight log(4+2) = 1.7918" in out
    assert "with min 2, max 18" in out
    spreading = out.split("\nWhole scheduler profile")[0]  # (the prediction's table follows)
    rows = {line.split()[0]: line.split() for line in spreading.splitlines() if line.startswith("node-")}
    assert rows["node-b1"][1:] == ["3", "8.2383", "3", "9.3753", "17.6136", "18", "11"]
    assert rows["node-legacy"][1:] == ["0", "2", "-", "-", "2", "2", "100"]


def test_openmetrics_v129_node_scores() -> None:
    code, out, _ = _run(
        "analyze", "--cluster", CLUSTER, "--profile", "v1.29", "-o", "openmetrics", "--node-metrics", "all"
    )
    assert code == 0
    scores = {}
    for line in out.splitlines():
        if line.startswith("spreadwatch_workload_node_score{") and 'workload="checkout"' in line:
            node = line.split('node="')[1].split('"')[0]
            scores[node] = int(line.rsplit(" ", 1)[1])
    assert scores == GOLDEN
