"""The ``comparison`` a report must carry, computed apart from the index's own comparison code: the compared
profile's report from an index of its own, and the overlap of the two best sets written out node by node
(every candidate with the report's best score: the listed nodes, and the unlisted nodes of each zone whose
empty-node score is the best)."""

from __future__ import annotations

from typing import Any

from spreadwatch.report import CandidateLayout, SpreadReport

__all__ = ["best_set", "expected_comparison"]


def best_set(report: SpreadReport, layout: CandidateLayout | None) -> set[str]:
    """Every candidate node scoring the report's best score (empty without a layout: a workload in Error)."""
    if layout is None:
        return set()
    listed = {e.node: e.score for e in report.nodes}
    empty = {(z.region, z.zone): z.empty_node_score for z in report.zones}
    out = {n for n, s in listed.items() if s == report.best_score}
    for zone, names in layout.by_zone.items():
        score = report.empty_node_score if zone is None else empty.get(zone, report.empty_node_score)
        if score == report.best_score:
            out.update(n for n in names if n not in listed)
    return out


def expected_comparison(
    own: SpreadReport, own_layout: CandidateLayout | None, other: SpreadReport, other_layout: CandidateLayout | None
) -> dict[str, Any]:
    """The report's ``comparison`` (camelCase, as in a SpreadReport status) with ``other`` the same workload
    under the compared profile."""
    overlap = bool(best_set(own, own_layout) & best_set(other, other_layout))
    return {
        "profile": other.profile,
        "bestScore": other.best_score,
        "bestNodes": list(other.best_nodes),
        "bestNodeCount": other.best_node_count,
        "bestNodesOverlap": overlap,
    }
