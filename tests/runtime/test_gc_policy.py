"""The operator's GC policy (runtime/gcpolicy.py) and its wiring into the Runtime: what it collects and freezes,
when, and that stopping gives the frozen objects back. Its timing is measured by bench/soak.py, not here."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from dataclasses import replace

import pytest
from handler_fakes import FakeReportApi, web_cluster

from spreadwatch.config import OperatorConfig
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


def test_start_checkpoints_now_and_every_period_until_stopped() -> None:
    policy = GcPolicy(period=0.01)
    before = gc.get_threshold()

    async def main() -> int:
        stop = asyncio.Event()
        task = policy.start(stop)
        first = policy.checkpoints  # the checkpoint at start is synchronous
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

    assert asyncio.run(main()) == 1
    assert policy.checkpoints >= 3
    assert gc.get_freeze_count() == 0  # stopping unfreezes
    assert gc.get_threshold() == before  # and restores the thresholds


def test_the_runtime_starts_the_policy_once_loaded_and_stops_it() -> None:
    cfg = replace(OperatorConfig(), host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False)
    rt = Runtime(cfg, sink=FakeReportApi())
    assert rt.gc_policy == GcPolicy()  # the module's defaults: every 5 s, the whole heap hourly
    assert (rt.gc_policy.period, rt.gc_policy.full_every) == (5.0, 720)

    before = gc.get_threshold()

    async def main() -> tuple[int, int, int]:
        await rt.start()
        for event in web_cluster():
            rt.router.handle(event)
        frozen = gc.get_freeze_count()
        checkpoints = rt.gc_policy.checkpoints
        full_threshold = gc.get_threshold()[2]
        await rt.stop()
        return frozen, checkpoints, full_threshold

    frozen, checkpoints, full_threshold = asyncio.run(main())
    assert checkpoints == 1 and frozen > 0 and full_threshold >= 10**9
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
