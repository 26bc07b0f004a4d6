"""Sections of docs/benchmarks.md that have their own block or their own make target: "Metrics" (also
``bench/run.py --metrics-only``), "PodTopologySpread (profile v1.29)" (also ``make bench-pts``) and the
"Misses (and close calls)" explanations (phase table, cProfile hotspots). From typed results only; pure,
O(rows).
"""

from __future__ import annotations

from collections.abc import Sequence

from bench_results import AnalyzePhases, AnalyzeResult, Hotspots, MetricsResult, ProfileComparison, RunInfo
from doc_blocks import METRICS_BLOCK, PTS_BLOCK
from render_table import ColumnTable, fmt

__all__ = ["hotspot_table", "metrics_section", "phases_section", "pts_section"]

METRICS_SCRAPE_TARGET_S = 1.0
P99_TARGET_US, COLD_TARGET_S = 1000.0, 1.0  # issue 14, at scale 1.0


def _status(value: float, limit: float) -> str:
    return f"{'PASS' if value <= limit else '**MISS**'} ({100 * (1 - value / limit):.0f} % margin)"


def metrics_section(scales: Sequence[float], results: Sequence[MetricsResult], info: RunInfo) -> list[str]:
    """The "Metrics" block, one column per scale; the targets at the largest."""
    m = results[-1]
    default = m.modes["default"]
    lines = [
        METRICS_BLOCK[0],
        "## Metrics",
        "",
        f"Measured {info.date} with `{info.command}` (load average {info.load_start} / {info.load_end}). A scrape "
        "is `metrics.freeze` (in the event loop: an immutable view, O(workloads)) plus `metrics.render` (in a "
        "worker thread: the exposition text, O(series)); docs/metrics.md explains the modes and the budget.",
        "",
        f"| target (at scale {fmt(scales[-1])}) | value | target | status |",
        "|---|---:|---|---|",
        f"| series, `--node-metrics default` | {default.series:,} | ≤ pods + 10 × workloads × zones = "
        f"{m.pods:,} + 10 × {m.workloads:,} × {m.zones} = {m.budget:,} | {_status(default.series, m.budget)} |",
        f"| scrape (freeze + render, text format), `default` | {fmt(default.scrape_s)} s | "
        f"≤ {fmt(METRICS_SCRAPE_TARGET_S)} s | {_status(default.scrape_s, METRICS_SCRAPE_TARGET_S)} |",
        "",
    ]
    t = ColumnTable(results, [f"scale {s}" for s in scales])
    t.row("pods / workloads / zones", lambda x: f"{x.pods:,} / {x.workloads:,} / {x.zones}")
    t.row("series budget: pods + 10 × workloads × zones", "budget", "/s")
    t.row("**series, default** (node_pods on busy nodes, node_score on the top 3)",
          lambda x: x.modes["default"].series, "/s")  # fmt: skip
    t.row("  ↳ of the budget (%)", lambda x: 100 * x.modes["default"].series / x.budget)
    t.row("series, none (no node series)", lambda x: x.modes["none"].series, "/s")
    t.row("series, all (every candidate node; counted, not rendered)", "all_series", "/s")
    t.row("  ↳ workload × zone pairs / workload × candidate-node pairs",
          lambda x: f"{x.workload_zones:,} / {x.candidates:,}")  # fmt: skip
    t.row("**scrape, default: freeze + render** (s, median)", lambda x: x.modes["default"].scrape_s)
    t.row("  ↳ freeze, in the event loop (s)", lambda x: x.modes["default"].freeze_s)
    t.row("  ↳ render, worker thread, text format (s)", lambda x: x.modes["default"].render_s)
    t.row("  ↳ render CPU time (s)", lambda x: x.modes["default"].render_cpu_s)
    t.row("  ↳ render, OpenMetrics (s)", lambda x: x.modes["default"].openmetrics_s)
    t.row("  ↳ runs (s)", lambda x: ", ".join(fmt(v) for v in x.modes["default"].scrape_runs_s))
    t.row("  ↳ body size (MiB, uncompressed text)", lambda x: x.modes["default"].mib)
    t.row("scrape, none: freeze + render (s)", lambda x: x.modes["none"].scrape_s)
    t.row("  ↳ body size (MiB)", lambda x: x.modes["none"].mib)
    return [*lines, *t.lines, "", METRICS_BLOCK[1], ""]


def pts_section(comparisons: Sequence[ProfileComparison], info: RunInfo, repeats: int, events: int) -> list[str]:
    """The "PodTopologySpread (profile v1.29)" block: v1.28 and v1.29 side by side, per scale."""
    lines = [
        PTS_BLOCK[0],
        "## PodTopologySpread (profile v1.29)",
        "",
        f"`{info.command}` ({info.date}, {info.machine}, load {info.load_start} / {info.load_end}, "
        f"{info.software}): the bench/synth.py cluster, median of {repeats} runs, a stream of {events} pod events. "
        "v1.28 is measured alongside on the same cluster. Targets: pod event p99 ≤ 1 ms and cold full "
        "computation ≤ 1 s at scale 1.0. CPU columns (process time) are less sensitive to a busy machine than the "
        "wall-clock ones; compare v1.29 with v1.28 of the same run.",
        "",
        "| scale | nodes | pods | profile | cold full computation (CPU) | pod event p50 | pod event p99 (CPU) "
        "| events/s | cordon (dirty reports) | exact (sampled workloads) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        for m in c.profiles:
            verdict = ""
            if m.profile == "v1.29" and c.scale >= 1.0:
                ok = m.p99_us <= P99_TARGET_US and m.cold_s <= COLD_TARGET_S
                verdict = " **PASS**" if ok else " **MISS**"
            lines.append(
                f"| {c.scale} | {c.nodes} | {c.pods} | {m.profile}{verdict} | {m.cold_s:.3f} s ({m.cold_cpu_s:.3f} s) "
                f"| {m.p50_us:.0f} µs | {m.p99_us:.0f} µs ({m.cpu_p99_us:.0f} µs) | {m.events_per_s:,.0f} "
                f"| {m.cordon_s * 1e3:.1f} ms ({m.cordon_dirty}) | {'' if m.checked is None else m.checked} |"
            )
    return [*lines, PTS_BLOCK[1]]


def phases_section(analyze: AnalyzeResult, phases: AnalyzePhases) -> list[str]:
    """Where ``analyze -o json`` spends its time (for a missed or close analyze target)."""
    total = sum(v[0] for k, v in phases.phases.items() if not k.startswith("("))
    lines = [
        f"### analyze -o json ({fmt(analyze.analyze_s)} s end-to-end vs json.load {fmt(analyze.json_load_s)} s)",
        "",
        "| phase (in-process, one run) | s | of which cyclic GC (s) | % of total |",
        "|---|---:|---:|---:|",
    ]
    for k, (v, g) in phases.phases.items():
        share = "" if k.startswith("(") else f"{100 * v / total:.0f} %"
        lines.append(f"| {k} | {v:.2f} | {g:.2f} | {share} |")
    lines += [
        "",
        "Rows in parentheses are reference splits (not in the total). The whole command in-process: "
        f"{phases.in_process_s:.2f} s with the GC on ({phases.in_process_gc_s:.2f} s of it in GC), "
        f"{phases.in_process_gc_off_s:.2f} s with `gc.disable()`.",
        "",
    ]
    return lines


def hotspot_table(title: str, prof: Hotspots, n: int = 12) -> list[str]:
    """The top ``n`` functions by own time and spreadwatch's by cumulative time."""
    lines = [
        f"### {title}",
        "",
        f"cProfile total {prof.total_s:.2f} s, profiled with the cyclic GC disabled (GC time is given separately "
        "above); profiling overhead inflates call-heavy code, so use the percentages, not the absolute times.",
        "",
        "| # | function (own time) | calls | own s | own % | cum % |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for i, h in enumerate(prof.by_tottime[:n], 1):
        lines.append(
            f"| {i} | `{h.func}` | {h.calls:,} | {h.tottime:.3f} | {h.tottime_pct:.1f} | {h.cumtime_pct:.1f} |"
        )
    lines += ["", "| # | spreadwatch function (cumulative) | calls | cum s | cum % |", "|---|---|---:|---:|---:|"]
    for i, h in enumerate(prof.by_cumtime[:n], 1):
        lines.append(f"| {i} | `{h.func}` | {h.calls:,} | {h.cumtime:.3f} | {h.cumtime_pct:.1f} |")
    return [*lines, ""]
