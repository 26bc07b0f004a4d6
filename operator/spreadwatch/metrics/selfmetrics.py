"""Operator self-metrics (``spreadwatch run`` only): counters, durations, queue and leadership state.

The operator runtime keeps plain counters (``RouterStats``, ``WriterStats``, ``ApiErrors``) and
:class:`~spreadwatch.metrics.histogram.DurationHistogram` s; nothing sets a gauge. At scrape time the
:class:`OperatorCollector` asks its source — anything with a ``metrics_state()`` method, in the operator
``spreadwatch.runtime.process.Runtime`` — for an :class:`OperatorState`: an immutable copy taken in the
thread that owns the counters (the event loop), which may then be rendered in another thread. The metrics
layer sits below the runtime and never imports it; the :class:`OperatorSource` protocol is the contract.

Each family is defined once in :data:`OPERATOR_FAMILIES` (a :class:`~spreadwatch.metrics.families.Family`
whose samples come from an :class:`OperatorState`): ``collect()`` and ``describe()`` come from that
definition, and prometheus_client formats the few dozen lines (``2.0``, labels sorted: the text they always
had).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from spreadwatch.metrics.families import Family, Sample, unique
from spreadwatch.metrics.histogram import HistogramSnapshot
from spreadwatch.report import PLACEMENT_OUTCOMES

__all__ = ["OPERATOR_FAMILIES", "WRITE_RESULTS", "OperatorCollector", "OperatorSource", "OperatorState", "StaticSource"]

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


def _by_label(values: Mapping[str, int], always: tuple[str, ...] = ()) -> Sequence[Sample]:
    """One sample per key, sorted, plus a 0 for each of ``always`` not yet seen. O(keys)."""
    return [(key, values.get(key, 0)) for key in sorted(set(values) | set(always))]


def _placements(placements: Mapping[str, Mapping[str, int]]) -> Sequence[Sample]:
    """Every outcome of every profile (0 until it happens). O(profiles)."""
    return [
        (profile, outcome, placements[profile].get(outcome, 0))
        for profile in sorted(placements)
        for outcome in PLACEMENT_OUTCOMES
    ]


#: The self-metrics, in the order they are written.
OPERATOR_FAMILIES: Final[tuple[Family[OperatorState], ...]] = unique(
    [
        Family(
            "spreadwatch_events_total",
            "counter",
            "Watch events processed, by object kind.",
            labels=("kind",),
            samples=lambda s: _by_label(s.events_by_kind),
        ),
        Family(
            "spreadwatch_placements_total",
            "counter",
            "New pod bindings checked against the report held just before, by scoring profile and outcome: "
            "best_node, best_zone (a best node's zone) or other; profile prediction: against the prediction.",
            labels=("profile", "outcome"),
            samples=lambda s: _placements(s.placements),
        ),
        Family(
            "spreadwatch_report_writes_total",
            "counter",
            "SpreadReport write outcomes: created, updated (status written), unchanged (skipped), deleted, failed.",
            labels=("result",),
            samples=lambda s: _by_label(s.writes_by_result, WRITE_RESULTS),
        ),
        Family(
            "spreadwatch_api_errors_total",
            "counter",
            "Failed SpreadReport and Event API requests, by HTTP status (0: no HTTP answer).",
            labels=("code",),
            samples=lambda s: _by_label(s.api_errors_by_code),
        ),
        Family(
            "spreadwatch_compute_duration_seconds",
            "histogram",
            "Duration of one report computation by the report writer.",
            value=lambda s: s.compute_durations,
            unit="seconds",
        ),
        Family(
            "spreadwatch_reconcile_duration_seconds",
            "histogram",
            "Duration of one workload's write cycle: compute, compare, API calls and rate-limit waits.",
            value=lambda s: s.reconcile_durations,
            unit="seconds",
        ),
        Family(
            "spreadwatch_index_objects",
            "gauge",
            "Records held by the index, by kind.",
            labels=("kind",),
            samples=lambda s: _by_label(s.index_objects),
        ),
        Family("spreadwatch_workloads", "gauge", "Workloads the index reports on.", value=lambda s: s.workloads),
        Family(
            "spreadwatch_reports_pending",
            "gauge",
            "Workloads with changes not yet written, plus pending deletions.",
            value=lambda s: s.reports_pending,
        ),
        Family(
            "spreadwatch_oldest_pending_seconds",
            "gauge",
            "Age of the oldest unwritten change (0 when none).",
            value=lambda s: s.oldest_pending_seconds,
            unit="seconds",
        ),
        Family(
            "spreadwatch_last_resync_timestamp_seconds",
            "gauge",
            "Unix time of the last full resync (0 before the first).",
            value=lambda s: s.last_resync_timestamp,
            unit="seconds",
        ),
        Family(
            "spreadwatch_report_write_duration_seconds",
            "histogram",
            "Duration of one SpreadReport apply, request to answer (retries included).",
            value=lambda s: s.write_durations,
            unit="seconds",
        ),
        Family(
            "spreadwatch_report_lag_seconds",
            "histogram",
            "Time from a workload's first unwritten change to the write of its report.",
            value=lambda s: s.report_lags,
            unit="seconds",
        ),
        Family(
            "spreadwatch_api_writes_per_second",
            "gauge",
            "SpreadReport and Event API writes per second achieved over about the last 10 s.",
            value=lambda s: s.writes_per_second,
        ),
        Family(
            "spreadwatch_writes_in_flight_limit",
            "gauge",
            "Bound on report writes waiting on the API server at once: write rate x mean write latency x 1.5, "
            "between 2 and --max-writes-in-flight (halved when the server throttles).",
            value=lambda s: s.writes_in_flight_limit,
        ),
        Family(
            "spreadwatch_resync_duration_seconds",
            "histogram",
            "Duration of one resync: list the SpreadReports, compare them, delete orphans.",
            value=lambda s: s.resync_durations,
            unit="seconds",
        ),
        Family(
            "spreadwatch_resync_pages_total",
            "counter",
            "List pages the resyncs read.",
            value=lambda s: s.resync_pages,
        ),
        Family(
            "spreadwatch_resync_bytes_total",
            "counter",
            "Bytes of the list pages the resyncs read.",
            value=lambda s: s.resync_bytes,
        ),
        Family(
            "spreadwatch_leader",
            "gauge",
            "1 when this replica holds the leader Lease (it writes reports).",
            value=lambda s: 1 if s.leader else 0,
        ),
        Family(
            "spreadwatch_ready",
            "gauge",
            "1 once the index holds the initial cluster state.",
            value=lambda s: 1 if s.ready else 0,
        ),
    ]
)


class OperatorCollector(Collector):
    """The operator's self-metrics, from ``source.metrics_state()`` at scrape time. O(kinds + codes)."""

    def __init__(self, source: OperatorSource) -> None:
        self.source = source

    def view(self) -> OperatorCollector:
        """A frozen copy (the state taken now, in the caller's thread) that renders in any thread."""
        return OperatorCollector(StaticSource(self.source.metrics_state()))

    def collect(self) -> Iterator[Metric]:
        state = [self.source.metrics_state()]
        for family in OPERATOR_FAMILIES:
            metric = family.metric([()], state)
            if metric is not None:
                yield metric

    def describe(self) -> Iterator[Metric]:
        return (family.describe() for family in OPERATOR_FAMILIES)
