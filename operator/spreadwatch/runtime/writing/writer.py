"""The report writer: turns index changes into SpreadReport writes, debounced, deduplicated, rate-limited.

It joins three parts: *when* to write (:class:`~spreadwatch.runtime.writing.debounce.Debouncer`: dirty keys, due
times, coalescing, oldest change first), *how* (:class:`~spreadwatch.runtime.writing.store.ReportStore`: the write
protocol against the API and what the API holds) and *how many at once*
(:class:`~spreadwatch.runtime.writing.concurrency.WriteConcurrency`: Little's law with the latency the server shows).
One asyncio task (:meth:`Writer.run`) loops:

1. ``index.take_dirty()`` → the debouncer (every event also does this at once, through :meth:`wake`, so a
   workload's debounce starts at its event), with a batch of stale predictions at most every ``STALE_EVERY``;
2. on becoming the leader: the first resync, **beside the writes** (a task of its own, as every resync): list
   the whole SpreadReports, delete those whose workload is gone, out of the :class:`~spreadwatch.config.Scope`
   or misnamed, adopt the others, and check every workload (a report whose computed status has the listed
   digest is skipped without a write). Meanwhile the store is *settling* (``ReportStore.settle``): it knows
   each listed report as its page arrives, and a change of a workload whose report no page has shown yet is
   written after a read of that one report (so it keeps its transition time and last placement, and an
   unchanged one is not rewritten); what was pending when the leadership began (the initial list's
   workloads) is left to the listing's check. Then every ``resync_period`` a resync of the reports'
   metadata only (``PartialObjectMetadataList``), compared with this replica's own record of each,
   queueing only what differs or is missing (:mod:`spreadwatch.runtime.writing.resync`);
3. delete the reports of removed workloads;
4. the due workloads, oldest change first, with at most ``concurrency.limit`` writes in flight: a workload
   out of scope has its report (if any) deleted; else its report is rebuilt if it changed and written
   unless unchanged. When more workloads are due than the bucket allows this cycle, *material* changes (a
   new report, another health, other best nodes) go first, then count-only ones, each group oldest first; a
   count-only change waiting ``MATERIAL_AFTER`` seconds counts as material (a steady stream of material
   changes never starves it). After about one second of writing, the cycle ends and the next one takes the
   due list again, so a change made meanwhile is not queued behind younger ones: under the write budget the
   oldest pending change waits about (dirty workloads ÷ ``--max-writes-per-second``) seconds.

Every API call takes a token from one global bucket (``max_writes_per_second``, ``write_burst``): the bucket
bounds the rate; the bound on writes in flight follows the answered writes' latency (λ × W × 1.5, between 2
and ``--max-writes-in-flight``; halved when the server throttles): one write at a time cannot reach the rate
when a write takes longer than 1/rate seconds, and more than λ × W are never needed.

The writer keeps its own record of each write: :attr:`Writer.journal` (the last writes: when the change
was first seen, when its report was written, whether a resync ran beside it) and the lag histogram
(``spreadwatch_report_lag_seconds``).

Only the leader writes (``is_leader``); a standby drains the index's dirty sets and keeps nothing else, and
resyncs when it becomes the leader. Failed writes are retried with exponential back-off (per workload).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Final, NamedTuple

from spreadwatch.config import OperatorConfig, Scope
from spreadwatch.errors import KubeApiError, SpreadwatchError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import WorkloadKey
from spreadwatch.resources import SPREAD_REPORTS
from spreadwatch.runtime.writing.concurrency import WriteConcurrency
from spreadwatch.runtime.writing.debounce import Debouncer, Pending
from spreadwatch.runtime.writing.ratelimit import RateMeter, TokenBucket
from spreadwatch.runtime.writing.resync import ResyncRun, ResyncStats, adopt_plan, compare_plan
from spreadwatch.runtime.writing.status import rfc3339
from spreadwatch.runtime.writing.store import ReportApi, ReportStore, WriterStats

__all__ = ["MATERIAL_AFTER", "MAX_DELAY_DEBOUNCES", "STALE_EVERY", "WriteRecord", "Writer"]

log = logging.getLogger("spreadwatch.writer")

#: A workload that never goes quiet is written this many debounce periods (at least 1 s) after its first
#: unwritten change: under a rollout its report lags the pods by at most about that (2 s at the default 1 s;
#: the envelope's target for a rollout's p99 is 3 s: 3 debounces measured 3.1 s).
MAX_DELAY_DEBOUNCES: Final = 2
#: Seconds after which a pending count-only change goes with the material ones when the budget is short (the
#: envelope's target for a change reaching its report under scattered churn is 5 s: the debounce, these 3 s,
#: one write).
MATERIAL_AFTER: Final = 3.0
#: Seconds of writing after which a cycle ends and the next one takes the due list again (oldest first).
_CYCLE_BUDGET: Final = 1.0
#: Seconds between two batches of stale predictions (``REFRESH_BATCH`` workloads each, :meth:`SpreadIndex.
#: take_dirty`): every pod event makes every prediction stale, and a batch on every cycle (several a second
#: under churn) spent the operator's CPU on rebuilds that change nothing while changes waited — at the
#: envelope (10,000 workloads, 95 pod events/s) ~500 rebuilds/s and a rollout's p99 of 9.4 s. One batch a
#: second refreshes every prediction within about workloads ÷ 200 seconds (50 s at the envelope).
STALE_EVERY: Final = 1.0
#: Seconds of work after which a cycle yields to the event loop: an unchanged report never awaits, and 200
#: rebuilt in a row (a yield every 200, as before) held the loop for up to a second at the envelope with the
#: prediction on, past the kubelet's 1 s probe timeout (67 /healthz failures in one run).
_YIELD_AFTER: Final = 0.02
_JOURNAL: Final = 64  # writes kept in the writer's record
_RETRY_LISTING: Final = 5.0  # seconds before a failed resync listing is tried again


class WriteRecord(NamedTuple):
    """One report write in the writer's record: ``seen`` when the workload's oldest unwritten change was seen,
    ``written`` when the API answered the write (the writer's monotonic clock), ``beside_resync`` whether a
    resync was running when it was answered, ``queued_by_resync`` whether the write was a resync's check
    rather than a change."""

    workload: WorkloadKey
    seen: float
    written: float
    beside_resync: bool
    queued_by_resync: bool


class Writer:
    """See the module docstring. ``clock``/``wall`` are injectable for tests; ``max_in_flight`` (default
    ``config.max_writes_in_flight``) is the ceiling of the bound on writes in flight."""

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
        max_in_flight: int | None = None,
    ) -> None:
        self.index = index
        self.config = config
        self.scope = scope if scope is not None else config.scope
        self.is_leader = is_leader
        self.clock = clock
        self.stats = WriterStats()
        self.resyncs = ResyncStats()
        self.journal: deque[WriteRecord] = deque(maxlen=_JOURNAL)
        self.rate = RateMeter()  # API writes per second achieved
        self.concurrency = self._concurrency(config.max_writes_in_flight if max_in_flight is None else max_in_flight)
        self._bucket = bucket or TokenBucket(config.max_writes_per_second, config.write_burst, clock=clock)
        self.debouncer = Debouncer(
            config.debounce, max_delay if max_delay is not None else max(1.0, MAX_DELAY_DEBOUNCES * config.debounce)
        )
        self.store = ReportStore(api, self._bucket, self.stats, events=config.events, wall=wall, clock=clock,
                                 on_answer=self._answered)  # fmt: skip
        self.ready = False  # set once the index holds the cluster's initial state (resyncs wait for it)
        self._wake = asyncio.Event()
        self._next_resync = 0.0  # as soon as ready and leading
        self._next_stale = 0.0  # when the next batch of stale predictions is taken (STALE_EVERY)
        self._was_leader = False
        self._resynced = False  # a resync completed while leading: later ones only check what differs
        self._settling = False  # the store settles for this leadership (its first listing began)
        self._resync: asyncio.Task[None] | None = None  # the resync running beside the writes
        self._in_flight = 0

    def _concurrency(self, ceiling: int) -> WriteConcurrency:
        if ceiling < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {ceiling}")
        return WriteConcurrency(self.config.max_writes_per_second, ceiling)

    def _answered(self, seconds: float) -> None:
        self.concurrency.observe(seconds)

    @property
    def max_in_flight(self) -> int:
        """The ceiling of the bound on writes in flight (``--max-writes-in-flight``)."""
        return self.concurrency.ceiling

    @max_in_flight.setter
    def max_in_flight(self, ceiling: int) -> None:
        self.concurrency = self._concurrency(ceiling)

    def throttled(self) -> None:
        """The API server throttled a write (HTTP 429, any attempt): fewer writes in flight from now on."""
        self.concurrency.throttled()

    @property
    def debounce(self) -> float:
        """Seconds a workload must be quiet before its report is written (the debouncer's)."""
        return self.debouncer.debounce

    # --- inputs -------------------------------------------------------------------------------------------

    def wake(self) -> None:
        """Called after every index change: stamps the changed workloads now (their debounce starts at the
        event, not at the next cycle) and wakes the loop. O(workloads changed by the event)."""
        self.collect(stale=False)
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

    def collect(self, stale: bool = True) -> None:
        """Move the index's dirty/removed sets into the debouncer; ``stale``: with a batch of stale predictions
        (once per cycle, not per event: :meth:`~spreadwatch.index.SpreadIndex.take_dirty`). O(keys)."""
        dirty, removed = self.index.take_dirty(stale)
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
        """Workload writes under way now (at most ``concurrency.limit`` of the cycle)."""
        return self._in_flight

    @property
    def resyncing(self) -> bool:
        """A resync is running beside the writes."""
        return self._resync is not None and not self._resync.done()

    def recent_writes(self, count: int) -> list[dict[str, object]]:
        """The last ``count`` writes of the writer's record, oldest first (``/statusz``). O(count)."""
        return [
            {"workload": str(w.workload), "lagSeconds": round(w.written - w.seen, 3), "besideResync": w.beside_resync,
             "queuedByResync": w.queued_by_resync}
            for w in list(self.journal)[-count:]
        ]  # fmt: skip

    def writes_per_second(self) -> float:
        """API writes per second achieved over about the last 10 s. O(1)."""
        self.rate.sample(self.clock(), self.stats.api_writes)
        return self.rate.rate()

    def known_reports(self) -> dict[WorkloadKey, str]:
        """Workload → report name, for every report this replica believes exists."""
        return self.store.names()

    # --- the loop -----------------------------------------------------------------------------------------

    async def step(self) -> int:
        """One cycle: collect, maybe resync, delete, then write the due workloads (oldest change first, at
        most ``concurrency.limit`` at once, for about a second). Returns the API writes made."""
        self.stats.cycles += 1
        self.stats.last_cycle = self.clock()
        self.rate.sample(self.stats.last_cycle, self.stats.api_writes)
        stale = self.stats.last_cycle >= self._next_stale
        if stale:
            self._next_stale = self.stats.last_cycle + STALE_EVERY
        self.collect(stale)
        leader = self.is_leader()
        if leader and not self._was_leader:
            self._next_resync = 0.0
        self._was_leader = leader
        if not leader:
            # A standby keeps the index and its reports warm (its /metrics reads them); becoming the leader
            # triggers a whole resync.
            self._resynced = self._settling = False
            await self._stop_resync()
            await self._build_due()
            return 0
        if not self.ready:
            return 0  # the index is still loading: a report now would be computed from part of the cluster
        before = self.stats.api_writes
        if self.clock() >= self._next_resync and not self.resyncing:
            if not self._resynced and not self._settling:
                # The first of a leadership: nothing known yet; what is pending now (the initial list's
                # workloads) is checked when the listing ends, changes from now on are written meanwhile.
                self._settling = True
                self.store.settle()
                self.debouncer.clear()
            self._resync = asyncio.create_task(self._resync_beside(), name="spreadwatch resync")
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
            workers = min(self.concurrency.limit, len(due))
            await asyncio.gather(*(self._work(queue, deadline) for _ in range(workers)))
        return self.stats.api_writes - before

    async def _work(self, queue: Iterator[WorkloadKey], deadline: float) -> None:
        """One of the cycle's writers: takes the next due workload until none is left or the budget is spent
        (the rest stay pending for the next cycle). The queue is shared, so each workload is written once."""
        yielded = time.perf_counter()
        for key in queue:
            if not self.is_leader():
                return
            if time.perf_counter() - yielded >= _YIELD_AFTER:
                await asyncio.sleep(0)
                yielded = time.perf_counter()
            p = self.debouncer.take(key)
            if p is None:
                continue  # removed meanwhile (a deletion is queued)
            started = time.perf_counter()
            self._in_flight += 1
            try:
                wrote = await self.sync(key)
            except (SpreadwatchError, OSError) as err:
                wrote = False
                self._failed(key, p, err)
            finally:
                self._in_flight -= 1
            self.stats.reconcile.observe(time.perf_counter() - started)
            if wrote:
                self._record(key, p)
            if self.clock() >= deadline:
                return

    async def _build_due(self) -> None:
        """A standby's cycle: the due workloads' reports built (after the debounce, as the leader's are) and
        taken off the pending table, nothing written; before ready, only taken off (a report now would be
        computed from part of the cluster). Yields every ``_YIELD_AFTER`` seconds. O(due) plus the building."""
        debouncer = self.debouncer
        debouncer.take_deletions()
        if not self.ready:
            debouncer.clear()
            return
        yielded = time.perf_counter()
        for key in debouncer.due(self.clock()):
            if self.is_leader():
                return  # (the next cycle starts the leadership's resync, which checks every workload)
            if time.perf_counter() - yielded >= _YIELD_AFTER:
                await asyncio.sleep(0)
                yielded = time.perf_counter()
            if debouncer.take(key) is not None:
                self.index.report_for(key)

    def _record(self, key: WorkloadKey, p: Pending) -> None:
        """A write of ``key``'s report was answered: into the writer's record and the lag histogram."""
        now, beside = self.clock(), self.resyncing
        self.journal.append(WriteRecord(key, p.first, now, beside, p.queued_by_resync))
        if beside:
            self.stats.writes_during_resync += 1
        if not p.queued_by_resync:
            self.stats.lag.observe(now - p.first)

    async def _material_first(self, due: list[WorkloadKey]) -> list[WorkloadKey]:
        """``due`` with the material changes, and those pending ``MATERIAL_AFTER`` seconds or more, first
        (both parts keep their order). Builds the reports that are not current (they are written next
        anyway), yielding every ``_YIELD_AFTER`` seconds. O(due)."""
        material: list[WorkloadKey] = []
        other: list[WorkloadKey] = []
        index, store, debouncer = self.index, self.store, self.debouncer
        overdue = self.clock() - MATERIAL_AFTER
        yielded = time.perf_counter()
        for key in due:
            if time.perf_counter() - yielded >= _YIELD_AFTER:
                await asyncio.sleep(0)
                yielded = time.perf_counter()
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
        """Loop until ``stop`` is set (then a resync under way is cancelled)."""
        try:
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
        finally:
            await self._stop_resync()

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
            while (debouncer or self.resyncing) and self.clock() < deadline:
                debouncer.clear_backoff()
                await self.step()
                if self._resync is not None and not self._resync.done():  # (what it queues is written next)
                    await asyncio.wait([self._resync])
                self.collect()
        finally:
            debouncer.debounce = saved

    # --- one workload ---------------------------------------------------------------------------------------

    async def sync(self, key: WorkloadKey) -> bool:
        """Bring one workload's report up to date (create, status, or delete). Returns whether its report was
        applied (False: unchanged, deleted or nothing to do). Raises on API failure."""
        rebuild = not self.index.report_is_current(key)
        started = time.perf_counter()
        report = self.index.report_for(key)
        if rebuild and report is not None:
            self.stats.compute.observe(time.perf_counter() - started)
        if report is None:
            await self.store.delete(key, "workload gone")
            return False
        if not self.scope.covers(self.index, key):
            self.stats.skipped_excluded += 1
            await self.store.delete(key, "workload out of scope")
            return False
        ctrl = self.index.controller(key)
        return await self.store.write(key, report, ctrl.generation if ctrl is not None else 0)

    # --- resync -------------------------------------------------------------------------------------------

    async def resync(self) -> None:
        """One resync (see :mod:`spreadwatch.runtime.writing.resync`): the first of a leadership lists whole reports,
        adopts them and checks every workload but those written meanwhile; a later one lists metadata only and
        queues what differs from this replica's record or is missing. Both delete orphans. A failed listing is
        tried again in 5 s (the store settling meanwhile, when it was the first)."""
        whole = not self._resynced
        self._next_resync = self.clock() + (self.config.resync_period or float("inf"))
        started, began = time.perf_counter(), time.time()
        beside_before = self.stats.writes_during_resync
        tally = [0, 0]  # pages, bytes: counted in the listing's thread, read here once it has ended

        def on_page(size: int) -> None:
            tally[0] += 1
            tally[1] += size

        store = self.store
        store.track(True)
        try:
            listed = await store.list(self.config.namespaces, metadata_only=not whole, on_page=on_page)
        except (SpreadwatchError, OSError) as err:
            self.stats.failures += 1
            self._next_resync = self.clock() + _RETRY_LISTING
            hint = ""
            if isinstance(err, KubeApiError) and err.status == 404:
                hint = f" (is the CRD installed? kubectl apply -f crds/{SPREAD_REPORTS.full_name}.yaml)"
            log.warning("resync: cannot list SpreadReports: %s%s", err, hint)
            return
        finally:
            touched = store.track(False)
        if not self.is_leader():
            return  # the Lease was lost meanwhile: the next leadership starts with a whole resync
        live = set(self.index.workload_keys())
        covers = functools.partial(self.scope.covers, self.index)
        if whole:
            plan = adopt_plan(listed, live, covers, touched)
            store.adopt(plan.keep, touched)
        else:
            plan = compare_plan(listed, store.records, live, covers, touched)
            store.update(plan.keep)
            store.forget(plan.forget)
        self.stats.resyncs += 1
        self.stats.last_resync = time.time()
        for stored in plan.orphans:
            if not self.is_leader():
                return
            try:
                await store.delete_stored(stored)
                log.info("resync: deleted orphaned report %s/%s", stored.workload.namespace, stored.name)
            except (SpreadwatchError, OSError) as err:
                self.stats.failures += 1
                log.warning("resync: cannot delete report %s/%s: %s", stored.workload.namespace, stored.name, err)
        self.debouncer.mark_stale(plan.stale, self.clock())
        self._resynced = True
        run = ResyncRun(
            began, round(time.perf_counter() - started, 3), "whole" if whole else "metadata", tally[0], tally[1],
            len(listed), len(plan.orphans), len(plan.stale), self.stats.writes_during_resync - beside_before,
        )  # fmt: skip
        self.resyncs.record(run)
        log.info(
            "resync (%s): %d reports listed in %.2fs (%d pages, %d bytes), %d orphans deleted, %d of %d "
            "workloads to check, %d writes beside it",
            run.mode, run.listed, run.seconds, run.pages, run.bytes, run.orphans, run.stale, len(live),
            run.writes_beside,
        )  # fmt: skip

    async def _resync_beside(self) -> None:
        """A resync as a task of its own (the writes go on meanwhile); its failures are logged."""
        try:
            await self.resync()
        except Exception:  # the next period tries again
            log.exception("resync failed")

    async def _stop_resync(self) -> None:
        """Cancel the resync running beside the writes, if any (a standby, or the writer stopping)."""
        task, self._resync = self._resync, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
