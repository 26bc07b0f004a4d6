"""Operator self-metrics (``spreadwatch run`` only): counters, durations, queue and leadership state.

The operator runtime keeps plain counters (``RouterStats``, ``WriterStats``, ``ApiErrors``) and
:class:`~spreadwatch.metrics.histogram.DurationHistogram` s; nothing sets a gauge. At scrape time the
:class:`OperatorCollector` asks its source — anything with a ``metrics_state()`` method, in the operator
``spreadwatch.runtime.process.Runtime`` — for an :class:`OperatorState`: an immutable copy taken in the
thread that owns the counters (the event loop), which may then be rendered in another thread. The metrics
layer sits below the runtime and never imports it; the :class:`OperatorSource` protocol is the contract.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from spreadwatch.metrics.families import spec
from spreadwatch.metrics.histogram import HistogramSnapshot
from spreadwatch.report import PLACEMENT_OUTCOMES

__all__ = ["WRITE_RESULTS", "OperatorCollector", "OperatorSource", "OperatorState", "StaticSource"]

#: Every ``result`` of spreadwatch_report_writes_total, always exposed (0 until it happens).
WRITE_RESULTS: Final = ("created", "updated", "unchanged", "deleted", "failed")

_EMPTY_HISTOGRAM: Final = HistogramSnapshot((float("inf"),), (0,), 0.0, 0)


@dataclass(frozen=True, slots=True)
class OperatorState:
    """Everything the self-metrics show, copied at one instant (counts since the process started)."""

    events_by_kind: Mapping[str, int] = field(default_factory=dict)
    #: profile -> outcome -> checked placements (the operator's profile, and --compare-profile's)
    placements: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    writes_by_result: Mapping[str, int] = field(default_factory=dict)
    api_errors_by_code: Mapping[str, int] = field(default_factory=dict)
    compute_durations: HistogramSnapshot = _EMPTY_HISTOGRAM
    reconcile_durations: HistogramSnapshot = _EMPTY_HISTOGRAM
    write_durations: HistogramSnapshot = _EMPTY_HISTOGRAM  # one report apply, request to answer
    report_lags: HistogramSnapshot = _EMPTY_HISTOGRAM  # first unwritten change to the report's write
    writes_per_second: float = 0.0  # achieved, about the last 10 s
    writes_in_flight_limit: int = 0
    resync_durations: HistogramSnapshot = _EMPTY_HISTOGRAM
    resync_pages: int = 0
    resync_bytes: int = 0
    index_objects: Mapping[str, int] = field(default_factory=dict)
    workloads: int = 0
    reports_pending: int = 0
    oldest_pending_seconds: float = 0.0
    last_resync_timestamp: float = 0.0  # unix seconds; 0: never
    leader: bool = False
    ready: bool = False


class OperatorSource(Protocol):
    """What :class:`OperatorCollector` reads; ``runtime.process.Runtime`` implements it."""

    def metrics_state(self) -> OperatorState: ...


@dataclass(frozen=True, slots=True)
class StaticSource:
    """A source that always returns the same state (a frozen scrape; tests)."""

    state: OperatorState

    def metrics_state(self) -> OperatorState:
        return self.state


def _histogram(name: str, snap: HistogramSnapshot) -> HistogramMetricFamily:
    s = spec(name)
    buckets = [(_le(b), c) for b, c in zip(snap.bounds, snap.cumulative, strict=True)]
    return HistogramMetricFamily(s.family, s.help, buckets=buckets, sum_value=snap.sum, unit=s.unit)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


def _counter(name: str, label: str, values: Mapping[str, int], always: tuple[str, ...] = ()) -> CounterMetricFamily:
    s = spec(name)
    family = CounterMetricFamily(s.family, s.help, labels=[label])
    for key in sorted(set(values) | set(always)):
        family.add_metric([key], values.get(key, 0))
    return family


def _placements(placements: Mapping[str, Mapping[str, int]]) -> CounterMetricFamily:
    """spreadwatch_placements_total: every outcome of every profile (0 until it happens). O(profiles)."""
    s = spec("spreadwatch_placements_total")
    family = CounterMetricFamily(s.family, s.help, labels=s.labels)
    for profile in sorted(placements):
        counts = placements[profile]
        for outcome in PLACEMENT_OUTCOMES:
            family.add_metric([profile, outcome], counts.get(outcome, 0))
    return family


def _gauge(name: str, value: float) -> GaugeMetricFamily:
    s = spec(name)
    return GaugeMetricFamily(s.name, s.help, value=value, unit=s.unit)


def _total(name: str, value: int) -> CounterMetricFamily:
    s = spec(name)
    return CounterMetricFamily(s.family, s.help, value=value, unit=s.unit)


class OperatorCollector(Collector):
    """The operator's self-metrics, from ``source.metrics_state()`` at scrape time. O(kinds + codes)."""

    def __init__(self, source: OperatorSource) -> None:
        self.source = source

    def view(self) -> OperatorCollector:
        """A frozen copy (the state taken now, in the caller's thread) that renders in any thread."""
        return OperatorCollector(StaticSource(self.source.metrics_state()))

    def collect(self) -> Iterator[Metric]:
        state = self.source.metrics_state()
        yield _counter("spreadwatch_events_total", "kind", state.events_by_kind)
        yield _placements(state.placements)
        yield _counter("spreadwatch_report_writes_total", "result", state.writes_by_result, WRITE_RESULTS)
        yield _counter("spreadwatch_api_errors_total", "code", state.api_errors_by_code)
        yield _histogram("spreadwatch_compute_duration_seconds", state.compute_durations)
        yield _histogram("spreadwatch_reconcile_duration_seconds", state.reconcile_durations)
        objects = spec("spreadwatch_index_objects")
        family = GaugeMetricFamily(objects.name, objects.help, labels=objects.labels)
        for kind in sorted(state.index_objects):
            family.add_metric([kind], state.index_objects[kind])
        yield family
        yield _gauge("spreadwatch_workloads", state.workloads)
        yield _gauge("spreadwatch_reports_pending", state.reports_pending)
        yield _gauge("spreadwatch_oldest_pending_seconds", state.oldest_pending_seconds)
        yield _gauge("spreadwatch_last_resync_timestamp_seconds", state.last_resync_timestamp)
        yield _histogram("spreadwatch_report_write_duration_seconds", state.write_durations)
        yield _histogram("spreadwatch_report_lag_seconds", state.report_lags)
        yield _gauge("spreadwatch_api_writes_per_second", state.writes_per_second)
        yield _gauge("spreadwatch_writes_in_flight_limit", state.writes_in_flight_limit)
        yield _histogram("spreadwatch_resync_duration_seconds", state.resync_durations)
        yield _total("spreadwatch_resync_pages_total", state.resync_pages)
        yield _total("spreadwatch_resync_bytes_total", state.resync_bytes)
        yield _gauge("spreadwatch_leader", 1 if state.leader else 0)
        yield _gauge("spreadwatch_ready", 1 if state.ready else 0)
