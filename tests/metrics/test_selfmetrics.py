"""Operator self-metrics: the runtime's plain counters, the histogram accumulator, the OperatorCollector."""

from __future__ import annotations

import math

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from runtime.handler_fakes import deployment, ev, pipeline, web_cluster
from spreadwatch.metrics import (
    DurationHistogram,
    OperatorCollector,
    OperatorState,
    SpreadwatchRegistry,
    StaticSource,
    render,
)
from spreadwatch.runtime.writing.apierrors import ApiErrors

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(state: OperatorState, openmetrics: bool = False) -> Samples:
    registry = SpreadwatchRegistry()
    registry.register(OperatorCollector(StaticSource(state)))
    text = render(registry, openmetrics=openmetrics).decode()
    parse = parse_openmetrics if openmetrics else parse_text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in parse(text) for s in f.samples}


def test_histogram_buckets_are_cumulative_and_bounds_inclusive() -> None:
    h = DurationHistogram((0.1, 1.0))
    for seconds in (0.05, 0.1, 0.5, 3.0):
        h.observe(seconds)
    snap = h.snapshot()
    # 0.05 and 0.1 fall in le=0.1 (a bound is inclusive), 0.5 in le=1, 3.0 only in +Inf
    assert snap.bounds == (0.1, 1.0, math.inf)
    assert snap.cumulative == (2, 3, 4)
    assert snap.count == h.count == 4
    assert snap.sum == pytest.approx(3.65)
    with pytest.raises(ValueError, match="ascending"):
        DurationHistogram((1.0, 0.5))


def test_api_errors_count_failed_requests_by_status() -> None:
    errors = ApiErrors()
    for outcome in ("ok", "503", "503", "404", "error", "ok"):
        errors.note("patch_status", outcome)
    assert errors.by_code() == {"503": 2, "404": 1, "0": 1}


def test_operator_collector_exposes_the_state() -> None:
    compute = DurationHistogram((0.001, 0.01))
    compute.observe(0.0005)
    compute.observe(0.02)
    state = OperatorState(
        events_by_kind={"Pod": 7, "Node": 2},
        placements={"v1.28": {"best_node": 5, "other": 1}, "v1.29": {"best_zone": 2}},
        writes_by_result={"created": 1, "updated": 3, "unchanged": 5},
        api_errors_by_code={"409": 2},
        compute_durations=compute.snapshot(),
        reconcile_durations=DurationHistogram((0.5,)).snapshot(),
        index_objects={"Pod": 10, "Node": 3},
        workloads=4,
        reports_pending=2,
        oldest_pending_seconds=1.5,
        last_resync_timestamp=1_700_000_000.0,
        leader=True,
        ready=False,
    )
    for openmetrics in (False, True):
        got = scrape(state, openmetrics)
        assert got[("spreadwatch_events_total", (("kind", "Pod"),))] == 7
        assert got[("spreadwatch_events_total", (("kind", "Node"),))] == 2
        # every write result is present, 0 until it happens
        assert {k[1][0][1]: v for k, v in got.items() if k[0] == "spreadwatch_report_writes_total"} == {
            "created": 1,
            "updated": 3,
            "unchanged": 5,
            "deleted": 0,
            "failed": 0,
        }
        assert got[("spreadwatch_api_errors_total", (("code", "409"),))] == 2
        # every outcome of every profile is present, 0 until it happens
        placements = {
            (dict(k[1])["profile"], dict(k[1])["outcome"]): n
            for k, n in got.items()
            if k[0] == "spreadwatch_placements_total"
        }
        assert placements == {
            ("v1.28", "best_node"): 5,
            ("v1.28", "best_zone"): 0,
            ("v1.28", "other"): 1,
            ("v1.29", "best_node"): 0,
            ("v1.29", "best_zone"): 2,
            ("v1.29", "other"): 0,
        }
        buckets = {k[1][0][1]: v for k, v in got.items() if k[0] == "spreadwatch_compute_duration_seconds_bucket"}
        assert buckets == {"0.001": 1, "0.01": 1, "+Inf": 2}
        assert got[("spreadwatch_compute_duration_seconds_count", ())] == 2
        assert got[("spreadwatch_compute_duration_seconds_sum", ())] == pytest.approx(0.0205)
        assert got[("spreadwatch_reconcile_duration_seconds_count", ())] == 0
        assert got[("spreadwatch_index_objects", (("kind", "Pod"),))] == 10
        assert got[("spreadwatch_workloads", ())] == 4
        assert got[("spreadwatch_reports_pending", ())] == 2
        assert got[("spreadwatch_oldest_pending_seconds", ())] == 1.5
        assert got[("spreadwatch_last_resync_timestamp_seconds", ())] == 1_700_000_000.0
        assert got[("spreadwatch_leader", ())] == 1
        assert got[("spreadwatch_ready", ())] == 0


def test_the_writer_and_router_keep_the_counters() -> None:
    p = pipeline()
    assert p.writer.oldest_pending_age == 0.0
    p.feed(*web_cluster())
    p.clock.advance(0.4)
    assert p.writer.oldest_pending_age == pytest.approx(0.4)  # stamped when the events arrived
    p.settle()
    stats = p.writer.stats
    assert stats.writes_by_result["created"] == 1  # one server-side apply per new report
    assert stats.writes_by_result["updated"] == 0
    assert stats.compute.count == 1  # one rebuilt report
    assert stats.reconcile.count >= 1
    pods = sum(1 for e in web_cluster() if e["object"]["kind"] == "Pod")
    assert p.router.stats.by_kind["Pod"] == pods
    # a status that did not change: no write, counted as unchanged, no new computation
    p.feed(ev("MODIFIED", deployment("web")))
    p.settle()
    assert stats.writes_by_result["updated"] == 0
    assert stats.writes_by_result["unchanged"] >= 1
    assert stats.last_resync > 0  # the first step resynced (unix time)
    p.api.fail_next["apply"] = [500]
    p.feed(ev("MODIFIED", deployment("web", replicas=5)))
    p.clock.advance(2)
    p.step()
    assert stats.writes_by_result["failed"] == 1
    p.settle()  # the retry updates the known report
    assert (stats.writes_by_result["created"], stats.writes_by_result["updated"]) == (1, 1)
