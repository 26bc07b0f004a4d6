"""Cold figures of ``make bench``: the full computation from parsed records, a node event, and parsing.

* :func:`measure_cold`: ``SpreadIndex(profile).load(snapshot)`` + ``reports()``, median of N, GC on (and the
  what-if with the GC off);
* :func:`measure_node_event`: cordon a node, then rebuild every report it dirtied;
* :func:`measure_parse`: ``parse_object`` of the whole snapshot and ``parse_pod`` per pod.

Each run costs O(pods + workloads × candidate nodes) (the reports), O(objects) for parsing.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Sequence
from typing import Any

import msgspec
from bench_results import ColdResult, NodeEventResult, ParseResult
from measure_util import GCMeter, median

from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_pod
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot

__all__ = ["ColdRun", "cold_once", "fresh_index", "measure_cold", "measure_node_event", "measure_parse"]


@dataclasses.dataclass(frozen=True)
class ColdRun:
    """One cold computation: load and reports() seconds, process CPU seconds, GC seconds, report count."""

    load_s: float
    reports_s: float
    cpu_s: float
    gc_s: float
    reports: int

    @property
    def total_s(self) -> float:
        return self.load_s + self.reports_s


def fresh_index(snapshot: Snapshot, profile: Profile) -> SpreadIndex:
    """An index loaded with ``snapshot``, every report built and the dirty set emptied (an operator at rest)."""
    index = SpreadIndex(profile, ReportOptions())
    index.load(snapshot)
    index.reports()
    index.take_dirty()
    return index


def cold_once(snapshot: Snapshot, profile: Profile) -> ColdRun:
    """One cold computation (the index is dropped before returning)."""
    with GCMeter() as meter:
        c0 = time.process_time()
        t0 = time.perf_counter()
        index = SpreadIndex(profile, ReportOptions())
        index.load(snapshot)
        t1 = time.perf_counter()
        reports = index.reports()
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
    return ColdRun(t1 - t0, t2 - t1, cpu, meter.seconds, len(reports))


def _gc_off_total(snapshot: Snapshot, profile: Profile, repeats: int) -> float:
    """Median load + reports seconds with the cyclic GC disabled (what gc.disable/freeze around them gives)."""
    totals = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            totals.append(cold_once(snapshot, profile).total_s)
        finally:
            gc.enable()
    return median(totals)


def measure_cold(snapshot: Snapshot, profile: Profile, repeats: int, what_if: bool = True) -> ColdResult:
    """Medians of ``repeats`` cold computations (GC on), and with ``what_if`` the same with the GC off."""
    runs = []
    for _ in range(repeats):
        gc.collect()
        runs.append(cold_once(snapshot, profile))
    return ColdResult(
        repeats=repeats,
        total_s=median([r.total_s for r in runs]),
        total_runs_s=[r.total_s for r in runs],
        load_s=median([r.load_s for r in runs]),
        reports_s=median([r.reports_s for r in runs]),
        cpu_s=median([r.cpu_s for r in runs]),
        gc_s=median([r.gc_s for r in runs]),
        reports=runs[-1].reports,
        gc_off_total_s=_gc_off_total(snapshot, profile, repeats) if what_if else None,
    )


def measure_node_event(snapshot: Snapshot, profile: Profile) -> NodeEventResult:
    """Cordon one schedulable node: ``apply(node)`` + rebuild every dirty report (median of 3 nodes)."""
    index = fresh_index(snapshot, profile)
    runs, dirty_n = [], 0
    for node in [n for n in snapshot.nodes if not n.unschedulable][:3]:
        t0 = time.perf_counter()
        index.apply(msgspec.structs.replace(node, unschedulable=True))
        dirty, _ = index.take_dirty()
        for key in dirty:
            index.report_for(key)
        runs.append(time.perf_counter() - t0)
        dirty_n = len(dirty)
    return NodeEventResult(cordon_s=median(runs), dirty=dirty_n)


def measure_parse(objects: Sequence[dict[str, Any]], limit: int = 20000) -> ParseResult:
    """``parse_object`` of the whole snapshot (GC on, then off) and ``parse_pod`` per pod (the first ``limit``
    pods): what an informer event costs before ``apply``."""
    gc.collect()
    with GCMeter() as meter:
        t0 = time.perf_counter()
        Snapshot.from_objects(objects)
        whole = time.perf_counter() - t0
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        Snapshot.from_objects(objects)
        whole_off = time.perf_counter() - t0
    finally:
        gc.enable()
    gc.collect()
    pods = [o for o in objects if o.get("kind") == "Pod"][:limit]
    t0 = time.perf_counter()
    for o in pods:
        parse_pod(o)
    per_pod = (time.perf_counter() - t0) / max(1, len(pods))
    return ParseResult(
        snapshot_parse_s=whole,
        snapshot_parse_gc_s=meter.seconds,
        snapshot_parse_gc_off_s=whole_off,
        pod_parse_us=per_pod * 1e6,
    )
