"""The report writer: turns index changes into SpreadReport writes, debounced, deduplicated, rate-limited.

One asyncio task (:meth:`ReportWriter.run`) loops:

1. ``index.take_dirty()`` → every dirty workload gets (or refreshes) a *pending* entry stamped with the time of
   its latest change; removed workloads are queued for deletion;
2. a pending workload is *due* once it has been quiet for ``debounce`` seconds (per workload), or
   ``max_delay`` after its first unwritten change even if it never goes quiet (no starvation under churn);
3. for a due workload: skip it when it is excluded (its report, if any, is deleted), build its status
   (:mod:`spreadwatch.handlers.status`), skip when the content digest equals the last one written or read
   back (no write without a change), else create the report if needed (ownerReference to the workload) and
   replace its status; post an Event when the health changed;
4. every API write takes a token from one global bucket (``max_writes_per_second``, ``write_burst``);
5. every ``resync_period`` (and on becoming the leader): list the SpreadReports, delete those whose workload
   is gone or excluded, remember the others' content, and mark every workload pending — missing or stale
   reports are rewritten, identical ones skipped.

Only the leader writes (``is_leader``); a standby drains the index's dirty sets and keeps nothing else, and
resyncs when it becomes the leader. Failed writes are retried with exponential backoff (per workload).
Everything the writer does to the API goes through a :class:`ReportSink` (``kube.AsyncReportClient`` in the
operator, a fake in tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from spreadwatch.config import OperatorConfig
from spreadwatch.errors import SpreadwatchError
from spreadwatch.handlers.ratelimit import TokenBucket
from spreadwatch.handlers.status import build_status, content_digest, find_condition, rfc3339, workload_ref
from spreadwatch.index import SpreadIndex
from spreadwatch.kube import KubeApiError
from spreadwatch.metrics.histogram import DurationHistogram
from spreadwatch.model import WORKLOAD_KINDS, WorkloadKey
from spreadwatch.naming import report_name, workload_of_report_name
from spreadwatch.report import Health, SpreadReport

__all__ = ["ApiErrors", "ReportSink", "ReportWriter", "WriterStats"]

log = logging.getLogger("spreadwatch.writer")

_WARNING_HEALTH = frozenset({Health.IMBALANCED.value, Health.SINGLE_POINT_OF_FAILURE.value, Health.ERROR.value})


class ReportSink(Protocol):
    """The writer's view of the API (SpreadReports and Events only). Errors: KubeApiError (``.status``)."""

    async def list_reports(self, namespaces: Iterable[str] = ()) -> list[dict[str, Any]]: ...

    async def create(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]: ...

    async def set_owner(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]: ...

    async def replace_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> dict[str, Any]: ...

    async def delete(self, namespace: str, name: str) -> bool: ...

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None: ...


@dataclass(slots=True)
class WriterStats:
    """Counters since start (the metrics module can read them at scrape time)."""

    creates: int = 0
    status_writes: int = 0
    owner_patches: int = 0
    deletes: int = 0
    events: int = 0
    skipped_unchanged: int = 0
    skipped_excluded: int = 0
    failures: int = 0
    resyncs: int = 0
    cycles: int = 0
    last_cycle: float = 0.0  # monotonic time of the last loop iteration (liveness)
    last_write: float = 0.0  # monotonic time of the last API write
    last_resync: float = 0.0  # unix time of the last successful resync (0: none yet)
    compute: DurationHistogram = field(default_factory=DurationHistogram)  # report rebuilds in sync()
    reconcile: DurationHistogram = field(default_factory=DurationHistogram)  # one sync() of a due workload

    @property
    def api_writes(self) -> int:
        return self.creates + self.status_writes + self.owner_patches + self.deletes + self.events

    @property
    def writes_by_result(self) -> dict[str, int]:
        """spreadwatch_report_writes_total: reports created, statuses written (a new report's first one
        too), writes skipped as unchanged, reports deleted, failed attempts (retried with backoff)."""
        return {
            "created": self.creates,
            "updated": self.status_writes,
            "unchanged": self.skipped_unchanged,
            "deleted": self.deletes,
            "failed": self.failures,
        }

    def as_dict(self) -> dict[str, int | float]:
        return {
            "creates": self.creates,
            "statusWrites": self.status_writes,
            "ownerPatches": self.owner_patches,
            "deletes": self.deletes,
            "events": self.events,
            "apiWrites": self.api_writes,
            "skippedUnchanged": self.skipped_unchanged,
            "skippedExcluded": self.skipped_excluded,
            "failures": self.failures,
            "resyncs": self.resyncs,
            "cycles": self.cycles,
        }


class ApiErrors:
    """Failed API requests by HTTP status ("0": no HTTP answer). :meth:`note` is ``kube.ReportClient``'s
    ``on_request`` hook, called from worker threads, hence the lock. O(1)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_code: dict[str, int] = {}

    def note(self, verb: str, outcome: str) -> None:
        """One request's outcome: "ok", an HTTP status, or anything else for a connection error."""
        if outcome == "ok":
            return
        code = outcome if outcome.isdigit() else "0"
        with self._lock:
            self._by_code[code] = self._by_code.get(code, 0) + 1

    def by_code(self) -> dict[str, int]:
        with self._lock:
            return dict(self._by_code)


@dataclass(slots=True)
class _Pending:
    first: float  # first unwritten change
    last: float  # latest change
    attempts: int = 0
    not_before: float = 0.0  # retry backoff


@dataclass(slots=True)
class _Known:
    """What the API holds for a workload's report, as far as this replica knows."""

    name: str
    digest: bytes | None
    condition: Mapping[str, Any] | None
    health: str
    owner_uid: str
    meta: dict[str, Any] = field(default_factory=dict)  # namespace, name, uid, resourceVersion (for Events)


def _meta_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {k: meta.get(k, "") for k in ("namespace", "name", "uid", "resourceVersion")}


def _owner_uid(obj: Mapping[str, Any]) -> str:
    spec = obj.get("spec") or {}
    ref = spec.get("workloadRef") if isinstance(spec, Mapping) else None
    if isinstance(ref, Mapping) and isinstance(ref.get("uid"), str):
        return str(ref["uid"])
    for owner in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(owner, Mapping) and isinstance(owner.get("uid"), str):
            return str(owner["uid"])
    return ""


class ReportWriter:
    """See the module docstring. ``clock``/``wall`` are injectable for tests."""

    def __init__(
        self,
        index: SpreadIndex,
        config: OperatorConfig,
        sink: ReportSink,
        *,
        is_leader: Callable[[], bool] = lambda: True,
        bucket: TokenBucket | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], str] = rfc3339,
        max_delay: float | None = None,
    ) -> None:
        self.index = index
        self.config = config
        self.sink = sink
        self.is_leader = is_leader
        self.clock = clock
        self.wall = wall
        self.bucket = bucket or TokenBucket(config.max_writes_per_second, config.write_burst, clock=clock)
        self.debounce = config.debounce
        self.max_delay = max_delay if max_delay is not None else max(1.0, 10 * config.debounce)
        self.stats = WriterStats()
        self.ready = False  # set once the index holds the cluster's initial state (resyncs wait for it)
        self._pending: dict[WorkloadKey, _Pending] = {}
        self._deletions: set[WorkloadKey] = set()
        self._known: dict[WorkloadKey, _Known] = {}
        self._wake = asyncio.Event()
        self._next_resync = 0.0  # as soon as ready and leading
        self._was_leader = False

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
        """A namespace's labels changed (opt-out): re-evaluate all its workloads."""
        now = self.clock()
        for key in self.index.workload_keys():
            if key.namespace == namespace:
                self._mark(key, now)
        self._wake.set()

    def _mark(self, key: WorkloadKey, now: float) -> None:
        p = self._pending.get(key)
        if p is None:
            self._pending[key] = _Pending(now, now)
        else:
            p.last = now
        self._deletions.discard(key)

    # --- state (tests, health endpoint) ---------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return len(self._pending) + len(self._deletions)

    @property
    def oldest_pending_age(self) -> float:
        """Seconds since the oldest pending workload's first unwritten change (0: none). A resync marks
        every workload as changed ``max_delay`` ago. O(pending)."""
        if not self._pending:
            return 0.0
        return max(0.0, self.clock() - min(p.first for p in self._pending.values()))

    def known_reports(self) -> dict[WorkloadKey, str]:
        """Workload → report name, for every report this replica believes exists."""
        return {k: v.name for k, v in self._known.items()}

    def excluded(self, key: WorkloadKey) -> bool:
        """Out of scope: namespace flags, the opt-out label on the namespace or on the workload."""
        if self.config.namespace_excluded(key.namespace, self.index.namespace_labels(key.namespace)):
            return True
        ctrl = self.index.controller(key)
        return ctrl is not None and self.config.workload_opted_out(ctrl.labels)

    # --- the loop -----------------------------------------------------------------------------------------

    def collect(self) -> None:
        """Move the index's dirty/removed sets into the pending/deletion queues."""
        dirty, removed = self.index.take_dirty()
        if not dirty and not removed:
            return
        now = self.clock()
        for key in dirty:
            self._mark(key, now)
        for key in removed:
            self._pending.pop(key, None)
            self._deletions.add(key)

    def next_due(self) -> float | None:
        """Monotonic time at which the next pending item becomes due (None: nothing pending)."""
        if self._deletions:
            return self.clock()
        times = [
            max(min(p.last + self.debounce, p.first + self.max_delay), p.not_before) for p in self._pending.values()
        ]
        return min(times) if times else None

    async def step(self) -> int:
        """One iteration: collect, maybe resync, then write everything due. Returns API writes made."""
        self.stats.cycles += 1
        self.stats.last_cycle = self.clock()
        self.collect()
        leader = self.is_leader()
        if leader and not self._was_leader:
            self._next_resync = 0.0
        self._was_leader = leader
        if not leader:
            # A standby keeps only the index warm; becoming the leader triggers a full resync.
            self._pending.clear()
            self._deletions.clear()
            return 0
        if not self.ready:
            return 0  # the index is still loading: a report now would be computed from part of the cluster
        before = self.stats.api_writes
        if self.clock() >= self._next_resync:
            await self.resync()
        for key in sorted(self._deletions):
            if not self.is_leader():
                break
            self._deletions.discard(key)
            try:
                await self._delete(key, "workload deleted")
            except (SpreadwatchError, OSError) as err:
                # retried through the pending table: sync() deletes the report of a workload that is gone
                self._failed(key, _Pending(self.clock(), self.clock()), err)
        now = self.clock()
        due = [
            (p.first, key)
            for key, p in self._pending.items()
            if now >= p.not_before and (now - p.last >= self.debounce or now - p.first >= self.max_delay)
        ]
        for n, (_, key) in enumerate(sorted(due)):
            if not self.is_leader():
                break
            if n % 200 == 199:
                await asyncio.sleep(0)  # unchanged reports never await: let the watches run during a resync
            p = self._pending.pop(key, None)
            if p is None:
                continue
            started = time.perf_counter()
            try:
                await self.sync(key)
            except (SpreadwatchError, OSError) as err:
                self._failed(key, p, err)
            self.stats.reconcile.observe(time.perf_counter() - started)
        return self.stats.api_writes - before

    def _failed(self, key: WorkloadKey, p: _Pending, err: BaseException) -> None:
        """Retry a workload later, with exponential backoff (0.5 s doubling, at most 60 s)."""
        self.stats.failures += 1
        p.attempts += 1
        backoff = min(60.0, 0.5 * 2 ** min(p.attempts, 7))
        p.not_before = self.clock() + backoff
        self._pending.setdefault(key, p)
        log.warning(
            "cannot update the report of %s (attempt %d, retry in %.0fs): %s",
            str(key),
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
            due = self.next_due()
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
        """Write everything pending now, ignoring the debounce (tests; graceful shutdown)."""
        saved, self.debounce = self.debounce, 0.0
        deadline = self.clock() + timeout
        try:
            self.collect()
            while (self._pending or self._deletions) and self.clock() < deadline:
                for p in self._pending.values():
                    p.not_before = 0.0
                await self.step()
                self.collect()
        finally:
            self.debounce = saved

    # --- one workload ---------------------------------------------------------------------------------------

    async def sync(self, key: WorkloadKey) -> None:
        """Bring one workload's report up to date (create, status, or delete). Raises on API failure."""
        rebuild = not self.index.report_is_current(key)
        started = time.perf_counter()
        report = self.index.report_for(key)
        if rebuild and report is not None:
            self.stats.compute.observe(time.perf_counter() - started)
        if report is None:
            await self._delete(key, "workload gone")
            return
        if self.excluded(key):
            self.stats.skipped_excluded += 1
            await self._delete(key, "workload excluded")
            return
        ctrl = self.index.controller(key)
        generation = ctrl.generation if ctrl is not None else 0
        known = self._known.get(key)
        status = build_status(report, generation, known.condition if known else None, self.wall())
        digest = content_digest(status)
        uid = report.workload.uid
        if known is not None and known.digest == digest and known.owner_uid == uid:
            self.stats.skipped_unchanged += 1
            return
        await self._write(key, report, status, digest, known)

    async def _write(
        self,
        key: WorkloadKey,
        report: SpreadReport,
        status: dict[str, Any],
        digest: bytes,
        known: _Known | None,
        retry_missing: bool = True,
    ) -> None:
        namespace = key.namespace
        name = report_name(key.kind, key.name)
        workload = workload_ref(report)
        uid = workload["uid"]
        try:
            if known is None:
                await self.bucket.acquire()
                obj = await self.sink.create(namespace, name, workload)
                self.stats.creates += 1
                known = _Known(name, None, None, "", _owner_uid(obj), _meta_of(obj))
                existing = obj.get("status")
                if isinstance(existing, Mapping) and existing:
                    # The report existed already (a previous leader wrote it): keep its transition time,
                    # and skip the status write when it already says the same.
                    known.digest = content_digest(existing)
                    known.condition = find_condition(existing)
                    known.health = str(existing.get("health", ""))
                    status = build_status(
                        report, status["observedGeneration"], known.condition, status["lastUpdateTime"]
                    )
                    digest = content_digest(status)
                self._known[key] = known
            if known.owner_uid != uid:
                await self.bucket.acquire()
                obj = await self.sink.set_owner(namespace, name, workload)
                self.stats.owner_patches += 1
                known.owner_uid = uid
                known.meta = _meta_of(obj)
            if known.digest == digest:
                self.stats.skipped_unchanged += 1
                return
            await self.bucket.acquire()
            obj = await self.sink.replace_status(namespace, name, status)
        except KubeApiError as err:
            if err.status != 404 or not retry_missing:
                raise
            # Deleted behind our back (garbage collector, a user): create it again, once, now.
            self._known.pop(key, None)
            await self._write(key, report, status, digest, None, retry_missing=False)
            return
        self.stats.status_writes += 1
        self.stats.last_write = self.clock()
        known.meta = _meta_of(obj)
        previous_health, known.digest = known.health, digest
        known.condition = status["conditions"][0]
        known.health = report.health.value
        log.info(
            "report %s/%s: %s, %d pods, best score %d",
            namespace,
            name,
            report.health.value,
            report.pods,
            report.best_score,
            extra={"workload": str(key), "report": name, "health": report.health.value},
        )
        if previous_health != known.health and (previous_health or known.health != Health.BALANCED.value):
            await self._event(key, known, previous_health, report)

    async def _event(self, key: WorkloadKey, known: _Known, previous: str, report: SpreadReport) -> None:
        if not self.config.events:
            return
        event_type = "Warning" if known.health in _WARNING_HEALTH else "Normal"
        change = f"{previous} -> {known.health}" if previous else known.health
        message = f"{report.workload.kind} {report.workload.namespace}/{report.workload.name}: {change}"
        if report.reasons:
            message += ": " + "; ".join(report.reasons)
        await self.bucket.acquire()
        try:
            await self.sink.post_event({"metadata": known.meta}, event_type, known.health, message)
            self.stats.events += 1
        except (SpreadwatchError, OSError) as err:  # an Event is best effort
            log.warning("cannot post an Event for %s: %s", str(key), err)

    async def _delete(self, key: WorkloadKey, why: str) -> None:
        known = self._known.pop(key, None)
        if known is None:
            return
        await self.bucket.acquire()
        try:
            gone = await self.sink.delete(key.namespace, known.name)
        except BaseException:
            self._known[key] = known
            raise
        self.stats.deletes += 1
        if gone:
            log.info(
                "deleted report %s/%s (%s)",
                key.namespace,
                known.name,
                why,
                extra={"workload": str(key), "report": known.name},
            )

    # --- resync -------------------------------------------------------------------------------------------

    async def resync(self) -> None:
        """List SpreadReports; delete orphans; remember the rest; mark every in-scope workload pending."""
        self._next_resync = self.clock() + (self.config.resync_period or float("inf"))
        try:
            objs = await self.sink.list_reports(self.config.namespaces)
        except (SpreadwatchError, OSError) as err:
            self.stats.failures += 1
            self._next_resync = self.clock() + 5.0
            hint = ""
            if isinstance(err, KubeApiError) and err.status == 404:
                hint = " (is the CRD installed? kubectl apply -f crds/spreadreports.spreadwatch.io.yaml)"
            log.warning("resync: cannot list SpreadReports: %s%s", err, hint)
            return
        self.stats.resyncs += 1
        self.stats.last_resync = time.time()
        live = set(self.index.workload_keys())
        known: dict[WorkloadKey, _Known] = {}
        orphans: list[tuple[WorkloadKey, _Known]] = []
        for obj in objs:
            meta = obj.get("metadata") or {}
            namespace, name = meta.get("namespace", ""), meta.get("name", "")
            ref = (obj.get("spec") or {}).get("workloadRef") or {}
            kind, wname = ref.get("kind"), ref.get("name")
            if not (isinstance(kind, str) and isinstance(wname, str)):
                parsed = workload_of_report_name(name, WORKLOAD_KINDS)
                if parsed is None:
                    continue  # not something we can attribute; leave it alone
                kind, wname = parsed
            key = WorkloadKey(namespace, kind, wname)
            status = obj.get("status") if isinstance(obj.get("status"), Mapping) else None
            entry = _Known(
                name,
                content_digest(status) if status else None,
                find_condition(status),
                str(status.get("health", "")) if status else "",
                _owner_uid(obj),
                _meta_of(obj),
            )
            if key not in live or name != report_name(kind, wname) or self.excluded(key):
                orphans.append((key, entry))
            else:
                known[key] = entry
        self._known = known
        for key, entry in orphans:
            if not self.is_leader():
                return
            await self.bucket.acquire()
            try:
                await self.sink.delete(key.namespace, entry.name)
                self.stats.deletes += 1
                log.info("resync: deleted orphaned report %s/%s", key.namespace, entry.name)
            except (SpreadwatchError, OSError) as err:
                self.stats.failures += 1
                log.warning("resync: cannot delete report %s/%s: %s", key.namespace, entry.name, err)
        now = self.clock()
        for key in live:
            if key not in self._pending:
                self._pending[key] = _Pending(now - self.max_delay, now - self.max_delay)
        log.info(
            "resync: %d reports listed, %d orphans deleted, %d workloads checked",
            len(objs),
            len(orphans),
            len(live),
        )
