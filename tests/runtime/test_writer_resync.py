"""The writer's resync and budget: the first resync as the leader checks every workload (skipping reports
whose listed digest matches), later ones only what differs from what this replica wrote or is missing — both
beside the writes (a change is written on time while either lists; before the first listing has shown a
report, the writer reads that one); when more workloads are due than the bucket allows, material changes (new
report, health, best nodes) go first. On a manual clock with the in-memory report API."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from handler_fakes import Clock, FakeReportApi, Pipeline, deployment, ev, pipeline, pod_of, run, web_cluster

from spreadwatch.model import WorkloadKey
from spreadwatch.runtime.writing.status import content_digest
from spreadwatch.runtime.writing.store import DIGEST_ANNOTATION
from spreadwatch.runtime.writing.writer import MATERIAL_AFTER


def _three(p: Pipeline) -> None:
    """web, api and db: one Balanced Deployment each (pods on node-a1, node-b1, node-c1)."""
    for name in ("web", "api", "db"):
        p.feed(*web_cluster(name=name))
    p.settle()


def _resync(p: Pipeline) -> int:
    """One resync alone (no writes): the workloads it left pending."""
    run(p.writer.resync())
    return p.writer.pending


def test_a_later_resync_with_nothing_changed_requeues_nothing() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    writes, checked = len(p.api.writes()), p.writer.stats.skipped_unchanged
    assert p.writer.stats.resyncs == 1
    assert _resync(p) == 0
    p.clock.advance(61)
    p.settle()  # the periodic resync in a cycle
    assert p.writer.stats.resyncs == 3
    assert len(p.api.writes()) == writes
    assert p.writer.stats.skipped_unchanged == checked  # not even rebuilt and compared


def test_a_later_resync_requeues_reports_that_differ_or_are_missing() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    web = p.api.objects[("shop", "deployment-web")]["spec"]["workloadRef"]
    p.api.put("shop", "deployment-web", web, {"health": "Balanced", "pods": 99})  # another writer's report
    del p.api.objects[("shop", "deployment-api")]  # kubectl delete spreadreport
    writes = len(p.api.writes())
    assert _resync(p) == 2  # db's report is what this replica wrote: not queued
    p.settle()
    assert sorted(c.name for c in p.api.writes()[writes:]) == ["deployment-api", "deployment-web"]
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.report("shop", "deployment-api")["pods"] == 3
    assert _resync(p) == 0  # all current again


def test_a_report_pointing_at_another_owner_is_requeued() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    obj = p.api.objects[("shop", "deployment-db")]
    obj["spec"]["workloadRef"]["uid"] = "uid-of-an-older-db"  # same status and digest, another owner
    obj["metadata"]["ownerReferences"] = [{"uid": "uid-of-an-older-db"}]  # (what a metadata listing reads)
    assert _resync(p) == 1
    p.settle()
    assert p.api.objects[("shop", "deployment-db")]["spec"]["workloadRef"]["uid"] == "uid-db"


def test_the_first_resync_of_each_leadership_checks_every_workload() -> None:
    first = pipeline()
    _three(first)
    second = pipeline()  # a new leader (a restart) over the same reports
    second.api = second.writer.store.api = first.api  # type: ignore[assignment]
    for name in ("web", "api", "db"):
        second.feed(*web_cluster(name=name))
    second.writer.collect()
    second.writer.debouncer.clear()  # only what the resync queues
    writes = len(first.api.writes())
    assert _resync(second) == 3  # every live workload, however its report looks
    second.settle()
    assert len(first.api.writes()) == writes  # each skipped: the listed digest matches the computed status
    assert second.writer.stats.skipped_unchanged == 3
    assert _resync(second) == 0
    second.leader = False
    second.step()  # a standby forgets
    second.leader = True
    assert _resync(second) == 3  # leading again: check everything once more


def test_a_new_leader_keeps_the_last_placement_its_predecessor_wrote() -> None:
    """lastPlacement is what the writing replica saw happen: a new leader that has seen no binding since keeps
    the listed one (no rewrite without it), and keeps it in its own next write."""
    first = pipeline()
    _three(first)
    stored = first.api.objects[("shop", "deployment-web")]
    placement = {"pod": "web-abc-9", "node": "node-b1", "outcome": "best_node", "time": "2026-11-25T00:00:00Z",
                 "consecutiveMisses": 0}  # fmt: skip
    stored["status"]["lastPlacement"] = placement  # (as the first leader wrote it after a binding)
    stored["metadata"]["annotations"][DIGEST_ANNOTATION] = content_digest(stored["status"]).hex()
    second = pipeline()
    second.api = second.writer.store.api = first.api  # type: ignore[assignment]
    for name in ("web", "api", "db"):
        second.feed(*web_cluster(name=name))
    writes = len(first.api.writes())
    second.settle()
    assert len(first.api.writes()) == writes  # nothing rewritten: the placement is part of what is kept
    second.feed(ev("MODIFIED", deployment("web", generation=2)))  # a real change: one write, placement kept
    second.settle()
    assert [c.name for c in first.api.writes()[writes:]] == ["deployment-web"]
    assert first.api.status("shop", "deployment-web")["lastPlacement"] == placement


# --- material changes first ---------------------------------------------------------------------------


def _changes(p: Pipeline) -> None:
    """Three due workloads, oldest first: web and api with a count-only change (their generation), db with a
    material one (all its pods on one node: another health and other best nodes)."""
    p.feed(ev("MODIFIED", deployment("web", generation=2)))
    p.clock.advance(0.1)
    p.feed(ev("MODIFIED", deployment("api", generation=2)))
    p.clock.advance(0.1)
    p.feed(*[ev("ADDED", pod_of("db", 10 + i, "node-a1")) for i in range(6)])
    p.clock.advance(p.writer.debounce + 0.01)


@pytest.mark.parametrize(
    ("rate", "web_age", "order"),
    [
        pytest.param(1.0, 0.0, ["db", "web", "api"], id="1 write/s, 3 due: material first"),
        pytest.param(100.0, 0.0, ["web", "api", "db"], id="100 writes/s, 3 due: oldest first"),
        # the age of web's change when the cycle runs (api's is 0.1 s less): at MATERIAL_AFTER (3 s) or more
        # a count-only change counts as material (newer material changes never starve it), oldest first
        pytest.param(1.0, MATERIAL_AFTER + 0.15, ["web", "api", "db"], id="1 write/s, web 3.15 s, api 3.05 s"),
        pytest.param(1.0, MATERIAL_AFTER + 0.05, ["web", "db", "api"], id="1 write/s, web 3.05 s, api 2.95 s"),
    ],
)
def test_material_changes_go_first_only_when_the_bucket_is_short(rate: float, web_age: float, order: list[str]) -> None:
    p = pipeline(max_writes_per_second=rate, write_burst=1)
    p.writer.max_in_flight = 1
    _three(p)
    p.clock.advance(10)  # the bucket refilled (to its burst of 1)
    _changes(p)
    if web_age:  # _changes and settle() each advance the clock by debounce + 0.01 s: web's change 0.2 s before
        p.clock.advance(web_age - 0.2 - 2 * (p.writer.debounce + 0.01))
    keys = {n: WorkloadKey("shop", "Deployment", n) for n in ("web", "api", "db")}
    store = p.writer.store
    material = {n: store.is_material(k, p.index.report_for(k)) for n, k in keys.items()}  # type: ignore[arg-type]
    assert material == {"web": False, "api": False, "db": True}
    writes = len(p.api.writes("apply"))
    p.settle()
    assert [c.name for c in p.api.writes("apply")[writes:]] == [f"deployment-{n}" for n in order]
    assert p.report("shop", "deployment-db")["health"] != "Balanced"
    assert p.report("shop", "deployment-web")["observedGeneration"] == 2


def test_a_new_report_is_material() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    key = WorkloadKey("shop", "Deployment", "web")
    report = p.index.report_for(key)
    assert report is not None
    assert p.writer.store.is_material(key, report)
    p.settle()
    assert not p.writer.store.is_material(key, report)


# --- a resync beside the writes -----------------------------------------------------------------------

_WRITE = 0.05  # seconds one apply takes on the manual clock


class SlowListApi(FakeReportApi):
    """The fake API, with applies that take ``_WRITE`` seconds and a listing that is read when it starts but
    answered only once ``gate`` opens (a resync in flight for as long as the test wants)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.gate = asyncio.Event()
        self.gate.set()

    async def save(self, *args: Any) -> dict[str, Any]:
        self.clock.advance(_WRITE)
        return await super().save(*args)

    async def list_reports(self, *args: Any, **kwargs: Any) -> list[Any]:
        listed = await super().list_reports(*args, **kwargs)  # the reports as they are when the list starts
        await self.gate.wait()
        return listed


async def _cycle(p: Pipeline) -> None:
    """One writer cycle, which must end without waiting for anything but the fake API's answers."""
    step = asyncio.ensure_future(p.writer.step())
    for _ in range(1000):
        if step.done():
            break
        await asyncio.sleep(0)
    assert step.done(), "the writer's cycle waited (for the resync?)"
    step.result()


async def _each_written_beside_the_resync(p: Pipeline, changes: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Feed each workload's events in turn, one writer cycle after the debounce: its report is written by the
    writer's own record within the debounce plus one write of the change, while the resync is still listing."""
    debounce, tick = p.writer.debounce, 0.01
    for name, events in changes:
        p.feed(*events)
        seen = p.clock()
        p.clock.advance(debounce + tick)
        await _cycle(p)
        record = p.writer.journal[-1]
        assert record.workload == WorkloadKey("shop", "Deployment", name)
        assert record.seen == seen and record.beside_resync and not record.queued_by_resync
        assert record.written - record.seen <= debounce + tick + _WRITE  # the debounce plus one write
        assert p.writer.resyncing


def test_a_resync_in_the_middle_of_churn_does_not_delay_a_changes_report() -> None:
    """Churn goes on while a later resync lists (its answer held back): each change's report is written within
    the debounce plus one write of the change, by the writer's own record, while the resync is in flight; the
    resync then finds the reports written meanwhile newer than its listing and queues only the one deleted
    behind the operator's back."""
    p = pipeline(resync_period=60.0)
    api = SlowListApi(p.clock)
    p.api = p.writer.store.api = api  # type: ignore[assignment]
    _three(p)

    async def main() -> None:
        api.gate.clear()
        del api.objects[("shop", "deployment-db")]  # kubectl delete spreadreport, before the listing
        p.clock.advance(61)
        await _cycle(p)  # the resync is due: it starts beside the writes and waits for its listing
        assert p.writer.resyncing
        await _each_written_beside_the_resync(p, [
            ("web", [ev("ADDED", pod_of("web", 7, "node-b2"))]),
            ("api", [ev("MODIFIED", deployment("api", generation=2))]),
            ("web", [ev("DELETED", pod_of("web", 7, "node-b2"))]),
            ("api", [ev("ADDED", pod_of("api", 9, "node-c2"))]),
        ])  # fmt: skip
        api.gate.set()
        while p.writer.resyncing:
            await asyncio.sleep(0)

    run(main())
    resync = p.writer.resyncs.runs[-1]
    assert (resync.mode, resync.listed, resync.writes_beside) == ("metadata", 2, 4)
    assert resync.stale == 1  # db: its report is missing; web and api were written after the listing began
    writes = len(p.api.writes("apply"))
    p.settle()
    assert [c.name for c in p.api.writes("apply")[writes:]] == ["deployment-db"]  # the correct ones untouched
    assert p.writer.stats.writes_during_resync == 4


# --- the first resync of a leadership, beside the writes ------------------------------------------------------

_OLD_TRANSITION = "2020-01-01T00:00:00Z"


class PagedListApi(SlowListApi):
    """SlowListApi whose whole listing shows its first ``shown`` reports (in name order), then waits for
    ``gate`` before the rest: the first listing of a leadership with its first page arrived."""

    shown = 2

    async def list_reports(self, namespaces: Any, keep: Any, *, metadata_only: bool = False,
                           on_page: Any = None) -> list[Any]:  # fmt: skip
        self._maybe_fail("list", "", "")
        listed = [copy.deepcopy(obj) for _, obj in sorted(self.objects.items())]  # as when the list starts
        kept = [k for k in map(keep, listed[: self.shown]) if k is not None]
        await self.gate.wait()
        return kept + [k for k in map(keep, listed[self.shown :]) if k is not None]


def _restart_over(first: Pipeline, names: list[str]) -> tuple[Pipeline, PagedListApi]:
    """A new leader (a restart) over ``first``'s reports, its listing held after the first page."""
    second = pipeline()
    api = PagedListApi(second.clock)
    api.objects = first.api.objects
    second.api = second.writer.store.api = api  # type: ignore[assignment]
    for name in names:
        second.feed(*web_cluster(name=name))
    api.gate.clear()
    return second, api


def test_the_first_resync_of_a_leadership_never_holds_the_writes_back() -> None:
    """A restart over existing reports, its first listing held after one page: changes are written on time
    meanwhile (by the writer's record), a report not listed yet read first, so it keeps its transition time
    and last placement and its health change is an Event; the correct reports are never rewritten."""
    names = [f"app{i}" for i in range(6)]  # their reports listed in this order
    first = pipeline()
    for name in names:
        first.feed(*web_cluster(name=name))
    first.settle()
    placement = {"pod": "app4-abc-9", "node": "node-b1", "outcome": "best_node", "time": "2026-11-25T00:00:00Z",
                 "consecutiveMisses": 0}  # fmt: skip
    for name in ("app1", "app4", "app5"):  # as an older leader left them
        stored = first.api.objects[("shop", f"deployment-{name}")]
        stored["status"]["conditions"][0]["lastTransitionTime"] = _OLD_TRANSITION
        stored["status"]["lastPlacement"] = placement
        stored["metadata"]["annotations"][DIGEST_ANNOTATION] = content_digest(stored["status"]).hex()
    second, api = _restart_over(first, names)
    debounce, tick = second.writer.debounce, 0.01
    applies = len(api.writes("apply"))

    async def main() -> None:
        second.clock.advance(debounce + tick)
        await _cycle(second)  # the leadership's first listing starts beside the writes; its first page arrives
        assert second.writer.resyncing and second.writer.store.settling
        await _each_written_beside_the_resync(second, [
            ("app1", [ev("ADDED", pod_of("app1", 7, "node-a2"))]),  # listed on the first page
            ("app4", [ev("ADDED", pod_of("app4", 7, "node-a2"))]),  # not listed yet: read first
            ("app5", [ev("DELETED", pod_of("app5", 1, "node-b1")),  # not listed yet; all on one node now
                      ev("DELETED", pod_of("app5", 2, "node-c1")),
                      ev("ADDED", pod_of("app5", 8, "node-a1")), ev("ADDED", pod_of("app5", 9, "node-a1"))]),
        ])  # fmt: skip
        api.gate.set()
        while second.writer.resyncing:
            await asyncio.sleep(0)

    run(main())
    assert [c.name for c in api.writes("apply")[applies:]] == ["deployment-app1", "deployment-app4",
                                                                "deployment-app5"]  # fmt: skip
    assert second.writer.stats.reads == 2  # app4 and app5: not listed when they were written
    assert [c.name for c in api.calls if c.verb == "get"] == ["deployment-app4", "deployment-app5"]
    app4 = api.status("shop", "deployment-app4")
    assert app4["conditions"][0]["lastTransitionTime"] == _OLD_TRANSITION  # same health: kept, though not listed
    assert app4["lastPlacement"] == placement and app4["pods"] == 4
    assert api.status("shop", "deployment-app5")["health"] == "SinglePointOfFailure"
    assert [(e["report"], e["reason"]) for e in api.events] == [("deployment-app5", "SinglePointOfFailure")]
    resync = second.writer.resyncs.runs[-1]
    assert (resync.mode, resync.listed, resync.writes_beside) == ("whole", 6, 3)
    assert resync.stale == 3  # the others, checked against their listed digests
    second.settle()
    assert len(api.writes("apply")) == applies + 3  # the correct reports untouched
    assert second.writer.stats.skipped_unchanged == 3


def test_a_workload_deleted_before_its_report_is_listed_loses_its_report_when_the_listing_ends() -> None:
    names = ["app0", "app1", "app2"]
    first = pipeline()
    for name in names:
        first.feed(*web_cluster(name=name))
    first.settle()
    second, api = _restart_over(first, names)

    async def main() -> None:
        second.clock.advance(second.writer.debounce + 0.01)
        await _cycle(second)
        second.feed(ev("DELETED", deployment("app2")))
        second.clock.advance(second.writer.debounce + 0.01)
        await _cycle(second)
        api.gate.set()
        while second.writer.resyncing:
            await asyncio.sleep(0)

    run(main())
    second.settle()
    assert api.names() == {("shop", "deployment-app0"), ("shop", "deployment-app1")}  # an orphan, deleted
    assert [(c.verb, c.name) for c in api.writes()] == [("delete", "deployment-app2")]  # nothing else written


def test_a_leadership_lost_during_its_first_listing_knows_nothing_of_it_when_it_leads_again() -> None:
    names = ["app0", "app1", "app2"]
    first = pipeline()
    for name in names:
        first.feed(*web_cluster(name=name))
    first.settle()
    second, api = _restart_over(first, names)

    async def main() -> None:
        second.clock.advance(second.writer.debounce + 0.01)
        await _cycle(second)  # the first listing begins; its first page arrives
        for _ in range(20):
            await asyncio.sleep(0)
        assert sorted(second.writer.known_reports().values()) == ["deployment-app0", "deployment-app1"]
        second.leader = False
        await _cycle(second)  # a standby: the listing is cancelled
        assert not second.writer.resyncing
        second.leader, api.shown = True, 0
        await _cycle(second)  # leading again: a new first listing, nothing known of the last one yet
        assert second.writer.resyncing and second.writer.known_reports() == {}
        api.gate.set()
        while second.writer.resyncing:
            await asyncio.sleep(0)

    run(main())
    assert sorted(second.writer.known_reports().values()) == [f"deployment-{name}" for name in names]
