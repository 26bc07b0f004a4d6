"""The pod event stream of the benchmarks: a deterministic mix of pod changes and the loop that times it.

The mix (also bench/soak.py's): 20 % add, 15 % move node, 15 % relabel, 15 % phase change, 15 %
deletionTimestamp, 20 % delete, so the pod count stays level. Records are prebuilt (parsing is measured
separately). Costs: building O(events + pods); a replay O(events × dirty workloads per event × candidate nodes).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Sequence
from typing import Any

import msgspec

from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, intern_labels
from spreadwatch.snapshot import Snapshot

__all__ = ["EVENT_TYPES", "EVENT_WEIGHTS", "Event", "StreamRun", "make_event_stream", "run_stream"]

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
                p, name=f"{p.name}-e{k}", node_name=r.choice(nodes), phase="Running", deleting=False
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
    """Apply the stream, timing each event (wall and CPU) from apply/remove through the dirty report rebuilds,
    as the writer takes an event's changes: without a batch of stale predictions (the writer takes one a second
    at most: ``bench.index_figures.events``' ``refresh_batch_ms``)."""
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
        dirty, _removed = take(False)
        for key in dirty:
            report_for(key)
        t1 = clock()
        c1 = cpu()
        times.append(t1 - t0)
        cpus.append(c1 - c0)
        dirty_counts.append(len(dirty))
    return StreamRun(times, cpus, dirty_counts, time.perf_counter() - start, time.process_time() - cpu_start)
