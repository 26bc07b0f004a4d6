"""The operator's informers: one list + watch loop per watched resource, records straight into the router.

Each :class:`ResourceWatch` (one per resource, per watched namespace for namespaced kinds in namespaced
mode) loops:

1. **list** (the first time, and after ``410 Gone``): the list's pages, decoded in a worker thread straight
   into records (:func:`spreadwatch.kube.list_pages`), are applied page by page in the event loop (a page at
   once: :meth:`EventRouter.route_listed`, in bulk while the index loads its first listing); then
   every record of that resource (and namespace) the index holds but the listing lacks is removed — it was
   deleted while no watch ran (or during a listing abandoned for an expired continue token), and no
   ``DELETED`` event will ever say so;
2. **watch** from the list's resourceVersion (bookmarks on; the server ends a watch after
   ``kube.WATCH_TIMEOUT`` seconds and the loop watches again from the last version seen): each event line
   is decoded in the worker thread (:func:`spreadwatch.decode.decode_event`) and taken in the loop
   (:meth:`ResourceWatch.take`: a record or a deletion to the :class:`EventRouter`);
3. on any other failure (or a watch that ended within a second without an event): back-off (1 s doubling to
   30 s, reset by a watch that lasted or delivered), then the
   watch is resumed from the last version (or listed again when that is gone).

No per-object framework state and no dict per event: the only transient is one page or one batch of
decoded events (the worker thread pauses while ``_MAX_BUFFERED`` events wait for the loop). The loop applies
at most ``_CHUNK`` records between awaits, so probes and ``/metrics`` stay answered during the initial list
of 150,000 pods. A line that cannot be decoded is logged (once per resource and reason) and skipped.

An object the decoder found malformed (:class:`~spreadwatch.decode.Malformed`: the reference parser refused
it) is handled here, where it was decoded, and never reaches the router: logged once (logger
``spreadwatch.events``, one line naming the object and the field) until it is valid again or deleted, and
skipped — its last good state stays in the index, so one broken object never hides the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeGuard, TypeVar, cast

from spreadwatch.decode import DecodeError, Informed, Malformed, WatchEvent
from spreadwatch.errors import KubeApiError, SpreadwatchError
from spreadwatch.jsonform import json_form
from spreadwatch.model import Record
from spreadwatch.resources import ApiResource
from spreadwatch.runtime.informers.pump import Pump
from spreadwatch.runtime.informers.router import EventRouter

__all__ = ["ResourceWatch", "WatchSource", "WatchStats"]

log = logging.getLogger("spreadwatch.watch")
#: what an object's events carry: a malformed object skipped, and when it is valid again
objects_log = logging.getLogger("spreadwatch.events")

T = TypeVar("T")

_CHUNK: Final = 500  # records applied between two awaits (about 5 ms of work)
_MAX_BUFFERED: Final = 20_000  # decoded events waiting for the loop before the worker thread pauses
_MAX_BACKOFF: Final = 30.0
_SHORT_WATCH: Final = 1.0  # seconds: a watch that ends sooner without an event counts as a failure (back-off)
_MAX_PROBLEMS: Final = 100  # distinct undecodable-line problems remembered (each logged once)
_GONE: Final = 410


class EventStream(Protocol):
    """One open watch: iterating blocks for its events; ``close`` (any thread) ends it."""

    def __iter__(self) -> Iterator[WatchEvent | DecodeError]: ...

    def close(self) -> None: ...


class WatchSource(Protocol):
    """The API as the informers see it (blocking; called in worker threads): ``kube.list_pages`` and
    ``kube.WatchStream`` in the operator, a fake in tests."""

    def list(self, resource: ApiResource, namespace: str | None) -> Iterable[tuple[Sequence[Informed], str]]: ...

    def watch(self, resource: ApiResource, namespace: str | None, resource_version: str) -> EventStream: ...


@dataclass(slots=True)
class WatchStats:
    """Counters of one resource's informer (the operator's /statusz)."""

    lists: int = 0  # complete listings (the first, then one per 410 Gone)
    watches: int = 0  # watch requests opened
    events: int = 0  # watch events applied (bookmarks excluded)
    stale_removed: int = 0  # records a re-list showed were deleted during a gap
    failures: int = 0  # failed list/watch requests (retried with back-off)
    undecodable: int = 0  # watch lines that were not events
    malformed: int = 0  # objects the reference parser refused (skipped, their last good state kept)

    def as_dict(self) -> dict[str, int]:
        return _WATCH_STATS_FORM(self)


#: /statusz's per-informer counters (the malformed objects are summed under its "events": "broken")
_WATCH_STATS_FORM = json_form(WatchStats, ("lists", "watches", "events", "stale_removed", "failures", "undecodable"))


def _identity(item: Informed) -> tuple[str, str]:
    """(namespace, name) of a listed item ("" for what cannot be named)."""
    if item is None:
        return "", ""
    if isinstance(item, Malformed):
        return item.namespace, item.name
    return getattr(item, "namespace", ""), item.name


@dataclass(eq=False)
class ResourceWatch:
    """See the module docstring. ``namespace``: None for every namespace (or a cluster-scoped kind);
    ``source``: None when the caller feeds the informer itself (:meth:`take`, :meth:`take_listed`: the test
    fakes and the soak benchmark, on the operator's route from decoded lines on)."""

    resource: ApiResource
    namespace: str | None
    router: EventRouter
    source: WatchSource | None = None
    stats: WatchStats = field(default_factory=WatchStats, init=False)
    #: Set once the first listing is applied (the operator is ready when every informer's is).
    listed: asyncio.Event = field(default_factory=asyncio.Event, init=False)
    _version: str = field(default="", init=False, repr=False)  # "": list first
    _stream: EventStream | None = field(default=None, init=False, repr=False)
    _bad_lines: set[str] = field(default_factory=set, init=False, repr=False)
    #: objects skipped as malformed now: (namespace, name) → problem (each logged once)
    malformed: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)

    @property
    def name(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.resource.plural}{where}"

    @property
    def _source(self) -> WatchSource:
        assert self.source is not None  # (run() checks it)
        return self.source

    async def run(self, stop: asyncio.Event) -> None:
        """List, then watch, until ``stop`` is set (see the module docstring)."""
        if self.source is None:
            raise ValueError(f"{self.name}: an informer without a source lists and watches nothing")
        backoff = 1.0
        stopping: asyncio.Future[object] = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                try:
                    if not self._version:
                        await self._list()
                    opened, events = time.monotonic(), self.stats.events
                    await self._watch(stopping)
                    if stop.is_set() or self.stats.events > events or time.monotonic() - opened >= _SHORT_WATCH:
                        backoff = 1.0
                        continue
                    failure = "the watch ended at once without an event"  # (a proxy closing it: no hot loop)
                except KubeApiError as err:
                    if err.status == _GONE:
                        log.info("%s: resourceVersion %s expired; listing again", self.name, self._version)
                        self._version = ""
                        continue
                    failure = str(err)
                except (SpreadwatchError, OSError) as err:
                    failure = str(err)
                except Exception as err:  # a bug: its traceback is logged and the informer lists again, never
                    log.exception("%s: unexpected error", self.name)  # stops silently (it would hold readiness)
                    self._version = ""
                    failure = f"{type(err).__name__}: {err}"
                self.stats.failures += 1
                log.warning("%s: %s (retrying in %.0fs)", self.name, failure, backoff)
                await asyncio.wait([stopping], timeout=backoff)
                backoff = min(_MAX_BACKOFF, backoff * 2)
        finally:
            stopping.cancel()

    async def _list(self) -> None:
        """One complete listing applied page by page; then what it lacks is removed. O(objects listed)."""
        seen: set[tuple[str, str]] = set()
        version = ""
        pump: Pump[tuple[Sequence[Informed], str]] = Pump(
            lambda: self._source.list(self.resource, self.namespace), f"list {self.name}", limit=4
        )
        try:
            async for pages in pump.batches():
                for items, listed_version in pages:
                    seen.update(map(_identity, items))
                    await self._take_page(items)
                    version = listed_version
        finally:
            pump.stop()
        self._remove_missing(seen)
        self._version = version
        self.stats.lists += 1
        self.listed.set()

    async def _take_page(self, items: Sequence[Informed]) -> None:
        for start in range(0, len(items), _CHUNK):
            self.take_listed_page(items[start : start + _CHUNK])
            await asyncio.sleep(0)

    def take_listed_page(self, items: Sequence[Informed]) -> None:
        """The objects of a list page, as :meth:`take_listed` takes each, their records to the router at once
        (``route_listed``: in bulk while the index loads its first listing). O(items) + the router's."""
        accepted = self._accepted
        self.router.route_listed(self.resource.kind, [item for item in items if accepted(item)])

    def take_listed(self, item: Informed) -> None:
        """One object of a list page: its record to the router; a malformed one logged once and skipped
        (see the module docstring); None (a kind not read) skipped. O(1) + the router's."""
        if self._accepted(item):
            self.router.route(self.resource.kind, item)

    def _accepted(self, item: Informed) -> TypeGuard[Record]:
        """Whether a listed object goes to the router: not None (a kind not read), nor malformed (logged once,
        see the module docstring); a valid one clears its object's malformed mark. O(1)."""
        if item is None:
            return False
        if isinstance(item, Malformed):
            self._malformed(item)
            return False
        if self.malformed:
            self._valid_again(self._key(getattr(item, "namespace", ""), item.name))
        return True

    def take_deletion(self, namespace: str, name: str) -> None:
        """An object deleted (a ``DELETED`` event, or missing from a new list): to the router. O(1) + the
        router's."""
        if self.malformed:
            self.malformed.pop(self._key(namespace, name), None)
        self.router.route_deletion(self.resource.kind, namespace, name)

    def take(self, event: WatchEvent | DecodeError) -> bool:
        """One decoded watch line: its version kept, a deletion or a new state taken (:meth:`take_deletion`,
        :meth:`take_listed`), an undecodable line logged once per problem. True for an event that carries an
        object (not a bookmark, not an undecodable line). O(1) + the router's."""
        if isinstance(event, DecodeError):
            self._undecodable(event)
            return False
        if event.resource_version:
            self._version = event.resource_version
        if event.type == "DELETED":
            self.take_deletion(event.namespace, event.name)
        elif event.type in ("ADDED", "MODIFIED"):
            self.take_listed(event.item)
        else:
            return False  # BOOKMARK: only its version
        self.stats.events += 1
        return True

    def _key(self, namespace: str, name: str) -> tuple[str, str]:
        """An object's (namespace, name) as the router places it ("default" for a namespaced one without)."""
        return ((namespace or "default") if self.resource.namespaced else ""), name

    def _malformed(self, item: Malformed) -> None:
        """Skip a malformed object in scope, logged once until it is valid again or deleted. O(1)."""
        key = self._key(item.namespace, item.name)
        namespace = key[0]
        if not self.router.in_scope(self.resource, namespace):
            return
        self.stats.malformed += 1
        if self.malformed.get(key) != item.problem:
            self.malformed[key] = item.problem
            objects_log.warning(
                "skipping malformed object: %s",
                item.problem,
                extra={"object": f"{self.resource.kind}/{namespace}/{item.name}"},
            )

    def _valid_again(self, key: tuple[str, str]) -> None:
        if self.malformed.pop(key, None) is not None:
            objects_log.info("object is valid again: %s %s/%s", self.resource.kind, *key)

    def _remove_missing(self, seen: set[tuple[str, str]]) -> None:
        kind = self.resource.kind
        held = self.router.index.object_keys(kind)
        if self.namespace is not None:
            held = {key for key in held if key[0] == self.namespace}
        stale = held - seen
        for namespace, name in sorted(stale):
            self.take_deletion(namespace, name)
        if stale:
            self.stats.stale_removed += len(stale)
            log.info("%s listed again: removed %d object(s) deleted while unwatched", self.name, len(stale))

    async def _watch(self, stopping: asyncio.Future[object]) -> None:
        """One watch request, until the server ends it or ``stop`` is set."""
        stream = self._source.watch(self.resource, self.namespace, self._version)
        pump: Pump[WatchEvent | DecodeError] = Pump(lambda: stream, f"watch {self.name}", limit=_MAX_BUFFERED)
        self.stats.watches += 1
        batches = pump.batches()
        try:
            while True:
                step: asyncio.Future[object] = asyncio.ensure_future(anext(batches))
                await asyncio.wait([step, stopping], return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    step.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                        await step
                    return
                try:
                    batch = step.result()
                except StopAsyncIteration:
                    return
                await self._take_events(cast(list[WatchEvent | DecodeError], batch))
        finally:
            pump.stop()
            stream.close()
            await batches.aclose()

    async def _take_events(self, batch: list[WatchEvent | DecodeError]) -> None:
        take = self.take
        for n, event in enumerate(batch, 1):
            take(event)
            if n % _CHUNK == 0:
                await asyncio.sleep(0)

    def _undecodable(self, err: DecodeError) -> None:
        self.stats.undecodable += 1
        problem = str(err)[:200]
        if problem not in self._bad_lines:
            if len(self._bad_lines) >= _MAX_PROBLEMS:
                self._bad_lines.clear()
            self._bad_lines.add(problem)
            log.warning("%s: skipping a watch line: %s", self.name, problem)
