"""Soak benchmark of the index and the report writer: a long run of pod churn at the envelope event rate.

    make bench FIGURES=soak-index                       # bench/figures.toml: 30 min at 5,000 pod events/s
    make bench FIGURES=soak-index QUICK=1               # a few seconds at a tiny scale

The operator's event route in one process, without kopf and without an API server, from the bytes the API
server sends on (what the informers' worker threads and the event loop do, here in one thread):

* a synthetic cluster (bench/synth.py, scale 1.0 = 5,000 nodes, 10,000 workloads, ~150,000 pods) is listed as
  the API server pages it (500 items a page, items without kind and apiVersion), each page decoded
  (``decode.decode_list_page``) and taken by its kind's informer (``ResourceWatch.take_listed_page``) →
  :class:`EventRouter` → index (loading in bulk, as the operator's first listing), and every report is
  written once into the stand-in;
* then pod watch events, each one watch line of bytes, are decoded (``decode.decode_event``, one converter per
  1,000 lines, as ``kube.WatchStream``) and taken by the pod informer (``ResourceWatch.take``) — router, index
  apply/remove, ``Writer.collect`` — at a fixed rate; the mix is ``bench/events.py``'s (20 % add,
  15 % move node, 15 % relabel, 15 % phase, 15 % deletionTimestamp, 20 % delete), so the pod count stays
  level. Each event carries the pod's scheduling fields (tolerations, ...) as the API server's do, so a
  replaced pod's owner reference and template are decoded again from its line. Every new pod carries a
  ``soak-rev`` label that changes every ``--rev-seconds``: label sets of old "rollouts" keep dying, which is
  what the interning tables (``model.intern_labels``, ``model.intern_frozen``, swept of unused values) must
  survive;
* the process's garbage collector follows the operator's policy (:class:`spreadwatch.runtime.gcpolicy.GcPolicy`,
  started right after the initial listing, as ``Runtime.start`` does; ``--no-gc-policy`` for A/B runs);
* the index scores with the operator's defaults: ``--profile auto`` (v1.29, as the synthetic nodes' kubelets
  v1.28.9 say: there is no API server), v1.28 compared beside it, 16 window samples per report;
* the real :class:`Writer` runs concurrently with the operator's defaults (debounce 1 s, 20 writes/s,
  burst 20, resync every 300 s); its API side is a **local stand-in** (:class:`StandInSink`) that accepts every
  write at once and keeps each report (orjson bytes), like the API server would — no network, no latency.

Sampled every ``--sample-seconds``: RSS (``/proc/self/statm``), the interning cache's size, index sizes,
pending reports, event latency (p50/p99/max of decode + route + index per event in the interval, wall clock;
and its p99 in process CPU time, which a busy machine does not inflate), the share of a core the process got,
the achieved event rate, the API writes per minute, and CPython's full (generation-2) collections: how many,
their total and longest pause, wall clock and CPU (``gc.callbacks``, bench/soak_gc.py). :func:`measure`
returns the summary figures (growth and slopes over the second half) and the series, which bench/render.py tabulates.
Costs: O(scale) memory; CPU ≈ rate ×
~0.15 ms per second.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from bench.events import EVENT_TYPES, EVENT_WEIGHTS
from bench.soak_gc import FullCollections
from bench.timing import log as bench_log
from bench.timing import percentile, rss_bytes

from bench import synth
from spreadwatch.config import OperatorConfig
from spreadwatch.decode import Converter, decode_event, decode_list_page
from spreadwatch.index import SpreadIndex
from spreadwatch.model import interned_label_maps
from spreadwatch.profile_args import operator_profiles, operator_report_options
from spreadwatch.runtime.gcpolicy import GcPolicy
from spreadwatch.runtime.informers import WATCHED, WATCHED_BY_KIND, EventRouter, ResourceWatch
from spreadwatch.runtime.writing import TokenBucket, Writer

T = TypeVar("T")

__all__ = ["SoakConfig", "StandInSink", "measure", "memory_figures", "run_soak", "slope_per_hour", "trend"]

ENVELOPE_EVENTS_PER_S = 5000.0  # docs/benchmarks.md: the sustained pod events/s target at scale 1.0
_DELETION_STAMP = "2026-01-01T00:00:00Z"
_MAX_BATCH = 500  # events handled between two yields to the writer task
_PAGE = 500  # items of a list page (kube.listing.PAGE_SIZE)
_CONVERTER_LINES = 1000  # watch lines decoded with one converter (kube.WatchStream's batch)


@dataclass(frozen=True)
class SoakConfig:
    minutes: float = 30.0
    rate: float = ENVELOPE_EVENTS_PER_S
    scale: float = 1.0
    seed: int = 1
    sample_seconds: float = 60.0
    rev_seconds: float = 60.0
    gc_policy: bool = True  # False: the collector as CPython sets it (what the operator had before its policy)


class StandInSink:
    """The writer's API side, in memory: accepts every write at once (no latency, no errors).

    Reports are kept as orjson bytes (what an API server would store); ``list_reports`` decodes them all.
    Memory O(reports); every call O(1) except ``list_reports`` O(reports).
    """

    def __init__(self) -> None:
        self.reports: dict[tuple[str, str], bytes] = {}
        self.calls: Counter[str] = Counter()

    @property
    def stored_bytes(self) -> int:
        return sum(len(v) for v in self.reports.values())

    async def list_reports(
        self,
        namespaces: Iterable[str],
        keep: Callable[[dict[str, Any]], T | None],
        *,
        metadata_only: bool = False,
        on_page: Callable[[int], None] | None = None,
    ) -> list[T]:
        self.calls["list"] += 1
        wanted = set(namespaces)
        stored = [v for (ns, _), v in self.reports.items() if not wanted or ns in wanted]
        if on_page is not None:
            on_page(sum(map(len, stored)))
        listed = (orjson.loads(v) for v in stored)
        if metadata_only:  # what a PartialObjectMetadataList holds
            listed = ({"metadata": obj["metadata"]} for obj in listed)
        return [kept for kept in map(keep, listed) if kept is not None]

    def _object(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        owners = [{"uid": workload["uid"]}] if workload.get("uid") else []
        return {
            "metadata": {"namespace": namespace, "name": name, "uid": f"uid-{namespace}-{name}",
                         "resourceVersion": "1", "ownerReferences": owners},
            "spec": {"workloadRef": dict(workload)},
        }

    async def save(
        self,
        namespace: str,
        name: str,
        labels: Mapping[str, str],
        annotations: Mapping[str, str],
        workload: Mapping[str, str],
        status: Mapping[str, Any],
    ) -> dict[str, Any]:
        """A server-side apply of the whole report (created or replaced), as the API server stores it."""
        self.calls["apply"] += 1
        obj = self._object(namespace, name, workload)
        obj["metadata"].update(labels=dict(labels), annotations=dict(annotations))
        obj["status"] = status
        self.reports[(namespace, name)] = orjson.dumps(obj)
        return obj

    async def get_report(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.calls["get"] += 1
        stored = self.reports.get((namespace, name))
        return orjson.loads(stored) if stored is not None else None

    async def delete(self, namespace: str, name: str) -> bool:
        self.calls["delete"] += 1
        return self.reports.pop((namespace, name), None) is not None

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self.calls["event"] += 1


@dataclass
class _Pods:
    """The driver's own view of the live pods (what the next event is about). O(pods) memory; O(1) per pick."""

    rnd: random.Random
    nodes: list[str]
    #: (namespace, name) → [uid, labels, ownerReferences, nodeName, phase, deleting, scheduling fields]
    pods: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    #: the pods' scheduling fields (tolerations, ...), pre-serialised: one dict per distinct set, shared
    specs: dict[bytes, dict[str, orjson.Fragment]] = field(default_factory=dict)
    keys: list[tuple[str, str]] = field(default_factory=list)
    pos: dict[tuple[str, str], int] = field(default_factory=dict)
    serial: int = 0

    def add(self, key: tuple[str, str], entry: list[Any]) -> None:
        self.pods[key] = entry
        self.pos[key] = len(self.keys)
        self.keys.append(key)

    def drop(self, key: tuple[str, str]) -> None:
        i = self.pos.pop(key)
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.pos[last] = i
        del self.pods[key]

    def pick(self) -> tuple[str, str]:
        return self.keys[self.rnd.randrange(len(self.keys))]


#: A pod spec's fields the decoder keeps besides nodeName: every watch event carries them, as the API
#: server's do (the whole pod), so a replaced pod's template is decoded again from its event.
_SCHEDULING = ("tolerations", "nodeSelector", "affinity", "topologySpreadConstraints")


def _pod_entry(obj: Mapping[str, Any], specs: dict[bytes, dict[str, orjson.Fragment]]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    fields = {key: spec[key] for key in _SCHEDULING if key in spec}
    raw = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    scheduling = specs.get(raw)
    if scheduling is None:  # (the driver keeps one copy per distinct set: its memory is in the RSS sampled)
        scheduling = specs[raw] = {key: orjson.Fragment(orjson.dumps(value)) for key, value in fields.items()}
    return [
        meta.get("uid", ""),
        dict(meta.get("labels") or {}),
        meta.get("ownerReferences") or [],
        spec.get("nodeName", ""),
        status.get("phase", "Pending"),
        meta.get("deletionTimestamp") is not None,
        scheduling,
    ]


def _event(kind: str | None, key: tuple[str, str], entry: list[Any]) -> dict[str, Any]:
    uid, labels, owners, node, phase, deleting, scheduling = entry
    meta: dict[str, Any] = {"namespace": key[0], "name": key[1], "uid": uid, "labels": labels}
    if owners:
        meta["ownerReferences"] = owners
    if deleting:
        meta["deletionTimestamp"] = _DELETION_STAMP
    spec = {"nodeName": node, **scheduling} if node else dict(scheduling)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}
    return {"type": kind, "object": body}


def _next_event(pods: _Pods, rev: int) -> dict[str, Any]:
    """One pod watch event of the mix; updates the driver's view. O(1)."""
    r = pods.rnd
    kind = r.choices(EVENT_TYPES, EVENT_WEIGHTS)[0]
    key = pods.pick()
    entry = pods.pods[key]
    if kind == "add":
        pods.serial += 1
        new_key = (key[0], f"{key[1].split('-soak')[0]}-soak{pods.serial}")
        labels = {**entry[1], "soak-rev": str(rev)}
        new = [f"soak-{pods.serial}", labels, entry[2], r.choice(pods.nodes), "Running", False, entry[6]]
        pods.add(new_key, new)
        return _event("ADDED", new_key, new)
    if kind == "delete":
        pods.drop(key)
        return _event("DELETED", key, entry)
    if kind == "move":
        entry[3] = r.choice(pods.nodes)
    elif kind == "relabel":
        labels = dict(entry[1])
        if r.random() < 0.7:
            labels["canary"] = "false" if labels.get("canary") == "true" else "true"
        else:
            labels["app"] = labels.get("app", "none") + "-v2"
        entry[1] = labels
    elif kind == "phase":
        if entry[4] == "Running" and entry[3]:
            entry[4] = r.choice(["Succeeded", "Failed"])
        else:
            entry[4], entry[3] = "Running", entry[3] or r.choice(pods.nodes)
    else:  # deleting
        entry[5] = True
    return _event("MODIFIED", key, entry)


def _rss_mib() -> float:
    return rss_bytes() / 2**20


def _counter_percentile(counts: Counter[int], q: float) -> float:
    total = sum(counts.values())
    if not total:
        return float("nan")
    rank = max(1, round(q / 100.0 * total + 0.5))
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return float(value)
    return float(max(counts))


def _page(objects: Sequence[dict[str, Any]]) -> bytes:
    """One page of a list as the API server sends it: its items without kind and apiVersion. O(bytes)."""
    items = [{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")} for obj in objects]
    return orjson.dumps({"metadata": {"resourceVersion": "1"}, "items": items})


def _list(cfg: SoakConfig, informers: Mapping[str, ResourceWatch]) -> _Pods:
    """The initial listing into the index: synth's objects (nodes and namespaces first) in pages of one kind,
    each page decoded and taken by the kind's informer as it fills, into an index loading in bulk as the
    operator's does (``start_loading``, ``finish_loading``); returns the driver's view of the pods.
    O(objects); one page per kind held at a time."""
    pods = _Pods(random.Random(cfg.seed), [])
    converter = Converter()
    pages: dict[str, list[dict[str, Any]]] = {}
    index = informers["Pod"].router.index
    bulk = hasattr(index, "start_loading")  # (a baseline's older package takes a page item by item)
    if bulk:
        index.start_loading()

    def flush(kind: str) -> None:
        resource = WATCHED_BY_KIND[kind]
        items, _ = decode_list_page(_page(pages.pop(kind)), kind, resource.api_version, converter)
        informer = informers[kind]
        if bulk:
            informer.take_listed_page(items)
        else:
            for item in items:
                informer.take_listed(item)

    for obj in synth.iter_objects(cfg.scale, cfg.seed):
        kind = obj["kind"]
        page = pages.setdefault(kind, [])
        page.append(obj)
        if len(page) == _PAGE:
            flush(kind)
        if kind == "Node":
            pods.nodes.append(obj["metadata"]["name"])
        elif kind == "Pod":
            pods.add((obj["metadata"]["namespace"], obj["metadata"]["name"]), _pod_entry(obj, pods.specs))
    for kind in list(pages):
        flush(kind)
    while bulk and not index.finish_loading():
        pass
    return pods


class _LoadBudget(TokenBucket):
    """The operator's write budget, left open while ``loading`` (the soak writes every report once before the
    churn, as fast as the stand-in takes them). O(1)."""

    loading = True

    def available(self, within: float = 0.0) -> int:
        return 10**9 if self.loading else super().available(within)

    def try_acquire(self) -> bool:
        return True if self.loading else super().try_acquire()


async def _write_all(writer: Writer, budget: _LoadBudget, sink: StandInSink) -> None:
    """Every report written once (the budget open) into the stand-in."""
    writer.ready = True
    await writer.drain(timeout=3600)
    budget.loading = False
    sink.calls.clear()


async def run_soak(cfg: SoakConfig, log: Any = print) -> dict[str, Any]:
    """Run the soak (blocking for ``cfg.minutes``); returns {"config", "baseline", "samples", "summary"}."""
    config = OperatorConfig()
    # (no API server: the cluster's kubelets' version stands for its /version, as for ``analyze --profile auto``)
    profile, compared, _ = operator_profiles(config, lambda: synth.KUBELET_VERSION)
    index = SpreadIndex(profile, operator_report_options(config), compared)
    sink = StandInSink()
    budget = _LoadBudget(config.max_writes_per_second, config.write_burst)
    writer = Writer(index, config, sink, bucket=budget)
    router = EventRouter(index, config.scope, wake=writer.wake, namespace_changed=writer.namespace_changed)
    informers = {resource.kind: ResourceWatch(resource, None, router) for resource in WATCHED}  # fed here
    with FullCollections() as collections:
        return await _churn(cfg, index, sink, writer, budget, informers, collections, log)


async def _churn(cfg: SoakConfig, index: SpreadIndex, sink: StandInSink, writer: Writer, budget: _LoadBudget,
                 informers: Mapping[str, ResourceWatch], collections: FullCollections,
                 log: Any) -> dict[str, Any]:  # fmt: skip
    """Load, then churn for ``cfg.minutes`` with the operator's GC policy (unless ``cfg.gc_policy`` is off)."""
    started = time.monotonic()
    stop = asyncio.Event()
    policy = GcPolicy()
    pods = _list(cfg, informers)
    # as the operator's Runtime.start does once its initial listing is in the index
    tasks = [policy.start(stop)] if cfg.gc_policy else []
    await _write_all(writer, budget, sink)
    if not cfg.gc_policy:
        gc.collect()
    sizes = index.sizes()
    baseline = {"load_seconds": round(time.monotonic() - started, 1), "rss_mib": round(_rss_mib(), 1),
                "pods": sizes.pods, "workloads": sizes.workloads, "nodes": sizes.nodes,
                "reports": len(sink.reports), "interned_label_maps": interned_label_maps(),
                "gc_policy": cfg.gc_policy, **collections.take()}  # fmt: skip
    log(f"soak: loaded {baseline}; churning {cfg.rate:.0f} events/s for {cfg.minutes:g} min")

    tasks.append(asyncio.create_task(writer.run(stop), name="soak report writer"))
    take, clock, cpu = informers["Pod"].take, time.perf_counter_ns, time.process_time_ns
    pod = WATCHED_BY_KIND["Pod"]
    converter, decoded = Converter(), 0
    samples: list[dict[str, Any]] = []
    all_latency: Counter[int] = Counter()  # µs → events (bounded by distinct values)
    all_cpu: Counter[int] = Counter()
    window: list[int] = []
    window_cpu: list[int] = []
    t0 = time.monotonic()
    cpu_start = cpu_window_start = time.process_time()
    end = t0 + cfg.minutes * 60
    next_sample = t0 + cfg.sample_seconds
    emitted = window_start_emitted = 0
    window_start = t0
    writes_before = writer.stats.api_writes
    while True:
        now = time.monotonic()
        if now >= next_sample or now >= end:
            window.sort()
            window_cpu.sort()
            cpu_now = time.process_time()
            stats = writer.stats
            span = now - window_start
            sizes = index.sizes()
            samples.append({
                "t_min": round((now - t0) / 60, 2),
                "rss_mib": round(_rss_mib(), 1),
                "interned_label_maps": interned_label_maps(),
                "label_groups": sizes.label_groups,
                "candidate_sets": sizes.candidate_sets,
                "pods": sizes.pods,
                "events_per_s": round((emitted - window_start_emitted) / span, 1),
                "p50_us": percentile(window, 50) / 1e3,
                "p99_us": percentile(window, 99) / 1e3,
                "max_us": (window[-1] / 1e3) if window else float("nan"),
                "cpu_p99_us": percentile(window_cpu, 99) / 1e3,
                "cpu_max_us": (window_cpu[-1] / 1e3) if window_cpu else float("nan"),
                "cpu_share": round((cpu_now - cpu_window_start) / span, 2),
                "writes_per_min": round((stats.api_writes - writes_before) / span * 60, 1),
                "pending": writer.pending,
                "oldest_pending_s": round(writer.oldest_pending_age, 1),
                "stand_in_mib": round(sink.stored_bytes / 2**20, 1),
                **collections.take(),
            })  # fmt: skip
            log("soak: " + json.dumps(samples[-1]))
            for ns in window:
                all_latency[ns // 1000] += 1
            for ns in window_cpu:
                all_cpu[ns // 1000] += 1
            window, window_cpu, cpu_window_start = [], [], cpu_now
            window_start, window_start_emitted, writes_before = now, emitted, stats.api_writes
            next_sample += cfg.sample_seconds
            if now >= end:
                break
        due = min(_MAX_BATCH, int((now - t0) * cfg.rate) - emitted)
        if due <= 0:
            await asyncio.sleep(0.002)
            continue
        rev = int((now - t0) / cfg.rev_seconds)
        for _ in range(due):
            line = orjson.dumps(_next_event(pods, rev))  # (the API server's work: not timed)
            if decoded == _CONVERTER_LINES:
                converter, decoded = Converter(), 0
            decoded += 1
            c = cpu()
            a = clock()
            take(decode_event(line, pod.kind, pod.api_version, converter))
            window.append(clock() - a)
            window_cpu.append(cpu() - c)
        emitted += due
        await asyncio.sleep(0)
    stop.set()
    for task in tasks:
        await task
    summary = _summarize(samples)
    summary.update({
        "events": emitted, "events_per_s": round(emitted / (cfg.minutes * 60), 1),
        "p99_us_overall": _counter_percentile(all_latency, 99), "p50_us_overall": _counter_percentile(all_latency, 50),
        "cpu_p99_us_overall": _counter_percentile(all_cpu, 99), "cpu_p50_us_overall": _counter_percentile(all_cpu, 50),
        "cpu_share": round((time.process_time() - cpu_start) / (time.monotonic() - t0), 2),
        "cpu_us_per_event": round((time.process_time() - cpu_start) / max(1, emitted) * 1e6, 1),
        "api_writes": writer.stats.api_writes, "writer_failures": writer.stats.failures,
        "resyncs": writer.stats.resyncs, "stand_in_calls": dict(sink.calls),
        "max_ms_overall": max((s["max_us"] for s in samples if s["max_us"] == s["max_us"]), default=0.0) / 1e3,
        "intervals_max_over_1s": sum(1 for s in samples if s["max_us"] > 1e6),
        "gc_full": sum(s["gc_full"] for s in samples), "gc_full_s": round(sum(s["gc_full_s"] for s in samples), 2),
        "gc_full_max_s": max(s["gc_full_max_s"] for s in samples),
        "gc_full_max_cpu_s": max(s["gc_full_max_cpu_s"] for s in samples),
        "gc_checkpoints": policy.checkpoints, "gc_whole_heap": policy.whole_heap,
        "gc_releases": policy.releases,
    })  # fmt: skip
    return {"config": cfg.__dict__, "baseline": baseline, "samples": samples, "summary": summary}


def measure(
    *,
    scale: float,
    quick: bool = False,
    minutes: float = 30.0,
    rate: float = ENVELOPE_EVENTS_PER_S,
    rev_seconds: float = 60.0,
    gc_policy: bool = True,
) -> dict[str, Any]:
    """The soak as figures (bench/figures.toml ``soak-index``): trends, latencies, CPU, stalls, full
    collections, writes and their staleness, resyncs, the load's seconds; the per-interval samples under
    ``series``. ``quick``: 0.2 min."""
    minutes = 0.2 if quick else minutes
    cfg = SoakConfig(minutes, rate, scale, 1, max(5.0, minutes * 2), rev_seconds, gc_policy)
    result = asyncio.run(run_soak(cfg, log=bench_log))
    s, samples = result["summary"], result["samples"]
    return {
        **memory_figures(s, samples),
        "p50_us": s["p50_us_overall"],
        "p99_us": s["p99_us_overall"],
        "cpu_p99_us": s["cpu_p99_us_overall"],
        "max_stall_ms": s["max_ms_overall"],
        "cpu_share": s["cpu_share"],
        "cpu_us_per_event": s["cpu_us_per_event"],
        "gc_full": s["gc_full"],
        "gc_full_s": s["gc_full_s"],
        "gc_full_max_s": s["gc_full_max_s"],
        "writes_per_min": s["writes_per_min_mean"],
        "oldest_pending_max_s": max(x["oldest_pending_s"] for x in samples),
        "writer_failures": s["writer_failures"],
        "resyncs": s["resyncs"],
        "load_s": result["baseline"]["load_seconds"],
        "series": samples,
    }


def memory_figures(summary: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What every soak reports of a run's length, memory and event rate, from its summary (the trends of
    ``rss_mib`` and ``interned_label_maps``, ``events_per_s``) and samples. O(1)."""
    rss, maps = summary["rss_mib"], summary["interned_label_maps"]
    return {
        "minutes": samples[-1]["t_min"],
        "rss_mib": rss["last"],
        "rss_growth_second_half_mib": rss["growth_second_half"],
        "rss_slope_mib_per_h": rss["slope_per_hour_second_half"],
        "label_maps_growth_second_half": maps["growth_second_half"],
        "label_maps_slope_per_h": maps["slope_per_hour_second_half"],
        "events_per_s": summary["events_per_s"],
    }


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


def trend(samples: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    """First, last and max of ``key`` over the samples; over the second half, how much it grew (last minus the
    half's first sample: what a run of this length shows, not extrapolated) and its least-squares slope per
    hour. O(samples)."""
    values = [float(s[key]) for s in samples]
    half = samples[len(samples) // 2 :]
    return {
        "first": values[0],
        "last": values[-1],
        "max": max(values),
        "growth_second_half": round(values[-1] - float(half[0][key]), 2),
        "slope_per_hour_second_half": round(slope_per_hour([(x["t_min"], x[key]) for x in half]), 2),
    }


def _summarize(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: trend(samples, k) for k in ("rss_mib", "interned_label_maps")}
    wpm = [float(s["writes_per_min"]) for s in samples]
    out["writes_per_min_mean"] = round(sum(wpm) / len(wpm), 1)
    return out
