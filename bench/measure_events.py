"""Incremental figures of ``make bench``: a deterministic stream of pod events, each timed from
``apply``/``remove`` through ``take_dirty()`` and the rebuild of every dirty report.

The mix (also bench/soak.py's): 20 % add, 15 % move node, 15 % relabel, 15 % phase change, 15 %
deletionTimestamp, 20 % delete. Records are prebuilt (parsing is measured separately). Each repeat replays
the stream on a freshly loaded index with the GC enabled, as in the operator. Cost: O(events × dirty
workloads per event × candidate nodes).
"""

from __future__ import annotations

import dataclasses
import gc
import random
import time
from collections.abc import Sequence
from typing import Any

import msgspec
from bench_results import FrozenGcStream, IncrementalResult, TypeStats
from measure_cold import fresh_index
from measure_util import GCMeter, median, percentile

from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, intern_labels
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot

__all__ = [
    "EVENT_TYPES",
    "EVENT_WEIGHTS",
    "Event",
    "StreamRun",
    "make_event_stream",
    "measure_incremental",
    "run_stream",
]

Event = tuple[Any, ...]  # ("apply", Pod, type) | ("remove", namespace, name, type)
EVENT_TYPES = ("add", "move", "relabel", "phase", "deleting", "delete")
EVENT_WEIGHTS = (0.20, 0.15, 0.15, 0.15, 0.15, 0.20)


class _LivePods:
    """The stream's current pods by (namespace, name), with O(1) random choice, insert and delete."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.by_key: dict[tuple[str, str], Pod] = {(p.namespace, p.name): p for p in pods}
        self.keys = list(self.by_key)
        self._pos = {k: i for i, k in enumerate(self.keys)}

    def pick(self, r: random.Random) -> tuple[tuple[str, str], Pod]:
        key = self.keys[r.randrange(len(self.keys))]
        return key, self.by_key[key]

    def put(self, pod: Pod) -> None:
        key = (pod.namespace, pod.name)
        if key not in self.by_key:
            self._pos[key] = len(self.keys)
            self.keys.append(key)
        self.by_key[key] = pod

    def drop(self, key: tuple[str, str]) -> None:
        i = self._pos.pop(key)
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self._pos[last] = i
        del self.by_key[key]


def _changed(kind: str, p: Pod, r: random.Random, nodes: Sequence[str]) -> Pod:
    """The pod after a move, relabel, phase or deleting event."""
    if kind == "move":
        return msgspec.structs.replace(p, node_name=r.choice(nodes))
    if kind == "relabel":
        labels = dict(p.labels)
        if r.random() < 0.7:
            labels["canary"] = "false" if labels.get("canary") == "true" else "true"
        else:
            labels["app"] = labels.get("app", "none") + "-v2"
        return msgspec.structs.replace(p, labels=intern_labels(labels))
    if kind == "phase":
        if p.phase == "Running" and p.node_name:
            return msgspec.structs.replace(p, phase=r.choice(["Succeeded", "Failed"]))
        return msgspec.structs.replace(p, phase="Running", node_name=p.node_name or r.choice(nodes))
    return msgspec.structs.replace(p, deleting=True)


def make_event_stream(snapshot: Snapshot, n: int, seed: int = 7) -> list[Event]:
    """A deterministic stream of ``n`` pod events against the snapshot's pods (records prebuilt).

    add: a new pod cloned from a random pod (same labels/owner) on a random node; move: a random pod gets
    another node (or is bound, if unscheduled); relabel: 70 % toggle a ``canary`` label (still matching),
    30 % change ``app`` (stops matching); phase: Running → Succeeded/Failed, otherwise → Running (bound);
    deleting: ``deletionTimestamp`` set; delete: a DELETED event. O(n + pods).
    """
    r = random.Random(seed)
    live = _LivePods(snapshot.pods)
    nodes = [node.name for node in snapshot.nodes]
    events: list[Event] = []
    for k in range(n):
        kind = r.choices(EVENT_TYPES, EVENT_WEIGHTS)[0]
        key, p = live.pick(r)
        if kind == "delete":
            live.drop(key)
            events.append(("remove", p.namespace, p.name, kind))
            continue
        if kind == "add":
            new = msgspec.structs.replace(
                p, name=f"{p.name}-e{k}", node_name=r.choice(nodes), phase="Running", deleting=False, uid=f"bench-{k}"
            )
        else:
            new = _changed(kind, p, r, nodes)
        live.put(new)
        events.append(("apply", new, kind))
    return events


@dataclasses.dataclass(frozen=True)
class StreamRun:
    """One replay: per-event wall and CPU nanoseconds, dirty workloads per event, and the loop's totals."""

    wall_ns: list[int]
    cpu_ns: list[int]  # process CPU time: excludes the time the process was not scheduled
    dirty: list[int]
    wall_s: float
    cpu_s: float


def run_stream(index: SpreadIndex, stream: Sequence[Event]) -> StreamRun:
    """Apply the stream, timing each event (wall and CPU) from apply/remove through the dirty report rebuilds."""
    times: list[int] = []
    cpus: list[int] = []
    dirty_counts: list[int] = []
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    apply, remove, take, report_for = index.apply, index.remove, index.take_dirty, index.report_for
    start, cpu_start = time.perf_counter(), time.process_time()
    for ev in stream:
        c0 = cpu()
        t0 = clock()
        if ev[0] == "apply":
            apply(ev[1])
        else:
            remove("Pod", ev[1], ev[2])
        dirty, _removed = take()
        for key in dirty:
            report_for(key)
        t1 = clock()
        c1 = cpu()
        times.append(t1 - t0)
        cpus.append(c1 - c0)
        dirty_counts.append(len(dirty))
    return StreamRun(times, cpus, dirty_counts, time.perf_counter() - start, time.process_time() - cpu_start)


def _one_replay(snapshot: Snapshot, profile: Profile, stream: Sequence[Event]) -> tuple[StreamRun, GCMeter]:
    index = fresh_index(snapshot, profile)
    gc.collect()
    with GCMeter() as meter:
        run = run_stream(index, stream)
    return run, meter


def _replay_stats(run: StreamRun, meter: GCMeter) -> dict[str, float]:
    s, cs = sorted(run.wall_ns), sorted(run.cpu_ns)
    n = len(s)
    return {
        "p50_us": percentile(s, 50) / 1e3,
        "p99_us": percentile(s, 99) / 1e3,
        "p999_us": percentile(s, 99.9) / 1e3,
        "max_us": s[-1] / 1e3,
        "mean_us": sum(s) / n / 1e3,
        "events_per_s": n / run.wall_s,
        "dirty_mean": sum(run.dirty) / n,
        "gc_s": meter.seconds,
        "gc_share": meter.seconds / run.wall_s,
        "gen2_collections": meter.collections[2],
        "cpu_p50_us": percentile(cs, 50) / 1e3,
        "cpu_p99_us": percentile(cs, 99) / 1e3,
        "cpu_events_per_s": n / run.cpu_s,
        "cpu_share": run.cpu_s / run.wall_s,
    }


def _frozen_gc(snapshot: Snapshot, profile: Profile, stream: Sequence[Event]) -> FrozenGcStream:
    """What-if: one replay with ``gc.freeze()`` after the load (the loaded objects leave the generations)."""
    index = fresh_index(snapshot, profile)
    gc.collect()
    gc.freeze()
    try:
        run = run_stream(index, stream)
    finally:
        gc.unfreeze()
    del index
    gc.collect()
    s = sorted(run.wall_ns)
    return FrozenGcStream(
        p50_us=percentile(s, 50) / 1e3,
        p99_us=percentile(s, 99) / 1e3,
        max_us=s[-1] / 1e3,
        events_per_s=len(stream) / run.wall_s,
        cpu_p99_us=percentile(sorted(run.cpu_ns), 99) / 1e3,
        cpu_events_per_s=len(stream) / run.cpu_s,
    )


def _by_type(stream: Sequence[Event], runs: Sequence[StreamRun]) -> dict[str, TypeStats]:
    wall: dict[str, list[int]] = {t: [] for t in EVENT_TYPES}
    cpu: dict[str, list[int]] = {t: [] for t in EVENT_TYPES}
    for run in runs:
        for ev, t, c in zip(stream, run.wall_ns, run.cpu_ns, strict=True):
            wall[ev[-1]].append(t)
            cpu[ev[-1]].append(c)
    return {
        t: TypeStats(
            n=len(v) // len(runs),
            p50_us=percentile(sorted(v), 50) / 1e3,
            p99_us=percentile(sorted(v), 99) / 1e3,
            cpu_p99_us=percentile(sorted(cpu[t]), 99) / 1e3,
        )
        for t, v in wall.items()
        if v
    }


def measure_incremental(
    snapshot: Snapshot, profile: Profile, stream: Sequence[Event], repeats: int, what_if: bool = True
) -> IncrementalResult:
    """Medians over ``repeats`` replays of ``stream`` (and with ``what_if`` one replay with the GC frozen)."""
    replays = [_one_replay(snapshot, profile, stream) for _ in range(repeats)]
    stats = [_replay_stats(run, meter) for run, meter in replays]
    mid = {k: median([s[k] for s in stats]) for k in stats[0]}
    by_type = _by_type(stream, [run for run, _ in replays])
    del replays
    return IncrementalResult(
        events=len(stream),
        repeats=repeats,
        p50_us=mid["p50_us"],
        p99_us=mid["p99_us"],
        p999_us=mid["p999_us"],
        max_us=mid["max_us"],
        mean_us=mid["mean_us"],
        events_per_s=mid["events_per_s"],
        dirty_mean=mid["dirty_mean"],
        gc_s=mid["gc_s"],
        gc_share=mid["gc_share"],
        gen2_collections=mid["gen2_collections"],
        cpu_p50_us=mid["cpu_p50_us"],
        cpu_p99_us=mid["cpu_p99_us"],
        cpu_events_per_s=mid["cpu_events_per_s"],
        cpu_share=mid["cpu_share"],
        runs_p99_us=[s["p99_us"] for s in stats],
        runs_events_per_s=[s["events_per_s"] for s in stats],
        by_type=by_type,
        gc_frozen=_frozen_gc(snapshot, profile, stream) if what_if else None,
    )
