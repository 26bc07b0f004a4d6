"""The benchmark generator (bench/synth.py) and a smoke run of the benchmark machinery (bench/run.py).

Fast (a few seconds): scale 0.01 for the generator, 0.005 for the smoke run. Nothing is timed or asserted
about speed.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import synth
from spreadwatch.cli import main as cli_main
from spreadwatch.model import parse_object
from spreadwatch.scoring import is_workload
from spreadwatch.snapshot import Snapshot

GA_ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"




@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return synth.generate(0.01, seed=1)


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for o in objects:
        out.setdefault(o["kind"], []).append(o)
    return out


def test_deterministic(objects: list[dict[str, Any]]) -> None:
    assert synth.generate(0.01, seed=1) == objects
    assert synth.generate(0.01, seed=2) != objects
    assert list(synth.iter_objects(0.01, seed=1)) == objects


def test_counts_follow_the_spec(objects: list[dict[str, Any]]) -> None:
    kinds = _by_kind(objects)
    assert len(kinds["Node"]) == 50
    assert len(kinds["Namespace"]) == 10
    workloads = [c for c in Snapshot.from_objects(objects).controllers if is_workload(c)]
    assert len(workloads) == 100
    assert Counter(c.kind for c in workloads) == {
        "Deployment": 60,
        "StatefulSet": 15,
        "ReplicaSet": 10,
        "ReplicationController": 15,
    }
    assert len(kinds["Service"]) == 100  # one Service per workload
    assert 1000 <= len(kinds["Pod"]) <= 2000  # ~15 pods per workload
    assert {o["metadata"]["namespace"] for o in kinds["Pod"]} <= {o["metadata"]["name"] for o in kinds["Namespace"]}


def test_node_variety(objects: list[dict[str, Any]]) -> None:
    nodes = _by_kind(objects)["Node"]
    labels = [n["metadata"]["labels"] for n in nodes]
    assert any(BETA_ZONE in lb and GA_ZONE not in lb for lb in labels)  # legacy-only
    assert any(BETA_ZONE not in lb and GA_ZONE not in lb for lb in labels)  # zoneless
    assert len({lb.get(GA_ZONE) for lb in labels if GA_ZONE in lb}) == 3
    assert any(n["spec"].get("unschedulable") for n in nodes)  # cordoned
    assert any(
        t["effect"] == "NoSchedule" and t["key"] != "node.kubernetes.io/unschedulable"
        for n in nodes
        for t in n["spec"].get("taints", [])
    )


def test_pod_and_workload_variety(objects: list[dict[str, Any]]) -> None:
    kinds = _by_kind(objects)
    pods = kinds["Pod"]
    assert any(p["status"]["phase"] in ("Succeeded", "Failed") for p in pods)  # terminal
    assert any("deletionTimestamp" in p["metadata"] for p in pods)  # deleting
    assert any("nodeName" not in p["spec"] for p in pods)  # unscheduled
    rs_pods = [p for p in pods if p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"]
    assert any("pod-template-hash" in p["metadata"]["labels"] for p in rs_pods)
    sts_pods = [p for p in pods if p["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"]
    assert sts_pods
    assert all("statefulset.kubernetes.io/pod-name" in p["metadata"]["labels"] for p in sts_pods)
    owned_rs = [r for r in kinds["ReplicaSet"] if r["metadata"].get("ownerReferences")]
    assert owned_rs
    assert all(r["metadata"]["ownerReferences"][0]["kind"] == "Deployment" for r in owned_rs)
    # a handful of distinct scheduling-constraint signatures, tolerations and nodeSelector among them
    snap = Snapshot.from_objects(objects)
    signatures = {c.template.constraint_key for c in snap.controllers}
    assert 4 <= len(signatures) <= 10
    assert any(c.template.tolerations for c in snap.controllers)
    assert any(c.template.node_selector for c in snap.controllers)
    # some workloads packed on one node
    nodes_of: dict[str, set[str]] = {}
    for p in pods:
        if "nodeName" in p["spec"]:
            nodes_of.setdefault(p["metadata"]["labels"]["app"], set()).add(p["spec"]["nodeName"])
    assert any(len(v) == 1 for v in nodes_of.values())
    # every object parses
    assert all(parse_object(o) is not None for o in objects)


def test_analyze_reports_every_workload(objects: list[dict[str, Any]], tmp_path: Path) -> None:
    dump = tmp_path / "cluster.json"
    synth.write_dump(objects, dump)
    out = io.StringIO()
    assert cli_main(["analyze", "--cluster", str(dump), "-o", "json"], out=out) == 0
    reports = json.loads(out.getvalue())["reports"]
    workloads = {(c.kind, c.namespace, c.name) for c in Snapshot.from_objects(objects).controllers if is_workload(c)}
    assert len(reports) == len(workloads)
    assert {(r["workload"]["kind"], r["workload"]["namespace"], r["workload"]["name"]) for r in reports} == workloads
    assert "Skipped" in {r["health"] for r in reports}  # the workload with topologySpreadConstraints


def test_the_event_stream_covers_every_type_and_the_references_agree_with_the_index(
    objects: list[dict[str, Any]],
) -> None:
    from bench import events, naive, references

    snapshot = Snapshot.from_objects(objects)
    stream = events.make_event_stream(snapshot, 300)
    assert len(stream) == 300 and {ev[-1] for ev in stream} == set(events.EVENT_TYPES)
    workloads = naive.workloads_of(snapshot)
    incoming = references._incoming_pods(objects, snapshot, workloads)
    assert len(incoming) == len(workloads) > 0
    assert all(p["metadata"]["ownerReferences"][0]["controller"] for p in incoming)
    cluster = references._oracle_cluster(objects)
    assert len(cluster["pods"]) == sum(1 for o in objects if o["kind"] == "Pod")
    got = references.naive(scale=0.005, full_max=1000, check=50)  # (its own cluster: inputs.cluster)
    assert got["naive_checked"] == got["naive_identical"] > 0  # the seed algorithm scores as the index does
