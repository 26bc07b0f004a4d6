"""What PodTopologySpread's Filter changes in a report, and the replica that would stay Pending.

:func:`with_filter` (profile ``v1.29``, a workload with DoNotSchedule constraints): the report was built on
the candidates the Filter passes (its scores, ``candidateNodes``, ``nodes``, best and worst); the pod counts —
``pods``, each zone's ``pods``, the skews and the verdict's facts — go on counting every matching pod on the
nodes the *other* filters pass (the Filter removes candidates for the next pod, not pods); the rejected nodes
holding pods are listed in ``filteredNodes``, the constraints' compliance in ``constraints``, and a violated
one is a finding (``ConstraintViolated``). O(nodes with pods + zones).

:func:`unschedulable` (any profile): a report without any candidate node says that the next replica stays
Pending, why — kube-scheduler's FailedScheduling message, ``0/N nodes are available: ...`` — and which plugin
rejected the last nodes. O(reasons).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Final, NamedTuple

import msgspec

from spreadwatch.report.build import CandidateLayout
from spreadwatch.report.spread_report import FilteredNode, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import NO_CANDIDATE_NODES, Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.candidates import REASON_NODE_AFFINITY, REASON_UNSCHEDULABLE, REASON_UNTOLERATED_TAINT
from spreadwatch.scoring.topology_filter import MISSING_LABEL, NOT_MATCH, REASON_POD_TOPOLOGY_SPREAD, Compliance

__all__ = ["FilterFacts", "pending_message", "unschedulable", "with_filter"]

#: kube-scheduler's reason per ``excludedNodes`` reason (TaintToleration names the taint: left out here)
_PHRASES: Final = {
    REASON_UNSCHEDULABLE: "node(s) were unschedulable",
    REASON_UNTOLERATED_TAINT: "node(s) had untolerated taint",
    REASON_NODE_AFFINITY: "node(s) didn't match Pod's node affinity/selector",
    REASON_POD_TOPOLOGY_SPREAD: NOT_MATCH,
}
#: the plugin of each ``excludedNodes`` reason
_PLUGINS: Final = {
    REASON_UNSCHEDULABLE: "NodeUnschedulable",
    REASON_UNTOLERATED_TAINT: "TaintToleration",
    REASON_NODE_AFFINITY: "NodeAffinity",
    REASON_POD_TOPOLOGY_SPREAD: REASON_POD_TOPOLOGY_SPREAD,
}


class FilterFacts(NamedTuple):
    """What :func:`with_filter` adds: the compliance, the rejected nodes with pods and how many candidates
    the Filter rejected; the candidates of the other filters (``base``, ``members``) and the report's pod
    counts (node -> matching pods of its first constraint, any node) with the nodes' zones."""

    compliance: tuple[Compliance, ...]
    filtered_nodes: tuple[FilteredNode, ...]
    rejected: int
    base: CandidateLayout
    members: AbstractSet[str]
    counts: Mapping[str, int]
    node_zone: Mapping[str, ZoneKey | None]


def _spread(facts: FilterFacts, candidates: int) -> tuple[SpreadFacts, dict[ZoneKey, int]]:
    """The verdict's facts over the candidates of the other filters (``candidates``: those the Filter passes
    too), and the pods per zone. O(nodes with pods + zones)."""
    members, node_zone, base = facts.members, facts.node_zone, facts.base
    busy = {n: c for n, c in facts.counts.items() if c > 0 and n in members}
    zone_pods = dict.fromkeys(base.zones, 0)
    with_pods: set[ZoneKey | None] = set()
    for name, count in busy.items():
        zone = node_zone[name]
        with_pods.add(zone)
        if zone is not None:
            zone_pods[zone] += count
    most = max(busy.values(), default=0)
    fewest = min(busy.values(), default=0) if len(busy) == base.total else 0
    busiest = max((name for name, count in busy.items() if count == most), default="")
    top_zone = max(zone_pods.values(), default=0)
    busiest_zone = next((z[1] for z, c in zone_pods.items() if c == top_zone), "")
    spread = SpreadFacts(
        sum(busy.values()),
        candidates,
        len(busy),
        busiest,
        len(with_pods) if zone_pods else 0,
        busiest_zone,
        len(base.by_zone) if zone_pods else 0,
        most - fewest,
        (top_zone - min(zone_pods.values())) if zone_pods else 0,
    )
    return spread, zone_pods


def with_filter(report: SpreadReport, facts: FilterFacts, thresholds: HealthThresholds) -> SpreadReport:
    """``report`` (built on the candidates the Filter passes) with the pod counts, zones, skews and verdict of
    the candidates of the other filters, the compliance and the rejected nodes with pods (see the module
    docstring). O(nodes with pods + zones)."""
    spread, zone_pods = _spread(facts, report.candidate_nodes)
    built = {(z.region, z.zone): z for z in report.zones}
    zones = []
    for zone in sorted(zone_pods):
        entry = built.get(zone)
        if entry is None:  # every candidate of the zone rejected: no score to show
            zones.append(ZoneEntry(zone[1], zone[0], zone_pods[zone], 0, 0, 0))
        else:
            zones.append(entry._replace(pods=zone_pods[zone]))
    findings = [
        f"ConstraintViolated: {c.topology_key} skew {c.skew} > maxSkew {c.max_skew} (DoNotSchedule)"
        for c in facts.compliance
        if not c.satisfied
    ]
    health, reasons = judge(spread, thresholds, findings)
    return msgspec.structs.replace(
        report,
        pods=spread.pods,
        zones=tuple(zones),
        node_skew=spread.node_skew,
        zone_skew=spread.zone_skew,
        health=health,
        reasons=tuple(reasons),
        constraints=facts.compliance,
        filtered_nodes=facts.filtered_nodes or None,
    )


def pending_message(all_nodes: int, rejected: Mapping[str, int]) -> str:
    """kube-scheduler's FitError message for ``rejected`` (its reason -> nodes), e.g. ``0/29 nodes are
    available: 4 node(s) didn't match pod topology spread constraints, 2 node(s) were unschedulable.``
    (reasons sorted as strings, as it sorts them). O(reasons)."""
    if not all_nodes:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in rejected.items() if count)
    return f"0/{all_nodes} nodes are available: {', '.join(parts)}."


def unschedulable(report: SpreadReport, all_nodes: int, missing_label: int = 0) -> SpreadReport:
    """A report without any candidate (not Error): ``nextPodSchedulable`` false, the scheduler's message and
    the plugin that rejected the last nodes (PodTopologySpread when it rejected any, else the one rejecting
    the most), health Unschedulable (its findings kept). ``missing_label``: the nodes PodTopologySpread
    rejected for a missing key. O(reasons)."""
    excluded = report.excluded_nodes
    rejected: dict[str, int] = {}
    for reason, count in excluded.items():
        phrase = _PHRASES.get(reason, reason)
        over = count
        if reason == REASON_POD_TOPOLOGY_SPREAD and missing_label:
            rejected[MISSING_LABEL] = missing_label
            over -= missing_label
        rejected[phrase] = rejected.get(phrase, 0) + over
    if excluded.get(REASON_POD_TOPOLOGY_SPREAD):
        plugin: str | None = REASON_POD_TOPOLOGY_SPREAD
    else:
        ranked = sorted(excluded.items(), key=lambda item: (-item[1], item[0]))
        plugin = _PLUGINS.get(ranked[0][0], ranked[0][0]) if ranked else None
    message = pending_message(all_nodes, rejected)
    findings = [r for r in report.reasons if r.startswith("ConstraintViolated:")]
    return msgspec.structs.replace(
        report,
        health=Health.UNSCHEDULABLE,
        reasons=(f"{NO_CANDIDATE_NODES}: {message}", *findings),
        next_pod_schedulable=False,
        unschedulable_reason=message,
        unschedulable_plugin=plugin,
    )
