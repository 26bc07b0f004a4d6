"""A placement checked against a report (pure): did the pod land where the report said the next one would?

The operator (``index.check_placement``) calls :func:`classify_placement` for each new binding of a workload's
pod, with the report it held just before the pod was counted:

* ``best_node`` — the pod's node is a candidate that scores the report's ``bestScore`` (derived with
  :meth:`~spreadwatch.report.SpreadReport.score_of`: ``bestNodes`` may be truncated, the score never is);
* ``best_zone`` — otherwise, its node's zone is one of :func:`best_zones`;
* ``other`` — anything else: a lower-scoring node in another zone, a zoneless node, or a node that is not
  a candidate at all (pinned by ``nodeName``, or one the report does not know).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from spreadwatch.report.spread_report import SpreadReport
from spreadwatch.scoring import ZoneKey

__all__ = ["PLACEMENT_OUTCOMES", "Outcome", "best_zones", "classify_placement"]


class Outcome(StrEnum):
    """Where a placement landed relative to the report held just before it."""

    BEST_NODE = "best_node"
    BEST_ZONE = "best_zone"
    OTHER = "other"


#: every outcome, in order (the counter exposes all three from the start)
PLACEMENT_OUTCOMES: Final = tuple(o.value for o in Outcome)


def best_zones(report: SpreadReport) -> frozenset[ZoneKey]:
    """The zones holding a candidate with the best score: a listed node scoring ``bestScore``, or a zone whose
    ``emptyNodeScore`` is ``bestScore`` and which has a candidate node the report does not list (an unlisted
    candidate has no matching pod and scores its zone's ``emptyNodeScore``; with ``nodesOmitted`` > 0 an
    unlisted one may hold pods, and a node with pods never scores above an empty one of its zone).
    O(listed nodes + zones)."""
    best = report.best_score
    out: set[ZoneKey] = set()
    listed: dict[ZoneKey, int] = {}
    for entry in report.nodes:
        zone = (entry.region, entry.zone)
        listed[zone] = listed.get(zone, 0) + 1
        if entry.score == best and entry.zone:
            out.add(zone)
    for z in report.zones:
        zone = (z.region, z.zone)
        if z.empty_node_score == best and z.candidate_nodes > listed.get(zone, 0):
            out.add(zone)
    return frozenset(out)


def classify_placement(report: SpreadReport, node: str, zone: ZoneKey | None, candidate: bool) -> Outcome:
    """The outcome of a pod bound to ``node`` (its (region, zone), None when zoneless; ``candidate``: whether
    it is one of the report's candidate nodes). O(listed nodes + zones)."""
    if not candidate:
        return Outcome.OTHER
    try:
        score = report.score_of(node, zone)
    except KeyError:  # a zone the report does not know: not one of its candidates after all
        return Outcome.OTHER
    if score == report.best_score:
        return Outcome.BEST_NODE
    if zone is not None and zone in best_zones(report):
        return Outcome.BEST_ZONE
    return Outcome.OTHER
