"""The operator's /metrics route: a Runtime with a fake SpreadReport API, scraped over HTTP."""

from __future__ import annotations

import asyncio
import gzip
from dataclasses import replace

import aiohttp
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from runtime.handler_fakes import NAMED_CONFIG, FakeReportApi, Feeder, web_cluster
from spreadwatch.config import MetricsOptions
from spreadwatch.metrics import CONTENT_TYPE_OPENMETRICS, CONTENT_TYPE_TEXT, OperatorSource
from spreadwatch.runtime.process import Runtime

Scrape = tuple[int, str, str]
OPENMETRICS_ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


def scrape_runtime(options: MetricsOptions) -> tuple[Runtime, dict[str, Scrape]]:
    cfg = replace(
        NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False, debounce=0.05, metrics=options
    )
    api = FakeReportApi()
    rt = Runtime(cfg, report_api=api)

    async def main() -> dict[str, Scrape]:
        await rt.start()
        assert rt.metrics_server is not None
        assert rt.metrics_server.scheme == "http"
        base = f"http://127.0.0.1:{rt.metrics_server.bound_port}/metrics"
        Feeder(rt.router).feed(*web_cluster())
        got: dict[str, Scrape] = {}
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(1200):  # up to 60 s: waits for the write, however busy the machine
                    await asyncio.sleep(0.05)
                    if api.objects.get(("shop", "deployment-web"), {}).get("status"):
                        break
                for accept in ("", OPENMETRICS_ACCEPT):
                    headers = {"Accept-Encoding": "identity", **({"Accept": accept} if accept else {})}
                    async with session.get(base, headers=headers) as resp:
                        got[accept or "text"] = (resp.status, resp.headers["Content-Type"], await resp.text())
                        # streamed: no Content-Length, the pieces written as they are made
                        assert resp.headers.get("Transfer-Encoding") == "chunked"
                        assert "Content-Encoding" not in resp.headers
                # as Prometheus asks: one gzip stream of the same text
                async with session.get(base, headers={"Accept-Encoding": "gzip"}, auto_decompress=False) as resp:
                    assert resp.headers.get("Content-Encoding") == "gzip"
                    assert resp.headers.get("Transfer-Encoding") == "chunked"
                    got["gzip"] = (
                        resp.status,
                        resp.headers["Content-Type"],
                        gzip.decompress(await resp.read()).decode(),
                    )
        finally:
            await rt.stop()
        return got

    return rt, asyncio.run(main())


def test_metrics_route_serves_workload_and_operator_families() -> None:
    _, got = scrape_runtime(MetricsOptions())
    status, ctype, text = got["text"]
    assert status == 200
    assert ctype == CONTENT_TYPE_TEXT
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in parse_text(text) for s in f.samples}
    web = (("kind", "Deployment"), ("namespace", "shop"), ("workload", "web"))
    assert values[("spreadwatch_workload_pods", web)] == 3
    assert values[("spreadwatch_workload_health", (*web[:2], ("state", "Balanced"), web[2]))] == 1
    pods = sum(1 for e in web_cluster() if e["object"]["kind"] == "Pod")
    assert values[("spreadwatch_events_total", (("kind", "Pod"),))] == pods
    assert values[("spreadwatch_report_writes_total", (("result", "created"),))] == 1
    assert values[("spreadwatch_workloads", ())] == 1
    assert values[("spreadwatch_index_objects", (("kind", "Node"),))] == 6
    assert values[("spreadwatch_leader", ())] == 1
    assert values[("spreadwatch_ready", ())] == 1
    assert values[("spreadwatch_compute_duration_seconds_count", ())] >= 1
    assert any(name == "process_resident_memory_bytes" for name, _ in values)
    assert {s[0] for s in values if s[0].startswith("spreadwatch_build_info")} == {"spreadwatch_build_info"}

    status, ctype, om = got[OPENMETRICS_ACCEPT]
    assert status == 200
    assert ctype == CONTENT_TYPE_OPENMETRICS
    assert om.endswith("# EOF\n")
    om_values = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in parse_openmetrics(om) for s in f.samples}
    assert om_values[("spreadwatch_workload_pods", web)] == 3
    assert om_values[("spreadwatch_events_total", (("kind", "Pod"),))] == pods

    status, ctype, unzipped = got["gzip"]
    assert (status, ctype) == (200, CONTENT_TYPE_TEXT)
    spread = [line for line in text.splitlines() if line.startswith("spreadwatch_workload_")]
    assert spread  # the workload families, identical in both encodings (the self-metrics move between scrapes)
    assert [line for line in unzipped.splitlines() if line.startswith("spreadwatch_workload_")] == spread


def test_runtime_is_an_operator_source() -> None:
    rt = Runtime(NAMED_CONFIG, report_api=FakeReportApi())
    source: OperatorSource = rt  # the Protocol the metrics layer reads (mypy checks the assignment)
    state = source.metrics_state()
    assert (state.workloads, state.reports_pending, state.ready, state.leader) == (0, 0, False, True)
    assert state.writes_by_result == {"created": 0, "updated": 0, "unchanged": 0, "deleted": 0, "failed": 0}


def test_node_metrics_none_reaches_the_route() -> None:
    _, got = scrape_runtime(MetricsOptions(node_series="none"))
    text = got["text"][2]
    assert "spreadwatch_workload_zone_pods{" in text
    assert "spreadwatch_workload_node_score" not in text
    assert "spreadwatch_workload_node_pods" not in text
