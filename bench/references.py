"""Outside references: the naive seed algorithm and the real kube-scheduler plugin, score for score.

* :func:`naive`: bench/naive.py (for each workload: the representative pod, filters, the selector, then each
  candidate node's matching pods counted), O(workloads × nodes × pods per node); on every workload up to
  ``full_max`` workloads, else on a random ``sample`` extrapolated linearly;
* :func:`go_plugin`: tests/oracle's binary through ``hack.oracle_client`` (kube-scheduler v1.28 SelectorSpread,
  NodeUnschedulable, TaintToleration, NodeAffinity), every workload's representative next pod as ``incoming``,
  in chunks that keep each answer below ~2 M node scores; ``elapsedNs`` (PreScore + Score + NormalizeScore, no
  filters, no JSON) summed.

Both check the scores derived from spreadwatch's reports for equality, and give the speed-up of the cold
full computation (measured here too) over them. Costs: naive as above; the plugin O(workloads × candidate
nodes) in Go plus O(chunks × cluster size) of JSON.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Sequence
from typing import Any

import orjson
from bench.index_figures import fresh_index
from bench.inputs import cluster
from bench.timing import log
from hack import oracle_client

from bench import naive as naive_algorithm
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Controller
from spreadwatch.report import ReportOptions, SpreadReport
from spreadwatch.scoring import Profile, get_profile, representative_pod, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = ["go_plugin", "naive"]


def _derived_scores(
    report: SpreadReport, nodes: dict[str, Any], profile: Profile, names: Sequence[str]
) -> dict[str, int]:
    """Each named candidate's final score as derived from the report (O(names))."""
    return {n: report.score_of(n, zone_key(nodes[n].labels, profile)) for n in names}


def _naive_once(
    snapshot: Snapshot, profile: Profile, chosen: Sequence[Controller]
) -> tuple[naive_algorithm.NaiveScorer, tuple[float, float], tuple[float, float]]:
    """(scorer, NodeInfo build (wall s, CPU s), per workload (wall s, CPU s)) of one naive pass over ``chosen``."""
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    scorer = naive_algorithm.NaiveScorer(snapshot, profile)
    c1, t1 = time.process_time(), time.perf_counter()
    for ctrl in chosen:
        scorer.scores(ctrl)
    c2, t2 = time.process_time(), time.perf_counter()
    return scorer, (t1 - t0, c1 - c0), ((t2 - t1) / len(chosen), (c2 - c1) / len(chosen))


def _cold_s(snapshot: Snapshot, profile: Profile) -> float:
    """Seconds of one cold computation (load + reports), for the speed-ups."""
    gc.collect()
    t0 = time.perf_counter()
    index = SpreadIndex(profile, ReportOptions())
    index.load(snapshot)
    index.reports()
    return time.perf_counter() - t0


def naive(
    *, scale: float, quick: bool = False, sample: int = 100, full_max: int = 1000, check: int = 20, seed: int = 11
) -> dict[str, Any]:
    """The naive seed algorithm on all workloads (or a sample, extrapolated the same way in wall and CPU
    time), checked against the reports."""
    c, profile = cluster(scale), get_profile("v1.28")
    snapshot = c.snapshot
    index = fresh_index(snapshot, profile)
    workloads = naive_algorithm.workloads_of(snapshot)
    n = len(workloads) if len(workloads) <= full_max and not quick else min(sample, 20 if quick else sample)
    chosen = workloads if len(workloads) <= n else random.Random(seed).sample(workloads, n)
    scorer, (build_s, build_cpu_s), (per_workload_s, per_workload_cpu_s) = _naive_once(snapshot, profile, chosen)
    nodes = {node.name: node for node in snapshot.nodes}
    checked = same = 0
    for ctrl in chosen[:check]:
        expect = scorer.scores(ctrl)
        report = index.report_for(ctrl.key)
        if expect is None or report is None:
            continue
        checked += 1
        derived = _derived_scores(report, nodes, profile, list(expect))
        same += derived == expect and report.candidate_nodes == len(expect)
    total = build_s + per_workload_s * len(workloads)
    return {
        "naive_s": total,
        "naive_cpu_s": build_cpu_s + per_workload_cpu_s * len(workloads),
        "naive_per_workload_ms": per_workload_s * 1e3,
        "naive_sampled": len(chosen),
        "naive_speedup": total / _cold_s(snapshot, profile),
        "naive_checked": checked,
        "naive_identical": same,
    }


def _slim_pod(o: dict[str, Any]) -> dict[str, Any]:
    """What SelectorSpread and the scheduler cache read of an existing pod (transport only)."""
    meta = o["metadata"]
    keep = ("name", "namespace", "uid", "labels", "ownerReferences", "deletionTimestamp")
    spec = {"nodeName": o["spec"]["nodeName"]} if "nodeName" in o.get("spec", {}) else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {k: meta[k] for k in keep if k in meta},
        "spec": spec,
        "status": {"phase": o["status"]["phase"]},
    }


def _oracle_cluster(objects: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The oracle's cluster form (``oracle_client.cluster_from_objects``), pods slimmed for transport."""
    cluster: dict[str, list[dict[str, Any]]] = oracle_client.cluster_from_objects(objects)
    cluster["pods"] = [_slim_pod(p) for p in cluster["pods"]]
    return cluster


def _incoming_pods(
    objects: Sequence[dict[str, Any]], snapshot: Snapshot, workloads: Sequence[Controller]
) -> list[dict[str, Any]]:
    """Each workload's representative next pod as a Pod object: labels and controller ownerReference from
    ``spreadwatch.scoring.representative_pod``, scheduling fields from the (newest ReplicaSet's) template.

    spreadwatch has no public ``Pod record → dict`` API, so the spec is taken from the generator's JSON."""
    by_key = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
    }
    out = []
    for ctrl in workloads:
        replicasets = snapshot.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, rs = representative_pod(ctrl, replicasets)
        source = by_key.get(("ReplicaSet", ctrl.namespace, rs.name)) if rs is not None else None
        source = source or by_key[(ctrl.kind, ctrl.namespace, ctrl.name)]
        spec = dict(source["spec"]["template"].get("spec", {}))
        spec["schedulerName"] = "default-scheduler"
        owner = pod.controller
        meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "labels": dict(pod.labels)}
        if owner is not None:
            ref = {"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name, "uid": owner.uid}
            meta["ownerReferences"] = [{**ref, "controller": True}]
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}})
    return out


class _Checker:
    """Compares up to ``limit`` oracle answers with the scores derived from the index's reports."""

    def __init__(self, snapshot: Snapshot, profile: Profile, index: SpreadIndex, limit: int) -> None:
        self.nodes = {n.name: n for n in snapshot.nodes}
        self.profile, self.index, self.limit = profile, index, limit
        self.checked = self.mismatches = 0

    def check(self, ctrl: Controller, result: dict[str, Any]) -> None:
        if self.checked >= self.limit:
            return
        report = self.index.report_for(ctrl.key)
        if report is None:
            return
        self.checked += 1
        names = result["candidates"]
        same = (
            _derived_scores(report, self.nodes, self.profile, names) == result["scores"]
            and report.candidate_nodes == len(names)
            and report.skipped == result["skipped"]
        )
        self.mismatches += not same


def go_plugin(
    *, scale: float, quick: bool = False, sample: int = 0, budget: int = 2_000_000, check: int = 50
) -> dict[str, Any]:
    """The real plugin once per workload (or per sampled workload, ``sample`` > 0), chunks of at most
    ``budget`` node scores; the cluster is encoded once and re-sent with every chunk. Besides the summed
    ``elapsedNs``: the requests sent and their round trips' wall seconds (the oracle's JSON decode of the
    cluster, its filters and its answer included; not extrapolated)."""
    client = oracle_client
    binary = str(client.build())
    c, profile = cluster(scale), get_profile("v1.28")
    snapshot, objects = c.snapshot, c.objects
    index = fresh_index(snapshot, profile)
    workloads = naive_algorithm.workloads_of(snapshot)
    sample = 20 if quick else sample
    chosen = workloads if not sample or len(workloads) <= sample else random.Random(13).sample(workloads, sample)
    chunk = max(10, min(1000, budget // max(1, len(snapshot.nodes))))
    incoming = _incoming_pods(objects, snapshot, chosen)
    cluster_bytes = orjson.dumps(_oracle_cluster(objects))
    checker = _Checker(snapshot, profile, index, check)
    elapsed_ns = requests = 0
    wall_s = 0.0
    log(f"scale {scale}: Go plugin, {len(chosen)} workloads in chunks of {chunk}")
    with client.Oracle(binary) as oracle:
        for start in range(0, len(incoming), chunk):
            line = b'{"cluster":' + cluster_bytes + b',"incoming":' + orjson.dumps(incoming[start : start + chunk])
            t0 = time.perf_counter()
            reply = oracle.request_bytes(line + b"}")
            wall_s += time.perf_counter() - t0
            requests += 1
            answer = orjson.loads(reply)
            if "error" in answer:
                raise RuntimeError(f"oracle error: {answer['error']}")
            elapsed_ns += int(answer["elapsedNs"])
            for ctrl, result in zip(chosen[start : start + chunk], answer["results"], strict=True):
                checker.check(ctrl, result)
            del answer, line, reply
    plugin_s = elapsed_ns / 1e9 * len(workloads) / len(chosen)
    return {
        "plugin_s": plugin_s,
        "plugin_per_workload_ms": elapsed_ns / 1e6 / len(chosen),
        "plugin_wall_s": wall_s,
        "plugin_requests": requests,
        "plugin_sampled": len(chosen),
        "plugin_speedup": plugin_s / _cold_s(snapshot, profile),
        "plugin_checked": checker.checked,
        "plugin_identical": checker.checked - checker.mismatches,
    }
