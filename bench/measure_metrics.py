"""Metrics figures of ``make bench``: series per ``--node-metrics`` mode against the series budget, and the
scrape's cost (``metrics.freeze`` in the event loop + ``metrics.render`` in a worker thread).

The index is loaded and every report built first, as in a running operator whose writer keeps the reports
current. Timings are medians of ``repeats`` with the GC enabled (as in the operator). Cost per repeat:
O(workloads) for the freeze, O(series) for each render.
"""

from __future__ import annotations

import time

from bench_results import MetricsMode, MetricsResult
from measure_cold import fresh_index
from measure_util import median

from spreadwatch.index import SpreadIndex
from spreadwatch.metrics import MetricsOptions, freeze, registry_for
from spreadwatch.metrics import render as render_metrics
from spreadwatch.scoring import Profile, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = ["measure_metrics"]


def _mode(index: SpreadIndex, mode: str, repeats: int) -> MetricsMode:
    registry = registry_for(index, MetricsOptions(node_series=mode))  # type: ignore[arg-type]
    freezes, renders, cpus, oms = [], [], [], []
    body = b""
    for _ in range(repeats):
        t0 = time.perf_counter()
        frozen = freeze(registry)
        t1 = time.perf_counter()
        c0 = time.process_time()
        body = render_metrics(frozen)
        cpus.append(time.process_time() - c0)
        t2 = time.perf_counter()
        render_metrics(frozen, openmetrics=True)
        oms.append(time.perf_counter() - t2)
        freezes.append(t1 - t0)
        renders.append(t2 - t1)
    scrapes = [f + r for f, r in zip(freezes, renders, strict=True)]
    return MetricsMode(
        series=sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#")),
        mib=len(body) / 2**20,
        freeze_s=median(freezes),
        render_s=median(renders),
        render_cpu_s=median(cpus),
        openmetrics_s=median(oms),
        scrape_s=median(scrapes),
        scrape_runs_s=scrapes,
    )


def measure_metrics(snapshot: Snapshot, profile: Profile, repeats: int) -> MetricsResult:
    """Series and scrape cost for modes ``default`` and ``none``; ``all`` (every candidate node twice, tens of
    millions of series at scale 1.0) is counted, not rendered."""
    index = fresh_index(snapshot, profile)
    reports = index.reports()
    zones = {zone_key(n.labels, profile) for n in snapshot.nodes} - {None}
    pods = index.sizes().pods
    modes = {mode: _mode(index, mode, repeats) for mode in ("default", "none")}
    candidates = sum(r.candidate_nodes for r in reports)
    return MetricsResult(
        pods=pods,
        workloads=len(reports),
        zones=len(zones),
        budget=pods + 10 * len(reports) * len(zones),
        workload_zones=sum(len(r.zones) for r in reports),
        candidates=candidates,
        modes=modes,
        all_series=modes["none"].series + 2 * candidates,
    )
