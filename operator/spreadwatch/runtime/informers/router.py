"""Records and deletions of the watched kinds → the spread index (no kopf, no API, no dicts).

The informers (``runtime/informers/watches.py``) decode the API's list pages and watch lines straight into
records (``decode/watch.py``; a malformed object is logged and skipped there, where it is decoded) and hand
the router each object's new state or its deletion:

* :meth:`EventRouter.route` — a record of an object of a watched kind (ADDED, MODIFIED, or listed) →
  ``index.apply(record)``;
* :meth:`EventRouter.route_listed` — the records of one list page → ``index.apply_listed(records)``, in
  bulk while the index loads its first listing (``SpreadIndex.start_loading``: the runtime starts it before
  the informers and finishes it once they have listed); record by record as :meth:`EventRouter.route` once
  placements are checked, and for namespaces (their opt-out is followed one by one);
* :meth:`EventRouter.route_deletion` — a ``DELETED`` event, or an object a re-list no longer shows →
  ``index.remove(kind, namespace, name)``;
* namespaced objects of namespaces the :class:`~spreadwatch.config.Scope` does not watch (``--skip-namespace``,
  or not in ``--namespace``) are not indexed at all; a namespace whose opt-out label flips makes the writer
  re-evaluate its workloads (``namespace_changed``);
* then the writer is woken (``wake``; it debounces).

Once the informers have listed (:attr:`EventRouter.check_placements`, set by the runtime), a pod record that
binds a pod (bound now, unbound or unknown before) is first checked against the reports held just before it
(``SpreadIndex.check_placement``), then applied: the initial list is never checked.

Each call is O(1) (O(records) for a page) plus the index's apply or remove.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from spreadwatch.config import Scope
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, Record
from spreadwatch.resources import CLUSTER_RESOURCES, ApiResource
from spreadwatch.timestamps import rfc3339

__all__ = ["WATCHED", "WATCHED_BY_KIND", "EventRouter", "RouterStats"]

#: The resources the operator watches (read-only): exactly what a snapshot holds.
WATCHED: Final = CLUSTER_RESOURCES
#: The watched resources by kind.
WATCHED_BY_KIND: Final = {w.kind: w for w in WATCHED}


@dataclass(slots=True)
class RouterStats:
    events: int = 0  # records and deletions routed
    by_kind: dict[str, int] = field(default_factory=dict)  # of a watched kind, by kind (metrics)
    applied: int = 0
    removed: int = 0
    ignored: int = 0  # excluded namespaces, unknown kinds, deletions without a name


class EventRouter:
    """Applies records and deletions to a :class:`SpreadIndex` (see the module docstring)."""

    def __init__(
        self,
        index: SpreadIndex,
        scope: Scope,
        wake: Callable[[], None] = lambda: None,
        namespace_changed: Callable[[str], None] = lambda _ns: None,
        clock: Callable[[], str] = rfc3339,
    ) -> None:
        self.index = index
        self.clock = clock  # the time of a checked placement, RFC 3339
        #: check new bindings against the reports (off during the initial list: the runtime sets it after)
        self.check_placements = False
        self.scope = scope
        self.wake = wake
        self.namespace_changed = namespace_changed
        self.stats = RouterStats()

    def in_scope(self, resource: ApiResource, namespace: str) -> bool:
        """Whether an object of ``resource`` in ``namespace`` is indexed: cluster-scoped ones always, namespaced
        ones when the scope watches their namespace. O(1)."""
        return not resource.namespaced or self.scope.namespace_watched(namespace)

    def _watched(self, kind: str) -> ApiResource | None:
        """The watched resource of ``kind``, its event counted (None, counted as ignored: not watched). O(1)."""
        self.stats.events += 1
        watched = WATCHED_BY_KIND.get(kind)
        if watched is None:
            self.stats.ignored += 1
            return None
        self.stats.by_kind[watched.kind] = self.stats.by_kind.get(watched.kind, 0) + 1
        return watched

    def route(self, kind: str, record: Record) -> None:
        """The new state of an object of the watched ``kind`` (ADDED, MODIFIED or listed). O(1) + apply."""
        watched = self._watched(kind)
        if watched is None:
            return
        namespace: str = getattr(record, "namespace", "") if watched.namespaced else ""
        if not self.in_scope(watched, namespace):
            self.stats.ignored += 1
            return
        if watched.kind == "Namespace":
            before = self._opted_out(record.name)
            self.index.apply(record)
            if self._opted_out(record.name) != before:
                self.namespace_changed(record.name)
        else:
            if self.check_placements and isinstance(record, Pod):
                self.index.check_placement(record, self.clock)
            self.index.apply(record)
        self.stats.applied += 1
        self.wake()

    def route_listed(self, kind: str, records: Sequence[Record]) -> None:
        """The records of one list page of the watched ``kind`` (module docstring); the writer is woken once.
        O(records) + ``apply_listed``."""
        watched = WATCHED_BY_KIND.get(kind)
        if watched is None or watched.kind == "Namespace" or self.check_placements:
            for record in records:
                self.route(kind, record)
            return
        stats = self.stats
        stats.events += len(records)
        stats.by_kind[kind] = stats.by_kind.get(kind, 0) + len(records)
        taken = records
        if watched.namespaced:
            watching = self.scope.namespace_watched
            taken = [record for record in records if watching(getattr(record, "namespace", ""))]
            stats.ignored += len(records) - len(taken)
        if not taken:
            return
        self.index.apply_listed(taken)
        stats.applied += len(taken)
        self.wake()

    def route_deletion(self, kind: str, namespace: str, name: str) -> None:
        """A ``DELETED`` event of an object of the watched ``kind`` (or one a re-list no longer shows). O(1) +
        remove."""
        watched = self._watched(kind)
        if watched is None:
            return
        namespace = (namespace or "default") if watched.namespaced else ""
        if not name or not self.in_scope(watched, namespace):
            self.stats.ignored += 1
            return
        if watched.kind == "Namespace":
            before = self._opted_out(name)
            self.index.remove("Namespace", "", name)
            if self._opted_out(name) != before:
                self.namespace_changed(name)
        else:
            self.index.remove(watched.kind, namespace, name)
        self.stats.removed += 1
        self.wake()

    def _opted_out(self, namespace: str) -> bool:
        return self.scope.opted_out(self.index.namespace_labels(namespace))
