"""The runtime without kopf or an API: probes, route hooks, the writer loop, structured logs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from dataclasses import replace

import aiohttp
from aiohttp import web
from handler_fakes import NAMED_CONFIG, FakeReportApi, Feeder, web_cluster

from spreadwatch.runtime.logs import configure_logging
from spreadwatch.runtime.process import Runtime


def test_probes_statusz_route_hook_and_writer_loop() -> None:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False, debounce=0.05)
    api = FakeReportApi()
    rt = Runtime(cfg, report_api=api)

    async def extra(_request: web.Request) -> web.StreamResponse:
        return web.Response(text="extra 1\n")

    rt.server.routes.append(("GET", "/extra", extra))  # before the server starts

    async def main() -> dict[str, object]:
        await rt.start()
        base = f"http://127.0.0.1:{rt.server.bound_port}"
        Feeder(rt.router).feed(*web_cluster())
        async with aiohttp.ClientSession() as session:
            for _ in range(1200):  # up to 60 s: waits for the write, however busy the machine
                await asyncio.sleep(0.05)
                if api.objects.get(("shop", "deployment-web"), {}).get("status"):
                    break
            got = {}
            for path in ("/healthz", "/readyz", "/extra", "/metrics"):
                async with session.get(base + path) as resp:
                    got[path] = (resp.status, await resp.text())
            async with session.get(base + "/statusz") as resp:
                got["/statusz"] = await resp.json()
        await rt.stop()
        return got

    got = asyncio.run(main())
    assert got["/healthz"] == (200, "ok\n")
    assert got["/readyz"] == (200, "ok\n")
    assert got["/extra"] == (200, "extra 1\n")
    assert got["/metrics"][0] == 404  # /metrics has its own port (--metrics-port)
    state = got["/statusz"]
    assert isinstance(state, dict)
    assert state["leader"] is True
    assert state["inFlight"] == 0  # the write is done
    assert state["index"]["pods"] == 3
    assert (state["writer"]["creates"], state["writer"]["statusWrites"]) == (1, 0)  # one apply: the report
    assert 2 <= state["inFlightLimit"] <= cfg.max_writes_in_flight  # from the answered apply's latency
    assert [w["workload"] for w in state["recentWrites"]] == ["shop/Deployment/web"]  # the writer's record
    assert [run["mode"] for run in state["resync"]["runs"]] == ["whole"]  # the first resync of the leadership
    assert state["watches"] == {}  # no WatchSource: no informers, ready at once
    assert api.status("shop", "deployment-web")["pods"] == 3


def test_not_alive_when_the_writer_loop_stalls() -> None:
    rt = Runtime(NAMED_CONFIG, report_api=FakeReportApi())
    assert rt.alive()
    rt.writer.stats.last_cycle = rt.started - 100
    assert not rt.alive()


def test_text_and_json_logs_carry_the_workload() -> None:
    names = ("", "kopf", "aiohttp.access", "kubernetes", "urllib3")
    saved_levels = {n: logging.getLogger(n).level for n in names}
    saved_handlers = list(logging.getLogger().handlers)
    for fmt in ("text", "json"):
        stream = io.StringIO()
        handler = configure_logging(fmt, "INFO", stream)
        try:
            logging.getLogger("spreadwatch.writer").info(
                "report %s", "x", extra={"workload": "shop/Deployment/web", "health": "Balanced"}
            )
            logging.getLogger("kopf.objects").info("kopf chatter is quiet")
        finally:
            logging.getLogger().removeHandler(handler)
            for h in saved_handlers:
                logging.getLogger().addHandler(h)
            for n, level in saved_levels.items():
                logging.getLogger(n).setLevel(level)
        lines = stream.getvalue().splitlines()
        assert len(lines) == 1
        if fmt == "json":
            data = json.loads(lines[0])
            assert data["message"] == "report x"
            assert data["workload"] == "shop/Deployment/web"
            assert data["level"] == "INFO"
        else:
            assert lines[0].endswith("report x workload=shop/Deployment/web health=Balanced")
