"""The SpreadReports as the API holds them, and the write protocol that keeps them current.

:class:`ReportStore` is the writer's only door to the API (a :class:`ReportApi`: ``kube.ReportClient`` in
the operator, a fake in tests). It remembers, per workload, what this replica knows of its report as a
:class:`StoredReport` (a small frozen record: name, status digest, condition, health, owner, uid), and:

* :meth:`ReportStore.write` — builds the status (:mod:`spreadwatch.runtime.writing.status`) and, unless its digest
  equals the stored one and the owner is the same workload (no write without a change), saves the whole
  report in **one request** (server-side apply: created if missing, else updated; the digest goes into the
  ``spreadwatch.io/status-digest`` annotation and the health into the ``spreadwatch.io/health`` label, so a
  restarted operator knows what each report holds from a slim listing), and posts an Event when the health
  of a report that had one changed (a verdict transition; never for a new report);
* :meth:`ReportStore.delete` — deletes a workload's report;
* :meth:`ReportStore.list` — lists the SpreadReports (whole, or metadata only) and returns them as
  :class:`StoredReport` records (the resync: :mod:`spreadwatch.runtime.writing.resync`); :meth:`ReportStore.adopt`
  makes such a list what the store knows, :meth:`ReportStore.update` and :meth:`ReportStore.forget` correct
  single records, :meth:`ReportStore.delete_stored` deletes one (an orphan); :meth:`ReportStore.track`
  records the workloads written, deleted or read while a listing runs (their records are newer than it);
* **settling** (:meth:`ReportStore.settle`, at the start of a leadership, until :meth:`ReportStore.adopt`):
  the store knows nothing yet, and the first listing's whole reports become known as its pages arrive; a
  write of a workload whose report no page has shown yet first reads that one report (a GET of its name:
  its digest, condition and last placement, so an unchanged report is not rewritten and a changed one keeps
  its transition time), so writes never wait for the listing.

Each apply is timed, request to answer (``WriterStats.write_latency``, and ``on_answer`` for the writer's
bound on writes in flight).

Every API call takes a token from the writer's bucket first (``--max-writes-per-second``). Failures raise
(``KubeApiError`` and other :class:`~spreadwatch.errors.SpreadwatchError`, or ``OSError``), except a failed
Event, which is best effort. Concurrent calls for *different* workloads are safe (one event loop); the
writer never writes one workload twice at once.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol, TypeVar

from spreadwatch.errors import SpreadwatchError
from spreadwatch.jsonform import json_form
from spreadwatch.metrics.histogram import DurationHistogram
from spreadwatch.model import WORKLOAD_KINDS, WorkloadKey
from spreadwatch.naming import report_name, workload_of_report_name
from spreadwatch.report import Health, SpreadReport
from spreadwatch.runtime.writing.ratelimit import TokenBucket
from spreadwatch.runtime.writing.status import (
    build_status,
    content_digest,
    find_condition,
    kept_condition,
    workload_ref,
)

__all__ = [
    "DIGEST_ANNOTATION",
    "HEALTH_LABEL",
    "LAG_BUCKETS",
    "WRITE_BUCKETS",
    "ReportApi",
    "ReportStore",
    "StoredReport",
    "WriterStats",
    "material_key",
    "report_material",
    "stored_report",
]

T = TypeVar("T")

#: The annotation holding the digest of a report's status (``content_digest``, hex): a restarted operator
#: skips a report whose computed status has the same digest, without reading the status itself.
DIGEST_ANNOTATION: Final = "spreadwatch.io/status-digest"
#: The label holding a report's health (``kubectl get spreadreports -l spreadwatch.io/health=Imbalanced``).
HEALTH_LABEL: Final = "spreadwatch.io/health"

log = logging.getLogger("spreadwatch.writer")

#: Upper bounds (seconds) of ``spreadwatch_report_write_duration_seconds``: one apply takes 5-20 ms on an idle
#: API server and 50-200 ms on a loaded one (finer than the generic duration buckets there).
WRITE_BUCKETS: Final = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0)
#: Upper bounds (seconds) of ``spreadwatch_report_lag_seconds`` (a change to its report's write: the debounce
#: of 1 s at least, ``max(1 s, 2 × debounce)`` under constant churn, more when the write budget is short).
LAG_BUCKETS: Final = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0)

_WARNING_HEALTH = frozenset(
    {
        Health.IMBALANCED.value,
        Health.SINGLE_POINT_OF_FAILURE.value,
        Health.UNSCHEDULABLE.value,
        Health.ZONE_OUTAGE_UNSAFE.value,
        Health.ERROR.value,
    }
)


class ReportApi(Protocol):
    """The writer's view of the API (SpreadReports and Events only). Errors: KubeApiError (``.status``)."""

    async def list_reports(
        self,
        namespaces: Iterable[str],
        keep: Callable[[dict[str, Any]], T | None],
        *,
        metadata_only: bool = False,
        on_page: Callable[[int], None] | None = None,
    ) -> list[T]:
        """``keep`` of every managed SpreadReport of ``namespaces`` (empty: all) that it does not map to
        None, each kept as it is read (the whole list of objects is never held). ``metadata_only``: the items
        hold only ``metadata`` (``PartialObjectMetadata``); ``on_page(bytes)`` hears of every page read."""
        ...

    async def save(
        self,
        namespace: str,
        name: str,
        labels: Mapping[str, str],
        annotations: Mapping[str, str],
        workload: Mapping[str, str],
        status: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Create or update the whole report in one request (server-side apply); the report as stored."""
        ...

    async def get_report(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One SpreadReport as the API holds it (None: there is none)."""
        ...

    async def delete(self, namespace: str, name: str) -> bool: ...

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None: ...


@dataclass(slots=True)
class WriterStats:
    """Counters since start (the metrics module reads them at scrape time)."""

    creates: int = 0  # reports applied that this replica did not know (new, or deleted behind its back)
    status_writes: int = 0  # known reports applied with a changed status or owner
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
    writes_during_resync: int = 0  # report applies answered while a resync was running beside them
    reads: int = 0  # reports read one by one: written while the first listing of a leadership had not shown them
    compute: DurationHistogram = field(default_factory=DurationHistogram)  # report rebuilds before a write
    reconcile: DurationHistogram = field(default_factory=DurationHistogram)  # one due workload, start to end
    #: one report apply, request to answer (retries included)
    write_latency: DurationHistogram = field(default_factory=lambda: DurationHistogram(WRITE_BUCKETS))
    #: a workload's first unwritten change to its report's write (changes a resync queued left out)
    lag: DurationHistogram = field(default_factory=lambda: DurationHistogram(LAG_BUCKETS))

    @property
    def api_writes(self) -> int:
        return self.creates + self.status_writes + self.deletes + self.events

    @property
    def writes_by_result(self) -> dict[str, int]:
        """spreadwatch_report_writes_total: reports created, reports updated, writes skipped as unchanged,
        reports deleted, failed attempts (retried with backoff). Every create or update is one request."""
        return {
            "created": self.creates,
            "updated": self.status_writes,
            "unchanged": self.skipped_unchanged,
            "deleted": self.deletes,
            "failed": self.failures,
        }

    def as_dict(self) -> dict[str, int | float]:
        return _WRITER_STATS_FORM(self)


_WRITER_STATS_FORM = json_form(
    WriterStats,
    (
        *("creates", "status_writes", "deletes", "events", "api_writes", "skipped_unchanged"),
        *("skipped_excluded", "failures", "resyncs", "cycles", "writes_during_resync", "reads"),
    ),
)


@dataclass(frozen=True, slots=True)
class StoredReport:
    """What the API holds for one workload's SpreadReport, as far as this replica knows."""

    workload: WorkloadKey
    name: str  # the SpreadReport's name, in the workload's namespace
    digest: bytes | None = None  # content_digest of its status (its digest annotation; None: unknown)
    condition: Mapping[str, Any] | None = None  # its Balanced condition, kept_condition: lastTransitionTime etc.
    health: str = ""  # its status.health ("": no status yet)
    material: int = 0  # material_key of its health and best nodes (0: unknown)
    placement: Mapping[str, Any] | None = None  # its status.lastPlacement (kept across a change of leader)
    owner_uid: str = ""  # the workload uid it points to (spec.workloadRef, else its ownerReference)
    uid: str = ""  # the report's own metadata.uid and resourceVersion (what an Event refers to)
    resource_version: str = ""

    @property
    def meta(self) -> dict[str, str]:
        """The report's metadata as an Event's ``involvedObject`` needs it."""
        return {
            "namespace": self.workload.namespace,
            "name": self.name,
            "uid": self.uid,
            "resourceVersion": self.resource_version,
        }

    @property
    def canonical(self) -> bool:
        """Its name is the one the operator gives its workload's report."""
        return self.name == report_name(self.workload.kind, self.workload.name)

    def with_object(self, obj: Mapping[str, Any]) -> StoredReport:
        """This record after a write that returned ``obj``: its owner, uid and resourceVersion."""
        meta = _mapping(obj.get("metadata"))
        return replace(
            self,
            owner_uid=_owner_uid(obj),
            uid=_text(meta.get("uid")),
            resource_version=_text(meta.get("resourceVersion")),
        )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _owner_uid(obj: Mapping[str, Any]) -> str:
    ref = _mapping(_mapping(obj.get("spec")).get("workloadRef"))
    if isinstance(ref.get("uid"), str):
        return str(ref["uid"])
    for owner in _mapping(obj.get("metadata")).get("ownerReferences") or ():
        if isinstance(owner, Mapping) and isinstance(owner.get("uid"), str):
            return str(owner["uid"])
    return ""


def stored_report(obj: Mapping[str, Any]) -> StoredReport | None:
    """A SpreadReport object read from the API → its record; None when it names no workload we can tell
    (neither ``spec.workloadRef`` nor a name of ours). O(size of its status) for the digest."""
    meta = _mapping(obj.get("metadata"))
    namespace, name = _text(meta.get("namespace")), _text(meta.get("name"))
    ref = _mapping(_mapping(obj.get("spec")).get("workloadRef"))
    kind, workload = ref.get("kind"), ref.get("name")
    if not (isinstance(kind, str) and isinstance(workload, str)):
        parsed = workload_of_report_name(name, WORKLOAD_KINDS)
        if parsed is None:
            return None
        kind, workload = parsed
    status = _mapping(obj.get("status"))
    health = _text(status.get("health"))
    best = status.get("bestNodes")
    count = status.get("bestNodeCount")
    return StoredReport(
        WorkloadKey(namespace, kind, workload),
        name,
        _digest_of(obj),
        kept_condition(find_condition(status)),
        health,
        material_key(health, best if isinstance(best, list) else (), count if isinstance(count, int) else -1),
        _mapping(status.get("lastPlacement")) or None,
    ).with_object(obj)


def _digest_of(obj: Mapping[str, Any]) -> bytes | None:
    """The status digest a report's annotation names (None: absent or malformed)."""
    text = _mapping(_mapping(obj.get("metadata")).get("annotations")).get(DIGEST_ANNOTATION)
    if not isinstance(text, str):
        return None
    try:
        return bytes.fromhex(text)
    except ValueError:
        return None


def _arriving(arrived: deque[StoredReport], obj: Mapping[str, Any]) -> StoredReport | None:
    """:func:`stored_report` of a whole listing's report, also appended to ``arrived`` when it bears its
    workload's own name (called in the listing's thread: a deque's append is atomic). O(status size)."""
    stored = stored_report(obj)
    if stored is not None and stored.canonical:
        arrived.append(stored)
    return stored


def material_key(health: str, best_nodes: Sequence[str], best_node_count: int) -> int:
    """What makes a report change *material* (written first when the budget is short): its health and its
    best nodes. Equal keys: only counts or scores changed. O(best nodes listed)."""
    return hash((health, tuple(best_nodes), best_node_count)) or 1


def report_material(report: SpreadReport) -> int:
    """:func:`material_key` of a computed report."""
    return material_key(report.health.value, report.best_nodes, report.best_node_count)


@dataclass(eq=False)
class ReportStore:
    """See the module docstring. ``wall`` gives the status timestamps; ``clock`` the monotonic time."""

    api: ReportApi
    bucket: TokenBucket
    stats: WriterStats
    events: bool = field(default=True, kw_only=True)
    wall: Callable[[], str] = field(kw_only=True)
    clock: Callable[[], float] = field(default=time.monotonic, kw_only=True)
    #: called with the seconds of every answered apply (the writer's bound on writes in flight)
    on_answer: Callable[[float], None] | None = field(default=None, kw_only=True)
    _known: dict[WorkloadKey, StoredReport] = field(default_factory=dict, init=False, repr=False)
    _touched: set[WorkloadKey] | None = field(default=None, init=False, repr=False)
    #: settling (:meth:`settle` to :meth:`adopt`): the first listing's records, appended as its pages are read
    #: (in the listing's thread), taken into ``_known`` by :meth:`_take_arrived`; None: settled
    _arrived: deque[StoredReport] | None = field(default=None, init=False, repr=False)

    def get(self, key: WorkloadKey) -> StoredReport | None:
        self._take_arrived()
        return self._known.get(key)

    @property
    def records(self) -> Mapping[WorkloadKey, StoredReport]:
        """What this replica knows of every report (read-only view). O(1) (plus the listed records arrived
        since the last look while settling)."""
        self._take_arrived()
        return self._known

    @property
    def settling(self) -> bool:
        """The first listing of a leadership has not ended yet (:meth:`settle`)."""
        return self._arrived is not None

    def _touch(self, key: WorkloadKey) -> None:
        if self._touched is not None:
            self._touched.add(key)

    def names(self) -> dict[WorkloadKey, str]:
        """Workload → report name, for every report this replica believes exists. O(reports)."""
        return {k: v.name for k, v in self.records.items()}

    # --- writes ---------------------------------------------------------------------------------------------

    def is_material(self, key: WorkloadKey, report: SpreadReport) -> bool:
        """Writing ``report`` would change what users act on: a new report, another health or other best
        nodes (not only counts or scores). O(best nodes listed)."""
        known = self.get(key)
        return known is None or known.material != report_material(report)

    async def write(self, key: WorkloadKey, report: SpreadReport, generation: int) -> bool:
        """Bring ``key``'s report to ``report`` (computed from the workload's ``generation``): nothing when
        unchanged (False), else one server-side apply (and an Event when a known health changed; True).
        While settling, a report the listing has not shown yet is read first (:meth:`_read`). Raises on API
        failure."""
        known = self.get(key)
        if known is None and self._arrived is not None:
            known = await self._read(key)
        status = build_status(report, generation, known.condition if known else None, self.wall())
        if "lastPlacement" not in status and known is not None and known.placement is not None:
            # the last placement another replica saw (this one has seen none since): kept, not dropped
            status["lastPlacement"] = dict(known.placement)
        digest = content_digest(status)
        if known is not None and known.digest == digest and known.owner_uid == report.workload.uid:
            self.stats.skipped_unchanged += 1
            return False
        name = known.name if known is not None else report_name(key.kind, key.name)
        await self.bucket.acquire()
        started = time.perf_counter()
        obj = await self.api.save(
            key.namespace,
            name,
            {HEALTH_LABEL: report.health.value},
            {DIGEST_ANNOTATION: digest.hex()},
            workload_ref(report),
            status,
        )
        answered = time.perf_counter() - started
        self._touch(key)
        self.stats.write_latency.observe(answered)
        if self.on_answer is not None:
            self.on_answer(answered)
        if known is None:
            self.stats.creates += 1
        else:
            self.stats.status_writes += 1
        self.stats.last_write = self.clock()
        previous = known.health if known is not None else ""
        self._known[key] = StoredReport(
            key, name, digest, kept_condition(status["conditions"][0]), report.health.value, report_material(report),
            status.get("lastPlacement"),
        ).with_object(obj)
        log.info(
            "report %s/%s: %s, %d pods, best score %d",
            key.namespace,
            name,
            report.health.value,
            report.pods,
            report.best_score,
            extra={"workload": str(key), "report": name, "health": report.health.value},
        )
        if previous and previous != report.health.value:
            await self._event(self._known[key], previous, report)
        return True

    async def _event(self, known: StoredReport, previous: str, report: SpreadReport) -> None:
        if not self.events:
            return
        event_type = "Warning" if known.health in _WARNING_HEALTH else "Normal"
        change = f"{previous} -> {known.health}"
        message = f"{report.workload.kind} {report.workload.namespace}/{report.workload.name}: {change}"
        if report.reasons:
            message += ": " + "; ".join(report.reasons)
        await self.bucket.acquire()
        try:
            await self.api.post_event({"metadata": known.meta}, event_type, known.health, message)
            self.stats.events += 1
        except (SpreadwatchError, OSError) as err:  # an Event is best effort
            log.warning("cannot post an Event for %s: %s", known.workload, err)

    async def _read(self, key: WorkloadKey) -> StoredReport | None:
        """``key``'s report read from the API (one GET of its name; None: there is none), known from now on:
        what a write needs of it (digest, condition, last placement, health) before the first listing of a
        leadership has shown it. Raises on API failure."""
        await self.bucket.acquire()
        obj = await self.api.get_report(key.namespace, report_name(key.kind, key.name))
        self.stats.reads += 1
        self._touch(key)  # (newer than the listing under way: its record of this report is left aside)
        stored = stored_report(obj) if obj is not None else None
        if stored is None or stored.workload != key:
            return None
        self._known[key] = stored
        return stored

    async def delete(self, key: WorkloadKey, why: str) -> None:
        """Delete ``key``'s report if this replica knows one (kept as known when the call fails)."""
        known = self._known.pop(key, None)
        if known is None:
            return
        await self.bucket.acquire()
        try:
            gone = await self.api.delete(key.namespace, known.name)
        except BaseException:
            self._known[key] = known
            raise
        self._known.pop(key, None)  # (gone, whatever a listing that ended meanwhile made of it)
        self._touch(key)
        self.stats.deletes += 1
        if gone:
            log.info(
                "deleted report %s/%s (%s)",
                key.namespace,
                known.name,
                why,
                extra={"workload": str(key), "report": known.name},
            )

    # --- resync ---------------------------------------------------------------------------------------------

    async def list(
        self, namespaces: Iterable[str], *, metadata_only: bool = False, on_page: Callable[[int], None] | None = None
    ) -> list[StoredReport]:
        """Every SpreadReport in ``namespaces`` (all: empty) that names a workload, as records: whole reports
        (O(reports × status size)), or ``metadata_only`` (name, owner, uid, digest; no condition, health or
        placement: O(reports)). One LIST, paged. While settling, a whole listing's records are also known as
        its pages arrive. Raises on API failure."""
        arrived = self._arrived
        keep = stored_report if metadata_only or arrived is None else functools.partial(_arriving, arrived)
        return await self.api.list_reports(namespaces, keep, metadata_only=metadata_only, on_page=on_page)

    def settle(self) -> None:
        """A leadership begins: forget every record. Until :meth:`adopt`, the records of a whole listing are
        known as its pages arrive, and a write of a workload whose report is not known yet reads that report
        first (:meth:`write`), so writes need not wait for the listing. O(1)."""
        self._known = {}
        self._arrived = deque()

    def _take_arrived(self) -> None:
        """Know the listed records arrived since the last look, except those of workloads this store has
        written, deleted or read since the listing began (its own records of them are newer). O(arrived)."""
        arrived = self._arrived
        if not arrived:
            return
        touched = self._touched or ()
        while arrived:
            stored = arrived.popleft()
            if stored.workload not in touched:
                self._known[stored.workload] = stored

    def adopt(self, reports: Iterable[StoredReport], touched: Collection[WorkloadKey] = ()) -> None:
        """Make ``reports`` (a whole listing's, of live workloads) what this replica knows, with its own records
        of the workloads in ``touched`` (written, deleted or read since the listing began: newer); settled.
        O(reports + touched)."""
        known = {r.workload: r for r in reports if r.workload not in touched}
        for key in touched:
            mine = self._known.get(key)
            if mine is not None:
                known[key] = mine
        self._known = known
        self._arrived = None

    def update(self, reports: Iterable[StoredReport]) -> None:
        """What this replica knows of these reports from now on (a later resync's corrections). O(reports)."""
        self._known.update((r.workload, r) for r in reports)

    def forget(self, keys: Iterable[WorkloadKey]) -> None:
        """These reports are gone from the API (a later resync did not list them). O(keys)."""
        for key in keys:
            self._known.pop(key, None)

    def track(self, on: bool) -> set[WorkloadKey]:
        """Start (``on``) or stop recording the workloads whose report this store has written or deleted (an
        API call answered) from now on; returns those recorded since the last start (a listing begun at the
        start is older than their records). O(1)."""
        touched = self._touched if self._touched is not None else set()
        self._touched = set() if on else None
        return touched

    async def delete_stored(self, stored: StoredReport) -> None:
        """Delete a report this replica does not keep (an orphan). Raises on API failure."""
        await self.bucket.acquire()
        await self.api.delete(stored.workload.namespace, stored.name)
        self.stats.deletes += 1
