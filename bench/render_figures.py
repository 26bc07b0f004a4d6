"""The "All figures by scale" and "Scaling" sections of docs/benchmarks.md, from :class:`ScaleResult` s only.

Pure; O(figures × scales).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import attrgetter

from bench_results import CpuWall, FloorResult, ScaleResult, YamlDecode
from measure_events import EVENT_TYPES
from render_table import ColumnTable, fmt

__all__ = ["by_scale_section", "decode_rows", "scaling_section"]

_FORMATS = ("compact", "indent2", "indent4")


def _workload_kinds(r: ScaleResult) -> str:
    o = r.objects
    d, s, rc = o.get("Deployment", 0), o.get("StatefulSet", 0), o.get("ReplicationController", 0)
    return f"{r.workloads:,} ({d:,} / {s:,} / {r.workloads - d - s - rc:,} / {rc:,})"


def _joined(values: Sequence[float], spec: str = ".2f") -> str:
    return ", ".join(format(v, spec) for v in values)


def _pair(cw: CpuWall) -> str:
    return f"{cw.wall_s:.2f} s / {cw.cpu_s:.2f} s"


def _yaml_cell(y: YamlDecode) -> str:
    return f"{y.yaml_over_json:.0f}× ({y.objects:,} objects: {y.yaml.cpu_s:.2f} s / {y.json_typed.cpu_s:.2f} s)"


def _cluster_rows(t: ColumnTable) -> None:
    t.row("nodes", lambda r: r.objects.get("Node", 0), "/s")
    t.row("namespaces", lambda r: r.objects.get("Namespace", 0), "/s")
    t.row("workloads (Deploy / STS / RS / RC)", _workload_kinds)
    t.row("pods", "pods", "/s")
    t.row("ReplicaSets (incl. Deployment-owned)", lambda r: r.objects.get("ReplicaSet", 0), "/s")
    t.row("label groups / candidate sets in the index",
          lambda r: f"{r.memory.label_groups:,} / {r.memory.candidate_sets}")  # fmt: skip
    t.row("dump size (MiB, 2-space indented JSON)", "dump_mib")


def _cold_rows(t: ColumnTable) -> None:
    t.row("**cold full computation** (s, median)", "cold.total_s")
    t.row("  ↳ load (s)", "cold.load_s")
    t.row("  ↳ reports() (s)", "cold.reports_s")
    t.row("  ↳ CPU time (s)", "cold.cpu_s")
    t.row("  ↳ per 1,000 pods (ms)", lambda r: 1e3 * r.cold.total_s / (r.pods / 1e3))
    t.row("  ↳ runs (s)", lambda r: _joined(r.cold.total_runs_s))
    t.row("  ↳ of which cyclic GC (s)", "cold.gc_s")
    t.row("  ↳ what-if: same with the GC disabled (s)", "cold.gc_off_total_s")
    t.row("node event: cordon one node + rebuild dirty reports (s)", "node_event.cordon_s")
    t.row("  ↳ workloads dirtied by it", "node_event.dirty", "/s")
    t.row("parse_object of the whole snapshot (s, not in the figure above)", "parse.snapshot_parse_s")
    t.row("  ↳ of which cyclic GC (s)", "parse.snapshot_parse_gc_s")
    t.row("  ↳ what-if: GC disabled (s)", "parse.snapshot_parse_gc_off_s")
    t.row("parse_pod per pod event (µs, not in the event figures)", "parse.pod_parse_us")


def _memory_rows(t: ColumnTable) -> None:
    t.row("**index RSS incl. records** (MiB)", "memory.index_total_mib")
    t.row("  ↳ records (Snapshot) (MiB)", "memory.records_mib")
    t.row("  ↳ index structures: RSS after load − before load (MiB)", "memory.index_delta_mib")
    t.row("  ↳ reports (MiB)", "memory.reports_delta_mib")
    t.row("  ↳ peak RSS of the subprocess, VmHWM (MiB, absolute)", "memory.peak_rss_mib")
    t.row("  ↳ peak RSS after parsing, before load (MiB, absolute)", "memory.peak_rss_after_parse_mib")
    t.row("  ↳ ru_maxrss of the subprocess (MiB; inherits the parent's peak, see notes)", "memory.maxrss_mib")
    t.row("  ↳ interpreter + imports baseline (MiB)", "memory.base_mib")


def _event_rows(t: ColumnTable) -> None:
    t.row("**pod event p50** (µs)", "incremental.p50_us")
    t.row("**pod event p99** (µs)", "incremental.p99_us")
    t.row("  ↳ p99.9 / max (µs)", lambda r: f"{fmt(r.incremental.p999_us)} / {fmt(r.incremental.max_us)}")
    t.row("  ↳ mean (µs)", "incremental.mean_us")
    t.row("  ↳ dirty workloads per event (mean)", "incremental.dirty_mean")
    t.row("  ↳ p99 runs (µs)", lambda r: _joined(r.incremental.runs_p99_us, ".0f"))
    t.row("  ↳ CPU time per event: p50 / p99 (µs)",
          lambda r: f"{fmt(r.incremental.cpu_p50_us)} / {fmt(r.incremental.cpu_p99_us)}")  # fmt: skip
    t.row("  ↳ share of the stream's wall time the process was on a CPU",
          lambda r: f"{100 * r.incremental.cpu_share:.0f} %")  # fmt: skip
    t.row("  ↳ share of the stream's wall time in cyclic GC", lambda r: f"{100 * r.incremental.gc_share:.0f} %")
    t.row("  ↳ full (gen-2) collections during the stream", "incremental.gen2_collections")
    t.row("  ↳ what-if gc.freeze() after load: p50 / p99 / max (µs)",
          lambda r: " / ".join(fmt(v) for v in (r.incremental.gc_frozen.p50_us, r.incremental.gc_frozen.p99_us,
                                                r.incremental.gc_frozen.max_us)))  # fmt: skip
    t.row("  ↳ what-if gc.freeze() after load: events/s", "incremental.gc_frozen.events_per_s", "/s")
    t.row("**sustained pod events/s**", "incremental.events_per_s", "/s")
    t.row("  ↳ runs (/s)", lambda r: _joined(r.incremental.runs_events_per_s, ",.0f"))
    t.row("  ↳ per CPU second (/s)", "incremental.cpu_events_per_s", "/s")
    for kind in EVENT_TYPES:
        t.row(f"  ↳ {kind}: p50 / p99 / CPU p99 (µs)", _type_cell(kind))


def _type_cell(kind: str) -> Callable[[ScaleResult], str]:
    def cell(r: ScaleResult) -> str:
        s = r.incremental.by_type[kind]
        return f"{fmt(s.p50_us)} / {fmt(s.p99_us)} / {fmt(s.cpu_p99_us)}"

    return cell


def _baseline_rows(t: ColumnTable) -> None:
    how = "extrapolated from ", "measured on all "
    t.row("**naive seed algorithm, all workloads** (s)", "naive.total_s")
    t.row("  ↳ how", lambda r: how[not r.naive.extrapolated] + f"{r.naive.sampled:,} workloads")
    t.row("  ↳ per workload (ms)", "naive.per_workload_ms")
    t.row("  ↳ CPU time, all workloads (s)", "naive.cpu_total_s")
    t.row("  ↳ identical scores to the index (checked workloads)",
          lambda r: f"{r.naive.checked - r.naive.mismatches}/{r.naive.checked}")  # fmt: skip
    t.row("**speed-up vs naive** (×)", "naive_speedup")
    t.row("**Go plugin, all workloads: summed elapsedNs** (s)", "oracle.plugin_s")
    t.row("  ↳ how", lambda r: how[not r.oracle.extrapolated]
          + f"{r.oracle.sampled:,} workloads, {r.oracle.requests} requests")  # fmt: skip
    t.row("  ↳ per workload (ms)", "oracle.per_workload_ms")
    t.row("  ↳ oracle wall time incl. JSON decode + filters (s)", "oracle.wall_s")
    t.row("  ↳ identical scores to the index (checked workloads)",
          lambda r: f"{r.oracle.checked - r.oracle.mismatches}/{r.oracle.checked}")  # fmt: skip
    t.row("**speed-up vs Go plugin** (×)", "oracle_speedup")


def decode_rows(row: Callable[..., None]) -> None:
    """The typed-decoding lines (issue 13), ``row(label, get)`` with ``get`` taking a :class:`ScaleResult`."""
    row("dump sizes: compact / 4-space (MiB)",
        lambda r: f"{r.decode.sizes_mib['compact']:.2f} / {r.decode.sizes_mib['indent4']:.2f}")  # fmt: skip
    row("**analyze ÷ json.load, compact / 4-space dump** (×, wall; CPU in parentheses)",
        lambda r: " / ".join(f"{a.ratio:.2f} ({a.cpu_ratio:.2f})"
                             for a in (r.decode.analyze_compact, r.decode.analyze_indent4)))  # fmt: skip
    row("**peak RSS of analyze -o json**: compact / 2-space / 4-space (MiB)",
        lambda r: " / ".join(f"{r.decode.analyze_rss_mib[k]:.0f}" for k in _FORMATS))  # fmt: skip
    for key, label in (("compact", "compact"), ("indent2", "2-space"), ("indent4", "4-space")):
        row(f"load_snapshot ÷ json.load, {label} dump (CPU, in one process)",
            lambda r, k=key: (f"{r.decode.formats[k].cpu_ratio:.2f}× ({r.decode.formats[k].typed.cpu_s:.2f} s / "
                              f"{r.decode.formats[k].json_load.cpu_s:.2f} s)"))  # fmt: skip
    row("  ↳ before: orjson + parse_object ÷ json.load, compact (CPU)",
        lambda r: f"{r.decode.reference_cpu_ratio:.2f}×")  # fmt: skip
    row("YAML ÷ JSON load_snapshot, same sample (CPU)", lambda r: _yaml_cell(r.decode.yaml_sample))
    row("**cold full computation incl. decode** (compact; s wall / CPU)", lambda r: _pair(r.decode.cold_with_decode))
    row("**operator initial list: raw pages → records** (s wall / CPU)",
        lambda r: _pair(r.decode.initial_list.typed))  # fmt: skip
    row("  ↳ before: orjson + parse_object of the same pages (s wall / CPU)",
        lambda r: _pair(r.decode.initial_list.orjson_parse_object))  # fmt: skip


def _floor_sum(f: FloorResult) -> str:
    parts = (f.cold_decode_cpu_s, f.cold_count_cpu_s, f.cold_workloads_cpu_s)
    return f"{fmt(f.cold.cpu_s)} = " + " + ".join(map(fmt, parts))


def _floor_rows(row: Callable[..., None]) -> None:
    """The CPython floor under issue 13's decode targets (bench/measure_floor.py); – where not measured."""
    row("CPython floor of the cold path incl. decode: decode + count + per workload (CPU s; measure_floor.py)",
        lambda r: "–" if r.floor is None else _floor_sum(r.floor))
    row("CPython floor of the initial list: Pod pages → skeleton Structs (s wall / CPU)",
        lambda r: "–" if r.floor is None else _pair(r.floor.listing))  # fmt: skip


def _analyze_rows(t: ColumnTable) -> None:
    t.row("**analyze -o json, subprocess end-to-end** (s)", "analyze.analyze_s")
    t.row("**json.load of the dump** (s, in-process call)", "analyze.json_load_s")
    t.row("  ↳ json.load subprocess incl. startup (s)", "analyze.json_load_subprocess_s")
    t.row("**analyze ÷ json.load** (×)", "analyze.ratio")
    decode_rows(t.row)
    _floor_rows(t.row)
    t.row("  ↳ CPU time: analyze / json.load / ratio",
          lambda r: (f"{fmt(r.analyze.analyze_cpu_s)} s / {fmt(r.analyze.json_load_cpu_s)} s / "
                     f"{fmt(r.analyze.cpu_ratio)}×"))  # fmt: skip
    t.row("  ↳ reports written / output size (MiB)", lambda r: f"{r.analyze.reports:,} / {r.analyze.output_mib:.1f}")
    t.row("  ↳ in-process cli.main: GC on / of which GC / GC off (s)",
          lambda r: " / ".join(fmt(v) for v in (r.analyze_phases.in_process_s, r.analyze_phases.in_process_gc_s,
                                                r.analyze_phases.in_process_gc_off_s)))  # fmt: skip


def by_scale_section(results: Sequence[ScaleResult]) -> list[str]:
    """"All figures by scale": every measured figure, one column per scale."""
    t = ColumnTable(results, [f"scale {r.scale}" for r in results])
    for rows in (_cluster_rows, _cold_rows, _memory_rows, _event_rows, _baseline_rows, _analyze_rows):
        rows(t)
    return ["## All figures by scale", "", *t.lines, ""]


_SCALING: list[tuple[str, str]] = [  # (figure, attribute path in ScaleResult)
    ("cold full computation", "cold.total_s"),
    ("  ↳ load", "cold.load_s"),
    ("  ↳ reports()", "cold.reports_s"),
    ("cold full computation, CPU time", "cold.cpu_s"),
    ("cold full computation with the GC disabled", "cold.gc_off_total_s"),
    ("cold full computation incl. decode (compact)", "decode.cold_with_decode.wall_s"),
    ("index RSS incl. records", "memory.index_total_mib"),
    ("pod event p50", "incremental.p50_us"),
    ("pod event p99", "incremental.p99_us"),
    ("pod event p99, CPU time", "incremental.cpu_p99_us"),
    ("pod event p50 with gc.freeze()", "incremental.gc_frozen.p50_us"),
    ("node event (cordon)", "node_event.cordon_s"),
    ("naive seed algorithm (all workloads)", "naive.total_s"),
    ("naive seed algorithm, CPU time", "naive.cpu_total_s"),
    ("Go plugin per workload (summed)", "oracle.plugin_s"),
    ("analyze -o json", "analyze.analyze_s"),
    ("analyze -o json, CPU time", "analyze.analyze_cpu_s"),
    ("json.load", "analyze.json_load_s"),
    ("json.load, CPU time", "analyze.json_load_cpu_s"),
    ("operator initial list decode", "decode.initial_list.typed.wall_s"),
]


def scaling_section(results: Sequence[ScaleResult]) -> list[str]:
    """Growth of each figure from the smallest to the largest scale, as an exponent of the pod count."""
    a, b = results[0], results[-1]
    na, nb = a.pods or 1, b.pods or 1
    lines = [
        "## Scaling",
        "",
        f"Pods grow {nb / na:.1f}× from scale {a.scale} to {b.scale} (nodes, namespaces and workloads by the "
        "same factor). *Exponent* k solves figure(large) / figure(small) = (pods ratio)^k: "
        "k ≈ 1 is linear growth, k ≈ 2 is workloads × nodes; for a per-event cost, k ≈ 0 is the ideal.",
        "",
        "| figure | " + " | ".join(f"scale {r.scale}" for r in results) + " | ratio | exponent k |",
        "|---|" + "---:|" * (len(results) + 2),
    ]
    for label, path in _SCALING:
        try:
            vals = [attrgetter(path)(r) for r in results]
            k = math.log(vals[-1] / vals[0]) / math.log(nb / na)
        except (AttributeError, TypeError, ValueError, ZeroDivisionError):
            continue
        lines.append(f"| {label} | {' | '.join(fmt(v) for v in vals)} | {vals[-1] / vals[0]:.1f}× | {k:.2f} |")
    return [*lines, ""]
