"""The probe and metrics endpoint on ``--port``: ``/healthz``, ``/readyz``, ``/statusz`` and ``/metrics``.

A tiny aiohttp server (aiohttp comes with kopf). ``/healthz`` is 200 while the report writer's loop keeps
cycling (it is stuck otherwise: 503); ``/readyz`` is 200 once the index holds the cluster's initial
state; ``/statusz`` returns JSON counters (index sizes, writes, leader) for humans and tests.

``/metrics`` (when a registry is given) takes an immutable view of the registry in the event loop
(``metrics.freeze``: O(workloads), milliseconds) and formats it in a worker thread (``metrics.render``:
O(series), ~0.3 s at 450,000 series), so watch events keep flowing during a scrape. OpenMetrics when the
``Accept`` header asks for it (Prometheus does), else the Prometheus text format 0.0.4.

More routes can be added on the same port before the server starts: ``server.add_route(...)`` (see
``spreadwatch.handlers.runtime.ROUTE_HOOKS``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry

from spreadwatch.metrics import content_type, freeze, render, wants_openmetrics

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
        metrics: CollectorRegistry | None = None,
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
        self._metrics = metrics
        if metrics is not None:
            self._routes.append(("GET", "/metrics", self._serve_metrics))
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

    async def _serve_metrics(self, request: web.Request) -> web.StreamResponse:
        assert self._metrics is not None
        openmetrics = wants_openmetrics(request.headers.get("Accept", ""))
        frozen = freeze(self._metrics)  # in the loop: the index is only ever read here
        body = await asyncio.to_thread(render, frozen, openmetrics=openmetrics)
        return web.Response(body=body, headers={"Content-Type": content_type(openmetrics)})

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
