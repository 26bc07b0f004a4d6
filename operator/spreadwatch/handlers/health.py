"""The probe endpoint: ``/healthz`` (liveness) and ``/readyz`` on ``--port``, with a hook for ``/metrics``.

A tiny aiohttp server (aiohttp comes with kopf). ``/healthz`` is 200 while the report writer's loop keeps
cycling (it is stuck otherwise: 503); ``/readyz`` is 200 once the index holds the cluster's initial
state; ``/statusz`` returns JSON counters (index sizes, writes, leader) for humans and tests.

**Hook for metrics:** another module adds routes on the same port before the server starts, e.g.
``server.add_route("GET", "/metrics", handler)`` (see ``spreadwatch.handlers.runtime.ROUTE_HOOKS``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

__all__ = ["Handler", "HealthServer"]

log = logging.getLogger("spreadwatch.health")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HealthServer:
    def __init__(
        self,
        host: str,
        port: int,
        alive: Callable[[], bool],
        ready: Callable[[], bool],
        state: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        self.host = host
        self.port = port
        self._alive = alive
        self._ready = ready
        self._state = state
        self._routes: list[tuple[str, str, Handler]] = [
            ("GET", "/healthz", self._healthz),
            ("GET", "/readyz", self._readyz),
            ("GET", "/statusz", self._statusz),
        ]
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        """Serve another path on the same port (call before :meth:`start`)."""
        if self._runner is not None:
            raise RuntimeError("add routes before the server starts")
        self._routes.append((method, path, handler))

    async def _healthz(self, _request: web.Request) -> web.StreamResponse:
        ok = self._alive()
        return web.Response(text="ok\n" if ok else "stalled\n", status=200 if ok else 503)

    async def _readyz(self, _request: web.Request) -> web.StreamResponse:
        ok = self._ready()
        return web.Response(text="ok\n" if ok else "loading\n", status=200 if ok else 503)

    async def _statusz(self, _request: web.Request) -> web.StreamResponse:
        return web.json_response(self._state())

    async def start(self) -> None:
        app = web.Application()
        for method, path, handler in self._routes:
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.bound_port = sockets[0].getsockname()[1] if sockets else self.port
        log.info("probes on http://%s:%s/healthz", self.host, self.bound_port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
