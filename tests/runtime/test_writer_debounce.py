"""The writer: per-workload debounce, no write without a change, global rate limit, leader gating,
resync (orphans, missing reports), retries — on a manual clock with a fake API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from handler_fakes import Clock, deployment, ev, pipeline, pod_of, web_cluster

from spreadwatch.runtime.writing import TokenBucket, Writer


def test_nothing_is_written_until_the_workload_is_quiet_for_the_debounce() -> None:
    p = pipeline(debounce=2.0)
    p.feed(*web_cluster())
    p.clock.advance(1.0)
    assert p.step() == 0
    p.feed(ev("MODIFIED", pod_of("web", 0, "node-a2")))  # a new change restarts the wait
    p.clock.advance(1.5)
    assert p.step() == 0
    p.clock.advance(0.6)
    assert p.step() > 0
    assert p.api.names() == {("shop", "deployment-web")}


def test_debounce_is_per_workload() -> None:
    p = pipeline(debounce=1.0)
    p.feed(*web_cluster(name="web"), *web_cluster(name="api", pods_on=["node-a1"]))
    p.settle()
    writes = len(p.api.writes("apply"))
    # api keeps changing every 0.5 s for 1.5 s (within its 2 s max delay); web changes once and goes quiet
    p.feed(ev("ADDED", pod_of("web", 8, "node-c2")))
    for i in range(3):
        p.feed(ev("ADDED", pod_of("api", 10 + i, "node-b2")))
        p.clock.advance(0.5)
        p.step()
    names = [c.name for c in p.api.writes("apply")[writes:]]
    assert names == ["deployment-web"]
    p.settle()
    names = [c.name for c in p.api.writes("apply")[writes:]]
    assert names == ["deployment-web", "deployment-api"]


def test_a_workload_that_never_goes_quiet_is_written_after_max_delay() -> None:
    p = pipeline(debounce=1.0)  # max delay: 2 x debounce
    p.feed(*web_cluster(pods_on=[]))
    p.settle()
    first = len(p.api.writes("apply"))
    for i in range(60):  # a change every 0.5 s for 30 s
        p.feed(ev("ADDED", pod_of("web", i, "node-a1")))
        p.clock.advance(0.5)
        p.step()
    churn_writes = len(p.api.writes("apply")) - first
    assert 13 <= churn_writes <= 16  # about one every 2 s (30 s / 2 s = 15), not one per change (60)


def test_no_write_when_nothing_changed() -> None:
    p = pipeline()
    events = web_cluster()
    p.feed(*events)
    p.settle()
    writes = len(p.api.writes())
    p.feed(*[ev("MODIFIED", e["object"]) for e in events])  # identical objects again (a relist)
    p.settle()
    assert len(p.api.writes()) == writes
    assert p.writer.stats.skipped_unchanged >= 1


def test_only_lastupdatetime_changing_is_not_a_change() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    writes = len(p.api.writes())
    p.clock.advance(3600)  # the wall clock moves: lastUpdateTime would differ
    p.feed(ev("MODIFIED", deployment("web")))
    p.settle()
    assert len(p.api.writes()) == writes


def test_writes_are_rate_limited_globally() -> None:
    p = pipeline(max_writes_per_second=10.0, write_burst=5, events=False)
    for i in range(30):
        p.feed(*web_cluster(name=f"app{i}", pods_on=["node-a1"]))
    start = p.clock()
    p.settle()
    calls = p.api.writes()
    assert len(calls) == 30  # one server-side apply for each of the 30 workloads
    elapsed = p.clock() - start - p.writer.debounce
    assert elapsed >= (len(calls) - 5) / 10.0 - 1e-6
    # over any 1 s window: at most rate + burst writes
    times = [c.at for c in calls]
    for t in times:
        assert sum(1 for u in times if t <= u < t + 1.0) <= 15


def test_token_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock, sleep=clock.sleep)
    assert [bucket.try_acquire() for _ in range(4)] == [True, True, True, False]
    clock.advance(0.5)
    assert bucket.try_acquire()
    assert not bucket.try_acquire()
    clock.advance(100)
    assert sum(bucket.try_acquire() for _ in range(10)) == 3

    async def take(n: int) -> None:
        for _ in range(n):
            await bucket.acquire()

    start = clock()
    asyncio.run(take(7))  # 0 saved tokens left after the burst above: 7 at 2/s
    assert clock() - start == pytest.approx(3.5)
    with pytest.raises(ValueError, match="rate"):
        TokenBucket(rate=0)


@pytest.mark.parametrize(
    ("taken", "after", "within", "available"),
    [
        pytest.param(0, 0.0, 0.0, 3, id="full: the burst of 3"),
        pytest.param(0, 0.0, 1.0, 5, id="full, within 1 s: 3 + 1 x 2"),
        pytest.param(3, 0.0, 0.0, 0, id="emptied: 0"),
        pytest.param(3, 0.0, 0.5, 1, id="emptied, within 0.5 s: 0.5 x 2"),
        pytest.param(3, 0.25, 0.0, 0, id="0.25 s later: half a token is none"),
        pytest.param(3, 0.25, 0.25, 1, id="0.25 s later, within 0.25 s: 0.5 + 0.5"),
        pytest.param(3, 100.0, 2.0, 7, id="100 s later: capped at 3, + 2 x 2"),
    ],
)
def test_token_bucket_available(taken: int, after: float, within: float, available: int) -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock, sleep=clock.sleep)
    assert all(bucket.try_acquire() for _ in range(taken))
    clock.advance(after)
    assert bucket.available(within) == available
    assert bucket.available(within) == available  # asking takes nothing
    now = bucket.available()
    assert sum(bucket.try_acquire() for _ in range(10)) == now  # what try_acquire hands out at once


def test_a_standby_writes_nothing_and_resyncs_when_it_becomes_leader() -> None:
    p = pipeline()
    p.leader = False
    p.feed(*web_cluster())
    p.settle()
    assert p.api.calls == []
    # the previous leader left a stale report and an orphan
    p.api.put("shop", "deployment-web", {"kind": "Deployment", "name": "web", "uid": "uid-web"}, {"pods": 99})
    p.api.put("shop", "deployment-gone", {"kind": "Deployment", "name": "gone", "uid": "x"}, {"pods": 1})
    p.leader = True
    p.settle()
    assert p.api.names() == {("shop", "deployment-web")}
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.writer.stats.resyncs == 1


def test_a_standby_builds_each_changed_report_after_the_debounce_and_writes_nothing() -> None:
    # a standby's /metrics reads the reports as built (SpreadIndex.published_report): its writer builds them
    p = pipeline(debounce=1.0)
    p.leader = False
    p.feed(*web_cluster())
    key = next(iter(p.index.workload_keys()))
    p.step()
    assert p.index.published_report(key) is None  # within the debounce: not built yet
    p.clock.advance(1.1)
    p.step()
    first = p.index.published_report(key)
    assert first is not None and first.pods == 3 and p.index.report_is_current(key)
    p.feed(ev("ADDED", pod_of("web", 7, "node-c2")))
    assert not p.index.report_is_current(key)
    assert p.index.published_report(key) is first  # the last one built, until the rebuild
    p.clock.advance(1.1)
    p.step()
    rebuilt = p.index.published_report(key)
    assert rebuilt is not None and rebuilt.pods == 4 and len(p.writer.debouncer) == 0
    assert p.api.calls == []


def test_leadership_lost_mid_cycle_stops_writing() -> None:
    p = pipeline(max_writes_per_second=1000.0, write_burst=1000)
    for i in range(10):
        p.feed(*web_cluster(name=f"app{i}", pods_on=["node-a1"]))
    original = p.api.save
    count = 0

    async def lose_after_three(namespace: str, name: str, *rest: Any) -> dict[str, Any]:
        nonlocal count
        count += 1
        if count == 3:
            p.leader = False
        return await original(namespace, name, *rest)

    p.api.save = lose_after_three  # type: ignore[method-assign]
    p.clock.advance(2)
    p.step()  # the leadership's first listing: it queues every workload when it ends
    assert count == 0
    p.step()
    assert count == 3
    assert len(p.api.names()) == 3


def test_resync_recreates_reports_deleted_behind_the_operators_back() -> None:
    p = pipeline(resync_period=60.0)
    p.feed(*web_cluster())
    p.settle()
    del p.api.objects[("shop", "deployment-web")]  # e.g. kubectl delete spreadreport
    p.clock.advance(61)
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.writer.stats.resyncs == 2


def test_resync_keeps_identical_reports_and_their_transition_time() -> None:
    p = pipeline(resync_period=60.0)
    p.feed(*web_cluster())
    p.settle()
    writes = len(p.api.writes())
    since = p.report("shop", "deployment-web")["conditions"][0]["lastTransitionTime"]
    p.clock.advance(61)
    p.settle()
    assert len(p.api.writes()) == writes
    assert p.report("shop", "deployment-web")["conditions"][0]["lastTransitionTime"] == since


def test_a_new_leader_adopts_existing_reports_without_rewriting_them() -> None:
    first = pipeline()
    first.feed(*web_cluster())
    first.settle()
    second = pipeline()
    second.api = first.api
    second.writer.store.api = first.api  # type: ignore[assignment]
    second.feed(*web_cluster())
    writes = len(first.api.writes())
    second.clock.now = first.clock.now + 500  # another replica, later
    second.settle()
    assert len(first.api.writes()) == writes


def test_failed_writes_are_retried_with_backoff() -> None:
    p = pipeline()
    p.api.fail_next["apply"] = [500, 503]
    p.step()  # the leadership's first listing (no report yet)
    p.feed(*web_cluster())
    p.clock.advance(1.1)
    p.step()
    assert p.writer.stats.failures == 1
    assert p.writer.pending == 1
    p.clock.advance(0.1)
    p.step()  # still backing off
    assert p.writer.stats.failures == 1
    p.clock.advance(2.0)
    p.step()
    p.clock.advance(4.0)
    p.step()
    assert p.writer.stats.failures == 2
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.writer.pending == 0


def test_report_missing_at_status_write_is_recreated() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    writes = len(p.api.writes())
    del p.api.objects[("shop", "deployment-web")]  # the garbage collector or a user
    p.feed(ev("MODIFIED", deployment("web", replicas=4, generation=2)))
    p.settle()
    assert p.report("shop", "deployment-web")["replicas"] == 4
    # the apply creates it again: one request, no failed update first
    assert [c.verb for c in p.api.writes()[writes:]] == ["apply"]
    assert p.writer.stats.failures == 0


def test_nothing_is_written_before_the_index_is_loaded() -> None:
    p = pipeline()
    p.writer.ready = False
    p.feed(*web_cluster())
    p.clock.advance(5)
    assert p.step() == 0
    assert p.api.calls == []
    p.writer.ready = True
    p.settle()
    assert p.api.names() == {("shop", "deployment-web")}


def test_drain_writes_everything_pending_at_once() -> None:
    p = pipeline(debounce=30.0)
    p.feed(*web_cluster())
    asyncio.run(p.writer.drain())
    assert p.api.names() == {("shop", "deployment-web")}
    assert p.writer.debounce == 30.0


def test_run_loop_writes_and_stops() -> None:
    p = pipeline(debounce=0.05)
    p.writer = Writer(p.index, p.config, p.api, bucket=TokenBucket(100, 100))  # the real clocks
    p.writer.ready = True
    p.router.wake = p.writer.wake
    p.feed(*web_cluster())

    async def main() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(p.writer.run(stop))
        for _ in range(3000):  # up to 60 s: waits for the write, however busy the machine
            await asyncio.sleep(0.02)
            if ("shop", "deployment-web") in p.api.objects and "status" in p.api.objects[("shop", "deployment-web")]:
                break
        stop.set()
        await asyncio.wait_for(task, 60)

    asyncio.run(main())
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.writer.stats.cycles > 0


def test_failed_deletion_is_retried() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    p.api.fail_next["delete"] = [503]
    p.feed(ev("DELETED", deployment("web")))
    p.clock.advance(0.1)
    p.step()
    assert p.writer.stats.failures == 1
    assert ("shop", "deployment-web") in p.api.names()
    p.settle()
    assert p.api.names() == set()
