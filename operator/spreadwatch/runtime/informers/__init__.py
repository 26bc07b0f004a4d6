"""The informers' room: list + watch → records → the index.

One :class:`ResourceWatch` per watched resource (per watched namespace in namespaced mode) lists, then watches,
through the ``WatchSource`` the runtime passes in (``kube.ApiWatchSource``): its worker thread
(:class:`~spreadwatch.runtime.informers.pump.Pump`) decodes pages and watch lines straight into records, and the
:class:`EventRouter` applies each record (or deletion) in scope to the index and wakes the writer through the
callbacks it was given. Imports no API client and nothing of the other rooms.

Inside, each module imports only those below it (import-linter): ``watches`` → ``router``, ``pump``.
"""

from __future__ import annotations

from spreadwatch.runtime.informers.router import WATCHED, WATCHED_BY_KIND, EventRouter, RouterStats
from spreadwatch.runtime.informers.watches import ResourceWatch, WatchSource, WatchStats

__all__ = ["WATCHED", "WATCHED_BY_KIND", "EventRouter", "ResourceWatch", "RouterStats", "WatchSource", "WatchStats"]
