"""The metric families spreadwatch exposes (names, types, labels, help) and the text-format primitives.

One table, :data:`FAMILIES`, is the single source of every name, type, unit, label list and help text; the
collectors read their specs from it and ``docs/metrics.md`` documents it (a test compares the two). The
names are a contract: the Grafana dashboard, the alerts and the Helm chart rely on them.

The helpers format the Prometheus text format 0.0.4 and OpenMetrics 1.0 by hand, for the fast renderer
(:mod:`spreadwatch.metrics.workloads`): escaping and value formatting are O(length of the string).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from spreadwatch.report import Health

__all__ = [
    "FAMILIES",
    "HEALTH_STATES",
    "NODE_LABELS",
    "WORKLOAD_LABELS",
    "ZONE_LABELS",
    "FamilySpec",
    "escape_label_value",
    "spec",
]

FamilyType = Literal["gauge", "counter", "histogram"]

WORKLOAD_LABELS: Final = ("namespace", "kind", "workload")
ZONE_LABELS: Final = (*WORKLOAD_LABELS, "zone", "region")
NODE_LABELS: Final = (*WORKLOAD_LABELS, "node", "zone", "region")
#: spreadwatch_workload_health carries one series per state (value 1 for the current one), in the order of
#: the :class:`~spreadwatch.report.Health` enum.
HEALTH_STATES: Final = tuple(h.value for h in Health)


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One metric family. ``name`` is what a sample is called (counters end in ``_total``)."""

    name: str
    type: FamilyType
    help: str
    labels: tuple[str, ...] = ()
    unit: str = ""

    @property
    def family(self) -> str:
        """The family name (OpenMetrics ``# TYPE`` line, prometheus_client): a counter without ``_total``."""
        return self.name.removesuffix("_total") if self.type == "counter" else self.name

    def header(self, openmetrics: bool) -> str:
        """``# HELP``/``# TYPE`` (and ``# UNIT`` in OpenMetrics) lines. O(1)."""
        name = self.family if openmetrics else self.name
        text = f"# HELP {name} {self.help}\n# TYPE {name} {self.type}\n"
        if openmetrics and self.unit:
            text += f"# UNIT {name} {self.unit}\n"
        return text


_W, _Z, _N = WORKLOAD_LABELS, ZONE_LABELS, NODE_LABELS

FAMILIES: Final = (
    # per workload
    FamilySpec("spreadwatch_workload_pods", "gauge", "Matching pods of the workload on its candidate nodes.", _W),
    FamilySpec("spreadwatch_workload_replicas", "gauge", "Desired replicas of the workload.", _W),
    FamilySpec(
        "spreadwatch_workload_candidate_nodes",
        "gauge",
        "Nodes that pass the workload's taint, unschedulable and affinity filters.",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_best_node_score",
        "gauge",
        "SelectorSpread score of the best candidate node for the next replica (0-100; 0-10 for v1.12/v1.16).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_nodes_scored",
        "gauge",
        "Nodes kube-scheduler scores for the next replica (numFeasibleNodesToFind; at most the candidate nodes).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_best_node_probability",
        "gauge",
        "Probability (0-1) that the next replica lands on one of the best nodes, the scheduler's window start "
        "uniformly random (--window-samples; no sample without it when the window is partial).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_best_zone_probability",
        "gauge",
        "Probability (0-1) that the next replica lands in a best node's zone (as best_node_probability).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_worst_node_score",
        "gauge",
        "SelectorSpread score of the worst candidate node for the next replica (0-100; 0-10 for v1.12/v1.16).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_node_skew", "gauge", "Max minus min matching pods over the candidate nodes.", _W
    ),
    FamilySpec(
        "spreadwatch_workload_zone_skew", "gauge", "Max minus min matching pods over the candidate zones.", _W
    ),
    FamilySpec(
        "spreadwatch_workload_health",
        "gauge",
        "Spread health: 1 for the current state, 0 for the others.",
        (*_W, "state"),
    ),
    FamilySpec(
        "spreadwatch_workload_next_pod_schedulable",
        "gauge",
        "1 when some node passes the filters for the workload's next replica, 0 when it would stay Pending "
        "(health Unschedulable: e.g. DoNotSchedule topology spread constraints); no sample for Error.",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_skipped",
        "gauge",
        "1 when the profile skips the workload (topologySpreadConstraints), else 0.",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_comparison_best_node_score",
        "gauge",
        "Best candidate node score under the --compare-profile profile (no samples without one).",
        (*_W, "profile"),
    ),
    FamilySpec(
        "spreadwatch_workload_comparison_best_nodes_overlap",
        "gauge",
        "1 when the best nodes under the profile and under --compare-profile overlap, else 0.",
        (*_W, "profile"),
    ),
    FamilySpec(
        "spreadwatch_workload_placement_misses",
        "gauge",
        "New placements of the workload's pods in a row, checked by the operator, that did not land on a best "
        "node of the report held just before (0 after a hit; no sample before the first checked placement).",
        _W,
    ),
    # per workload: failure tolerance and the next scale-down (status.resilience, status.scaleDown)
    FamilySpec(
        "spreadwatch_workload_zone_loss_ready_replicas",
        "gauge",
        "Ready replicas of the workload left after losing its worst zone (no sample without zones).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_node_loss_ready_replicas",
        "gauge",
        "Ready replicas of the workload left after losing its worst node.",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_zone_losses_tolerated",
        "gauge",
        "Zones that can be lost at once within the workload's budget (its PodDisruptionBudget, else one Ready "
        "replica); 0 when the worst one breaks it (no sample without zones).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_node_losses_tolerated",
        "gauge",
        "Nodes that can be lost at once within the workload's budget (its PodDisruptionBudget, else one Ready "
        "replica); 0 when the worst one breaks it.",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_pdb_expected_pods",
        "gauge",
        "expectedPods of the workload's PodDisruptionBudget as the disruption controller computes it (no sample "
        "without one).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_pdb_current_healthy",
        "gauge",
        "currentHealthy of the workload's PodDisruptionBudget (no sample without one).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_pdb_desired_healthy",
        "gauge",
        "desiredHealthy of the workload's PodDisruptionBudget (no sample without one).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_pdb_disruptions_allowed",
        "gauge",
        "disruptionsAllowed of the workload's PodDisruptionBudget (no sample without one).",
        _W,
    ),
    FamilySpec(
        "spreadwatch_workload_scale_down_zone_skew",
        "gauge",
        "Zone skew after the next scale-down by one replica, the worst over the pods it may delete (no sample "
        "when it would delete none).",
        _W,
    ),
    # per workload and zone
    FamilySpec("spreadwatch_workload_zone_pods", "gauge", "Matching pods of the workload in the zone.", _Z),
    FamilySpec(
        "spreadwatch_workload_zone_candidate_nodes", "gauge", "Candidate nodes of the workload in the zone.", _Z
    ),
    FamilySpec(
        "spreadwatch_workload_zone_score",
        "gauge",
        "The zone's input to the score: SelectorSpread profiles, the zone component before weighting, "
        "truncated (0-100); v1.29, the zone's matching-pod count (unbounded).",
        _Z,
    ),
    FamilySpec(
        "spreadwatch_workload_zone_empty_node_score",
        "gauge",
        "SelectorSpread score of a candidate node in the zone without matching pods.",
        _Z,
    ),
    # per workload and node
    FamilySpec(
        "spreadwatch_workload_node_score",
        "gauge",
        "SelectorSpread score of the candidate node for the next replica.",
        _N,
    ),
    FamilySpec("spreadwatch_workload_node_pods", "gauge", "Matching pods of the workload on the candidate node.", _N),
    # build
    FamilySpec(
        "spreadwatch_build_info",
        "gauge",
        "Always 1: the spreadwatch version, the Python version and the scoring profile.",
        ("version", "python_version", "profile"),
    ),
    # operator self-metrics
    FamilySpec("spreadwatch_events_total", "counter", "Watch events processed, by object kind.", ("kind",)),
    FamilySpec(
        "spreadwatch_placements_total",
        "counter",
        "New pod bindings checked against the report held just before, by scoring profile and outcome: "
        "best_node, best_zone (a best node's zone) or other.",
        ("profile", "outcome"),
    ),
    FamilySpec(
        "spreadwatch_report_writes_total",
        "counter",
        "SpreadReport write outcomes: created, updated (status written), unchanged (skipped), deleted, failed.",
        ("result",),
    ),
    FamilySpec(
        "spreadwatch_api_errors_total",
        "counter",
        "Failed SpreadReport and Event API requests, by HTTP status (0: no HTTP answer).",
        ("code",),
    ),
    FamilySpec(
        "spreadwatch_compute_duration_seconds",
        "histogram",
        "Duration of one report computation by the report writer.",
        unit="seconds",
    ),
    FamilySpec(
        "spreadwatch_reconcile_duration_seconds",
        "histogram",
        "Duration of one workload's write cycle: compute, compare, API calls and rate-limit waits.",
        unit="seconds",
    ),
    FamilySpec("spreadwatch_index_objects", "gauge", "Records held by the index, by kind.", ("kind",)),
    FamilySpec("spreadwatch_workloads", "gauge", "Workloads the index reports on."),
    FamilySpec(
        "spreadwatch_reports_pending", "gauge", "Workloads with changes not yet written, plus pending deletions."
    ),
    FamilySpec(
        "spreadwatch_oldest_pending_seconds",
        "gauge",
        "Age of the oldest unwritten change (0 when none).",
        unit="seconds",
    ),
    FamilySpec(
        "spreadwatch_last_resync_timestamp_seconds",
        "gauge",
        "Unix time of the last full resync (0 before the first).",
        unit="seconds",
    ),
    FamilySpec(
        "spreadwatch_report_write_duration_seconds",
        "histogram",
        "Duration of one SpreadReport apply, request to answer (retries included).",
        unit="seconds",
    ),
    FamilySpec(
        "spreadwatch_report_lag_seconds",
        "histogram",
        "Time from a workload's first unwritten change to the write of its report.",
        unit="seconds",
    ),
    FamilySpec(
        "spreadwatch_api_writes_per_second",
        "gauge",
        "SpreadReport and Event API writes per second achieved over about the last 10 s.",
    ),
    FamilySpec(
        "spreadwatch_writes_in_flight_limit",
        "gauge",
        "Bound on report writes waiting on the API server at once: write rate x mean write latency x 1.5, "
        "between 2 and --max-writes-in-flight (halved when the server throttles).",
    ),
    FamilySpec(
        "spreadwatch_resync_duration_seconds",
        "histogram",
        "Duration of one resync: list the SpreadReports, compare them, delete orphans.",
        unit="seconds",
    ),
    FamilySpec("spreadwatch_resync_pages_total", "counter", "List pages the resyncs read."),
    FamilySpec("spreadwatch_resync_bytes_total", "counter", "Bytes of the list pages the resyncs read."),
    FamilySpec("spreadwatch_leader", "gauge", "1 when this replica holds the leader Lease (it writes reports)."),
    FamilySpec("spreadwatch_ready", "gauge", "1 once the index holds the initial cluster state."),
)

_BY_NAME: Final = {f.name: f for f in FAMILIES}


def spec(name: str) -> FamilySpec:
    """The spec of a family by its sample name (KeyError for an unknown name). O(1)."""
    return _BY_NAME[name]


def escape_label_value(value: str) -> str:
    """Escape ``\\``, ``"`` and newlines for a label value (both formats). O(len)."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value
