"""The writer's parts: throughput (bounded writes in flight that follow the answered writes' latency, oldest
change first, short cycles), the debouncer alone, and stored reports read from the API.

The fake API here blocks its calls on a gate, so several writes really are in flight at once (a fake sink in a
unit test; the e2e tests run the writer against the real control plane).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from handler_fakes import FakeReportApi, Pipeline, deployment, ev, namespace_obj, pipeline, run, web_cluster, zone_nodes

from spreadwatch.config import OperatorConfig
from spreadwatch.model import WorkloadKey
from spreadwatch.runtime.writing.concurrency import PRIOR_LATENCY
from spreadwatch.runtime.writing.debounce import Debouncer
from spreadwatch.runtime.writing.status import content_digest
from spreadwatch.runtime.writing.store import DIGEST_ANNOTATION, StoredReport, material_key, stored_report
from spreadwatch.runtime.writing.writer import STALE_EVERY


def _workload(name: str) -> list[dict[str, Any]]:
    """One Deployment's events (its ReplicaSet, one pod, a Service), without the shared nodes/namespace."""
    return [e for e in web_cluster(pods_on=("node-a1",), name=name) if e["object"]["kind"] not in ("Node", "Namespace")]


def _base(p: Pipeline) -> None:
    p.feed(*[ev("ADDED", o) for o in zone_nodes()], ev("ADDED", namespace_obj("shop")))
    p.step()  # the leadership's first listing (no report yet): what changes from now on is written as it is due


class GatedApi(FakeReportApi):
    """FakeReportApi whose applies wait on a gate, counting how many are waiting at once (``started``: the
    reports in the order their applies began)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.active = 0
        self.max_active = 0
        self.started: list[str] = []

    async def save(
        self,
        namespace: str,
        name: str,
        labels: Mapping[str, str],
        annotations: Mapping[str, str],
        workload: Mapping[str, str],
        status: Mapping[str, Any],
    ) -> dict[str, Any]:
        self.started.append(name)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await self.gate.wait()
            return await super().save(namespace, name, labels, annotations, workload, status)
        finally:
            self.active -= 1


def _gated_cycle(p: Pipeline, api: GatedApi) -> tuple[int, int]:
    """One writer cycle with every apply held at the gate until all writers have reached it: (applies waiting
    at the gate, the writer's writes in flight) then."""

    async def main() -> tuple[int, int]:
        step = asyncio.create_task(p.writer.step())
        for _ in range(200):  # let every worker reach the gate
            await asyncio.sleep(0)
        waiting, during = api.active, p.writer.in_flight
        api.gate.set()
        await step
        return waiting, during

    return run(main())


@pytest.mark.parametrize(
    ("ceiling", "latency", "due", "expected"),
    [
        # before any answer: 100 writes/s x 50 ms (PRIOR_LATENCY) x 1.5 = 7.5 -> 8, under the ceiling
        pytest.param(24, None, 10, 8, id="no answer yet: 100/s x 50 ms x 1.5 = 8"),
        pytest.param(1, None, 10, 1, id="ceiling 1"),
        pytest.param(7, None, 10, 7, id="ceiling 7 < 8"),
        pytest.param(24, None, 3, 3, id="3 due: 3 writers"),
        pytest.param(24, 0.1, 30, 15, id="answers in 100 ms: 100/s x 0.1 s x 1.5 = 15"),
        pytest.param(24, 0.4, 30, 24, id="answers in 400 ms: 60, the ceiling 24"),
        pytest.param(24, 0.005, 30, 2, id="answers in 5 ms: 0.75, the floor 2"),
    ],
)
def test_writes_in_flight_follow_the_answered_latency(ceiling: int, latency: float | None, due: int,
                                                      expected: int) -> None:  # fmt: skip
    p = pipeline(events=False, max_writes_in_flight=ceiling)
    api = GatedApi()
    p.writer.store.api = api
    assert p.writer.max_in_flight == ceiling
    for _ in range(50 if latency is not None else 0):
        p.writer.concurrency.observe(latency or 0.0)
    _base(p)
    for i in range(due):
        p.feed(*_workload(f"app{i}"))
    p.clock.advance(p.writer.debounce + 0.01)
    waiting, during = _gated_cycle(p, api)
    assert waiting == during == expected
    assert api.max_active == expected
    assert p.writer.in_flight == 0
    assert len(api.writes()) == len(api.writes("apply")) == due  # every workload once, one request each
    assert p.writer.pending == 0


def test_every_answered_apply_is_timed_into_the_bound() -> None:
    p = pipeline(events=False)
    _base(p)
    for i in range(5):
        p.feed(*_workload(f"app{i}"))
    p.settle()
    assert p.writer.stats.write_latency.count == 5  # one observation per apply, request to answer
    assert p.writer.concurrency.latency != PRIOR_LATENCY  # the writer's bound now follows the answers


def test_a_throttled_server_halves_the_writes_in_flight() -> None:
    p = pipeline(events=False)
    api = GatedApi()
    p.writer.store.api = api
    for _ in range(50):
        p.writer.concurrency.observe(0.1)  # 15 in flight
    p.writer.throttled()  # (the runtime calls it for every 429 its API threads see)
    p.writer.throttled()  # the 429 of another write already in flight: halved once
    _base(p)
    for i in range(20):
        p.feed(*_workload(f"app{i}"))
    p.clock.advance(p.writer.debounce + 0.01)
    assert _gated_cycle(p, api) == (7, 7)


def test_default_in_flight_bound() -> None:
    writer = pipeline().writer
    assert writer.max_in_flight == OperatorConfig().max_writes_in_flight == 24
    assert writer.concurrency.limit == 8  # several writes wait on the API at once from the first cycle


def test_due_workloads_are_written_oldest_change_first() -> None:
    p = pipeline(events=False)
    _base(p)
    for name in ("charlie", "alpha", "bravo"):  # changed in this order, 0.2 s apart
        p.feed(*_workload(name))
        p.clock.advance(0.2)
    p.settle()
    assert [c.name for c in p.api.writes("apply")] == ["deployment-charlie", "deployment-alpha", "deployment-bravo"]


def test_the_gated_start_order_is_oldest_first_too() -> None:
    p = pipeline(events=False)
    api = GatedApi()
    p.writer.store.api = api
    _base(p)
    names = [f"w{i}" for i in range(9, -1, -1)]  # w9 changed first, w0 last
    for name in names:
        p.feed(*_workload(name))
        p.clock.advance(0.01)
    p.clock.advance(p.writer.debounce)
    first = p.writer.concurrency.limit  # the writers that start together (8)

    async def main() -> None:
        step = asyncio.create_task(p.writer.step())
        for _ in range(100):
            await asyncio.sleep(0)
        api.gate.set()
        await step

    run(main())
    started = api.started
    assert first > 1
    assert started[:first] == [f"deployment-{n}" for n in names[:first]]
    assert sorted(started) == sorted(f"deployment-{n}" for n in names)


def test_a_long_backlog_does_not_hold_back_an_older_change_that_becomes_due_meanwhile() -> None:
    # 1 write/s: each new workload costs 1 write (one apply), so 20 of them take about 20 s. A cycle ends
    # after about a second of writing and the next one takes the due list again, so "old" (changed first,
    # but still changing when the backlog started) is written as soon as it goes quiet, not after the 20
    # younger ones.
    p = pipeline(max_writes_per_second=1.0, write_burst=1, events=False)
    p.writer.max_in_flight = 1
    _base(p)
    p.feed(*_workload("old"))
    p.clock.advance(0.5)
    for i in range(20):
        p.feed(*_workload(f"young{i:02d}"))
    p.clock.advance(0.9)
    p.feed(ev("MODIFIED", deployment("old", replicas=1, labels={"app": "old", "rev": "2"})))  # still changing
    p.clock.advance(0.1)
    p.step()  # "old" is not quiet (nor 2 s old) yet: this cycle writes young00 (the burst) and young01 (1 s later)
    assert [c.name for c in p.api.writes("apply")] == ["deployment-young00", "deployment-young01"]
    p.settle(max_steps=100)
    created = [c.name for c in p.api.writes("apply")]
    assert created[:3] == ["deployment-young00", "deployment-young01", "deployment-old"]
    assert len(created) == 21


# --- the scheduler alone ----------------------------------------------------------------------------------

A, B, C = (WorkloadKey("shop", "Deployment", n) for n in ("a", "b", "c"))


@pytest.mark.parametrize(
    ("changes", "now", "expected"),
    [
        ([(A, 0.0), (B, 0.1), (C, 0.2)], 5.0, [A, B, C]),  # all quiet: oldest first change first
        ([(C, 0.0), (A, 0.1), (B, 0.2)], 5.0, [C, A, B]),  # not by name
        ([(A, 0.0), (B, 0.1), (A, 4.5)], 5.0, [B]),  # A changed 0.5 s ago: not quiet for the 1 s debounce
        ([(A, 0.0), (A, 9.5), (B, 3.0)], 10.0, [A, B]),  # A never quiet, but 10 s (max_delay) since its first
        ([(A, 0.0), (B, 0.1)], 0.5, []),  # nothing quiet yet
    ],
)
def test_scheduler_due_order(changes: list[tuple[WorkloadKey, float]], now: float, expected: list[WorkloadKey]) -> None:
    s = Debouncer(debounce=1.0, max_delay=10.0)
    for key, at in changes:
        s.mark(key, at)
    assert s.due(now) == expected
    assert len(s) == len({k for k, _ in changes})


def test_scheduler_coalesces_retries_with_backoff_and_queues_deletions() -> None:
    s = Debouncer(debounce=1.0, max_delay=10.0)
    s.collect([A, B], [], 0.0)
    s.collect([A], [C], 0.5)  # A again: one entry; C removed: a deletion
    assert len(s) == 3 and s.next_due(0.6) == 0.6  # a deletion is due at once
    assert s.take_deletions() == [C]
    assert s.next_due(0.6) == 1.0  # B quiet at 1.0 (A at 1.5)
    p = s.take(A)
    assert p is not None and (p.first, p.last) == (0.0, 0.5)
    assert s.retry(A, p, 2.0) == 1.0  # first failure: 0.5 s doubled once
    assert s.due(2.5) == [B]  # A waits for its back-off
    assert s.due(3.0) == [A, B]
    s.mark_stale([A, B, C], 3.0)  # a resync: only C is new, as changed max_delay ago
    assert s.due(3.0) == [C, A, B]
    assert s.oldest_age(3.0) == 10.0
    s.clear()
    assert len(s) == 0 and s.oldest_age(3.0) == 0.0 and s.next_due(3.0) is None


# --- stored reports -----------------------------------------------------------------------------------------


def _report_obj(
    name: str,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"namespace": "shop", "name": name, "uid": "u-1", "resourceVersion": "7"},
        "spec": spec or {},
    }
    if annotations is not None:
        obj["metadata"]["annotations"] = annotations
    if status is not None:
        obj["status"] = status
    return obj


_BALANCED = {"health": "Balanced", "bestNodes": ["node-a1"], "bestNodeCount": 1, "conditions": [{"type": "Balanced"}]}
_BALANCED_DIGEST = content_digest(_BALANCED)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            _report_obj("deployment-web", {"workloadRef": {"kind": "Deployment", "name": "web", "uid": "w-1"}}),
            StoredReport(
                WorkloadKey("shop", "Deployment", "web"),
                "deployment-web",
                None,
                None,
                "",
                material_key("", (), -1),
                None,
                "w-1",
                "u-1",
                "7",
            ),
            id="workloadRef, no status: no digest",
        ),
        pytest.param(  # no workloadRef: the name tells the workload; the digest is the annotation's
            _report_obj("statefulset-db", status=_BALANCED, annotations={DIGEST_ANNOTATION: _BALANCED_DIGEST.hex()}),
            StoredReport(
                WorkloadKey("shop", "StatefulSet", "db"),
                "statefulset-db",
                _BALANCED_DIGEST,
                {"type": "Balanced"},
                "Balanced",
                material_key("Balanced", ["node-a1"], 1),
                None,
                "",
                "u-1",
                "7",
            ),
            id="name, annotated digest",
        ),
        pytest.param(  # a status without the annotation (or a malformed one): digest unknown, rewritten
            _report_obj("statefulset-db", status=_BALANCED, annotations={DIGEST_ANNOTATION: "not hex"}),
            StoredReport(
                WorkloadKey("shop", "StatefulSet", "db"),
                "statefulset-db",
                None,
                {"type": "Balanced"},
                "Balanced",
                material_key("Balanced", ["node-a1"], 1),
                None,
                "",
                "u-1",
                "7",
            ),
            id="malformed digest annotation",
        ),
        pytest.param(  # the last placement another replica saw: kept for the next write
            _report_obj("statefulset-db", status={**_BALANCED, "lastPlacement": {"pod": "db-1", "outcome": "other"}}),
            StoredReport(
                WorkloadKey("shop", "StatefulSet", "db"),
                "statefulset-db",
                None,
                {"type": "Balanced"},
                "Balanced",
                material_key("Balanced", ["node-a1"], 1),
                {"pod": "db-1", "outcome": "other"},
                "",
                "u-1",
                "7",
            ),
            id="a listed last placement",
        ),
        pytest.param(_report_obj("something-else"), None, id="not ours to attribute"),
    ],
)
def test_stored_report_of_an_api_object(obj: dict[str, Any], expected: StoredReport | None) -> None:
    got = stored_report(obj)
    assert got == expected
    if got is not None:
        assert got.meta == {"namespace": "shop", "name": got.name, "uid": "u-1", "resourceVersion": "7"}
        assert got.canonical


def test_the_material_key_is_health_and_best_nodes_only() -> None:
    key = material_key("Balanced", ["node-a1", "node-b1"], 2)
    assert key == material_key("Balanced", ("node-a1", "node-b1"), 2)  # a list or a tuple alike
    assert key != material_key("Imbalanced", ["node-a1", "node-b1"], 2)
    assert key != material_key("Balanced", ["node-a1"], 2)
    assert key != material_key("Balanced", ["node-a1", "node-b1"], 3)
    assert key != 0  # 0 means unknown


def test_the_writer_takes_a_batch_of_stale_predictions_at_most_every_stale_every() -> None:
    """Every pod event makes every prediction stale: the cycles take a batch of them (``take_dirty(stale=True)``)
    at most once per ``STALE_EVERY`` seconds, however often they run; events never take one."""
    p = pipeline()
    taken: list[bool] = []
    take = p.index.take_dirty

    def recording(stale: bool = True) -> tuple[set[WorkloadKey], set[WorkloadKey]]:
        taken.append(stale)
        return take(stale)

    p.index.take_dirty = recording  # type: ignore[method-assign]
    p.step()  # t=0: a batch
    p.step()  # t=0 again: none
    p.clock.advance(STALE_EVERY / 2)
    p.step()  # half way: none
    p.feed(ev("ADDED", namespace_obj("shop")))  # an event: its own changes, never a batch
    p.clock.advance(STALE_EVERY / 2)
    p.step()  # STALE_EVERY after the first: a batch
    assert taken == [True, False, False, False, True]
