"""The index's incremental prediction equals the reference path (``scoring/prediction.py``), node for node.

Random clusters from tests/oracle/gen_profile.py (the differential oracle's generator: nodes with allocatable
and images, pods with requests, host ports and pod affinity, volumes and claims, Namespaces, scheduler
configurations) get three workloads built from the generated incoming pod (Deployments, StatefulSets with claim
templates, ReplicaSets). Every workload's ``prediction`` from ``SpreadIndex`` must equal what
``predict_workload`` computes on the same snapshot: the best score, count and nodes, the feasible count, the
excluded nodes per plugin and every listed node's total and plugin scores. Then random events (pods created,
moved, deleted, relabelled, nodes changed or deleted, claims and volumes changed) go to a loaded index and
the predictions must equal the reference on the objects as they are after them.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spreadwatch.analysis import predict_workload
from spreadwatch.cli.explain_prediction import ranked_nodes
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object
from spreadwatch.profile_args import load_profile
from spreadwatch.report import ReportOptions
from spreadwatch.scoring.profiles import Profile
from spreadwatch.scoring.schedconfig import default_constraints_from_config
from spreadwatch.scoring.scheduler_profile import SchedulerProfile, default_scheduler_profile, scheduler_profile
from spreadwatch.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[2]
TOP = 100  # every feasible node listed (the generated clusters have at most 12)


def _generator() -> Any:
    path = ROOT / "tests" / "oracle" / "gen_profile.py"
    spec = importlib.util.spec_from_file_location("spreadwatch_gen_profile", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def _workloads(case: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Three workloads whose template is the generated incoming pod's spec (labels varied)."""
    pod = case["incoming"][0]
    ns = pod["metadata"]["namespace"]
    out = []
    for i in range(3):
        labels = dict(pod["metadata"]["labels"]) | {"app": rng.choice(GEN.APPS)}
        kind = rng.choice(["Deployment", "StatefulSet", "ReplicaSet"])
        obj: dict[str, Any] = {
            "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": f"w{i}", "namespace": ns, "uid": f"u{i}"},
            "spec": {"replicas": rng.randint(0, 3), "selector": {"matchLabels": {"app": labels["app"]}},
                     "template": {"metadata": {"labels": labels}, "spec": copy.deepcopy(pod["spec"])}},
        }  # fmt: skip
        if kind == "StatefulSet" and rng.random() < 0.5:
            obj["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}}]
        out.append(obj)
    return out


def _profiles(case: dict[str, Any]) -> tuple[SchedulerProfile, Profile] | None:
    """The case's scheduler profile and PodTopologySpread profile (None: a configuration the parser refuses)."""
    spread = load_profile("v1.29", None)
    text = case.get("schedulerConfig")
    if text is None:
        return default_scheduler_profile(), spread
    config = json.loads(text)
    try:
        defaults = default_constraints_from_config(config, "cfg")
        return scheduler_profile(config, "cfg"), dataclasses.replace(spread, default_constraints=defaults)
    except Exception:  # (a configuration the parser refuses: the oracle tests' concern)
        return None


def _expected(snapshot: Snapshot, ref: str, scheduler: SchedulerProfile, spread: Profile) -> dict[str, Any]:
    _, p = predict_workload(snapshot, ref, scheduler, spread)
    if p.error:
        return {"error": p.error}
    return {
        "best": p.best_score, "count": len(p.best_nodes), "feasible": len(p.feasible),
        "excluded": dict(sorted(Counter(p.excluded.values()).items())),
        "nodes": [(n, p.totals[n], dict(p.scores[n])) for n in ranked_nodes(p)[:TOP]],
        "partial": list(p.partial), "bestNodes": list(p.best_nodes[:TOP]), "probability": p.probability,
    }  # fmt: skip


def _got(index: SpreadIndex) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for report in index.reports():
        ref = f"{report.workload.kind}/{report.workload.namespace}/{report.workload.name}"
        p = report.prediction
        if p is None:
            out[ref] = {"error": report.reasons[0]} if report.health.value == "Error" else {"none": report.health.value}
        else:
            out[ref] = {
                "best": p.best_score, "count": p.best_node_count, "feasible": p.feasible_nodes,
                "excluded": dict(p.excluded_nodes), "nodes": [(n.node, n.score, dict(n.plugins)) for n in p.nodes],
                "partial": list(p.partial_reasons), "bestNodes": list(p.best_nodes),
                "probability": p.best_node_probability,
            }  # fmt: skip
    return out


def _compare(index: SpreadIndex, snapshot: Snapshot, scheduler: SchedulerProfile, spread: Profile) -> None:
    got = _got(index)
    assert got, "no workload"
    for ref, prediction in got.items():
        if "none" in prediction:
            assert prediction["none"] == "Error", (ref, prediction)
            continue
        assert prediction == _expected(snapshot, ref, scheduler, spread), ref


def _case(seed: int) -> tuple[list[dict[str, Any]], SchedulerProfile, Profile] | None:
    case = GEN.generate(seed)
    profiles = _profiles(case)
    if profiles is None:
        return None
    return GEN.objects_of(case["cluster"]) + _workloads(case, random.Random(seed)), *profiles


@pytest.mark.parametrize("seed", range(120))
def test_loaded_index_predicts_as_the_reference(seed: int) -> None:
    made = _case(seed)
    if made is None:
        return  # (a configuration the parser refuses: nothing to compare)
    objects, scheduler, spread = made
    snapshot = Snapshot.from_objects(objects)
    index = SpreadIndex(spread, ReportOptions(scheduler=scheduler, top_n=TOP))
    index.load(snapshot)
    _compare(index, snapshot, scheduler, spread)


@pytest.mark.parametrize("seed", range(60))
def test_large_clusters_and_the_window(seed: int) -> None:
    """101-260 nodes and a percentageOfNodesToScore that leaves most of them out of the window: the grouped
    path (nodes that score alike) and the window's probability equal the reference."""
    case = GEN.generate(5000 + seed)
    profiles = _profiles(case)
    if profiles is None:
        return
    scheduler, spread = profiles
    rng = random.Random(seed)
    spread = dataclasses.replace(spread, score_percentage=rng.choice([0, 5, 10, 40]))
    nodes = [GEN._node(rng, i) for i in range(rng.randint(101, 260))]
    names = [n["metadata"]["name"] for n in nodes]
    namespaces = [ns["metadata"]["name"] for ns in case["cluster"]["namespaces"]]
    case["cluster"]["nodes"] = nodes
    pods = [GEN._pod(rng, i, names, namespaces) for i in range(rng.randint(20, 300))]
    for pod in pods:  # most without pod affinity: the workloads then take the grouped path
        if seed % 2 or rng.random() < 0.9:
            pod["spec"].pop("affinity", None)
    case["cluster"]["pods"] = pods
    workloads = _workloads(case, rng)
    for w in workloads:
        if rng.random() < 0.7:
            _plain(w["spec"]["template"]["spec"])
    objects = GEN.objects_of(case["cluster"]) + workloads
    snapshot = Snapshot.from_objects(objects)
    index = SpreadIndex(spread, ReportOptions(scheduler=scheduler, top_n=TOP))
    index.load(snapshot)
    _compare(index, snapshot, scheduler, spread)


def _plain(spec: dict[str, Any]) -> None:
    """A pod spec without what the grouped path leaves to the full one (pod affinity, preferred node
    affinity, host ports, volumes)."""
    affinity = spec.pop("affinity", {})
    required = affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    spec.pop("volumes", None)
    for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
        container.pop("ports", None)


def _event(rng: random.Random, objects: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """One random change to ``objects`` (in place): ("apply", obj) or ("remove", obj)."""
    pods = [o for o in objects if o["kind"] == "Pod"]
    nodes = [o for o in objects if o["kind"] == "Node"]
    claims = [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
    r = rng.random()
    if r < 0.3 or not pods:
        pod = GEN._pod(rng, rng.randint(100, 10_000), [n["metadata"]["name"] for n in nodes], ["default", "shop"])
        if any(p["metadata"]["name"] == pod["metadata"]["name"] and p["metadata"]["namespace"]
               == pod["metadata"]["namespace"] for p in pods):  # fmt: skip
            return "apply", pod
        objects.append(pod)
        return "apply", pod
    if r < 0.5:
        pod = rng.choice(pods)
        if nodes:
            pod["spec"]["nodeName"] = rng.choice(nodes)["metadata"]["name"]
        pod["metadata"]["labels"] = {"app": rng.choice(GEN.APPS)}
        return "apply", pod
    if r < 0.65:
        pod = rng.choice(pods)
        objects.remove(pod)
        return "remove", pod
    if r < 0.8 and nodes:
        node = rng.choice(nodes)
        fresh = GEN._node(rng, int(node["metadata"]["name"][1:]))
        node.clear()
        node.update(fresh)
        return "apply", node
    if r < 0.85 and len(nodes) > 1:
        node = rng.choice(nodes)
        objects.remove(node)
        return "remove", node
    if claims:
        claim = rng.choice(claims)
        annotations = claim["metadata"].setdefault("annotations", {})
        if annotations:
            annotations.clear()
        else:
            annotations["pv.kubernetes.io/bind-completed"] = "yes"
        return "apply", claim
    pod = rng.choice(pods)
    pod["status"]["phase"] = rng.choice(["Running", "Succeeded"])
    return "apply", pod


@pytest.mark.parametrize("seed", range(40))
def test_events_keep_the_prediction_equal_to_the_reference(seed: int) -> None:
    made = _case(1000 + seed)
    if made is None:
        return
    objects, scheduler, spread = made
    index = SpreadIndex(spread, ReportOptions(scheduler=scheduler, top_n=TOP))
    index.load(Snapshot.from_objects(objects))
    rng = random.Random(seed)
    for step in range(12):
        what, obj = _event(rng, objects)
        if what == "apply":
            index.apply(parse_object(obj))
        else:
            meta = obj["metadata"]
            index.remove(obj["kind"], meta.get("namespace", "default") if obj["kind"] != "Node" else "", meta["name"])
        if step % 4 == 3:
            index.refresh_predictions()
            snapshot = Snapshot.from_objects(objects)
            _compare(index, snapshot, scheduler, spread)
            # a refresh rebuilds only the prediction and the room for replacements: every other part it keeps
            # from the last full build must still be what a fresh index builds from the same objects
            fresh = SpreadIndex(spread, ReportOptions(scheduler=scheduler, top_n=TOP))
            fresh.load(snapshot)
            assert [r.to_dict() for r in index.reports()] == [r.to_dict() for r in fresh.reports()], step


def _settled_case() -> tuple[SpreadIndex, str]:
    """Case 7 loaded with the prediction on, every report built and taken; and one of its nodes."""
    made = _case(7)
    assert made is not None
    objects, scheduler, spread = made
    index = SpreadIndex(spread, ReportOptions(scheduler=scheduler))
    index.load(Snapshot.from_objects(objects))
    index.reports()
    index.take_dirty()
    return index, next(o for o in objects if o["kind"] == "Node")["metadata"]["name"]


def test_stale_predictions_are_handed_over_in_turn_and_rebuilt() -> None:
    """A pod of one workload changes every other workload's loads: the writer gets the others as stale, in
    batches (each workload once), until every prediction is rebuilt; then nothing more."""
    index, node = _settled_case()
    assert index.stale_predictions() == set()
    index.apply(parse_object(GEN._pod(random.Random(1), 99, [node], ["default"])))
    own, _ = index.take_dirty()  # (its own workloads, and the stale ones: fewer than a batch here)
    assert own == set(index.workload_keys())
    index.reports()
    assert index.take_dirty() == (set(), set())
    index.apply(parse_object(GEN._pod(random.Random(2), 98, [node], ["default"])))
    handed: list[Any] = []
    while batch := index.stale_predictions(limit=1):
        assert len(batch) == 1
        handed.extend(batch)
        for key in batch:
            index.report_for(key)
    assert len(handed) == len(set(handed)) and set(handed) <= set(index.workload_keys())
    assert all(index.report_for(k) is not None for k in index.workload_keys())
    assert index.stale_predictions() == set()


def test_an_events_take_dirty_hands_no_stale_predictions_the_writers_cycle_does() -> None:
    """The writer collects on every event without the stale batch (``take_dirty(stale=False)``: per event it
    made a refresh storm at the envelope) and with it once per cycle."""
    index, node = _settled_case()
    index.apply(parse_object(GEN._pod(random.Random(1), 99, [node], ["default"])))
    own, _ = index.take_dirty(stale=False)
    others = set(index.workload_keys()) - own
    assert others  # (the event's own workloads only: the others' predictions stay stale until the cycle)
    stale, _ = index.take_dirty()  # (the cycle's batch: the others, fewer than a batch here)
    assert others <= stale
