"""Deletions a watch cannot report: reconcile the index with a fresh listing after kopf re-lists a kind.

kopf lists a kind again whenever its watch cannot resume (HTTP 410 Gone: the resourceVersion it held was
compacted away, e.g. after a long API-server outage) and replays the listed objects as events of type
``None``. An object deleted during the gap is simply absent from that listing: no ``DELETED`` event ever
arrives for it, so without help its pods would keep counting forever. The same gap exists between the
operator's own start-up listing and kopf's first listing.

:class:`RelistReconciler` notices a re-list (type-``None`` events after the initial load), waits until that
kind has been quiet for ``quiet`` seconds, lists the kind's names itself (metadata only) and removes from the
index every record the listing lacks — unless a watch event touched that object after the listing began
(it was created meanwhile, and the listing may predate it). It talks to the index through its own API
(``object_keys``, ``remove``) and then tells the writer what changed (``wake``; ``namespace_changed`` for a
removed namespace, whose opt-out label went with it), so the writer debounces the removals like any other
change.

Cost: one metadata-only LIST of one kind per kopf re-list (rare: kopf watches with bookmarks), O(objects of
the kind) names in memory while it runs. A failed listing is retried with back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from spreadwatch.errors import SpreadwatchError
from spreadwatch.index import SpreadIndex
from spreadwatch.runtime.events import WATCHED, WATCHED_BY_KIND, Watched

__all__ = ["ChangeListener", "KeyLister", "ReconcileStats", "RelistReconciler"]

log = logging.getLogger("spreadwatch.relist")

#: Lists the ``(namespace, name)`` of every object of one watched kind (``kube.list_object_keys`` in a thread).
KeyLister = Callable[[Watched], Awaitable[set[tuple[str, str]]]]


class ChangeListener(Protocol):
    """Who hears about the removals (the report writer)."""

    def wake(self) -> None: ...

    def namespace_changed(self, namespace: str) -> None: ...


@dataclass(slots=True)
class ReconcileStats:
    reconciles: int = 0  # listings compared with the index
    removed: int = 0  # stale records removed (deleted during a watch gap)
    failures: int = 0  # listings that failed (retried)


@dataclass(eq=False)
class RelistReconciler:
    """See the module docstring. Call :meth:`observe` for every routed event; run :meth:`run` as a task.

    ``armed`` is set once the initial state is loaded (type-None events before that are the load);
    ``_relisted``: kind -> time of its latest type-None event (or retry time); ``_touched``: kind -> objects
    touched while it is being listed.
    """

    index: SpreadIndex
    list_keys: KeyLister
    changes: ChangeListener
    quiet: float = 2.0
    clock: Callable[[], float] = time.monotonic
    armed: bool = field(default=False, init=False)
    stats: ReconcileStats = field(default_factory=ReconcileStats, init=False)
    _relisted: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _touched: dict[str, set[tuple[str, str]]] = field(default_factory=dict, init=False, repr=False)
    _failures: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def observe(self, kind: str, event_type: object, namespace: str, name: str) -> None:
        """Note one routed event. O(1)."""
        touched = self._touched.get(kind)
        if touched is not None:
            touched.add((namespace, name))
        if event_type is None and self.armed:
            self._relisted[kind] = self.clock()

    def due(self) -> list[str]:
        """Kinds re-listed by kopf and quiet for ``quiet`` seconds since, in watch order."""
        now = self.clock()
        return [w.kind for w in WATCHED if now - self._relisted.get(w.kind, now + 1) >= self.quiet]

    @property
    def pending(self) -> list[str]:
        return [w.kind for w in WATCHED if w.kind in self._relisted]

    async def reconcile(self, kind: str) -> int:
        """List ``kind`` and remove the index's records the listing lacks. Returns how many were removed.
        O(records of the kind) plus one removal per stale record."""
        watched = WATCHED_BY_KIND[kind]
        self._relisted.pop(kind, None)
        self._touched[kind] = set()
        try:
            present = await self.list_keys(watched)
        finally:
            touched = self._touched.pop(kind)
        stale = self.index.object_keys(kind) - present - touched
        for namespace, name in sorted(stale):
            self.index.remove(kind, namespace if watched.namespaced else "", name)
            if kind == "Namespace":
                self.changes.namespace_changed(name)
        if stale:
            self.changes.wake()
        self.stats.reconciles += 1
        self.stats.removed += len(stale)
        if stale:
            log.info("%s re-listed: removed %d object(s) deleted during the watch gap", kind, len(stale))
        return len(stale)

    async def run(self, stop: asyncio.Event) -> None:
        """Reconcile every kind that becomes due, until ``stop`` is set."""
        while not stop.is_set():
            for kind in self.due():
                try:
                    await self.reconcile(kind)
                    self._failures.pop(kind, None)
                except (SpreadwatchError, OSError) as err:
                    self.stats.failures += 1
                    n = self._failures[kind] = self._failures.get(kind, 0) + 1
                    delay = min(60.0, 2.0**n)
                    self._relisted[kind] = self.clock() + delay - self.quiet  # due again after ``delay``
                    log.warning("cannot list %s to reconcile after a re-list (retrying in %.0fs): %s", kind, delay, err)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=min(1.0, self.quiet))
