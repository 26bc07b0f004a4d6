"""The SpreadReports as the API holds them, and the write protocol that keeps them current.

:class:`ReportStore` is the writer's only door to the API (a :class:`ReportSink`: ``kube.AsyncReportClient``
in the operator, a fake in tests). It remembers, per workload, what this replica knows of its report as a
:class:`StoredReport` (a small frozen record: name, status digest, condition, health, owner, uid), and:

* :meth:`ReportStore.write` — builds the status (:mod:`spreadwatch.runtime.status`) and, unless its digest
  equals the stored one (no write without a change): creates the report if needed (ownerReference to the
  workload; an existing one, e.g. a previous leader's, is adopted with its transition time), patches the
  owner when the workload's uid changed, replaces the status, and posts an Event when the health changed. A
  report deleted behind our back (404) is created again, once;
* :meth:`ReportStore.delete` — deletes a workload's report;
* :meth:`ReportStore.list` — lists the SpreadReports and returns them as :class:`StoredReport` records (the
  resync), :meth:`ReportStore.adopt` makes such a list what the store knows, :meth:`ReportStore.delete_stored`
  deletes one (an orphan).

Every API call takes a token from the writer's bucket first (``--max-writes-per-second``). Failures raise
(``KubeApiError`` and other :class:`~spreadwatch.errors.SpreadwatchError`, or ``OSError``), except a failed
Event, which is best effort. Concurrent calls for *different* workloads are safe (one event loop); the
writer never writes one workload twice at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from spreadwatch.errors import KubeApiError, SpreadwatchError
from spreadwatch.jsonform import json_form
from spreadwatch.metrics.histogram import DurationHistogram
from spreadwatch.model import WORKLOAD_KINDS, WorkloadKey
from spreadwatch.naming import report_name, workload_of_report_name
from spreadwatch.report import Health, SpreadReport
from spreadwatch.runtime.ratelimit import TokenBucket
from spreadwatch.runtime.status import build_status, content_digest, find_condition, workload_ref

__all__ = ["ReportSink", "ReportStore", "StoredReport", "WriterStats", "stored_report"]

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
    """Counters since start (the metrics module reads them at scrape time)."""

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
    compute: DurationHistogram = field(default_factory=DurationHistogram)  # report rebuilds before a write
    reconcile: DurationHistogram = field(default_factory=DurationHistogram)  # one due workload, start to end

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
        return _WRITER_STATS_FORM(self)


_WRITER_STATS_FORM = json_form(
    WriterStats,
    (
        *("creates", "status_writes", "owner_patches", "deletes", "events", "api_writes", "skipped_unchanged"),
        *("skipped_excluded", "failures", "resyncs", "cycles"),
    ),
)


@dataclass(frozen=True, slots=True)
class StoredReport:
    """What the API holds for one workload's SpreadReport, as far as this replica knows."""

    workload: WorkloadKey
    name: str  # the SpreadReport's name, in the workload's namespace
    digest: bytes | None = None  # content_digest of its status (None: no status yet)
    condition: Mapping[str, Any] | None = None  # its Balanced condition (keeps lastTransitionTime)
    health: str = ""  # its status.health ("": no status yet)
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
    status = obj.get("status")
    status = status if isinstance(status, Mapping) and status else None
    return StoredReport(
        WorkloadKey(namespace, kind, workload),
        name,
        content_digest(status) if status else None,
        find_condition(status),
        _text(status.get("health")) if status else "",
    ).with_object(obj)


@dataclass(eq=False)
class ReportStore:
    """See the module docstring. ``wall`` gives the status timestamps; ``clock`` the monotonic time."""

    sink: ReportSink
    bucket: TokenBucket
    stats: WriterStats
    events: bool = field(default=True, kw_only=True)
    wall: Callable[[], str] = field(kw_only=True)
    clock: Callable[[], float] = field(default=time.monotonic, kw_only=True)
    _known: dict[WorkloadKey, StoredReport] = field(default_factory=dict, init=False, repr=False)

    def get(self, key: WorkloadKey) -> StoredReport | None:
        return self._known.get(key)

    def names(self) -> dict[WorkloadKey, str]:
        """Workload → report name, for every report this replica believes exists. O(reports)."""
        return {k: v.name for k, v in self._known.items()}

    # --- writes ---------------------------------------------------------------------------------------------

    async def write(self, key: WorkloadKey, report: SpreadReport, generation: int) -> None:
        """Bring ``key``'s report to ``report`` (computed from the workload's ``generation``): nothing when
        unchanged, else create / owner patch / status replace / Event as needed. Raises on API failure."""
        known = self._known.get(key)
        status = build_status(report, generation, known.condition if known else None, self.wall())
        digest = content_digest(status)
        if known is not None and known.digest == digest and known.owner_uid == report.workload.uid:
            self.stats.skipped_unchanged += 1
            return
        await self._write(key, report, status, digest, known)

    async def _write(
        self,
        key: WorkloadKey,
        report: SpreadReport,
        status: dict[str, Any],
        digest: bytes,
        known: StoredReport | None,
        retry_missing: bool = True,
    ) -> None:
        namespace = key.namespace
        name = report_name(key.kind, key.name)
        workload = workload_ref(report)
        try:
            if known is None:
                await self.bucket.acquire()
                obj = await self.sink.create(namespace, name, workload)
                self.stats.creates += 1
                adopted = stored_report(obj)
                known = StoredReport(key, name).with_object(obj)
                if adopted is not None and adopted.digest is not None:
                    # The report existed already (a previous leader wrote it): keep its transition time,
                    # and skip the status write when it already says the same.
                    known = replace(known, digest=adopted.digest, condition=adopted.condition, health=adopted.health)
                    status = build_status(
                        report, status["observedGeneration"], known.condition, status["lastUpdateTime"]
                    )
                    digest = content_digest(status)
                self._known[key] = known
            if known.owner_uid != workload["uid"]:
                await self.bucket.acquire()
                obj = await self.sink.set_owner(namespace, name, workload)
                self.stats.owner_patches += 1
                known = self._known[key] = known.with_object(obj)
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
        previous = known.health
        known = self._known[key] = replace(
            known.with_object(obj), digest=digest, condition=status["conditions"][0], health=report.health.value
        )
        log.info(
            "report %s/%s: %s, %d pods, best score %d",
            namespace,
            name,
            report.health.value,
            report.pods,
            report.best_score,
            extra={"workload": str(key), "report": name, "health": report.health.value},
        )
        if previous != known.health and (previous or known.health != Health.BALANCED.value):
            await self._event(known, previous, report)

    async def _event(self, known: StoredReport, previous: str, report: SpreadReport) -> None:
        if not self.events:
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
            log.warning("cannot post an Event for %s: %s", known.workload, err)

    async def delete(self, key: WorkloadKey, why: str) -> None:
        """Delete ``key``'s report if this replica knows one (kept as known when the call fails)."""
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

    # --- resync ---------------------------------------------------------------------------------------------

    async def list(self, namespaces: Iterable[str]) -> list[StoredReport]:
        """Every SpreadReport in ``namespaces`` (all: empty) that names a workload, as records. One LIST;
        O(reports × status size). Raises on API failure."""
        objs = await self.sink.list_reports(namespaces)
        return [r for r in map(stored_report, objs) if r is not None]

    def adopt(self, reports: Iterable[StoredReport]) -> None:
        """Make ``reports`` all this replica knows (after a resync). O(reports)."""
        self._known = {r.workload: r for r in reports}

    async def delete_stored(self, stored: StoredReport) -> None:
        """Delete a report this replica does not keep (an orphan). Raises on API failure."""
        await self.bucket.acquire()
        await self.sink.delete(stored.workload.namespace, stored.name)
        self.stats.deletes += 1
