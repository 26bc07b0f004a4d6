"""PodTopologySpread's Filter through the CLI (profile v1.29): analyze's report fields, explain's per-domain
arithmetic, simulate's Pending replica. Expected values are worked out by hand in each docstring.

The cluster: a1, a2 in zone za, b1 in zb, c1 in zc, nz without a zone; StatefulSet web (app=web) with a
DoNotSchedule zone constraint (maxSkew 1 unless said otherwise) and a ScheduleAnyway hostname one.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.cli import main

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def _node(name: str, zone: str | None) -> dict[str, Any]:
    labels = {HOST: name, **({ZONE: zone} if zone else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _cluster(tmp_path: Path, pods_on: list[str], replicas: int, **hard: Any) -> str:
    web = {"matchLabels": {"app": "web"}}
    constraints = [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": web, **hard},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": web},
    ]
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"topologySpreadConstraints": constraints}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": replicas, "selector": web, "template": template}}  # fmt: skip
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "namespace": "default",
             "labels": {"app": "web"}}, "spec": {"nodeName": n}, "status": {"phase": "Running"}}
            for i, n in enumerate(pods_on)]  # fmt: skip
    nodes = [_node("a1", "za"), _node("a2", "za"), _node("b1", "zb"), _node("c1", "zc"), _node("nz", None)]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, sts, *pods]}))
    return str(path)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_analyze_reports_the_filter(tmp_path: Path) -> None:
    """Pods a1 ×2, a2, b1: zones za 3, zb 1, zc 0, minimum 0; za 3+1-0=4 > 1 and zb 1+1-0=2 > 1 reject a1, a2,
    b1; nz misses the key: only c1 passes. Pods still count everywhere: 4, node skew 2 (a1 2, c1 and nz 0),
    zone skew 3; the constraint's skew is 3 - 0 = 3 > 1: violated."""
    cluster = _cluster(tmp_path, ["a1", "a1", "a2", "b1"], 4)
    code, out, err = _run("analyze", "--cluster", cluster, "--profile", "v1.29", "-o", "json")
    assert (code, err) == (0, "")
    (r,) = json.loads(out)["reports"]
    assert (r["candidateNodes"], r["excludedNodes"], r["bestNodes"]) == (1, {"PodTopologySpread": 4}, ["c1"])
    assert (r["pods"], r["nodeSkew"], r["zoneSkew"], r["nextPodSchedulable"]) == (4, 2, 3, True)
    assert r["filteredNodes"] == [{"node": "a1", "zone": "za", "region": "", "pods": 2},
                                  {"node": "a2", "zone": "za", "region": "", "pods": 1},
                                  {"node": "b1", "zone": "zb", "region": "", "pods": 1}]  # fmt: skip
    assert r["constraints"] == [{"topologyKey": ZONE, "maxSkew": 1, "minDomains": 1, "skew": 3,
                                 "eligibleDomains": 3, "satisfied": False}]  # fmt: skip
    assert {z["zone"]: (z["pods"], z["candidateNodes"]) for z in r["zones"]} == {
        "za": (3, 0), "zb": (1, 0), "zc": (0, 1)}  # fmt: skip
    assert r["health"] == "Imbalanced"
    assert r["reasons"][0] == f"ConstraintViolated: {ZONE} skew 3 > maxSkew 1 (DoNotSchedule)"


def test_explain_prints_the_filter_per_domain(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path, ["a1", "a1", "a2", "b1"], 4)
    code, out, _ = _run("explain", "sts/default/web", "--cluster", cluster, "--profile", "v1.29")
    assert code == 0
    lines = [line.split() for line in out.splitlines()]
    assert ["za", "3", "3+1-0=4", "reject", "(>", "1)", "2"] in lines
    assert ["zb", "1", "1+1-0=2", "reject", "(>", "1)", "1"] in lines
    assert ["zc", "0", "0+1-0=1", "pass", "1"] in lines
    assert "Rejected:    3 node(s) over maxSkew: a1, a2, b1" in out
    assert "Rejected:    1 node(s) missing a key: nz" in out
    assert f"Constraint:  {ZONE} (DoNotSchedule): skew 3 vs maxSkew 1: VIOLATED" in out


@pytest.mark.parametrize("output", ["table", "json"])
def test_simulate_marks_the_replica_that_stays_pending(tmp_path: Path, output: str) -> None:
    """minDomains 4 over 3 zones, maxSkew 2: the minimum counts as 0, so each zone takes 2 pods; replicas 1-6 are
    placed, the 7th would stay Pending (nz has no zone: rejected for a missing key)."""
    cluster = _cluster(tmp_path, [], 0, maxSkew=2, minDomains=4)
    code, out, err = _run("simulate", "sts/default/web", "--add", "8", "--cluster", cluster, "--profile", "v1.29",
                          "-o", output)  # fmt: skip
    assert (code, err) == (0, "")
    reason = ("0/5 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required "
              "label), 4 node(s) didn't match pod topology spread constraints.")  # fmt: skip
    if output == "json":
        steps = json.loads(out)["steps"]
        assert [s.get("node") for s in steps[:6]].count("c1") == 2 and len(steps) == 7
        assert steps[6] == {"step": 7, "pending": True, "reason": reason, "plugin": "PodTopologySpread"}
        assert json.loads(out)["final"]["health"] == "Unschedulable"
    else:
        assert f"Pending:   replica 7 and every one after it would stay Pending (PodTopologySpread): {reason}" in out


def test_compare_scores_each_profile_on_its_own_candidates(tmp_path: Path) -> None:
    """v1.28 skips the pod (topologySpreadConstraints: every candidate 0, all five best); v1.29's Filter leaves
    only c1 (as in test_analyze_reports_the_filter): its best set is c1, not a node the Filter rejects."""
    cluster = _cluster(tmp_path, ["a1", "a1", "a2", "b1"], 4)
    code, out, err = _run("compare", "--cluster", cluster, "--from", "v1.28", "--to", "v1.29", "-o", "json")
    assert (code, err) == (0, "")
    (row,) = json.loads(out)["workloads"]
    assert row["from"] == {"bestScore": 0, "bestNodes": ["a1", "a2", "b1", "c1", "nz"]}
    assert row["to"] == {"bestScore": 100, "bestNodes": ["c1"]}
    assert (row["bestNodesChanged"], row["bestNodesOverlap"]) == (True, True)
