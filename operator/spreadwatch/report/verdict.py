"""The spread verdict a report carries (its ``health``), and the verdict's thresholds.

================  =======================================================================================
health            when
================  =======================================================================================
Error             the workload cannot be scored (e.g. its selector is invalid)
Skipped           the profile skips the workload's pods (topologySpreadConstraints); under ``v1.29`` only
                  when they have no DoNotSchedule constraint (the Filter still decides, so it is judged)
Unschedulable     no node passes the filters: the next replica would stay Pending
SinglePointOf-    at least ``min_replicas`` (default 2) matching pods, and all of them on one node, or all
Failure           in one zone while another zone has candidate nodes
ZoneOutageUnsafe  (otherwise) losing the worst zone would break the workload's PodDisruptionBudget (without
                  one: leave no Ready replica of a workload of at least ``min_replicas``), while another zone
                  has candidate nodes (``report/forecast.py``)
Imbalanced        node skew > ``max_node_skew`` (default 1) or zone skew > ``max_zone_skew`` (default 1), or
                  a finding (a DoNotSchedule constraint the pods already violate: ``ConstraintViolated``)
Balanced          otherwise
================  =======================================================================================

Skew is max − min matching pods over candidate nodes (over zones for zone skew). Reasons are CamelCase
codes followed by a human sentence, e.g. ``AllPodsOnOneNode: 3 pods on node-a``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

__all__ = ["NO_CANDIDATE_NODES", "Health", "HealthThresholds", "SpreadFacts", "judge"]


class Health(StrEnum):
    BALANCED = "Balanced"
    IMBALANCED = "Imbalanced"
    SINGLE_POINT_OF_FAILURE = "SinglePointOfFailure"
    UNSCHEDULABLE = "Unschedulable"
    ZONE_OUTAGE_UNSAFE = "ZoneOutageUnsafe"
    SKIPPED = "Skipped"
    ERROR = "Error"


#: the reason a report without any candidate node starts with (its sentence: the scheduler's message)
NO_CANDIDATE_NODES = "NextPodUnschedulable"


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """Configurable limits (CLI flags ``--max-node-skew``, ``--max-zone-skew``, ``--spof-min-pods``)."""

    max_node_skew: int = 1
    max_zone_skew: int = 1
    min_replicas: int = 2


class SpreadFacts(NamedTuple):
    """What the verdict looks at (a tuple: built once per report, 10,000 times in a cold start)."""

    pods: int
    candidate_nodes: int
    nodes_with_pods: int
    busiest_node: str
    zones_with_pods: int
    busiest_zone: str
    candidate_zones: int
    node_skew: int
    zone_skew: int


def judge(facts: SpreadFacts, thresholds: HealthThresholds, findings: Sequence[str] = ()) -> tuple[Health, list[str]]:
    """The health of a scored (not skipped, not failed) workload, with reasons; ``findings`` are reasons of
    their own that make it at least Imbalanced (violated constraints). O(findings)."""
    reasons: list[str] = []
    if facts.candidate_nodes == 0:
        return Health.UNSCHEDULABLE, [f"{NO_CANDIDATE_NODES}: no node passes the filters", *findings]
    if facts.pods >= thresholds.min_replicas:
        if facts.nodes_with_pods == 1:
            reasons.append(f"AllPodsOnOneNode: {facts.pods} pods on {facts.busiest_node}")
        if facts.zones_with_pods == 1 and facts.candidate_zones > 1:
            reasons.append(
                f"AllPodsInOneZone: {facts.pods} pods in zone {facts.busiest_zone or '<none>'} "
                f"while {facts.candidate_zones - 1} other zone(s) have candidate nodes"
            )
    if reasons:
        return Health.SINGLE_POINT_OF_FAILURE, [*reasons, *findings]
    reasons.extend(findings)
    if facts.node_skew > thresholds.max_node_skew:
        reasons.append(f"NodeSkew: {facts.node_skew} > {thresholds.max_node_skew}")
    if facts.zone_skew > thresholds.max_zone_skew:
        reasons.append(f"ZoneSkew: {facts.zone_skew} > {thresholds.max_zone_skew}")
    if reasons:
        return Health.IMBALANCED, reasons
    return Health.BALANCED, []
