"""Each family is defined once (``metrics.Family``): the fast text renderer and ``collect()`` (formatted by
prometheus_client) agree on every fixture, and a registry refuses a second collector of the same series."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from metrics_fixture import index, objects, with_placement
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text
from prometheus_client.registry import Collector

from spreadwatch.index import SpreadIndex
from spreadwatch.metrics import (
    BUILD_INFO,
    NODE_FAMILIES,
    OPERATOR_FAMILIES,
    WORKLOAD_FAMILIES,
    BuildInfoCollector,
    DurationHistogram,
    Family,
    MetricsOptions,
    OperatorCollector,
    OperatorState,
    SpreadwatchRegistry,
    StaticSource,
    WorkloadCollector,
    freeze,
    registry_for,
    render,
)
from spreadwatch.metrics.families import unique
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.snapshot import Snapshot

Sample = tuple[str, tuple[tuple[str, str], ...], float]


def _busy_state() -> OperatorState:
    compute, reconcile = DurationHistogram(), DurationHistogram((0.5, 1.0))
    for seconds in (0.00005, 0.003, 0.003, 7.5, 30.0):
        compute.observe(seconds)
    reconcile.observe(0.75)
    return OperatorState(
        events_by_kind={"Pod": 12, "Node": 3, "Namespace": 1},
        placements={"v1.28": {"best_node": 4, "other": 2}, "v1.29": {"best_zone": 1}},
        writes_by_result={"created": 3, "updated": 9, "failed": 1},
        api_errors_by_code={"409": 2, "0": 1},
        compute_durations=compute.snapshot(),
        reconcile_durations=reconcile.snapshot(),
        index_objects={"Pod": 12, "Node": 3},
        workloads=5,
        reports_pending=2,
        oldest_pending_seconds=0.25,
        last_resync_timestamp=1_700_000_123.5,
        leader=True,
        ready=True,
    )


def _capped() -> SpreadIndex:
    """Reports that omit busy nodes (``max_nodes=1``): node series beyond what the reports list."""
    idx = SpreadIndex(get_profile("v1.28"), ReportOptions(max_nodes=1))
    idx.load(Snapshot.from_objects(objects()))
    return idx


def _empty() -> SpreadIndex:
    return SpreadIndex(get_profile("v1.28"))


Fixture = Callable[[], list[Collector]]


def _workloads(make: Callable[[], SpreadIndex], mode: str) -> Fixture:
    return lambda: list(registry_for(make(), MetricsOptions(node_series=mode)).collectors())  # type: ignore[arg-type]


FIXTURES: dict[str, Fixture] = {
    **{
        f"{profile}-{mode}": _workloads(lambda p=profile: index(p), mode)  # type: ignore[misc]
        for profile in PROFILES
        for mode in ("default", "none", "all")
    },
    **{
        f"compare-{mode}": _workloads(lambda: index(compare="v1.29"), mode) for mode in ("default", "none", "all")
    },
    **{
        f"placement-{mode}": _workloads(lambda: with_placement(index()), mode)
        for mode in ("default", "none", "all")
    },
    **{f"omitted-nodes-{mode}": _workloads(_capped, mode) for mode in ("default", "all")},
    "prediction-default": _workloads(lambda: index("v1.29", prediction=True), "default"),
    "no-workloads": _workloads(_empty, "default"),
    "operator-busy": lambda: [OperatorCollector(StaticSource(_busy_state()))],
    "operator-new": lambda: [OperatorCollector(StaticSource(OperatorState()))],
}


def _registry(collectors: list[Collector]) -> SpreadwatchRegistry:
    registry = SpreadwatchRegistry()
    for collector in collectors:
        registry.register(collector)
    return registry


def _samples(text: str, openmetrics: bool) -> list[Sample]:
    parse = parse_openmetrics if openmetrics else parse_text
    return sorted((s.name, tuple(sorted(s.labels.items())), s.value) for f in parse(text) for s in f.samples)


def _headers(text: str) -> list[str]:
    return sorted(line for line in text.splitlines() if line.startswith("#"))


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("openmetrics", [False, True], ids=["text", "openmetrics"])
def test_the_fast_renderer_and_collect_agree(fixture: str, openmetrics: bool) -> None:
    """The same samples, HELP, TYPE (and UNIT) lines from the fast renderer (``render`` of the frozen
    registry) and from prometheus_client formatting the collectors' ``collect()``."""
    registry = _registry(FIXTURES[fixture]())
    fast = render(freeze(registry), openmetrics=openmetrics).decode()
    generate = generate_openmetrics if openmetrics else generate_latest
    slow = generate(registry).decode()
    assert _samples(fast, openmetrics) == _samples(slow, openmetrics)
    assert _headers(fast) == _headers(slow)
    assert fast.count("# EOF") == (1 if openmetrics else 0)


def test_every_fixture_has_samples_of_every_family_between_them() -> None:
    """The fixtures above exercise each family's sample function (the comparison is not vacuous)."""
    seen: set[str] = set()
    for make in FIXTURES.values():
        for family in _registry(make()).collect():
            if family.samples:
                seen.add(family.name)
    defined = {f.family for f in (*WORKLOAD_FAMILIES, *NODE_FAMILIES, BUILD_INFO, *OPERATOR_FAMILIES)}
    assert seen == defined


def test_a_registry_refuses_a_second_collector_of_the_same_series() -> None:
    """``describe()`` names every family a collector may expose (client_python's duplicate check)."""
    idx = index()
    registry = CollectorRegistry()
    registry.register(WorkloadCollector(idx, MetricsOptions()))
    with pytest.raises(ValueError, match="spreadwatch_workload_pods"):
        registry.register(WorkloadCollector(idx, MetricsOptions(node_series="none")))
    registry.register(OperatorCollector(StaticSource(OperatorState())))
    with pytest.raises(ValueError, match="spreadwatch_events_total"):
        registry.register(OperatorCollector(StaticSource(OperatorState())))
    with pytest.raises(ValueError, match="spreadwatch_build_info"):
        registry_for(idx, MetricsOptions()).register(BuildInfoCollector("v1.29"))


def test_a_family_gives_its_samples_one_way_and_its_name_once() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        Family("x", "gauge", "x", value=lambda s: 1, samples=lambda s: ())
    with pytest.raises(ValueError, match="exactly one of"):
        Family("x", "gauge", "x")
    with pytest.raises(ValueError, match="labels of its own"):
        Family("x", "gauge", "x", labels=("a",), value=lambda s: 1)
    one = Family("spreadwatch_x_total", "counter", "x", value=lambda s: 1)
    with pytest.raises(ValueError, match="defined twice: spreadwatch_x"):
        unique([one, Family("spreadwatch_x", "gauge", "x", value=lambda s: 1)])
