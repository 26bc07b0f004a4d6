"""What ``make bench`` compares spreadwatch's index against, score for score:

* the naive seed algorithm (bench/naive.py) on a sample of workloads, extrapolated linearly;
* the real kube-scheduler v1.28 plugin (tests/oracle, through its own client ``oracle_client``): every
  workload's representative next pod as ``incoming``, in chunks; the summed ``elapsedNs`` (PreScore + Score +
  NormalizeScore, no filters, no JSON).

Both check that the scores derived from the index's reports are identical. Costs: naive O(sampled workloads ×
bound pods); oracle O(workloads × candidate nodes) in Go plus O(chunks × cluster size) of JSON.
"""

from __future__ import annotations

import gc
import importlib
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import naive
import orjson
from bench_results import NaiveResult, OracleResult
from measure_util import log, median

from spreadwatch.index import SpreadIndex
from spreadwatch.model import Controller
from spreadwatch.report import SpreadReport
from spreadwatch.scoring import Profile, representative_pod, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = ["incoming_pods", "measure_naive", "measure_oracle", "oracle_binary", "oracle_cluster"]

_ORACLE_DIR = Path(__file__).resolve().parent.parent / "tests" / "oracle"


def _oracle_client() -> ModuleType:
    """tests/oracle/oracle_client.py (not a package: imported from its directory on demand)."""
    if str(_ORACLE_DIR) not in sys.path:
        sys.path.insert(0, str(_ORACLE_DIR))
    return importlib.import_module("oracle_client")


def oracle_binary() -> str | None:
    """Path of the spreadwatch-oracle binary (built or reused by tests/oracle/build.sh), or None."""
    try:
        return str(_oracle_client().build())
    except Exception as err:  # missing Go, build failure
        log(f"oracle unavailable: {err}")
        return None


def derived_scores(
    report: SpreadReport, nodes: dict[str, Any], profile: Profile, names: Sequence[str]
) -> dict[str, int]:
    """Each named candidate's final score as derived from the report (O(names))."""
    return {n: report.score_of(n, zone_key(nodes[n].labels, profile)) for n in names}


def _naive_once(
    snapshot: Snapshot, profile: Profile, chosen: Sequence[Controller]
) -> tuple[naive.NaiveScorer, float, float, float]:
    """(scorer, NodeInfo build s, wall s per workload, CPU s per workload) of one naive pass over ``chosen``."""
    gc.collect()
    t0 = time.perf_counter()
    scorer = naive.NaiveScorer(snapshot, profile)
    t1 = time.perf_counter()
    c1 = time.process_time()
    for ctrl in chosen:
        scorer.scores(ctrl)
    t2 = time.perf_counter()
    return scorer, t1 - t0, (t2 - t1) / len(chosen), (time.process_time() - c1) / len(chosen)


def measure_naive(
    snapshot: Snapshot,
    profile: Profile,
    index: SpreadIndex,
    sample: int,
    repeats: int,
    seed: int = 11,
    check: int = 20,
) -> NaiveResult:
    """Time the naive algorithm on ``sample`` random workloads (all when there are fewer) and extrapolate;
    check ``check`` of them against the index's reports (outside the timing)."""
    workloads = naive.workloads_of(snapshot)
    chosen = workloads if len(workloads) <= sample else random.Random(seed).sample(workloads, sample)
    runs = [_naive_once(snapshot, profile, chosen) for _ in range(repeats)]
    scorer = runs[-1][0]
    build, per_workload = median([r[1] for r in runs]), median([r[2] for r in runs])
    cpu_per_workload = median([r[3] for r in runs])
    nodes = {n.name: n for n in snapshot.nodes}
    checked = mismatches = 0
    for ctrl in chosen[:check]:
        expect = scorer.scores(ctrl)
        report = index.report_for(ctrl.key)
        if expect is None or report is None:
            continue
        checked += 1
        if derived_scores(report, nodes, profile, list(expect)) != expect or report.candidate_nodes != len(expect):
            mismatches += 1
    return NaiveResult(
        workloads=len(workloads),
        sampled=len(chosen),
        extrapolated=len(chosen) < len(workloads),
        nodeinfo_build_s=build,
        per_workload_ms=per_workload * 1e3,
        total_s=build + per_workload * len(workloads),
        cpu_total_s=build + cpu_per_workload * len(workloads),
        repeats=repeats,
        checked=checked,
        mismatches=mismatches,
    )


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


def oracle_cluster(objects: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The oracle's cluster form (``oracle_client.cluster_from_objects``), pods slimmed for transport."""
    cluster: dict[str, list[dict[str, Any]]] = _oracle_client().cluster_from_objects(objects)
    cluster["pods"] = [_slim_pod(p) for p in cluster["pods"]]
    return cluster


def incoming_pods(
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
            derived_scores(report, self.nodes, self.profile, names) == result["scores"]
            and report.candidate_nodes == len(names)
            and report.skipped == result["skipped"]
        )
        self.mismatches += not same


def measure_oracle(
    objects: Sequence[dict[str, Any]],
    snapshot: Snapshot,
    profile: Profile,
    index: SpreadIndex,
    binary: str,
    sample: int | None,
    chunk: int,
    seed: int = 13,
    check: int = 50,
) -> OracleResult:
    """Run the real plugin once per workload (or per sampled workload) over the same cluster, ``chunk``
    incoming pods per request; the cluster is encoded once and re-sent with every chunk."""
    client = _oracle_client()
    workloads = naive.workloads_of(snapshot)
    chosen = workloads if sample is None or len(workloads) <= sample else random.Random(seed).sample(workloads, sample)
    incoming = incoming_pods(objects, snapshot, chosen)
    cluster_bytes = orjson.dumps(oracle_cluster(objects))
    checker = _Checker(snapshot, profile, index, check)
    elapsed_ns = requests = 0
    wall0 = time.perf_counter()
    with client.Oracle(binary) as oracle:
        for start in range(0, len(incoming), chunk):
            line = b'{"cluster":' + cluster_bytes + b',"incoming":' + orjson.dumps(incoming[start : start + chunk])
            answer = orjson.loads(oracle.request_bytes(line + b"}"))
            if "error" in answer:
                raise RuntimeError(f"oracle error: {answer['error']}")
            requests += 1
            elapsed_ns += int(answer["elapsedNs"])
            for ctrl, result in zip(chosen[start : start + chunk], answer["results"], strict=True):
                checker.check(ctrl, result)
            del answer, line
    plugin_s = elapsed_ns / 1e9
    return OracleResult(
        workloads=len(workloads),
        sampled=len(chosen),
        extrapolated=len(chosen) < len(workloads),
        requests=requests,
        chunk=chunk,
        plugin_s_measured=plugin_s,
        plugin_s=plugin_s * len(workloads) / len(chosen),
        per_workload_ms=plugin_s / len(chosen) * 1e3,
        wall_s=time.perf_counter() - wall0,
        cluster_mib=len(cluster_bytes) / 2**20,
        checked=checker.checked,
        mismatches=checker.mismatches,
    )
