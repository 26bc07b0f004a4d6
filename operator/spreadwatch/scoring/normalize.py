"""SelectorSpread's NormalizeScore (``CalculateSpreadPriorityReduce``) arithmetic, exactly.

For candidate node *n* with *c(n)* matching pods, zone sums *Z(z)* over candidate nodes, ``maxNode`` and
``maxZone`` the largest of each, and ``M`` the profile's maximum score (100, or 10 before v1.17)::

    node  = M                                   if maxNode == 0
          = M * (float(maxNode - c(n)) / maxNode)
    zone  = M                                   if maxZone == 0
          = M * (float(maxZone - Z(zone(n))) / maxZone)
    final = int(node)                                              no candidate has a zone, or n has none
          = int((node * (1.0 - 2.0/3.0)) + ((2.0/3.0) * zone))       otherwise

in IEEE-754 double precision and in upstream's order of operations (Python floats are Go's float64; the
conversion to int truncates). ``haveZones`` is true as soon as one candidate node has a zone, even when no
matching pod runs there. Cost: O(1) per node once the :class:`SpreadSummary` is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from spreadwatch.scoring.zones import ZoneKey

__all__ = ["ZONE_WEIGHTING", "ScoreBreakdown", "SpreadSummary", "summarize"]

ZONE_WEIGHTING: Final = 2.0 / 3.0


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """The parts of one node's score, for ``spreadwatch explain``."""

    node_score: float  # before weighting
    zone_score: float | None  # before weighting; None when the zone part does not apply
    node_part: float  # node_score weighted (× 1/3 when the zone part applies)
    zone_part: float  # zone_score × 2/3, or 0
    final: int


@dataclass(frozen=True, slots=True)
class SpreadSummary:
    """The maxima and zone sums NormalizeScore needs; ``zone_counts`` holds every candidate zone."""

    max_score: int
    max_node: int
    max_zone: int
    zone_counts: Mapping[ZoneKey, int]

    @classmethod
    def of(cls, max_score: int, max_node: int, zone_counts: Mapping[ZoneKey, int]) -> SpreadSummary:
        """The summary of the largest node count and every candidate zone's count (``max_zone`` is their
        largest). O(zones)."""
        return cls(max_score, max_node, max(zone_counts.values(), default=0), zone_counts)

    @property
    def have_zones(self) -> bool:
        return bool(self.zone_counts)

    def breakdown(self, count: int, zone: ZoneKey | None) -> ScoreBreakdown:
        """Score a candidate node with ``count`` matching pods in ``zone``. O(1)."""
        top = float(self.max_score)
        f_score = top
        if self.max_node > 0:
            f_score = top * (float(self.max_node - count) / float(self.max_node))
        if self.have_zones and zone is not None:
            zone_score = top
            if self.max_zone > 0:
                zone_score = top * (float(self.max_zone - self.zone_counts[zone]) / float(self.max_zone))
            node_part = f_score * (1.0 - ZONE_WEIGHTING)
            zone_part = ZONE_WEIGHTING * zone_score
            return ScoreBreakdown(f_score, zone_score, node_part, zone_part, int(node_part + zone_part))
        return ScoreBreakdown(f_score, None, f_score, 0.0, int(f_score))

    def score(self, count: int, zone: ZoneKey | None) -> int:
        """The final integer score of a candidate node: :meth:`breakdown`'s operations, without building
        it (the window model scores every class of every sampled window). O(1)."""
        top = float(self.max_score)
        f_score = top if self.max_node <= 0 else top * (float(self.max_node - count) / float(self.max_node))
        if not self.zone_counts or zone is None:
            return int(f_score)
        zone_score = top
        if self.max_zone > 0:
            zone_score = top * (float(self.max_zone - self.zone_counts[zone]) / float(self.max_zone))
        return int(f_score * (1.0 - ZONE_WEIGHTING) + ZONE_WEIGHTING * zone_score)

    def zone_score(self, zone: ZoneKey) -> float:
        """The zone component before weighting."""
        if self.max_zone == 0:
            return float(self.max_score)
        return float(self.max_score) * (float(self.max_zone - self.zone_counts[zone]) / float(self.max_zone))


def summarize(nodes: Iterable[tuple[ZoneKey | None, int]], max_score: int) -> SpreadSummary:
    """Build the summary from (zone, matching pods) of every candidate node. O(candidates)."""
    max_node = 0
    zone_counts: dict[ZoneKey, int] = {}
    for zone, count in nodes:
        max_node = max(max_node, count)
        if zone is not None:
            zone_counts[zone] = zone_counts.get(zone, 0) + count
    return SpreadSummary.of(max_score, max_node, zone_counts)
