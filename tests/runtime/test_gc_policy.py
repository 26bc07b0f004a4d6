"""The operator's GC policy (runtime/gcpolicy.py) and its wiring into the Runtime: what it collects and freezes,
when, and that stopping gives the frozen objects back. Its timing is measured by bench/soak.py, not here."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import pytest
from handler_fakes import NAMED_CONFIG, FakeReportApi, Feeder, web_cluster

from spreadwatch.decode import Decoded
from spreadwatch.errors import KubeApiError
from spreadwatch.resources import ApiResource
from spreadwatch.runtime.gcpolicy import GcPolicy
from spreadwatch.runtime.process import Runtime


class _Cycle:
    """An object that only the cyclic collector can free (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def _cyclic_garbage() -> weakref.ref[_Cycle]:
    return weakref.ref(_Cycle())


def test_a_checkpoint_collects_cycles_then_freezes_what_is_left() -> None:
    dead = _cyclic_garbage()
    alive = _Cycle()
    policy = GcPolicy()
    policy.checkpoint()
    assert dead() is None  # collected before the freeze
    assert gc.get_freeze_count() > 0
    assert all(alive is not o for o in gc.get_objects())  # frozen: out of the collected generations
    assert (policy.checkpoints, policy.whole_heap) == (1, 0)
    policy.stop()
    assert gc.get_freeze_count() == 0
    assert any(alive is o for o in gc.get_objects())


def test_every_full_every_th_checkpoint_collects_the_whole_heap() -> None:
    policy = GcPolicy(full_every=3)
    held = _Cycle()
    ref = weakref.ref(held)
    policy.checkpoint()  # 1: held is frozen
    del held  # cyclic garbage among the frozen objects
    policy.checkpoint()  # 2: only what is not frozen is collected
    assert ref() is not None
    policy.checkpoint()  # 3: unfreeze, collect everything
    assert ref() is None
    assert (policy.checkpoints, policy.whole_heap) == (3, 1)
    assert gc.get_freeze_count() > 0  # frozen again afterwards


def test_start_freezes_the_loaded_heap_without_collecting_it() -> None:
    """The loaded heap is frozen as it is: an old cycle's garbage waits for the first whole-heap checkpoint
    (collecting a whole envelope-sized heap blocked the event loop 1-2 s), young garbage is collected."""
    old = _Cycle()
    gc.collect()  # old: in the oldest generation
    old_ref = weakref.ref(old)
    del old
    young = _cyclic_garbage()
    policy = GcPolicy(full_every=2)

    async def main() -> None:
        stop = asyncio.Event()
        task = policy.start(stop)
        assert gc.get_freeze_count() > 0 and policy.checkpoints == 0
        assert young() is None and old_ref() is not None
        policy.checkpoint()  # 1: the frozen heap is not looked at
        assert old_ref() is not None
        policy.checkpoint()  # 2: the whole heap
        assert old_ref() is None
        stop.set()
        await task

    asyncio.run(main())


def test_hold_stops_automatic_full_collections_until_stopped() -> None:
    before = gc.get_threshold()
    policy = GcPolicy()
    policy.hold()
    policy.hold()  # idempotent: stop restores the thresholds from before the first
    assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] >= 10**9
    policy.stop()
    assert gc.get_threshold() == before


def test_free_memory_goes_back_to_the_os_after_the_start_and_every_checkpoint() -> None:
    calls: list[int] = []
    policy = GcPolicy(period=0.01, release=lambda: calls.append(policy.checkpoints))

    async def main() -> None:
        stop = asyncio.Event()
        task = policy.start(stop)
        for _ in range(1000):  # up to 10 s, however busy the machine
            await asyncio.sleep(0.01)
            if len(calls) >= 3:
                break
        stop.set()
        await task

    asyncio.run(main())
    assert calls[:3] == [0, 1, 2]  # after the start's freeze, then after each checkpoint
    assert policy.releases == len(calls)


def test_the_default_release_is_the_c_librarys_trim() -> None:
    release = GcPolicy().release
    assert release is not None  # glibc: malloc_trim
    assert release() in (0, 1)  # 1: memory was released, 0: there was none to release


def test_start_checkpoints_every_period_until_stopped() -> None:
    policy = GcPolicy(period=0.01)
    before = gc.get_threshold()

    async def main() -> int:
        stop = asyncio.Event()
        task = policy.start(stop)
        first = policy.checkpoints  # start freezes; the checkpoints come with the period
        young, middle, full = gc.get_threshold()
        assert (young, middle) == before[:2]  # the young generations keep their thresholds
        assert full >= 10**9  # only the checkpoints collect the whole (unfrozen) heap
        for _ in range(1000):  # up to 10 s, however busy the machine
            await asyncio.sleep(0.01)
            if policy.checkpoints >= 3:
                break
        stop.set()
        await task
        return first

    assert asyncio.run(main()) == 0
    assert policy.checkpoints >= 3
    assert gc.get_freeze_count() == 0  # stopping unfreezes
    assert gc.get_threshold() == before  # and restores the thresholds


def test_the_runtime_starts_the_policy_once_loaded_and_stops_it() -> None:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False)
    rt = Runtime(cfg, report_api=FakeReportApi())
    assert rt.gc_policy == GcPolicy()  # the module's defaults: every 5 s, the whole heap hourly
    assert (rt.gc_policy.period, rt.gc_policy.full_every) == (5.0, 720)

    before = gc.get_threshold()

    async def main() -> tuple[int, int, int]:
        await rt.start()
        Feeder(rt.router).feed(*web_cluster())
        frozen = gc.get_freeze_count()
        checkpoints = rt.gc_policy.checkpoints
        full_threshold = gc.get_threshold()[2]
        await rt.stop()
        return frozen, checkpoints, full_threshold

    frozen, checkpoints, full_threshold = asyncio.run(main())
    assert checkpoints == 0 and frozen > 0 and full_threshold >= 10**9
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_the_runtime_switches_threads_every_millisecond_while_it_runs() -> None:
    """A thread that gave up the GIL (zlib in a scrape, a socket read) gets it back within 1 ms, not CPython's
    5 ms, while the operator runs; the interpreter's own interval is restored at its stop."""
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False)
    rt = Runtime(cfg, report_api=FakeReportApi())
    before = sys.getswitchinterval()

    async def main() -> float:
        await rt.start()
        running = sys.getswitchinterval()
        await rt.stop()
        return running

    assert before == 0.005 and asyncio.run(main()) == 0.001
    assert sys.getswitchinterval() == before


class _SlowLists:
    """A WatchSource whose lists answer (empty) only once released; its watches fail."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def list(self, resource: ApiResource, namespace: str | None) -> Iterable[tuple[Sequence[Decoded], str]]:
        self.release.wait(60)
        return [((), "1")]

    def watch(self, resource: ApiResource, namespace: str | None, resource_version: str) -> Iterator[object]:
        raise KubeApiError("no watch here")


def test_the_runtime_holds_full_collections_back_during_the_first_lists() -> None:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False)
    source = _SlowLists()
    rt = Runtime(cfg, report_api=FakeReportApi(), source=source)  # type: ignore[arg-type]
    before = gc.get_threshold()

    async def main() -> tuple[int, int, bool]:
        await rt.start()
        await asyncio.sleep(0)
        held, frozen, ready = gc.get_threshold()[2], gc.get_freeze_count(), rt.ready()
        source.release.set()
        await rt.stop()
        return held, frozen, ready

    try:
        held, frozen, ready = asyncio.run(main())
    finally:
        source.release.set()
    assert held >= 10**9 and frozen == 0 and not ready  # listing: held back, nothing frozen yet
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
