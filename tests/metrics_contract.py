"""The metric families the dashboard, the alert rules and the chart rely on (docs/metrics.md), written out
independently of the implementation so tests catch a renamed or dropped family."""

from __future__ import annotations

#: Per workload and per workload × zone (what `spreadwatch analyze -o openmetrics` prints, with build_info).
WORKLOAD_FAMILIES = frozenset(
    {
        "spreadwatch_workload_pods",
        "spreadwatch_workload_replicas",
        "spreadwatch_workload_candidate_nodes",
        "spreadwatch_workload_best_node_score",
        "spreadwatch_workload_worst_node_score",
        "spreadwatch_workload_node_skew",
        "spreadwatch_workload_zone_skew",
        "spreadwatch_workload_health",
        "spreadwatch_workload_next_pod_schedulable",
        "spreadwatch_workload_skipped",
        "spreadwatch_workload_zone_pods",
        "spreadwatch_workload_zone_candidate_nodes",
        "spreadwatch_workload_zone_score",
        "spreadwatch_workload_zone_empty_node_score",
        "spreadwatch_workload_nodes_scored",
    }
)
#: Per workload, only for reports that carry the scheduler window's probabilities.
WINDOW_FAMILIES = frozenset(
    {"spreadwatch_workload_best_node_probability", "spreadwatch_workload_best_zone_probability"}
)
#: Per workload, where the report's safety forecasts carry the value (``pdb_*``: with a PodDisruptionBudget).
SAFETY_FAMILIES = frozenset(
    {
        "spreadwatch_workload_zone_loss_ready_replicas",
        "spreadwatch_workload_node_loss_ready_replicas",
        "spreadwatch_workload_zone_losses_tolerated",
        "spreadwatch_workload_node_losses_tolerated",
        "spreadwatch_workload_pdb_expected_pods",
        "spreadwatch_workload_pdb_current_healthy",
        "spreadwatch_workload_pdb_desired_healthy",
        "spreadwatch_workload_pdb_disruptions_allowed",
        "spreadwatch_workload_scale_down_zone_skew",
    }
)
#: Per workload, operator only, once a new binding of one of its pods was checked against its report.
PLACEMENT_FAMILIES = frozenset({"spreadwatch_workload_placement_misses"})
#: Per workload, only for reports that carry the whole scheduler profile's prediction (on by default).
PREDICTION_FAMILIES = frozenset(
    {
        "spreadwatch_workload_predicted_best_score",
        "spreadwatch_workload_predicted_feasible_nodes",
        "spreadwatch_workload_predicted_best_node_probability",
        "spreadwatch_workload_prediction_spreading_agrees",
        "spreadwatch_workload_prediction_partial",
    }
)
#: Per workload, only with ``--compare-profile`` (a ``profile`` label).
COMPARISON_FAMILIES = frozenset(
    {"spreadwatch_workload_comparison_best_node_score", "spreadwatch_workload_comparison_best_nodes_overlap"}
)
#: Per workload × node (``--node-metrics``).
NODE_FAMILIES = frozenset({"spreadwatch_workload_node_score", "spreadwatch_workload_node_pods"})
#: Operator gauges (``spreadwatch run`` only, except build_info).
OPERATOR_GAUGES = frozenset(
    {
        "spreadwatch_build_info",
        "spreadwatch_index_objects",
        "spreadwatch_workloads",
        "spreadwatch_reports_pending",
        "spreadwatch_oldest_pending_seconds",
        "spreadwatch_last_resync_timestamp_seconds",
        "spreadwatch_leader",
        "spreadwatch_ready",
        "spreadwatch_api_writes_per_second",
        "spreadwatch_writes_in_flight_limit",
    }
)
COUNTERS = frozenset(
    {
        "spreadwatch_events_total",
        "spreadwatch_placements_total",
        "spreadwatch_report_writes_total",
        "spreadwatch_api_errors_total",
        "spreadwatch_resync_pages_total",
        "spreadwatch_resync_bytes_total",
    }
)
HISTOGRAMS = frozenset(
    {
        "spreadwatch_compute_duration_seconds",
        "spreadwatch_reconcile_duration_seconds",
        "spreadwatch_report_write_duration_seconds",
        "spreadwatch_report_lag_seconds",
        "spreadwatch_resync_duration_seconds",
    }
)
