"""``spreadwatch predict`` and the prediction in ``analyze``/``explain``: the per-plugin table, ``--node``, the
window's probability, the JSON document and the report's ``prediction`` block (docs/report.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from spreadwatch.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cluster.yaml"
MOST_ALLOCATED = ROOT / "hack" / "scheduler" / "config" / "v1.36-most-allocated.yaml"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_predict_prints_the_per_plugin_table_and_any_node() -> None:
    code, out, err = run("predict", "--cluster", str(EXAMPLE), "deployment/shop/web", "--node", "node-c2",
                         "--node", "nope", "--top-nodes", "2")  # fmt: skip
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Pod:         shop/Deployment/web (its next pod)"
    assert any(line.startswith("Profile:     kube-scheduler's default profile: TaintToleration x3") for line in lines)
    header = next(line for line in lines if line.startswith("NODE"))
    assert header.split()[:3] == ["NODE", "TOTAL", "TaintToleration"]
    assert "node-c2: filtered by NodeUnschedulable" in lines and "nope: not a node of the cluster" in lines
    assert any(line.startswith("... ") and "more feasible nodes" in line for line in lines)


def test_predict_json_agrees_with_the_report_block() -> None:
    code, out, _ = run("predict", "--cluster", str(EXAMPLE), "deployment/shop/web", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["bestNodeProbability"] == 1 and not doc["partial"]
    totals = {n["node"]: n["score"] for n in doc["nodes"]}
    assert all(sum(n["plugins"].values()) == n["score"] for n in doc["nodes"])
    code, out, _ = run("analyze", "--cluster", str(EXAMPLE), "--profile", "v1.29", "-o", "json")
    report = next(r for r in json.loads(out)["reports"] if r["workload"]["name"] == "web")
    block = report["prediction"]
    assert code == 0 and block["bestScore"] == doc["bestScore"] and block["bestNodeCount"] == doc["bestNodeCount"]
    assert block["excludedNodes"] == doc["excludedNodes"] and block["feasibleNodes"] == len(totals)
    assert all(totals[n["node"]] == n["score"] for n in block["nodes"])
    assert set(block) >= {"bestScore", "bestNodes", "bestNodeCount", "nodes", "excludedNodes", "bestNodeProbability",
                          "spreadingAgrees", "partial"}  # fmt: skip


def test_no_prediction_and_profiles_without_one() -> None:
    for argv in (("--profile", "v1.29", "--no-prediction"), ("--profile", "v1.28")):
        code, out, _ = run("analyze", "--cluster", str(EXAMPLE), "-o", "json", *argv)
        assert code == 0 and all("prediction" not in r for r in json.loads(out)["reports"]), argv


def test_a_configuration_changes_the_weights_and_the_strategy() -> None:
    code, out, _ = run("predict", "--cluster", str(EXAMPLE), "deployment/shop/web", "-o", "json",
                       "--scheduler-config", str(MOST_ALLOCATED))  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["profile"]["weights"]["NodeResourcesFit"] == 4
    assert doc["profile"]["weights"]["PodTopologySpread"] == 1


def test_explain_ends_with_the_prediction(tmp_path: Path) -> None:
    code, out, err = run("explain", "--cluster", str(EXAMPLE), "--profile", "v1.29", "deployment/shop/web",
                         "--node", "node-a1")  # fmt: skip
    assert (code, err) == (0, "")
    tail = out[out.index("Whole scheduler profile"):]
    assert "Prediction:" in tail and "node-a1" in tail


def test_the_window_probability_above_100_nodes(tmp_path: Path) -> None:
    """120 identical nodes but one busy: the scheduler scores 100 of them (percentageOfNodesToScore 5), and a
    window holds one of the best nodes unless it misses every one of them."""
    objects: list[dict[str, Any]] = yaml.safe_load(EXAMPLE.read_text())["items"]
    objects = [o for o in objects if o["kind"] != "Node"]
    for i in range(120):
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:03d}", "labels": {
            "kubernetes.io/hostname": f"n{i:03d}", "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})  # fmt: skip
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    code, out, _ = run("predict", "--cluster", str(path), "deployment/shop/web", "-o", "json",
                       "--percentage-of-nodes-to-score", "5")  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and 0 < doc["bestNodeProbability"] <= 1, doc["bestNodeProbability"]
    code, out, _ = run("analyze", "--cluster", str(path), "--profile", "v1.29", "-o", "json",
                       "--percentage-of-nodes-to-score", "5")  # fmt: skip
    block = next(r for r in json.loads(out)["reports"] if r["workload"]["name"] == "web")["prediction"]
    assert block["bestNodeProbability"] == doc["bestNodeProbability"]
