"""The operator's garbage-collector policy: CPython's full (generation-2) collections stay short.

At 150,000 pods the index holds about a million long-lived container objects. CPython runs a full collection
whenever the objects that survived the young generations since the last one exceed a quarter of the long-lived
ones, and each traverses the whole heap. Under pod churn (bench/soak.py, scale 1.0, 5,000 pod events/s: about
one surviving object per event, new label maps and label groups) that was every 5-30 s at 1.1-2.1 s of CPU
each, and the label-interning sweep (``model.intern_labels``: two tuples per cached map) set off one to three
of them in a row: the soak's 4-5 s event stalls. (The sweep itself, O(cached maps) at once, was the other
cause; it is now spread over the misses that follow it: ``model/interning.py``.)

:class:`GcPolicy` takes the long-lived heap out of the collector's sight instead (``gc.freeze``):

* :meth:`GcPolicy.hold` — before the initial state is loaded: no automatic full collection (below) while the
  heap grows from nothing to a million objects, each of which would traverse all of it (the event loop
  blocked up to a second or two at the envelope, probes unanswered);
* :meth:`GcPolicy.start` — once the initial state is loaded: the young generations collected and everything
  frozen as it is (not a whole-heap collection: that took 1-2 s in the event loop at 150,000 pods; cyclic
  garbage of the load waits for the first whole-heap checkpoint), then a *checkpoint* (``gc.collect()`` of
  what is not frozen, then ``gc.freeze()``) every :attr:`GcPolicy.period` seconds. A full collection then
  traverses only the objects made since the last checkpoint: ≤ 0.2 s of CPU at 5,000 events/s with a 5 s
  period (measured over 30 min), against 1.1-2.1 s. Frozen objects are still freed by reference counting as
  soon as nothing holds them; only *cyclic* garbage among them would wait for
* every :attr:`GcPolicy.full_every`-th checkpoint (hourly), which calls ``gc.unfreeze()`` first: one
  collection of the whole heap, what every full collection cost before;
* the checkpoints are the only full collections: the third threshold is raised (:data:`_NO_AUTOMATIC_FULL`
  generation-1 collections between two automatic ones, i.e. never), so a burst of allocations, such as the
  interning sweep's, sets off young collections only, not several full ones in a row (measured: 7-8 full
  collections in the 10 s around a sweep with the default threshold). The young generations keep theirs;
* after the freeze at start and after every checkpoint, the C heap's free pages go back to the OS (glibc's
  ``malloc_trim(0)``, in a worker thread: it releases the GIL; none on another C library). Freed memory
  otherwise stays in the process: measured on the operator at the envelope after 10 minutes of churn, one
  trim took its RSS from 498 to 449 MiB;
* :meth:`GcPolicy.stop` (when the operator stops) restores the thresholds and unfreezes: other code in the
  process sees the collector as it was.

Costs: ``start`` is O(young objects), a checkpoint O(objects not frozen), ``gc.freeze`` O(1); the hourly one
O(tracked objects). All run in the event loop between events. Process-wide: one policy per process (the operator's
:class:`~spreadwatch.runtime.process.Runtime`, or ``bench/soak.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["GcPolicy"]

log = logging.getLogger("spreadwatch.gc")

#: gc.set_threshold's third value while the policy runs: automatic full collections never come due.
_NO_AUTOMATIC_FULL = 1_000_000_000


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)`` (the C heap's free pages back to the OS; O(C heap), milliseconds), or None
    where the C library has none."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


@dataclass
class GcPolicy:
    """When to collect and freeze (see the module docstring). ``checkpoints``/``whole_heap`` count what ran."""

    #: Seconds between two checkpoints.
    period: float = 5.0
    #: Every this many checkpoints, the whole heap is collected (unfrozen first); 720 × 5 s: hourly.
    full_every: int = 720
    checkpoints: int = 0
    whole_heap: int = 0
    #: Returns the C heap's free memory to the OS (after the start's freeze and every checkpoint); None: never.
    release: Callable[[], object] | None = field(default_factory=_malloc_trim, repr=False, compare=False)
    releases: int = field(default=0, compare=False)
    _saved: tuple[int, int, int] | None = field(default=None, init=False, repr=False, compare=False)

    def checkpoint(self) -> None:
        """Collect what is not frozen (the whole heap every ``full_every``-th time), then freeze what is left.
        O(objects not frozen), O(tracked objects) on a whole-heap checkpoint. Blocks the event loop that long."""
        self.checkpoints += 1
        whole = self.checkpoints % self.full_every == 0
        started = time.perf_counter()
        if whole:
            self.whole_heap += 1
            gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        log.debug(
            "gc checkpoint %d%s: %d unreachable, %d frozen, %.3fs",
            self.checkpoints,
            " (whole heap)" if whole else "",
            found,
            gc.get_freeze_count(),
            time.perf_counter() - started,
        )

    def hold(self) -> None:
        """From now on no automatic full collection (the young generations keep their thresholds): call before a
        bulk load. Idempotent; :meth:`stop` restores the thresholds. O(1)."""
        young, middle, full = gc.get_threshold()
        if self._saved is None:
            self._saved = (young, middle, full)
        gc.set_threshold(young, middle, _NO_AUTOMATIC_FULL)

    def start(self, stop: asyncio.Event) -> asyncio.Task[None]:
        """Call once the initial state is loaded: hold, collect the young generations and freeze everything now
        (O(young objects)), then a task that makes a checkpoint every ``period`` seconds until ``stop`` is set
        (and then unfreezes)."""
        self.hold()
        gc.collect(1)
        gc.freeze()
        return asyncio.create_task(self._run(stop), name="spreadwatch gc policy")

    async def _run(self, stop: asyncio.Event) -> None:
        try:
            await self._release()
            while not stop.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.period)
                if not stop.is_set():
                    self.checkpoint()
                    await self._release()
        finally:
            self.stop()

    async def _release(self) -> None:
        """The C heap's free memory back to the OS, in a worker thread (the loop goes on meanwhile)."""
        if self.release is not None:
            await asyncio.to_thread(self.release)
            self.releases += 1

    def stop(self) -> None:
        """Restore the thresholds and give the frozen objects back to the collector. O(1)."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None
        gc.unfreeze()
