"""Shared pieces of the soak benchmarks (bench/soak.py, bench/soak_cluster.py): summary, markdown, splicing.

The two soaks write their own blocks of docs/benchmarks.md, between ``<!-- soak-index:start ... -->`` and
``<!-- soak-cluster:start ... -->`` markers; ``bench/run.py`` keeps both blocks when it rewrites the file.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_env import ROOT, commit, loadavg, machine, now_utc
from doc_blocks import soak_block, splice_block
from measure_util import percentile

__all__ = [
    "DOC",
    "RESULTS_DIR",
    "block_markers",
    "cluster_section",
    "fmt",
    "index_section",
    "loadavg",
    "meta",
    "percentile",
    "publish",
    "save_json",
    "series_table",
    "slope_per_hour",
    "splice",
    "summarize",
    "trend_line",
]

DOC = ROOT / "docs" / "benchmarks.md"
RESULTS_DIR = ROOT / "bench-results"


def block_markers(name: str) -> tuple[str, str]:
    """The start and end markers of a soak's block of docs/benchmarks.md."""
    return soak_block(name)


def meta() -> dict[str, Any]:
    """Date, machine, load average at start, commit: what every benchmark figure must be read with."""
    return {
        "date": now_utc(),
        "machine": machine(),
        "python": platform.python_version(),
        "commit": commit(("operator",)),
        "load_start": loadavg(),
    }


def save_json(result: dict[str, Any], kind: str) -> Path:
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS_DIR / f"soak-{kind}-{stamp}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    return path


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (minutes, value) points, per hour. O(points); 0 for fewer than two points."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx * 60


def _trend(samples: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    half = samples[len(samples) // 2 :]
    third = samples[len(samples) * 2 // 3 :]
    values = [float(s[key]) for s in samples]
    last_half = [float(s[key]) for s in half]
    return {
        "first": values[0],
        "last": values[-1],
        "max": max(values),
        "min_second_half": min(last_half),
        "max_second_half": max(last_half),
        "slope_per_hour_all": round(slope_per_hour([(s["t_min"], s[key]) for s in samples]), 2),
        "slope_per_hour_second_half": round(slope_per_hour([(s["t_min"], s[key]) for s in half]), 2),
        "growth_second_half": round(last_half[-1] - last_half[0], 2),
        "slope_per_hour_last_third": round(slope_per_hour([(s["t_min"], s[key]) for s in third]), 2),
        "growth_last_third": round(float(third[-1][key]) - float(third[0][key]), 2),
        "last_third_from_min": third[0]["t_min"],
    }


def summarize(
    samples: Sequence[dict[str, Any]], keys: Sequence[str] = ("rss_mib", "interned_label_maps")
) -> dict[str, Any]:
    """Trend (first/last/max, least-squares slopes over the whole run and its second half) of each key."""
    if not samples:
        return {}
    out: dict[str, Any] = {k: _trend(samples, k) for k in keys if k in samples[0]}
    p99 = sorted(float(s["p99_us"]) for s in samples if not math.isnan(s.get("p99_us", math.nan)))
    if p99:
        out["p99_us_median_of_samples"] = p99[len(p99) // 2]
        out["p99_us_max_of_samples"] = p99[-1]
    wpm = [float(s["writes_per_min"]) for s in samples if "writes_per_min" in s]
    if wpm:
        out["writes_per_min_mean"] = round(sum(wpm) / len(wpm), 1)
        out["writes_per_min_max"] = max(wpm)
    return out


def fmt(x: Any) -> str:
    """A figure for a markdown table: 3 significant digits, thousands separators, "–" for NaN."""
    if isinstance(x, float):
        if math.isnan(x):
            return "–"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def series_table(samples: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---:|" * len(columns)]
    lines += ["| " + " | ".join(fmt(s.get(key, "")) for key, _ in columns) + " |" for s in samples]
    return lines


def trend_line(label: str, t: dict[str, float], unit: str) -> str:
    return (
        f"* **{label}:** {fmt(t['first'])} → {fmt(t['last'])} {unit} (max {fmt(t['max'])}); second half "
        f"{fmt(t['min_second_half'])}–{fmt(t['max_second_half'])} {unit}, least-squares slope "
        f"**{t['slope_per_hour_second_half']:+.1f} {unit}/h** over the second half, "
        f"**{t['slope_per_hour_last_third']:+.1f} {unit}/h** over the last third (from minute "
        f"{t['last_third_from_min']:g}: {t['growth_last_third']:+g} {unit}), {t['slope_per_hour_all']:+.1f} {unit}/h "
        "over the whole run."
    )


def _header(result: dict[str, Any], title: str, command: str) -> list[str]:
    m = result["meta"]
    return [
        f"## {title}",
        "",
        f"* **Date:** {m['date']} (finished {m.get('finished', '?')}); **command:** `{command}`",
        f"* **Machine:** {m['machine']}, CPython {m['python']}; commit {m['commit']}",
        f"* **Load average** (`uptime`) at start / end: {m['load_start']} / {m.get('load_end', '?')} on 2 cores, "
        "shared with other engineers' builds and test runs: timings are pessimistic.",
    ]


def index_section(result: dict[str, Any]) -> list[str]:
    """The soak-index block (bench/soak.py) as markdown lines, markers included."""
    cfg, base, s = result["config"], result["baseline"], result["summary"]
    start, end = block_markers("soak-index")
    lines = [start, *_header(result, "Soak: index + report writer", "make bench-soak  (bench/soak.py)")]
    lines += [
        f"* **Load:** {cfg['minutes']:g} min of pod watch events at {cfg['rate']:,.0f}/s"
        f"{' (the envelope)' if cfg['rate'] == 5000 else ''} (achieved "
        f"{s['events_per_s']:,.0f}/s, {s['events']:,} events) through `EventRouter.handle` into the index, on "
        f"`bench/synth.py` scale {cfg['scale']:g} ({base['nodes']:,} nodes, {base['workloads']:,} workloads, "
        f"{base['pods']:,} pods; loaded and every report written in {base['load_seconds']} s). New pods get a "
        f"`soak-rev` label that changes every {cfg['rev_seconds']:g} s (label sets of old rollouts keep dying).",
        "* **Writer:** the real `ReportWriter` with the operator's defaults (debounce 1 s, 20 writes/s, burst 20, "
        "resync 300 s); its API side is a **local stand-in** that accepts every write at once and keeps the "
        "reports in memory (counted in the RSS: see the stand-in column). "
        f"{s['api_writes']:,} API writes, {s['writer_failures']} failures, {s['resyncs']} resyncs.",
        "",
        "**Summary**",
        "",
        trend_line("RSS", s["rss_mib"], "MiB"),
        trend_line("Interned label maps (`model.interned_label_maps()`)", s["interned_label_maps"], "maps"),
        f"* **Event latency** (`EventRouter.handle`: parse + index apply/remove + writer collect; wall clock): "
        f"p50 {fmt(s['p50_us_overall'])} µs, p99 **{fmt(s['p99_us_overall'])} µs** over the whole run; p99 per "
        f"interval: median {fmt(s['p99_us_median_of_samples'])} µs, worst {fmt(s['p99_us_max_of_samples'])} µs. "
        f"In process CPU time: p50 {fmt(s['cpu_p50_us_overall'])} µs, p99 **{fmt(s['cpu_p99_us_overall'])} µs**; "
        f"{fmt(s['cpu_us_per_event'])} µs of CPU per event with the writer and the driver, and the process got "
        f"{fmt(s['cpu_share'] * 100)} % of a core on average (1 core = 100 %).",
        f"* **Stalls:** the longest event took **{fmt(s['max_ms_overall'])} ms** (wall); "
        f"{s['intervals_max_over_1s']} of {len(result['samples'])} intervals had one over 1 s.",
        f"* **Full (generation-2) collections** ({_gc_policy(base)}): {s['gc_full']:,} during the churn, "
        f"{fmt(s['gc_full_s'])} s of pauses in all, the longest **{fmt(s['gc_full_max_s'])} s** wall "
        f"({fmt(s['gc_full_max_cpu_s'])} s CPU); {s['gc_checkpoints']} policy checkpoints, {s['gc_whole_heap']} of "
        "them of the whole heap. Counted with `gc.callbacks`, explicit `gc.collect()` calls included.",
        f"* **API writes:** {fmt(s['writes_per_min_mean'])} per minute on average (max "
        f"{fmt(s['writes_per_min_max'])}); the 20/s token bucket allows 1,200.",
        "",
        "**Series** (one row per sample interval; latency columns are that interval's events)",
        "",
    ]
    lines += series_table(result["samples"], [
        ("t_min", "min"), ("rss_mib", "RSS MiB"), ("interned_label_maps", "interned label maps"),
        ("label_groups", "label groups"), ("pods", "pods"), ("events_per_s", "events/s"), ("p50_us", "p50 µs"),
        ("p99_us", "p99 µs"), ("max_us", "max µs"), ("cpu_p99_us", "CPU p99 µs"),
        ("cpu_max_us", "CPU max µs"), ("cpu_share", "CPU share"),
        ("writes_per_min", "writes/min"), ("pending", "pending"),
        ("oldest_pending_s", "oldest pending s"), ("stand_in_mib", "stand-in MiB"), ("gc_full", "full GCs"),
        ("gc_full_s", "full GC s"), ("gc_full_max_s", "longest GC s"), ("gc_full_max_cpu_s", "longest GC CPU s"),
    ])  # fmt: skip
    return [*lines, "", end]


def _gc_policy(baseline: dict[str, Any]) -> str:
    if baseline.get("gc_policy", False):
        return (
            "the operator's GC policy, `runtime/gcpolicy.py`: collect + `gc.freeze()` after the load and every "
            "5 s, no automatic full collections, the whole heap hourly"
        )
    return "no GC policy: CPython's defaults"


def cluster_section(result: dict[str, Any], render_extra: Callable[[dict[str, Any]], list[str]]) -> list[str]:
    """The soak-cluster block (bench/soak_cluster.py); ``render_extra`` adds its load and summary lines."""
    start, end = block_markers("soak-cluster")
    lines = [start, *_header(result, "Soak: the operator on the real control plane", "make bench-soak  "
                              "(bench/soak_cluster.py)"), *render_extra(result)]  # fmt: skip
    return [*lines, "", end]


def publish(
    result: dict[str, Any], meta: dict[str, Any], name: str, render: Callable[[dict[str, Any]], list[str]], out: str
) -> None:
    """End a soak: complete its ``meta`` (taken at the start), save the JSON, print the ``name`` block and
    splice it into the markdown file ``out`` (``-``: print only)."""
    meta["load_end"] = loadavg()
    meta["finished"] = now_utc()
    result["meta"] = meta
    save_json(result, name.removeprefix("soak-"))
    section = render(result)
    print("\n".join(section))
    if out != "-":
        splice(Path(out), name, section)
        print(f"{name}: wrote the {name} block of {out}", file=sys.stderr)


def splice(path: Path, name: str, section: Sequence[str]) -> None:
    """Replace the ``name`` block of the markdown file (or insert it before ``## Method``, else append)."""
    splice_block(path, section, block_markers(name))
