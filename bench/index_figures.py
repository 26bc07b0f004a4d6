"""Measures of the index on bench/synth.py's cluster: cold computation, pod events, memory, metrics scrape.

Each ``measure``-style function takes the scale (and its parameters from bench/figures.toml) and returns
``{figure key: number}``; bench/run.py records them. ``profile`` names the scoring profile (v1.28
SelectorSpread, v1.29 PodTopologySpread), so one function serves both. Costs: a cold computation O(pods +
workloads × candidate nodes); a replay O(events × dirty workloads per event × candidate nodes); memory one
fresh interpreter per repeat; a scrape O(series). Imports that only one measure needs are made inside it, so
a baseline (``--baseline REV``) whose older package lacks them can still run the others.

What is scored (:class:`Setup`): ``profile``, reports compared with ``compare`` ("" none), ``window_samples``
window starts per report (0: none, the arithmetic alone, as these figures were first measured) and with
``prediction`` the whole default scheduler profile's prediction; or, with ``defaults``, what ``spreadwatch run``
does by default on this cluster (``--profile auto``: the nodes' kubelets, v1.28.9, say v1.29; v1.28 compared;
the default window samples; the prediction).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import msgspec
from bench.events import EVENT_TYPES, StreamRun, run_stream
from bench.inputs import cluster
from bench.timing import MIB, GCMeter, median, percentile, rss_bytes, vm_hwm_bytes

from bench import naive, synth
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object, parse_pod
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile, get_profile, representative_pod, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = ["Setup", "cold", "events", "fresh_index", "memory", "memory_child", "metrics", "setup", "sizes"]


def report_options(prediction: bool = False, window_samples: int = 0) -> ReportOptions:
    """The reports' options: ``window_samples`` window starts, and with ``prediction`` the whole default
    scheduler profile's prediction (a baseline package without it cannot run such a measure)."""
    if not prediction:
        return ReportOptions(window_samples=window_samples)
    from spreadwatch.scoring.scheduler_profile import default_scheduler_profile  # noqa: PLC0415 - (baselines)

    return ReportOptions(window_samples=window_samples, scheduler=default_scheduler_profile())  # type: ignore[call-arg]


class Setup(NamedTuple):
    """What a measure's index scores: the profile, the report options and the compared profile (None: none)."""

    profile: Profile
    options: ReportOptions
    compare: Profile | None = None

    def index(self) -> SpreadIndex:
        return SpreadIndex(self.profile, self.options, self.compare)


def setup(
    profile: str = "v1.28", compare: str = "", window_samples: int = 0, defaults: bool = False, prediction: bool = False
) -> Setup:
    """The measure's :class:`Setup` from its parameters (see the module docstring)."""
    if defaults:
        from spreadwatch.cli import build_parser, operator_config  # noqa: PLC0415 - (a baseline's may lack them)
        from spreadwatch.profile_args import load_scheduler_profile, operator_profiles  # noqa: PLC0415

        config = operator_config(build_parser().parse_args(["run"]))  # (the flags' defaults, as the chart's)
        chosen, compared, _ = operator_profiles(config, lambda: synth.KUBELET_VERSION)
        options = config.report
        if config.prediction:  # (as the operator reads its scheduler profile at start)
            scheduler = load_scheduler_profile(config.scheduler_config, config.scheduler_name)
            options = dataclasses.replace(options, scheduler=scheduler)
        return Setup(chosen, options, compared)
    options = report_options(prediction, window_samples)
    return Setup(get_profile(profile), options, get_profile(compare) if compare else None)


def fresh_index(snapshot: Snapshot, profile: Profile | Setup) -> SpreadIndex:
    """An index loaded with ``snapshot``, every report built and the dirty set emptied (an operator at rest);
    a bare profile: no comparison, no window samples."""
    index = (profile if isinstance(profile, Setup) else Setup(profile, ReportOptions(window_samples=0))).index()
    index.load(snapshot)
    index.reports()
    index.take_dirty()
    return index


#: workload kinds, in the order the cluster's figures list them
_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


def sizes(*, scale: float, quick: bool = False) -> dict[str, Any]:
    """What the cluster of ``scale`` holds: nodes, namespaces, workloads (and per kind: ``workloads_<kind>``
    lower-cased, standalone ReplicaSets only), every ReplicaSet, pods, the index's label groups and candidate
    sets, the dump size. O(objects) plus one cold computation."""
    c = cluster(scale)
    kinds: dict[str, int] = {}
    for o in c.objects:
        kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
    workloads = naive.workloads_of(c.snapshot)
    index_sizes = fresh_index(c.snapshot, get_profile("v1.28")).sizes()
    return {
        "nodes": kinds.get("Node", 0),
        "namespaces": kinds.get("Namespace", 0),
        "workloads": len(workloads),
        **{f"workloads_{k.lower()}": sum(1 for w in workloads if w.kind == k) for k in _WORKLOAD_KINDS},
        "replicasets": kinds.get("ReplicaSet", 0),
        "pods": kinds.get("Pod", 0),
        "label_groups": index_sizes.label_groups,
        "candidate_sets": index_sizes.candidate_sets,
        "dump_mib": c.dump("indent2").stat().st_size / MIB,
    }


def _cold_once(snapshot: Snapshot, scored: Setup) -> tuple[float, float, float, float]:
    """(load s, reports s, process CPU s, cyclic GC s) of one cold computation; the index is dropped."""
    gc.collect()
    with GCMeter() as meter:
        c0, t0 = time.process_time(), time.perf_counter()
        index = scored.index()
        index.load(snapshot)
        t1 = time.perf_counter()
        index.reports()
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
    return t1 - t0, t2 - t1, cpu, meter.seconds


def _cordon(snapshot: Snapshot, scored: Setup) -> tuple[float, int]:
    """Median seconds to cordon one schedulable node and rebuild every dirty report (3 nodes), and the dirty."""
    index = fresh_index(snapshot, scored)
    runs, dirty_n = [], 0
    for node in [n for n in snapshot.nodes if not n.unschedulable][:3]:
        t0 = time.perf_counter()
        index.apply(msgspec.structs.replace(node, unschedulable=True))
        dirty, _ = index.take_dirty()
        for key in dirty:
            index.report_for(key)
        runs.append(time.perf_counter() - t0)
        dirty_n = len(dirty)
    return median(runs), dirty_n


def _exact(snapshot: Snapshot, profile: Profile, sample: int, seed: int = 3) -> int:
    """Workloads (of a random ``sample``) whose report's derived scores equal ``score_pod``'s; raises on a
    difference. Error reports are left out. O(sample × pods)."""
    from spreadwatch.scoring import score_pod  # noqa: PLC0415 - (a baseline's older package may lack it)

    index = fresh_index(snapshot, profile)
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    zones = {n.name: zone_key(n.labels, profile) for n in nodes}
    workloads = naive.workloads_of(snapshot)
    checked = 0
    for ctrl in random.Random(seed).sample(workloads, min(sample, len(workloads))):
        report = index.report_for(ctrl.key)
        if report is None or report.health.value == "Error":
            continue
        rs = snapshot.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, _ = representative_pod(ctrl, rs)
        expected = score_pod(pod, nodes, snapshot.pods, index, profile)
        if {n: report.score_of(n, zones[n]) for n in expected.scores} != dict(expected.scores):
            raise AssertionError(f"{profile.name} report of {ctrl.key} differs from score_pod")
        checked += 1
    return checked


def cold(
    *, scale: float, quick: bool = False, profile: str = "v1.28", repeats: int = 3, exact: int = 0,
    prediction: bool = False, compare: str = "", window_samples: int = 0, defaults: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The cold full computation ``SpreadIndex.load`` + ``reports()`` from records (median of ``repeats``, GC
    on, and once with the GC off), a cordon, parsing (``parse_object`` of every object, and the share of it in
    cyclic GC, which ``Snapshot.from_objects`` pauses), and with ``exact`` that many workloads checked against
    the reference scorer (``prediction``: every report with the whole default profile's prediction)."""
    c, scored = cluster(scale), setup(profile, compare, window_samples, defaults, prediction)
    snapshot, repeats = c.snapshot, 1 if quick else repeats
    runs = [_cold_once(snapshot, scored) for _ in range(repeats)]
    gc.disable()
    try:
        gc_off = _cold_once(snapshot, scored)
    finally:
        gc.enable()
    cordon_s, dirty = _cordon(snapshot, scored)
    pods = [o for o in c.objects if o["kind"] == "Pod"][:20000]
    t0 = time.perf_counter()
    for o in pods:
        parse_pod(o)
    parse_pod_us = (time.perf_counter() - t0) / max(1, len(pods)) * 1e6
    gc.collect()
    with GCMeter() as parse_gc:
        t0 = time.perf_counter()
        Snapshot.from_objects(c.objects)
        parse_s = time.perf_counter() - t0
    total = median([r[0] + r[1] for r in runs])
    out = {
        "cold_s": total,
        "cold_cpu_s": median([r[2] for r in runs]),
        "load_s": median([r[0] for r in runs]),
        "reports_s": median([r[1] for r in runs]),
        "cold_gc_s": median([r[3] for r in runs]),
        "cold_gc_off_s": gc_off[0] + gc_off[1],
        "cold_per_1000_pods_ms": total / max(1, len(snapshot.pods)) * 1e6,
        "cordon_s": cordon_s,
        "cordon_dirty": dirty,
        "parse_snapshot_s": parse_s,
        "parse_snapshot_gc_share": parse_gc.seconds / parse_s,
        "parse_pod_us": parse_pod_us,
    }
    if exact:
        out["exact_checked"] = _exact(snapshot, scored.profile, exact)
    return out


def _replay(
    snapshot: Snapshot, scored: Setup, stream: list[Any], freeze_gc: bool = False
) -> tuple[StreamRun, GCMeter]:
    index = fresh_index(snapshot, scored)
    gc.collect()
    if freeze_gc:
        gc.freeze()
    try:
        with GCMeter() as meter:
            run = run_stream(index, stream)
    finally:
        if freeze_gc:
            gc.unfreeze()
    return run, meter


def _stream_stats(run: StreamRun, meter: GCMeter) -> dict[str, float]:
    """One replay's figures: latency percentiles (wall and CPU, µs), rates, the share of the loop's wall time
    the process was on a CPU and spent in cyclic GC, full (generation-2) collections. O(events log events)."""
    s, cs = sorted(run.wall_ns), sorted(run.cpu_ns)
    n = len(s)
    return {
        "p50_us": percentile(s, 50) / 1e3,
        "p99_us": percentile(s, 99) / 1e3,
        "p999_us": percentile(s, 99.9) / 1e3,
        "max_us": s[-1] / 1e3,
        "mean_us": sum(s) / n / 1e3,
        "events_per_s": n / run.wall_s,
        "cpu_p50_us": percentile(cs, 50) / 1e3,
        "cpu_p99_us": percentile(cs, 99) / 1e3,
        "cpu_events_per_s": n / run.cpu_s,
        "cpu_share": run.cpu_s / run.wall_s,
        "dirty_mean": sum(run.dirty) / n,
        "gc_share": meter.seconds / run.wall_s,
        "gc_full": meter.collections[2],
    }


def events(
    *, scale: float, quick: bool = False, profile: str = "v1.28", events: int = 20000, repeats: int = 3,
    compare: str = "", window_samples: int = 0, defaults: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Pod events through ``apply``/``remove``, ``take_dirty()`` and every dirty report's rebuild, each timed:
    medians over ``repeats`` replays on a freshly loaded index, GC enabled (as in the operator); per event type
    the p50, p99 and CPU p99 over all replays (``<type>_p50_us`` …); once more with ``gc.freeze()`` after the
    load (what-if: ``frozen_gc_*``)."""
    c, scored = cluster(scale), setup(profile, compare, window_samples, defaults)
    stream = c.stream(1000 if quick else events)
    replays = [_replay(c.snapshot, scored, stream) for _ in range(1 if quick else repeats)]
    stats = [_stream_stats(run, meter) for run, meter in replays]
    out: dict[str, Any] = {k: median([s[k] for s in stats]) for k in stats[0]}
    for t in EVENT_TYPES:
        wall = sorted(ns for run, _ in replays for ev, ns in zip(stream, run.wall_ns, strict=True) if ev[-1] == t)
        cpu = sorted(ns for run, _ in replays for ev, ns in zip(stream, run.cpu_ns, strict=True) if ev[-1] == t)
        out[f"{t}_p50_us"] = percentile(wall, 50) / 1e3
        out[f"{t}_p99_us"] = percentile(wall, 99) / 1e3
        out[f"{t}_cpu_p99_us"] = percentile(cpu, 99) / 1e3
    del replays
    frozen = _stream_stats(*_replay(c.snapshot, scored, stream, freeze_gc=True))
    for k in ("p50_us", "p99_us", "max_us", "events_per_s"):
        out[f"frozen_gc_{k}"] = frozen[k]
    refresh = _refresh_batch(c.snapshot, scored, stream)
    if refresh is not None:
        out["refresh_batch_ms"] = refresh
    return out


def _refresh_batch(snapshot: Snapshot, scored: Setup, stream: Sequence[Any], batches: int = 5) -> float | None:
    """Milliseconds to rebuild one batch of stale predictions (``stale_predictions()`` and each one's report),
    median of ``batches``, each after one more pod event of ``stream`` that made every prediction stale (an event
    that changes nothing, a pod "moved" to its own node, makes none) and its own dirty reports; None without the
    prediction. O(batches × REFRESH_BATCH reports)."""
    index = fresh_index(snapshot, scored)
    times: list[float] = []
    for ev in stream:
        if len(times) == batches:
            break
        if ev[0] == "apply":
            index.apply(ev[1])
        else:
            index.remove("Pod", ev[1], ev[2])
        for key in index.take_dirty(False)[0]:
            index.report_for(key)
        t0 = time.perf_counter()
        keys = index.stale_predictions()
        for key in keys:
            index.report_for(key)
        if keys:
            times.append(time.perf_counter() - t0)
    return median(times) * 1e3 if times else None


def memory_child(scale: float, profile_name: str, prediction: bool = False, compare: str = "", window_samples: int = 0,
                 defaults: bool = False) -> dict[str, float]:  # fmt: skip
    """In this (fresh) interpreter: RSS (MiB) at each stage of building the index from streamed objects; the
    peak (VmHWM) after parsing and at the end, absolute; ``ru_maxrss`` (KiB on Linux, given in MiB), which
    Linux carries over from the parent across fork/exec, so it can exceed this process's own peak."""
    scored = setup(profile_name, compare, window_samples, defaults, prediction)
    gc.collect()
    base = rss_bytes()
    snapshot = Snapshot()
    for obj in synth.iter_objects(scale, 1):  # dicts are transient: only records stay
        snapshot.add(parse_object(obj))
    gc.collect()
    records = rss_bytes()
    peak_after_parse = vm_hwm_bytes()
    index = scored.index()
    index.load(snapshot)
    gc.collect()
    loaded = rss_bytes()
    index.reports()
    gc.collect()
    with_reports = rss_bytes()
    return {
        "interpreter_mib": base / MIB,
        "records_mib": (records - base) / MIB,
        "index_mib": (loaded - records) / MIB,
        "reports_mib": (with_reports - loaded) / MIB,
        "index_rss_mib": (with_reports - base) / MIB,
        "peak_rss_mib": vm_hwm_bytes() / MIB,
        "peak_rss_after_parse_mib": peak_after_parse / MIB,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


_CHILD = (
    "import json, sys\n"
    "from bench.index_figures import memory_child\n"
    "print(json.dumps(memory_child(float(sys.argv[1]), sys.argv[2], sys.argv[3] == '1', sys.argv[4], "
    "int(sys.argv[5]), sys.argv[6] == 'defaults')))"
)


def memory(
    *, scale: float, quick: bool = False, profile: str = "v1.28", repeats: int = 2, prediction: bool = False,
    compare: str = "", window_samples: int = 0, defaults: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Index memory in fresh interpreters (:func:`memory_child`, median of ``repeats``): records + index +
    reports, what a long-running operator keeps resident (``prediction``: with the whole profile's)."""
    runs = []
    for _ in range(1 if quick else repeats):
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(scale), profile, "1" if prediction else "0", compare,
             str(window_samples), "defaults" if defaults else "-"],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {k: median([r[k] for r in runs]) for k in runs[0]}


def _scrape(index: SpreadIndex, mode: str, repeats: int) -> dict[str, float]:
    from spreadwatch.metrics import MetricsOptions, freeze, registry_for  # noqa: PLC0415 - (see the module doc)
    from spreadwatch.metrics import render as render_metrics  # noqa: PLC0415

    registry = registry_for(index, MetricsOptions(node_series=mode))  # type: ignore[arg-type]
    freezes, renders, render_cpus, oms, body = [], [], [], [], b""
    for _ in range(repeats):
        t0 = time.perf_counter()
        frozen = freeze(registry)
        t1 = time.perf_counter()
        c1 = time.process_time()
        body = render_metrics(frozen)
        render_cpus.append(time.process_time() - c1)
        t2 = time.perf_counter()
        render_metrics(frozen, openmetrics=True)
        oms.append(time.perf_counter() - t2)
        freezes.append(t1 - t0)
        renders.append(t2 - t1)
    return {
        "series": sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#")),
        "body_mib": len(body) / MIB,
        "freeze_s": median(freezes),
        "render_s": median(renders),
        "render_cpu_s": median(render_cpus),
        "openmetrics_s": median(oms),
        "scrape_s": median([f + r for f, r in zip(freezes, renders, strict=True)]),
    }


def metrics(*, scale: float, quick: bool = False, profile: str = "v1.28", repeats: int = 3, compare: str = "",
            window_samples: int = 0, defaults: bool = False) -> dict[str, Any]:  # fmt: skip
    """Series per ``--node-metrics`` mode against the budget (pods + 10 × workloads × zones) and a scrape's
    cost: ``freeze`` (event loop) + ``render`` (worker thread, text format; its CPU time too), medians, GC on;
    ``all`` is counted, not rendered (tens of millions of series at scale 1.0): ``none`` + 2 × the
    workload × candidate-node pairs. Also the workload × zone pairs the per-zone series are made of."""
    c, scored = cluster(scale), setup(profile, compare, window_samples, defaults)
    index = fresh_index(c.snapshot, scored)
    reports = index.reports()
    zones = {zone_key(n.labels, scored.profile) for n in c.snapshot.nodes} - {None}
    pods = index.sizes().pods
    default = _scrape(index, "default", 1 if quick else repeats)
    none = _scrape(index, "none", 1 if quick else repeats)
    budget = pods + 10 * len(reports) * len(zones)
    workload_nodes = sum(r.candidate_nodes for r in reports)
    return {
        **{f"default_{k}": v for k, v in default.items()},
        "none_series": none["series"],
        "none_scrape_s": none["scrape_s"],
        "none_body_mib": none["body_mib"],
        "all_series": none["series"] + 2 * workload_nodes,
        "workload_zone_pairs": sum(len(r.zones) for r in reports),
        "workload_node_pairs": workload_nodes,
        "series_budget": budget,
        "budget_used": default["series"] / budget,
    }
