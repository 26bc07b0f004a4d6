"""The typed results of ``make bench``: what the measuring modules (``measure_*.py``, ``decode_bench.py``) return
and the only thing the rendering modules (``render_*.py``) read.

Plain dataclasses, no spreadwatch import. Times are seconds (``_s``), milliseconds (``_ms``) or microseconds
(``_us``); sizes MiB (``_mib``). :func:`as_json` gives the JSON form written to bench-results/.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AnalyzePhases",
    "AnalyzeResult",
    "BaselineEvents",
    "ColdResult",
    "CpuWall",
    "DecodeResult",
    "FloorResult",
    "FormatDecode",
    "FrozenGcStream",
    "Hotspot",
    "Hotspots",
    "IncrementalResult",
    "InitialList",
    "MemoryResult",
    "MetricsMode",
    "MetricsResult",
    "NaiveResult",
    "NodeEventResult",
    "OracleResult",
    "ParseResult",
    "ProfileComparison",
    "ProfileFigures",
    "RunInfo",
    "ScaleResult",
    "TypeStats",
    "YamlDecode",
    "as_json",
]


@dataclass(frozen=True)
class CpuWall:
    """One timed call (or the medians of several): process CPU seconds and wall-clock seconds."""

    cpu_s: float
    wall_s: float


@dataclass(frozen=True)
class ColdResult:
    """``SpreadIndex.load(snapshot)`` + ``reports()`` from parsed records; medians of ``repeats`` runs."""

    repeats: int
    total_s: float
    total_runs_s: list[float]
    load_s: float
    reports_s: float
    cpu_s: float
    gc_s: float
    reports: int
    gc_off_total_s: float | None = None  # what-if: the same with the cyclic GC disabled


@dataclass(frozen=True)
class NodeEventResult:
    """Cordon one schedulable node and rebuild every dirty report (median of 3 nodes)."""

    cordon_s: float
    dirty: int


@dataclass(frozen=True)
class ParseResult:
    """``parse_object`` of the whole snapshot (GC on, its GC share, GC off) and ``parse_pod`` per pod."""

    snapshot_parse_s: float
    snapshot_parse_gc_s: float
    snapshot_parse_gc_off_s: float
    pod_parse_us: float


@dataclass(frozen=True)
class MemoryResult:
    """RSS stages of building the index in a fresh interpreter (medians over the child runs), in MiB."""

    base_mib: float
    records_mib: float
    index_delta_mib: float
    reports_delta_mib: float
    index_total_mib: float
    after_dropping_snapshot_mib: float
    maxrss_mib: float
    peak_rss_mib: float
    peak_rss_after_parse_mib: float
    reports: int
    label_groups: int
    candidate_sets: int
    repeats: int
    runs_index_total_mib: list[float]


@dataclass(frozen=True)
class TypeStats:
    """Latency of one event type over all repeats (wall p50/p99, CPU p99)."""

    n: int
    p50_us: float
    p99_us: float
    cpu_p99_us: float


@dataclass(frozen=True)
class FrozenGcStream:
    """What-if: the stream replayed once with ``gc.freeze()`` after the load."""

    p50_us: float
    p99_us: float
    max_us: float
    events_per_s: float
    cpu_p99_us: float
    cpu_events_per_s: float


@dataclass(frozen=True)
class IncrementalResult:
    """Pod events through apply/remove + the dirty reports' rebuild: medians over ``repeats`` replays."""

    events: int
    repeats: int
    p50_us: float
    p99_us: float
    p999_us: float
    max_us: float
    mean_us: float
    events_per_s: float
    dirty_mean: float
    gc_s: float
    gc_share: float
    gen2_collections: float
    cpu_p50_us: float
    cpu_p99_us: float
    cpu_events_per_s: float
    cpu_share: float
    runs_p99_us: list[float]
    runs_events_per_s: list[float]
    by_type: dict[str, TypeStats]
    gc_frozen: FrozenGcStream | None = None


@dataclass(frozen=True)
class BaselineEvents:
    """The same pod event stream on an older commit's code, in the same run (bench/baseline_events.py)."""

    commit: str
    events: int
    p99_us: float  # median of the replays' p99, wall clock
    events_per_s: float  # median, wall clock
    runs_p99_us: list[float]
    runs_events_per_s: list[float]


@dataclass(frozen=True)
class NaiveResult:
    """The naive seed algorithm (bench/naive.py), measured on all workloads or extrapolated from a sample."""

    workloads: int
    sampled: int
    extrapolated: bool
    nodeinfo_build_s: float
    per_workload_ms: float
    total_s: float
    cpu_total_s: float
    repeats: int
    checked: int
    mismatches: int


@dataclass(frozen=True)
class OracleResult:
    """The real kube-scheduler plugin (tests/oracle) once per workload: summed ``elapsedNs``."""

    workloads: int
    sampled: int
    extrapolated: bool
    requests: int
    chunk: int
    plugin_s_measured: float
    plugin_s: float
    per_workload_ms: float
    wall_s: float
    cluster_mib: float
    checked: int
    mismatches: int


@dataclass(frozen=True)
class AnalyzeResult:
    """``spreadwatch analyze -o json`` as a subprocess vs ``json.load`` of the same dump (medians)."""

    repeats: int
    analyze_s: float
    analyze_runs_s: list[float]
    json_load_s: float
    json_load_runs_s: list[float]
    json_load_subprocess_s: float
    ratio: float
    analyze_cpu_s: float
    json_load_cpu_s: float
    cpu_ratio: float
    reports: int
    dump_mib: float
    output_mib: float


@dataclass(frozen=True)
class AnalyzePhases:
    """Where ``analyze -o json`` spends its time in-process: phase → (seconds, of which cyclic GC)."""

    phases: dict[str, tuple[float, float]]
    in_process_s: float
    in_process_gc_s: float
    in_process_gc_off_s: float


@dataclass(frozen=True)
class FormatDecode:
    """``load_snapshot`` (typed) against ``json.load`` of one dump format, in one process."""

    json_load: CpuWall
    typed: CpuWall
    cpu_ratio: float


@dataclass(frozen=True)
class YamlDecode:
    """``load_snapshot`` of a sample as YAML against the same sample as compact JSON."""

    objects: int
    yaml: CpuWall
    json_typed: CpuWall
    yaml_over_json: float


@dataclass(frozen=True)
class InitialList:
    """The operator's initial listing: raw API pages → records, typed and the previous (dict) way."""

    pages: int
    pods: int
    typed: CpuWall
    orjson_parse_object: CpuWall


@dataclass(frozen=True)
class FloorResult:
    """The CPython floor under issue 13's decode targets (bench/measure_floor.py): skeleton decoding only."""

    cold: CpuWall  # compact dump → skeleton Structs, pods counted per label group and node, a tuple per workload
    cold_decode_cpu_s: float
    cold_count_cpu_s: float
    cold_workloads_cpu_s: float
    pods: int  # pods counted by the cold floor
    workloads: int  # workloads it answered
    listing: CpuWall  # the Pod pages of the API listing → skeleton Structs, nothing else
    listed_pods: int


@dataclass(frozen=True)
class DecodeResult:
    """Issue 13's decoding figures at one scale (bench/decode_bench.py)."""

    sizes_mib: dict[str, float]
    formats: dict[str, FormatDecode]  # compact, indent2, indent4
    reference: CpuWall  # orjson + parse_object of the compact dump
    reference_cpu_ratio: float
    yaml_sample: YamlDecode
    cold_with_decode: CpuWall
    initial_list: InitialList
    analyze_compact: AnalyzeResult
    analyze_indent4: AnalyzeResult
    analyze_rss_mib: dict[str, float]  # compact, indent2, indent4


@dataclass(frozen=True)
class MetricsMode:
    """One ``--node-metrics`` mode: series, body size and the scrape's cost (medians)."""

    series: int
    mib: float
    freeze_s: float
    render_s: float
    render_cpu_s: float
    openmetrics_s: float
    scrape_s: float
    scrape_runs_s: list[float]


@dataclass(frozen=True)
class MetricsResult:
    """Series per mode against the budget (pods + 10 × workloads × zones), and the scrape cost."""

    pods: int
    workloads: int
    zones: int
    budget: int
    workload_zones: int
    candidates: int
    modes: dict[str, MetricsMode]  # default, none
    all_series: int  # --node-metrics all: counted, not rendered


@dataclass(frozen=True)
class Hotspot:
    """One function of a cProfile run."""

    func: str
    calls: int
    tottime: float
    cumtime: float
    tottime_pct: float
    cumtime_pct: float


@dataclass(frozen=True)
class Hotspots:
    """A cProfile run: its total and the top functions by own and by cumulative time."""

    total_s: float
    by_tottime: list[Hotspot]
    by_cumtime: list[Hotspot]


@dataclass(frozen=True)
class ProfileFigures:
    """The envelope figures of one scoring profile on one cluster (the v1.28 / v1.29 comparison)."""

    profile: str
    cold_s: float
    cold_cpu_s: float
    reports: int
    p50_us: float
    p99_us: float
    cpu_p99_us: float
    events_per_s: float
    cordon_s: float
    cordon_dirty: int
    checked: int | None = None  # workloads checked score for score against score_pod (None: not checked)


@dataclass(frozen=True)
class ProfileComparison:
    """v1.28 and v1.29 side by side on one cluster (``make bench`` per scale, or ``make bench-pts``)."""

    scale: float
    nodes: int
    pods: int
    profiles: list[ProfileFigures]

    def profile(self, name: str) -> ProfileFigures | None:
        """The figures of profile ``name``, if measured."""
        return next((p for p in self.profiles if p.profile == name), None)


@dataclass
class ScaleResult:
    """Every figure of one scale. Optional parts are None when their measurement was not run."""

    scale: float
    objects: dict[str, int]
    workloads: int
    cold: ColdResult
    node_event: NodeEventResult
    incremental: IncrementalResult
    naive: NaiveResult
    parse: ParseResult | None = None
    generate_s: float = 0.0
    memory: MemoryResult | None = None
    oracle: OracleResult | None = None
    oracle_error: str | None = None
    dump_mib: float | None = None
    decode: DecodeResult | None = None
    analyze: AnalyzeResult | None = None
    analyze_phases: AnalyzePhases | None = None
    metrics: MetricsResult | None = None
    comparison: ProfileComparison | None = None  # v1.28 and v1.29 side by side
    baseline: BaselineEvents | None = None  # issue 13's "no regression": the older code's event stream, same run
    floor: FloorResult | None = None  # issue 13: the CPython floor under its decode targets, same input, same run

    @property
    def pods(self) -> int:
        return self.objects.get("Pod", 0)

    @property
    def naive_speedup(self) -> float:
        """Naive seed algorithm (all workloads) ÷ cold full computation, wall clock."""
        return self.naive.total_s / self.cold.total_s

    @property
    def naive_cpu_speedup(self) -> float:
        return self.naive.cpu_total_s / self.cold.cpu_s

    @property
    def oracle_speedup(self) -> float | None:
        """Go plugin (summed elapsedNs, all workloads) ÷ cold full computation; None without the oracle."""
        return None if self.oracle is None else self.oracle.plugin_s / self.cold.total_s

    def profile(self, name: str) -> ProfileFigures | None:
        """The side-by-side figures of profile ``name``, if measured."""
        return None if self.comparison is None else self.comparison.profile(name)


@dataclass(frozen=True)
class RunInfo:
    """The environment a run is read with: date, machine, software, command, commit, load, sources."""

    date: str
    machine: str
    software: str
    command: str
    commit: str
    cpus: int
    load_start: str
    load_end: str
    seed: int
    profile: str
    run_minutes: float
    source_start: str
    source_end: str
    source_changed: list[str] = field(default_factory=list)
    speed_probes: list[tuple[str, float]] = field(default_factory=list)  # (when, bench_env.speed_probe() CPU s)


def as_json(value: Any) -> Any:
    """A result (or a list/dict of them) as plain JSON data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value
