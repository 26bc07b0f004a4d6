"""Watch events → the spread index (no kopf here: kopf's ``on.event`` handlers are one-line wrappers).

:meth:`EventRouter.handle` takes a raw watch event (``{"type": "ADDED"|"MODIFIED"|"DELETED"|None,
"object": {...}}`` — kopf reports objects of its initial listing with type None) for pods, nodes,
services, namespaces, deployments, replicasets, statefulsets and replicationcontrollers, and:

* ``DELETED`` → ``index.remove(kind, namespace, name)``;
* anything else → ``parse_object(body)`` → ``index.apply(record)``;
* a malformed object (:class:`~spreadwatch.errors.ObjectError`) is logged once (one line) and skipped — its
  previous state, if any, stays — so one broken object never hides the others;
* namespaced objects of namespaces the :class:`~spreadwatch.config.Scope` does not watch (``--skip-namespace``,
  or not in ``--namespace``) are not indexed at all; a namespace whose opt-out label flips makes the writer
  re-evaluate its workloads;
* then the writer is woken (it debounces).

:meth:`EventRouter.handle_decoded` does the same for what the informers (``runtime/informers/watches.py``) decoded
straight from the API's list pages and watch lines (a record: no dict, no second parse; an
:class:`~spreadwatch.decode.Unparsed` item: through :meth:`EventRouter.handle`), and
:meth:`EventRouter.handle_deleted` for a ``DELETED`` event or an object a re-list no longer shows.

Once the informers have listed (:attr:`EventRouter.check_placements`, set by the runtime), a pod record that
binds a pod (bound now, unbound or unknown before) is first checked against the reports held just before it
(``SpreadIndex.check_placement``), then applied: the initial list is never checked.

The router never touches the API and never mutates the event's body.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from spreadwatch.config import Scope
from spreadwatch.decode import Decoded, Unparsed
from spreadwatch.errors import ObjectError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, Record, parse_object
from spreadwatch.resources import CLUSTER_RESOURCES, ApiResource
from spreadwatch.timestamps import rfc3339

__all__ = ["WATCHED", "WATCHED_BY_KIND", "EventRouter", "RouterStats", "Watched"]

log = logging.getLogger("spreadwatch.events")


Watched = ApiResource  # the watched kinds are described exactly like the API resources spreadwatch.resources lists


#: The resources the operator watches (read-only): exactly what a snapshot holds.
WATCHED: Final = CLUSTER_RESOURCES
#: The watched resources by kind.
WATCHED_BY_KIND: Final = {w.kind: w for w in WATCHED}


@dataclass(slots=True)
class RouterStats:
    events: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)  # events of a watched kind, by kind (metrics)
    applied: int = 0
    removed: int = 0
    ignored: int = 0  # excluded namespaces, unknown kinds
    broken: int = 0  # malformed objects skipped


def _name_of(body: Mapping[str, Any]) -> tuple[str, str]:
    meta = body.get("metadata")
    if not isinstance(meta, Mapping):
        return "", ""
    ns, name = meta.get("namespace"), meta.get("name")
    return (ns if isinstance(ns, str) else ""), (name if isinstance(name, str) else "")


class EventRouter:
    """Applies watch events to a :class:`SpreadIndex` (see the module docstring)."""

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
        self._broken: dict[tuple[str, str, str], str] = {}  # (kind, ns, name) -> problem, logged once

    def handle(self, event: Mapping[str, Any], kind: str | None = None) -> None:
        """Apply one raw watch event. ``kind`` is the watched kind (used when the body lacks ``kind``)."""
        self.stats.events += 1
        body = event.get("object") if isinstance(event, Mapping) else None
        if not isinstance(body, Mapping):
            self.stats.broken += 1
            log.warning("ignoring a watch event without an object: %.200r", event)
            return
        body_kind = body.get("kind")
        if not isinstance(body_kind, str) or not body_kind:
            if kind is None:
                self.stats.broken += 1
                log.warning("ignoring an object without a kind: %.200r", body)
                return
            body = {**body, "kind": kind}
            body_kind = kind
        watched = self._watched(body_kind)
        if watched is None:
            return
        namespace, name = _name_of(body)
        if watched.namespaced:
            namespace = namespace or "default"
            if not self.scope.namespace_watched(namespace):
                self.stats.ignored += 1
                return
        event_type = event.get("type")
        if event_type == "DELETED":
            self._delete(watched, namespace, name)
        else:
            self._apply(watched, body, namespace, name)
        self.wake()

    def _watched(self, kind: str) -> Watched | None:
        """The watched resource of ``kind``, its event counted (None, counted as ignored: not watched). O(1)."""
        watched = WATCHED_BY_KIND.get(kind)
        if watched is None:
            self.stats.ignored += 1
            return None
        self.stats.by_kind[watched.kind] = self.stats.by_kind.get(watched.kind, 0) + 1
        return watched

    def handle_decoded(self, kind: str, item: Decoded) -> None:
        """An object of the watched ``kind`` as the informers decoded it: a record, an :class:`Unparsed` item
        (parsed and, if broken, worded by :meth:`handle`) or None (not read). O(1) + apply."""
        if isinstance(item, Unparsed):
            self.handle({"type": None, "object": item.value}, kind)
        elif item is not None:
            self.handle_record(kind, item)

    def handle_deleted(self, kind: str, namespace: str, name: str) -> None:
        """A ``DELETED`` event of an object of the watched ``kind`` (or one a re-list no longer shows). O(1) +
        remove."""
        self.stats.events += 1
        watched = self._watched(kind)
        if watched is None:
            return
        if watched.namespaced:
            namespace = namespace or "default"
            if not self.scope.namespace_watched(namespace):
                self.stats.ignored += 1
                return
        else:
            namespace = ""
        self._delete(watched, namespace, name)
        self.wake()

    def handle_record(self, kind: str, record: Record) -> None:
        """What :meth:`handle` does with an ADDED/MODIFIED event of an object of the watched ``kind``, for its
        record decoded straight from the API's bytes. O(1) + apply."""
        self.stats.events += 1
        watched = self._watched(kind)
        if watched is None:
            return
        namespace: str = getattr(record, "namespace", "") if watched.namespaced else ""
        if watched.namespaced and not self.scope.namespace_watched(namespace):
            self.stats.ignored += 1
            return
        self._apply_record(watched, record, namespace, record.name)
        self.wake()

    def _apply(self, watched: Watched, body: Mapping[str, Any], namespace: str, name: str) -> None:
        key = (watched.kind, namespace, name)
        try:
            record = parse_object(body)
        except ObjectError as err:
            self.stats.broken += 1
            problem = str(err)
            if self._broken.get(key) != problem:
                self._broken[key] = problem
                log.warning(
                    "skipping malformed object: %s", problem, extra={"object": f"{watched.kind}/{namespace}/{name}"}
                )
            return
        self._apply_record(watched, record, namespace, name)

    def _apply_record(self, watched: Watched, record: Record | None, namespace: str, name: str) -> None:
        if self._broken.pop((watched.kind, namespace, name), None) is not None:
            log.info("object is valid again: %s %s/%s", watched.kind, namespace, name)
        if record is None:
            self.stats.ignored += 1
            return
        if watched.kind == "Namespace":
            before = self._opted_out(name)
            self.index.apply(record)
            if self._opted_out(name) != before:
                self.namespace_changed(name)
        else:
            if self.check_placements and isinstance(record, Pod):
                self.index.check_placement(record, self.clock)
            self.index.apply(record)
        self.stats.applied += 1

    def _delete(self, watched: Watched, namespace: str, name: str) -> None:
        if not name:
            self.stats.broken += 1
            return
        self._broken.pop((watched.kind, namespace, name), None)
        if watched.kind == "Namespace":
            before = self._opted_out(name)
            self.index.remove("Namespace", "", name)
            if self._opted_out(name) != before:
                self.namespace_changed(name)
        else:
            self.index.remove(watched.kind, namespace, name)
        self.stats.removed += 1

    def _opted_out(self, namespace: str) -> bool:
        return self.scope.opted_out(self.index.namespace_labels(namespace))

    @property
    def broken_objects(self) -> dict[tuple[str, str, str], str]:
        """Objects currently skipped as malformed: (kind, namespace, name) → problem."""
        return dict(self._broken)
