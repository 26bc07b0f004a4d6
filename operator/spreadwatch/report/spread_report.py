"""The spread report: one per workload; the SpreadReport status and the metrics reuse it.

JSON field names (camelCase) are a contract (see ``docs/report.md``)::

    workload {apiVersion, kind, namespace, name, uid}, profile, selector, skipped, skipReason, replicas,
    pods, candidateNodes, excludedNodes {reason: count},
    nodes [{node, zone, region, pods, score}], nodesOmitted,
    zones [{zone, region, pods, candidateNodes, zoneScore, emptyNodeScore}], zoneCount, emptyNodeScore,
    bestScore, worstScore, bestNodes, bestNodeCount, nodeSkew, zoneSkew, health, reasons

Every candidate node's score is derivable: a node listed in ``nodes`` has its score there; any other
candidate node has no matching pod and scores its zone's ``emptyNodeScore`` (the top-level
``emptyNodeScore`` when it has no zone). ``nodes`` lists every candidate node with matching pods (up to
``maxNodes``; ``nodesOmitted`` counts the rest) plus the top-N best-scoring candidates, so a report stays
small (≈ 100 bytes a listed node) however large the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from spreadwatch.report.verdict import Health
from spreadwatch.scoring import WorkloadRef

__all__ = ["Comparison", "NodeEntry", "SpreadReport", "ZoneEntry"]


class NodeEntry(NamedTuple):
    """One listed candidate node (a tuple: cheap to build by the thousand)."""

    node: str
    zone: str
    region: str
    pods: int
    score: int

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "zone": self.zone, "region": self.region, "pods": self.pods, "score": self.score}


class ZoneEntry(NamedTuple):
    """One zone with candidate nodes."""

    zone: str
    region: str
    pods: int
    candidate_nodes: int
    zone_score: int  # the zone component before weighting, truncated
    empty_node_score: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "region": self.region,
            "pods": self.pods,
            "candidateNodes": self.candidate_nodes,
            "zoneScore": self.zone_score,
            "emptyNodeScore": self.empty_node_score,
        }


class Comparison(NamedTuple):
    """The workload under a second profile (``--compare-profile``): its best score and nodes, and whether
    they overlap this report's best nodes (exact: both sets are complete, ``best_nodes`` lists the first
    ``top_n`` by name)."""

    profile: str
    best_score: int
    best_nodes: tuple[str, ...]
    best_node_count: int
    best_nodes_overlap: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "bestScore": self.best_score,
            "bestNodes": list(self.best_nodes),
            "bestNodeCount": self.best_node_count,
            "bestNodesOverlap": self.best_nodes_overlap,
        }


@dataclass(frozen=True, slots=True)
class SpreadReport:
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (camelCase field names)."""
        w = self.workload
        return {
            "workload": {
                "apiVersion": w.api_version,
                "kind": w.kind,
                "namespace": w.namespace,
                "name": w.name,
                "uid": w.uid,
            },
            "profile": self.profile,
            "selector": self.selector,
            "skipped": self.skipped,
            "skipReason": self.skip_reason,
            "replicas": self.replicas,
            "pods": self.pods,
            "candidateNodes": self.candidate_nodes,
            "excludedNodes": dict(self.excluded_nodes),
            "nodes": [n.to_dict() for n in self.nodes],
            "nodesOmitted": self.nodes_omitted,
            "zones": [z.to_dict() for z in self.zones],
            "zoneCount": len(self.zones),
            "emptyNodeScore": self.empty_node_score,
            "bestScore": self.best_score,
            "worstScore": self.worst_score,
            "bestNodes": list(self.best_nodes),
            "bestNodeCount": self.best_node_count,
            "nodeSkew": self.node_skew,
            "zoneSkew": self.zone_skew,
            "health": self.health.value,
            "reasons": list(self.reasons),
        } | ({"comparison": self.comparison.to_dict()} if self.comparison is not None else {})
