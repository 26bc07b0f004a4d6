"""The operator's two HTTP servers: plain-HTTP probes on ``--port`` and ``/metrics`` on ``--metrics-port``.

Tiny aiohttp servers (aiohttp comes with kopf).

* :class:`ProbeServer` (``--port``, default 8081, always plain HTTP: the kubelet probes it): ``/healthz`` is
  200 while the report writer's loop keeps cycling (it is stuck otherwise: 503); ``/readyz`` is 200 once the
  index holds the cluster's initial state; ``/statusz`` returns JSON counters (index sizes, writes, leader,
  metrics authorization) for humans and tests.
* :class:`MetricsServer` (``--metrics-port``, default 8443): ``/metrics``, by default over HTTPS
  (:mod:`~spreadwatch.runtime.serving.servingcert`) with every request authenticated and authorized by the API
  server (:mod:`~spreadwatch.runtime.serving.metricsauth`); plain HTTP and open with ``--metrics-secure=false``.
  A scrape takes an immutable view of the registry in the event loop (``metrics.freeze``: O(workloads),
  milliseconds) and formats it in a worker thread (``metrics.chunks``: O(series), ~0.2 s at 410,000
  series), so watch events keep flowing during a scrape. OpenMetrics when the ``Accept`` header asks for it
  (Prometheus does), else the Prometheus text format 0.0.4; gzip when ``Accept-Encoding`` allows it
  (Prometheus sends ``gzip``).

A server serves its ``routes``, read when it starts.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import typedefs, web
from prometheus_client import CollectorRegistry

from spreadwatch.metrics import chunks, content_type, freeze, gzipped, wants_gzip, wants_openmetrics

__all__ = ["Handler", "HttpServer", "MetricsServer", "Middleware", "ProbeServer"]

log = logging.getLogger("spreadwatch.health")

Handler = typedefs.Handler
Middleware = typedefs.Middleware


class HttpServer:
    """Routes on one ``host:port``, plain HTTP or HTTPS (``ssl_context``), behind optional middlewares."""

    def __init__(
        self,
        host: str,
        port: int,
        routes: Sequence[tuple[str, str, Handler]] = (),
        *,
        ssl_context: ssl.SSLContext | None = None,
        middlewares: Sequence[Middleware] = (),
        what: str = "server",
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.what = what
        #: (method, path, handler) of each path served, read when the server starts
        self.routes: list[tuple[str, str, Handler]] = list(routes)
        self._middlewares = list(middlewares)
        self._runner: web.AppRunner | None = None
        self.bound_port: int | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    async def start(self) -> None:
        app = web.Application(middlewares=self._middlewares)
        for method, path, handler in self.routes:
            app.router.add_route(method, path, handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context)
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            self._runner = None
            raise
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.bound_port = sockets[0].getsockname()[1] if sockets else self.port
        paths = ", ".join(path for _, path, _ in self.routes)
        log.info("%s on %s://%s:%s (%s)", self.what, self.scheme, self.host, self.bound_port, paths)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class ProbeServer(HttpServer):
    """``/healthz``, ``/readyz`` and ``/statusz`` over plain HTTP."""

    def __init__(
        self,
        host: str,
        port: int,
        alive: Callable[[], bool],
        ready: Callable[[], bool],
        state: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        self._alive = alive
        self._ready = ready
        self._state = state
        routes: list[tuple[str, str, Handler]] = [
            ("GET", "/healthz", self._healthz),
            ("GET", "/readyz", self._readyz),
            ("GET", "/statusz", self._statusz),
        ]
        super().__init__(host, port, routes, what="probes")

    async def _healthz(self, _request: web.Request) -> web.StreamResponse:
        ok = self._alive()
        return web.Response(text="ok\n" if ok else "stalled\n", status=200 if ok else 503)

    async def _readyz(self, _request: web.Request) -> web.StreamResponse:
        ok = self._ready()
        return web.Response(text="ok\n" if ok else "loading\n", status=200 if ok else 503)

    async def _statusz(self, _request: web.Request) -> web.StreamResponse:
        return web.json_response(self._state())


class MetricsServer(HttpServer):
    """``/metrics`` of ``registry``; HTTPS when ``ssl_context`` is given, guarded by ``middlewares``."""

    def __init__(
        self,
        host: str,
        port: int,
        registry: CollectorRegistry,
        *,
        ssl_context: ssl.SSLContext | None = None,
        middlewares: Sequence[Middleware] = (),
    ) -> None:
        self._registry = registry
        super().__init__(
            host,
            port,
            [("GET", "/metrics", self._serve_metrics)],
            ssl_context=ssl_context,
            middlewares=middlewares,
            what="metrics",
        )

    async def _serve_metrics(self, request: web.Request) -> web.StreamResponse:
        """The exposition streamed: each piece formatted in a worker thread, then written out before the next
        is made (the whole text of the envelope's 400,000 series is never held; the formatting thread waits
        while the loop writes, so the watches keep most of the interpreter during a scrape); gzip when the
        client accepts it, as Prometheus does. O(series) time, O(piece) memory."""
        openmetrics = wants_openmetrics(request.headers.get("Accept", ""))
        frozen = freeze(self._registry)  # in the loop: the index is only ever read here
        pieces = chunks(frozen, openmetrics=openmetrics)
        headers = {"Content-Type": content_type(openmetrics), "Vary": "Accept-Encoding"}
        if wants_gzip(request.headers.get("Accept-Encoding", "")):
            # ~18× smaller at the envelope: 4 pieces to hand over and write instead of ~56, and the
            # compression runs in the worker thread, outside the GIL
            pieces = gzipped(pieces)
            headers["Content-Encoding"] = "gzip"
        response = web.StreamResponse(headers=headers)
        piece: bytes | None = await asyncio.to_thread(next, pieces, None)  # a failure before any byte: a 500
        await response.prepare(request)
        while piece is not None:
            await response.write(piece)
            piece = await asyncio.to_thread(next, pieces, None)
        await response.write_eof()
        return response
