"""The report writer: turns index changes into SpreadReport writes, debounced, deduplicated, rate-limited.

It joins two parts: *when* to write (:class:`~spreadwatch.runtime.writing.debounce.Debouncer`: dirty
keys, due times, coalescing, oldest change first) and *how* (:class:`~spreadwatch.runtime.writing.store.ReportStore`:
the write protocol against the API and what the API holds). One asyncio task (:meth:`Writer.run`)
loops:

1. ``index.take_dirty()`` → the debouncer (every event also does this at once, through :meth:`wake`, so a
   workload's debounce starts at its event);
2. every ``resync_period`` (and on becoming the leader): list the SpreadReports, delete those whose workload
   is gone, out of the :class:`~spreadwatch.config.Scope` or misnamed, keep the others as known, and mark
   pending (behind real changes) only the workloads whose report is missing or not what this replica last
   wrote (another writer, a user, a restart: the first resync checks every workload; a report whose
   computed status has the listed digest is skipped without a write);
3. delete the reports of removed workloads;
4. the due workloads, oldest change first, with at most ``max_in_flight`` writes in flight: a workload out
   of scope has its report (if any) deleted; else its report is rebuilt if it changed and written unless
   unchanged. When more workloads are due than the bucket allows this cycle, *material* changes (a new
   report, another health, other best nodes) go first, then count-only ones, each group oldest first; a
   count-only change waiting ``MATERIAL_AFTER`` seconds counts as material (a steady stream of material
   changes never starves it).
   After about one second of writing, the cycle ends and the next one takes the due list again,
   so a change made meanwhile is not queued behind younger ones: under the write budget the oldest pending
   change waits about (dirty workloads ÷ ``--max-writes-per-second``) seconds.

Every API call takes a token from one global bucket (``max_writes_per_second``, ``write_burst``): the bucket
bounds the rate, ``max_in_flight`` only lets several writes wait on the API server at once (one write at a
time cannot reach the rate when a write takes longer than 1/rate seconds).

Only the leader writes (``is_leader``); a standby drains the index's dirty sets and keeps nothing else, and
resyncs when it becomes the leader. Failed writes are retried with exponential back-off (per workload).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Final

from spreadwatch.config import OperatorConfig, Scope
from spreadwatch.errors import KubeApiError, SpreadwatchError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import WorkloadKey
from spreadwatch.resources import SPREAD_REPORTS
from spreadwatch.runtime.writing.debounce import Debouncer, Pending
from spreadwatch.runtime.writing.ratelimit import TokenBucket
from spreadwatch.runtime.writing.status import rfc3339
from spreadwatch.runtime.writing.store import ReportApi, ReportStore, StoredReport, WriterStats

__all__ = ["MATERIAL_AFTER", "MAX_DELAY_DEBOUNCES", "MAX_WRITES_IN_FLIGHT", "Writer"]

log = logging.getLogger("spreadwatch.writer")

#: A workload that never goes quiet is written this many debounce periods (at least 1 s) after its first
#: unwritten change: under a rollout its report lags the pods by at most about that (3 s at the default 1 s).
MAX_DELAY_DEBOUNCES: Final = 3
#: Default bound on concurrent workload writes (each still takes its tokens from the one bucket): enough to keep
#: the default 100 writes/s while a write takes up to 80 ms on a busy API server.
MAX_WRITES_IN_FLIGHT: Final = 8
#: Seconds after which a pending count-only change goes with the material ones when the budget is short (the
#: envelope's target for a change reaching its report under scattered churn is 10 s).
MATERIAL_AFTER: Final = 5.0
#: Seconds of writing after which a cycle ends and the next one takes the due list again (oldest first).
_CYCLE_BUDGET: Final = 1.0
_YIELD_EVERY: Final = 200  # unchanged reports never await: let the watches run during a long cycle


class Writer:
    """See the module docstring. ``clock``/``wall`` are injectable for tests."""

    def __init__(
        self,
        index: SpreadIndex,
        config: OperatorConfig,
        api: ReportApi,
        *,
        is_leader: Callable[[], bool] = lambda: True,
        bucket: TokenBucket | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = rfc3339,
        max_delay: float | None = None,
        scope: Scope | None = None,
        max_in_flight: int = MAX_WRITES_IN_FLIGHT,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        self.index = index
        self.config = config
        self.scope = scope if scope is not None else config.scope
        self.is_leader = is_leader
        self.clock = clock
        self.max_in_flight = max_in_flight
        self.stats = WriterStats()
        self._bucket = bucket or TokenBucket(config.max_writes_per_second, config.write_burst, clock=clock)
        self.debouncer = Debouncer(
            config.debounce, max_delay if max_delay is not None else max(1.0, MAX_DELAY_DEBOUNCES * config.debounce)
        )
        self.store = ReportStore(api, self._bucket, self.stats, events=config.events, wall=wall, clock=clock)
        self.ready = False  # set once the index holds the cluster's initial state (resyncs wait for it)
        self._wake = asyncio.Event()
        self._next_resync = 0.0  # as soon as ready and leading
        self._was_leader = False
        self._resynced = False  # a resync completed while leading: later ones only check what differs
        self._in_flight = 0

    @property
    def debounce(self) -> float:
        """Seconds a workload must be quiet before its report is written (the debouncer's)."""
        return self.debouncer.debounce

    # --- inputs -------------------------------------------------------------------------------------------

    def wake(self) -> None:
        """Called after every index change: stamps the changed workloads now (their debounce starts at the
        event, not at the next cycle) and wakes the loop. O(workloads changed by the event)."""
        self.collect()
        self._wake.set()

    def request_resync(self) -> None:
        self._next_resync = 0.0
        self._wake.set()

    def namespace_changed(self, namespace: str) -> None:
        """A namespace's labels changed (opt-out) or it went away: re-evaluate all its workloads."""
        now = self.clock()
        for key in self.index.workload_keys():
            if key.namespace == namespace:
                self.debouncer.mark(key, now)
        self._wake.set()

    def collect(self) -> None:
        """Move the index's dirty/removed sets into the debouncer. O(keys)."""
        dirty, removed = self.index.take_dirty()
        if dirty or removed:
            self.debouncer.collect(dirty, removed, self.clock())

    # --- state (tests, probes, metrics) ---------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Workloads with unwritten changes plus queued deletions."""
        return len(self.debouncer)

    @property
    def oldest_pending_age(self) -> float:
        """Seconds since the oldest pending workload's first unwritten change (0: none). A resync marks
        every workload as changed ``max_delay`` ago. O(pending)."""
        return self.debouncer.oldest_age(self.clock())

    @property
    def in_flight(self) -> int:
        """Workload writes under way now (at most ``max_in_flight``)."""
        return self._in_flight

    def known_reports(self) -> dict[WorkloadKey, str]:
        """Workload → report name, for every report this replica believes exists."""
        return self.store.names()

    # --- the loop -----------------------------------------------------------------------------------------

    async def step(self) -> int:
        """One cycle: collect, maybe resync, delete, then write the due workloads (oldest change first, at
        most ``max_in_flight`` at once, for about a second). Returns the API writes made."""
        self.stats.cycles += 1
        self.stats.last_cycle = self.clock()
        self.collect()
        leader = self.is_leader()
        if leader and not self._was_leader:
            self._next_resync = 0.0
        self._was_leader = leader
        if not leader:
            # A standby keeps only the index warm; becoming the leader triggers a full resync.
            self.debouncer.clear()
            self._resynced = False
            return 0
        if not self.ready:
            return 0  # the index is still loading: a report now would be computed from part of the cluster
        before = self.stats.api_writes
        if self.clock() >= self._next_resync:
            await self.resync()
        for key in self.debouncer.take_deletions():
            if not self.is_leader():
                break
            try:
                await self.store.delete(key, "workload deleted")
            except (SpreadwatchError, OSError) as err:
                # retried through the pending table: sync() deletes the report of a workload that is gone
                now = self.clock()
                self._failed(key, Pending(now, now), err)
        due = self.debouncer.due(self.clock())
        if len(due) > self._bucket.available(_CYCLE_BUDGET):
            due = await self._material_first(due)
        if due:
            queue = iter(due)
            deadline = self.clock() + _CYCLE_BUDGET
            workers = min(self.max_in_flight, len(due))
            await asyncio.gather(*(self._work(queue, deadline) for _ in range(workers)))
        return self.stats.api_writes - before

    async def _work(self, queue: Iterator[WorkloadKey], deadline: float) -> None:
        """One of the cycle's writers: takes the next due workload until none is left or the budget is spent
        (the rest stay pending for the next cycle). The queue is shared, so each workload is written once."""
        for n, key in enumerate(queue):
            if not self.is_leader():
                return
            if n % _YIELD_EVERY == _YIELD_EVERY - 1:
                await asyncio.sleep(0)
            p = self.debouncer.take(key)
            if p is None:
                continue  # removed meanwhile (a deletion is queued)
            started = time.perf_counter()
            self._in_flight += 1
            try:
                await self.sync(key)
            except (SpreadwatchError, OSError) as err:
                self._failed(key, p, err)
            finally:
                self._in_flight -= 1
            self.stats.reconcile.observe(time.perf_counter() - started)
            if self.clock() >= deadline:
                return

    async def _material_first(self, due: list[WorkloadKey]) -> list[WorkloadKey]:
        """``due`` with the material changes, and those pending ``MATERIAL_AFTER`` seconds or more, first
        (both parts keep their order). Builds the reports that are not current (they are written next
        anyway), yielding every ``_YIELD_EVERY``. O(due)."""
        material: list[WorkloadKey] = []
        other: list[WorkloadKey] = []
        index, store, debouncer = self.index, self.store, self.debouncer
        overdue = self.clock() - MATERIAL_AFTER
        for n, key in enumerate(due):
            if n % _YIELD_EVERY == _YIELD_EVERY - 1:
                await asyncio.sleep(0)
            first = debouncer.first_change(key)
            if first is not None and first <= overdue:
                material.append(key)
                continue
            report = index.report_for(key)
            (material if report is None or store.is_material(key, report) else other).append(key)
        return material + other

    def _failed(self, key: WorkloadKey, p: Pending, err: BaseException) -> None:
        """Retry a workload later, with exponential back-off (the debouncer's)."""
        self.stats.failures += 1
        backoff = self.debouncer.retry(key, p, self.clock())
        log.warning(
            "cannot update the report of %s (attempt %d, retry in %.0fs): %s",
            key,
            p.attempts,
            backoff,
            err,
            extra={"workload": str(key)},
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Loop until ``stop`` is set."""
        while not stop.is_set():
            try:
                await self.step()
            except Exception:  # never let the writer die; the next cycle retries
                log.exception("report writer cycle failed")
            now = self.clock()
            due = self.debouncer.next_due(now)
            timeout = 1.0 if due is None else min(1.0, max(0.05, due - now))
            if self.ready and self.is_leader():
                timeout = min(timeout, max(0.05, self._next_resync - now))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wait(stop), timeout)
            self._wake.clear()
            await asyncio.sleep(0.02)  # batch bursts of events into one cycle

    async def _wait(self, stop: asyncio.Event) -> None:
        waiters = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(stop.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()

    async def drain(self, timeout: float = 30.0) -> None:
        """Write everything pending now, ignoring the debounce and back-offs, until nothing is pending or
        ``timeout`` seconds pass (every report written at once: the soak benchmark's start, tests)."""
        debouncer = self.debouncer
        saved, debouncer.debounce = debouncer.debounce, 0.0
        deadline = self.clock() + timeout
        try:
            self.collect()
            while debouncer and self.clock() < deadline:
                debouncer.clear_backoff()
                await self.step()
                self.collect()
        finally:
            debouncer.debounce = saved

    # --- one workload ---------------------------------------------------------------------------------------

    async def sync(self, key: WorkloadKey) -> None:
        """Bring one workload's report up to date (create, status, or delete). Raises on API failure."""
        rebuild = not self.index.report_is_current(key)
        started = time.perf_counter()
        report = self.index.report_for(key)
        if rebuild and report is not None:
            self.stats.compute.observe(time.perf_counter() - started)
        if report is None:
            await self.store.delete(key, "workload gone")
            return
        if not self.scope.covers(self.index, key):
            self.stats.skipped_excluded += 1
            await self.store.delete(key, "workload out of scope")
            return
        ctrl = self.index.controller(key)
        await self.store.write(key, report, ctrl.generation if ctrl is not None else 0)

    # --- resync -------------------------------------------------------------------------------------------

    async def resync(self) -> None:
        """List SpreadReports; delete orphans; keep the rest as known; mark every workload pending."""
        self._next_resync = self.clock() + (self.config.resync_period or float("inf"))
        try:
            listed = await self.store.list(self.config.namespaces)
        except (SpreadwatchError, OSError) as err:
            self.stats.failures += 1
            self._next_resync = self.clock() + 5.0
            hint = ""
            if isinstance(err, KubeApiError) and err.status == 404:
                hint = f" (is the CRD installed? kubectl apply -f crds/{SPREAD_REPORTS.full_name}.yaml)"
            log.warning("resync: cannot list SpreadReports: %s%s", err, hint)
            return
        self.stats.resyncs += 1
        self.stats.last_resync = time.time()
        live = set(self.index.workload_keys())
        kept: list[StoredReport] = []
        orphans: list[StoredReport] = []
        for stored in listed:
            key = stored.workload
            if key in live and stored.canonical and self.scope.covers(self.index, key):
                kept.append(stored)
            else:
                orphans.append(stored)
        store = self.store
        if self._resynced:  # only what differs from what this replica wrote, and what is missing
            listed_keys = {stored.workload for stored in kept}
            stale = [stored.workload for stored in kept if not _same(store.get(stored.workload), stored)]
            stale += [key for key in live - listed_keys if self.scope.covers(self.index, key)]
        else:  # the first resync as the leader: every workload, each skipped when its digest is listed
            stale = list(live)
        store.adopt(kept)
        for stored in orphans:
            if not self.is_leader():
                return
            try:
                await self.store.delete_stored(stored)
                log.info("resync: deleted orphaned report %s/%s", stored.workload.namespace, stored.name)
            except (SpreadwatchError, OSError) as err:
                self.stats.failures += 1
                log.warning("resync: cannot delete report %s/%s: %s", stored.workload.namespace, stored.name, err)
        self.debouncer.mark_stale(stale, self.clock())
        self._resynced = True
        log.info(
            "resync: %d reports listed, %d orphans deleted, %d of %d workloads to check",
            len(listed),
            len(orphans),
            len(stale),
            len(live),
        )


def _same(known: StoredReport | None, listed: StoredReport) -> bool:
    """The listed report is the one this replica last wrote (same status digest and owner)."""
    return known is not None and known.digest == listed.digest and known.owner_uid == listed.owner_uid
