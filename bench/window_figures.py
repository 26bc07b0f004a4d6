"""How many window starts a report's probabilities need: accuracy against every start vs. CPU per report.

``--window-samples S`` averages a workload's best-node and best-zone probabilities over S stratified window
starts (scoring/window.py); averaged over every start of the cluster's n nodes they are exact. On
bench/synth.py's cluster, per profile, for ``workloads`` workloads drawn at random (seed 7) among those whose
window leaves out candidates: the exact values (every start), then for each S the absolute error of the
estimate (mean, 95th percentile, max, over the workloads) and the CPU time of one report's estimate
(``WindowModel.odds``, the window memo warm as it is for the operator's reports, which share each layout's
starts: median of ``repeats`` passes over the drawn workloads), and that CPU times every windowed workload
of the cluster (a full rebuild's share). Costs: the exact values O(workloads × n windows), each S
O(repeats × workloads × S windows).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

from bench.inputs import cluster
from bench.timing import median, percentile

from spreadwatch.index import SpreadIndex
from spreadwatch.report import Health, ReportOptions
from spreadwatch.scoring import get_profile
from spreadwatch.scoring.window import DEFAULT_WINDOW_SAMPLES, WindowModel

__all__ = ["samples"]


def _errors(estimates: Sequence[float], exact: Sequence[float]) -> list[float]:
    return sorted(abs(e - x) for e, x in zip(estimates, exact, strict=True))


def _profile_rows(
    scale: float, profile: str, counts: Sequence[int], workloads: int, repeats: int
) -> tuple[list[dict[str, Any]], int]:
    """One profile's rows (one per sample count) and how many workloads of the cluster have a window."""
    snapshot = cluster(scale).snapshot
    index = SpreadIndex(get_profile(profile), ReportOptions(window_samples=0))
    index.load(snapshot)
    windowed = [
        r.workload.key
        for r in index.reports()
        if not r.skipped and r.health is not Health.ERROR and r.nodes_scored < r.candidate_nodes
    ]
    chosen = random.Random(7).sample(windowed, min(workloads, len(windowed)))
    models: list[WindowModel] = [m for m in map(index.window_model, chosen) if m is not None]
    if not models:
        return [], len(windowed)
    every = len(snapshot.nodes)
    exact = [m.odds(every) for m in models]
    assert all(o.exact for o in exact)
    node_exact = [o.best_node or 0.0 for o in exact]
    zone_exact = [o.best_zone or 0.0 for o in exact]
    rows = []
    for count in counts:
        cpu: list[float] = []
        estimates = [m.odds(count) for m in models]  # (warms the layout's window memo for these starts)
        for _ in range(repeats):
            c0 = time.process_time()
            estimates = [m.odds(count) for m in models]
            cpu.append(time.process_time() - c0)
        node = _errors([o.best_node or 0.0 for o in estimates], node_exact)
        zone = _errors([o.best_zone or 0.0 for o in estimates], zone_exact)
        per_report_us = median(cpu) / len(models) * 1e6
        rows.append(
            {
                "profile": profile,
                "samples": count,
                "node_mae": round(sum(node) / len(node), 4),
                "node_p95": round(percentile(node, 95), 4),
                "node_max": round(node[-1], 4),
                "zone_mae": round(sum(zone) / len(zone), 4),
                "zone_p95": round(percentile(zone, 95), 4),
                "cpu_us": round(per_report_us, 1),
                "all_reports_s": round(per_report_us * len(windowed) / 1e6, 2),
                "mean_exact": round(sum(node_exact) / len(node_exact), 4),
            }
        )
    return rows, len(windowed)


def samples(
    *,
    scale: float,
    quick: bool = False,
    profiles: Sequence[str] = ("v1.28", "v1.29"),
    counts: Sequence[int] = (4, 8, 16, 32, 64, 128),
    workloads: int = 200,
    repeats: int = 3,
) -> dict[str, Any]:
    """Per profile and sample count: the error of the sampled probabilities against every start, and the CPU
    per report (module docstring); the figures at the default ``--window-samples``."""
    series: list[dict[str, Any]] = []
    out: dict[str, Any] = {"default_samples": DEFAULT_WINDOW_SAMPLES}
    for profile in profiles:
        rows, windowed = _profile_rows(scale, profile, counts, workloads, 1 if quick else repeats)
        series += rows
        tag = profile.replace(".", "_")
        out[f"{tag}_windowed"] = windowed
        at_default = next((r for r in rows if r["samples"] == DEFAULT_WINDOW_SAMPLES), {})
        for key in ("node_mae", "node_p95", "node_max", "cpu_us", "all_reports_s"):
            out[f"{tag}_{key}"] = at_default.get(key, math.nan)  # (NaN: no window at this scale, or not sampled)
    out["series"] = series
    return out
