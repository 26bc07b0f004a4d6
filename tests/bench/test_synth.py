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

from repo_tools import load_bench
from spreadwatch.cli import main as cli_main
from spreadwatch.model import parse_object
from spreadwatch.scoring import get_profile, is_workload
from spreadwatch.snapshot import Snapshot

GA_ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"



synth = load_bench("synth")


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


def test_quick_run_machinery() -> None:
    cold_m, events, baselines, results, render_doc, naive = (
        load_bench(m)
        for m in ("measure_cold", "measure_events", "measure_baselines", "bench_results", "render_doc", "naive")
    )
    profile = get_profile("v1.28")
    objects = synth.generate(0.005, seed=1)
    snapshot = Snapshot.from_objects(objects)
    cold = cold_m.measure_cold(snapshot, profile, repeats=1)
    assert cold.reports == len(naive.workloads_of(snapshot)) == 50
    stream = events.make_event_stream(snapshot, 300)
    assert {ev[-1] for ev in stream} == set(events.EVENT_TYPES)
    inc = events.measure_incremental(snapshot, profile, stream, repeats=1)
    assert inc.events == 300
    index = cold_m.fresh_index(snapshot, profile)
    nv = baselines.measure_naive(snapshot, profile, index, sample=10, repeats=1, check=5)
    assert nv.sampled == 10
    assert nv.mismatches == 0
    incoming = baselines.incoming_pods(objects, snapshot, naive.workloads_of(snapshot))
    assert len(incoming) == 50
    assert all(p["metadata"]["ownerReferences"][0]["controller"] for p in incoming)
    cluster = baselines.oracle_cluster(objects)
    assert len(cluster["pods"]) == sum(1 for o in objects if o["kind"] == "Pod")
    res = results.ScaleResult(
        scale=0.005,
        objects=dict(Counter(o["kind"] for o in objects)),
        workloads=50,
        cold=cold,
        node_event=cold_m.measure_node_event(snapshot, profile),
        incremental=inc,
        naive=nv,
        parse=cold_m.measure_parse(objects, limit=50),
    )
    meta = results.RunInfo(
        date="d",
        machine="m",
        software="s",
        command="c",
        commit="x",
        cpus=2,
        load_start="0",
        load_end="0",
        seed=1,
        profile="v1.28",
        run_minutes=0.0,
        source_start="abc",
        source_end="abc",
    )
    text = render_doc.render([res], meta, None)
    assert "| figure | wall clock | target | status |" in text
    assert "pod event p99" in text
