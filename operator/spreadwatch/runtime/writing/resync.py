"""The resync: the SpreadReports the API holds, compared with what the writer knows (pure).

The writer lists the reports labelled ``app.kubernetes.io/managed-by=spreadwatch`` on becoming the leader
and every ``--resync-period`` seconds, and makes a :class:`ResyncPlan` of the listing:

* :func:`adopt_plan` — the first resync of a leadership lists **whole reports** (slimmed per page to the
  status parts the writer carries over: condition, health, best nodes, last placement). This replica
  knows nothing yet: a report is recognised as current only by recomputing its status, transition time
  and last placement included, and comparing digests, so every live workload is checked, except those this
  replica wrote, deleted or read meanwhile (``touched``). It too runs **beside the writes**: the store
  knows each listed report as its page arrives and reads the few a write needs before that
  (``ReportStore.settle``);
* :func:`compare_plan` — every later resync lists **metadata only** (``PartialObjectMetadataList``: name,
  owner, uid and the ``spreadwatch.io/status-digest`` annotation: ~1.9 KiB a report, most of it its
  managedFields, where a whole report is 4.6 KiB at scale 0.05 and tens of KiB at the envelope) and
  compares each report with this replica's own record of it, **while the writes go on beside it**. Only
  what differs is queued: a report whose digest or owner is not what this replica last wrote (another
  writer, a user), a report missing (deleted behind the operator's back), a workload without one. A report
  this replica wrote or deleted after the listing began (``touched``) is left out: its own record is newer
  than the listing. Correct reports are not touched.

Both say which listed reports are orphans (their workload gone, out of :class:`~spreadwatch.config.Scope`
or misnamed): the writer deletes them. :class:`ResyncRun` holds one resync's figures and :class:`ResyncStats`
all of them (``spreadwatch_resync_*``, ``/statusz``). No I/O, no clock: O(listed + known + live).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from spreadwatch.jsonform import json_form
from spreadwatch.metrics.histogram import DurationHistogram
from spreadwatch.model import WorkloadKey
from spreadwatch.runtime.writing.store import StoredReport

__all__ = ["RESYNC_BUCKETS", "ResyncPlan", "ResyncRun", "ResyncStats", "adopt_plan", "compare_plan"]

#: Upper bounds (seconds) of ``spreadwatch_resync_duration_seconds``: a list of a few reports takes
#: milliseconds, the whole reports of the envelope's 10,000 workloads ~10 s on a loaded API server.
RESYNC_BUCKETS: Final = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_HISTORY: Final = 20  # resyncs kept for /statusz


@dataclass(frozen=True, slots=True)
class ResyncPlan:
    """What one resync found: the store's records to keep, those to forget, the orphans to delete and the
    workloads to check (each written only when its computed status differs from what the API holds)."""

    keep: tuple[StoredReport, ...] = ()
    forget: tuple[WorkloadKey, ...] = ()
    orphans: tuple[StoredReport, ...] = ()
    stale: tuple[WorkloadKey, ...] = ()


def adopt_plan(
    listed: Iterable[StoredReport],
    live: Collection[WorkloadKey],
    covers: Callable[[WorkloadKey], bool],
    touched: Collection[WorkloadKey] = (),
) -> ResyncPlan:
    """The first resync of a leadership: every listed report of a live, in-scope workload under its own name is
    kept (the store's records are replaced by them), the others are orphans, and every live workload is
    checked — but for ``touched`` ones (written, deleted or read since the listing began: the store's own
    records of them are newer, neither kept from the listing nor checked again). O(listed + live)."""
    keep: list[StoredReport] = []
    orphans: list[StoredReport] = []
    for stored in listed:
        key = stored.workload
        if not (key in live and stored.canonical and covers(key)):
            orphans.append(stored)
        elif key not in touched:
            keep.append(stored)
    return ResyncPlan(tuple(keep), (), tuple(orphans), tuple(key for key in live if key not in touched))


def compare_plan(
    listed: Iterable[StoredReport],
    known: Mapping[WorkloadKey, StoredReport],
    live: Collection[WorkloadKey],
    covers: Callable[[WorkloadKey], bool],
    touched: Collection[WorkloadKey] = (),
) -> ResyncPlan:
    """A later resync, from a metadata-only listing (see the module docstring). ``known``: the store's
    records; ``touched``: workloads whose report this replica wrote or deleted since the listing began.
    O(listed + known + live)."""
    keep: list[StoredReport] = []
    orphans: list[StoredReport] = []
    stale: list[WorkloadKey] = []
    seen: set[WorkloadKey] = set()
    for stored in listed:
        key = stored.workload
        if key in touched:
            continue  # this replica's record is newer than the listing
        if key not in live or not stored.canonical or not covers(key):
            orphans.append(stored)
            continue
        seen.add(key)
        mine = known.get(key)
        if mine is None:  # a report this replica did not know of: checked against its listed digest
            keep.append(stored)
            stale.append(key)
        elif mine.digest != stored.digest or mine.owner_uid != stored.owner_uid:  # not what this replica wrote
            keep.append(replace(mine, digest=stored.digest, owner_uid=stored.owner_uid, uid=stored.uid,
                                resource_version=stored.resource_version))  # fmt: skip
            stale.append(key)
    forget = [key for key in known if key not in seen and key not in touched]  # gone from the API
    stale += [key for key in forget if key in live and covers(key)]
    stale += [key for key in live if key not in known and key not in seen and key not in touched and covers(key)]
    return ResyncPlan(tuple(keep), tuple(forget), tuple(orphans), tuple(stale))


@dataclass(frozen=True, slots=True)
class ResyncRun:
    """One resync's figures. ``started`` is unix seconds; ``writes_beside`` the report writes made while it ran."""

    started: float
    seconds: float
    mode: str  # "whole" (the first of a leadership) or "metadata"
    pages: int
    bytes: int
    listed: int
    orphans: int
    stale: int
    writes_beside: int

    def as_dict(self) -> dict[str, int | float | str]:
        return _RUN_FORM(self)


_RUN_FORM = json_form(
    ResyncRun, ("started", "seconds", "mode", "pages", "bytes", "listed", "orphans", "stale", "writes_beside")
)


@dataclass
class ResyncStats:
    """Every resync since start: the duration histogram, pages and bytes listed, and the last runs (the metrics
    module reads them at scrape time)."""

    duration: DurationHistogram = field(default_factory=lambda: DurationHistogram(RESYNC_BUCKETS))
    pages: int = 0
    bytes: int = 0
    runs: deque[ResyncRun] = field(default_factory=lambda: deque(maxlen=_HISTORY))

    def record(self, run: ResyncRun) -> None:
        self.duration.observe(run.seconds)
        self.pages += run.pages
        self.bytes += run.bytes
        self.runs.append(run)
