"""The spread report: one per workload; the SpreadReport status and the metrics reuse it.

JSON field names (camelCase) are a contract (see ``docs/report.md``)::

    workload {apiVersion, kind, namespace, name, uid}, profile, selector, skipped, skipReason, replicas,
    pods, candidateNodes, excludedNodes {reason: count},
    nodes [{node, zone, region, pods, score}], nodesOmitted,
    zones [{zone, region, pods, candidateNodes, zoneScore, emptyNodeScore}], zoneCount, emptyNodeScore,
    bestScore, worstScore, bestNodes, bestNodeCount, nodeSkew, zoneSkew, health, reasons, nodesScored,
    [nextPodSchedulable], [unschedulableReason, unschedulablePlugin],
    [constraints [{topologyKey, maxSkew, minDomains, skew, eligibleDomains, satisfied}]],
    [filteredNodes [{node, zone, region, pods}]],
    [comparison], [bestNodeProbability, bestZoneProbability], [lastPlacement], [prediction], [resilience],
    [scaleDown]

Every candidate node's score is derivable: a node listed in ``nodes`` has its score there; any other
candidate node has no matching pod and scores its zone's ``emptyNodeScore`` (the top-level
``emptyNodeScore`` when it has no zone). ``nodes`` lists every candidate node with matching pods (up to
``maxNodes``; ``nodesOmitted`` counts the rest) plus the top-N best-scoring candidates, so a report stays
small (≈ 100 bytes a listed node) however large the cluster. Nodes PodTopologySpread's Filter rejects are no
candidates: those holding matching pods are listed apart, in ``filteredNodes`` (with no score).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import Any, NamedTuple

import msgspec

from spreadwatch.jsonform import each, json_form
from spreadwatch.report.prediction import Prediction, json_number, prediction_form
from spreadwatch.report.safety import Resilience, ScaleDown
from spreadwatch.report.verdict import Health
from spreadwatch.scoring import WorkloadRef
from spreadwatch.scoring.topology_filter import Compliance

__all__ = ["Comparison", "FilteredNode", "NodeEntry", "Placement", "SpreadReport", "ZoneEntry"]


class NodeEntry(NamedTuple):
    """One listed candidate node (a tuple: cheap to build by the thousand)."""

    node: str
    zone: str
    region: str
    pods: int
    score: int


class FilteredNode(NamedTuple):
    """A node the other filters pass but PodTopologySpread's Filter rejects, holding matching pods: not a
    candidate (no score), listed for its pods, which still count in ``pods``, the zones and the skews."""

    node: str
    zone: str
    region: str
    pods: int


class ZoneEntry(NamedTuple):
    """One zone with candidate nodes."""

    zone: str
    region: str
    pods: int
    candidate_nodes: int
    zone_score: int  # the zone component before weighting, truncated
    empty_node_score: int


class Comparison(NamedTuple):
    """The workload under a second profile (``--compare-profile``): its best score and nodes, and whether
    they overlap this report's best nodes (exact: both sets are complete, ``best_nodes`` lists the first
    ``top_n`` by name)."""

    profile: str
    best_score: int
    best_nodes: tuple[str, ...]
    best_node_count: int
    best_nodes_overlap: bool


class Placement(NamedTuple):
    """The last new binding of one of the workload's pods, checked by the operator against the report it held
    just before (``report/placement.py``): the pod, its node, the outcome (``best_node``, ``best_zone`` or
    ``other``), when it was seen (RFC 3339) and the placements in a row, this one included, that did not land
    on a best node (0 when this one did); ``predicted``: the outcome against the report's prediction
    (``best_node``: one of its best nodes, ``best_zone``: a zone of its listed best nodes, ``other``; ""
    without a prediction)."""

    pod: str
    node: str
    outcome: str
    time: str
    consecutive_misses: int
    predicted: str = ""


class SpreadReport(msgspec.Struct, frozen=True, gc=False):
    """One workload's report (frozen; ``msgspec.structs.replace`` derives a changed copy). A Struct: built in C
    (a frozen dataclass sets each of its 22 fields through ``object.__setattr__``), and never tracked by the
    cyclic GC (it holds no container that could point back at it)."""

    workload: WorkloadRef
    profile: str
    selector: str
    skipped: bool
    skip_reason: str
    replicas: int
    pods: int
    candidate_nodes: int
    excluded_nodes: Mapping[str, int]
    nodes: tuple[NodeEntry, ...]
    nodes_omitted: int
    zones: tuple[ZoneEntry, ...]
    empty_node_score: int
    best_score: int
    worst_score: int
    best_nodes: tuple[str, ...]
    best_node_count: int
    node_skew: int
    zone_skew: int
    health: Health
    reasons: tuple[str, ...]
    comparison: Comparison | None = None  # ``--compare-profile``: the same workload under another profile
    #: the scheduler's window (scoring/window.py): nodes it scores for the next pod, and the probabilities
    #: (0-1, None when not computed) that it picks one of the best nodes, and a node in a best node's zone
    nodes_scored: int = 0
    best_node_probability: float | None = None
    best_zone_probability: float | None = None
    #: the operator's check of the workload's last new pod placement (None: none seen since it started)
    last_placement: Placement | None = None
    #: whether some node passes the filters (False: the next replica stays Pending; None for Error), and
    #: then why (the scheduler's FailedScheduling words) and the plugin that rejected the last nodes
    next_pod_schedulable: bool | None = True
    unschedulable_reason: str | None = None
    unschedulable_plugin: str | None = None
    #: v1.29: per DoNotSchedule constraint, whether the pods keep it (None: no such constraint)
    constraints: tuple[Compliance, ...] | None = None
    #: v1.29: the nodes PodTopologySpread's Filter rejects that hold matching pods (None: none)
    filtered_nodes: tuple[FilteredNode, ...] | None = None
    #: where kube-scheduler's whole profile puts the next pod (None: not predicted; report/prediction.py)
    prediction: Prediction | None = None
    #: failure tolerance: the worst zone and node loss, the PodDisruptionBudget (report/forecast.py)
    resilience: Resilience | None = None
    #: the next scale-down by one replica: the pods it may delete and the spread after it
    scale_down: ScaleDown | None = None

    def score_of(self, node: str, zone: tuple[str, str] | None) -> int:
        """Derive a candidate node's score from the report (``zone`` is its (region, zone) or None)."""
        for entry in self.nodes:
            if entry.node == node:
                return entry.score
        if zone is None:
            return self.empty_node_score
        for z in self.zones:
            if (z.region, z.zone) == zone:
                return z.empty_node_score
        raise KeyError(f"zone {zone!r} of node {node!r} is not among the report's zones")

    @property
    def zone_count(self) -> int:
        return len(self.zones)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (camelCase field names). O(listed nodes + zones)."""
        return _REPORT_FORM(self)


_NODE_FORM = json_form(NodeEntry)
_ZONE_FORM = json_form(ZoneEntry)
_COMPARISON_FORM = json_form(Comparison, convert={"best_nodes": list})
_PLACEMENT_BASE = json_form(Placement, ("pod", "node", "outcome", "time", "consecutive_misses"))


def _placement_form(p: Placement) -> dict[str, Any]:
    """A placement's JSON; ``predicted`` only when the report had a prediction. O(1)."""
    out = _PLACEMENT_BASE(p)
    if p.predicted:
        out["predicted"] = p.predicted
    return out

_COMPLIANCE_FORM = json_form(Compliance)
_FILTERED_FORM = json_form(FilteredNode)
_WORKLOAD_FORM = json_form(WorkloadRef, ("api_version", "kind", "namespace", "name", "uid"))
_REPORT_FORM = json_form(
    SpreadReport,
    # the Struct's fields, ``zoneCount`` after ``zones``
    (
        *("workload", "profile", "selector", "skipped", "skip_reason", "replicas", "pods", "candidate_nodes"),
        *("excluded_nodes", "nodes", "nodes_omitted", "zones", "zone_count", "empty_node_score", "best_score"),
        *("worst_score", "best_nodes", "best_node_count", "node_skew", "zone_skew", "health", "reasons"),
        *("nodes_scored", "next_pod_schedulable", "unschedulable_reason", "unschedulable_plugin", "constraints"),
        *("filtered_nodes", "comparison", "best_node_probability", "best_zone_probability", "last_placement"),
        "prediction",
        *("resilience", "scale_down"),
    ),
    convert={
        "workload": _WORKLOAD_FORM,
        "excluded_nodes": dict,
        "nodes": each(_NODE_FORM),
        "zones": each(_ZONE_FORM),
        "best_nodes": list,
        "health": attrgetter("value"),
        "reasons": list,
        "comparison": _COMPARISON_FORM,
        "best_node_probability": json_number,
        "best_zone_probability": json_number,
        "last_placement": _placement_form,
        "constraints": each(_COMPLIANCE_FORM),
        "filtered_nodes": each(_FILTERED_FORM),
        "prediction": prediction_form,
        "resilience": Resilience.to_dict,
        "scale_down": ScaleDown.to_dict,
    },
    omit_none=(
        *("next_pod_schedulable", "unschedulable_reason", "unschedulable_plugin", "constraints", "filtered_nodes"),
        *("comparison", "best_node_probability", "best_zone_probability", "last_placement", "prediction"),
        *("resilience", "scale_down"),
    ),
)
