"""A report's safety forecasts (pure types and their JSON form): ``resilience`` and ``scaleDown``.

JSON (a contract, docs/report.md)::

    resilience {zoneLoss {worst, readyAfter, desired, pdbSatisfied, roomForReplacements, tolerated},
                nodeLoss {...the same}, [pdb {name, expectedPods, currentHealthy, desiredHealthy,
                disruptionsAllowed, count}]}
    scaleDown {replicas, [replicaSet], candidates [{pod, node, zone}], candidateCount, nodeSkew, zoneSkew, health}

Each is one flat Struct (no container per field: a few hundred bytes per workload at the envelope's 10,000);
:mod:`~spreadwatch.report.forecast` computes them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

__all__ = ["Candidate", "Loss", "Resilience", "ScaleDown"]


class Loss(NamedTuple):
    """The loss of the worst zone or node: its name ("" when there is nothing to lose), the workload's ready
    replicas after it, its desired replicas, whether its PodDisruptionBudget still holds (None without one),
    whether candidate nodes outside are left for the replacements, and how many of the worst zones (nodes) can
    be lost at once within the budget."""

    worst: str
    ready_after: int
    desired: int
    pdb_satisfied: bool | None
    room_for_replacements: bool
    tolerated: int

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "worst": self.worst,
            "readyAfter": self.ready_after,
            "desired": self.desired,
            "roomForReplacements": self.room_for_replacements,
            "tolerated": self.tolerated,
        }
        if self.pdb_satisfied is not None:
            out["pdbSatisfied"] = self.pdb_satisfied
        return out


class Resilience(msgspec.Struct, frozen=True, gc=False):
    """``status.resilience``: the zone and node loss forecasts (None: no zone, or no node, to lose) and the
    workload's PodDisruptionBudget as the disruption controller computes its status (the first by name of
    ``pdb_count`` selecting it; None without one)."""

    zone_loss: Loss | None
    node_loss: Loss | None
    pdb_name: str = ""
    expected_pods: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    disruptions_allowed: int = 0
    pdb_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.zone_loss is not None:
            out["zoneLoss"] = self.zone_loss.to_dict()
        if self.node_loss is not None:
            out["nodeLoss"] = self.node_loss.to_dict()
        if self.pdb_name:
            out["pdb"] = {
                "name": self.pdb_name,
                "expectedPods": self.expected_pods,
                "currentHealthy": self.current_healthy,
                "desiredHealthy": self.desired_healthy,
                "disruptionsAllowed": self.disruptions_allowed,
                "count": self.pdb_count,
            }
        return out


class Candidate(NamedTuple):
    """A pod the next scale-down may delete."""

    pod: str
    node: str
    zone: str


class ScaleDown(msgspec.Struct, frozen=True, gc=False):
    """``status.scaleDown``: the workload shrunk by one replica. ``candidates``: the pods, any of which the
    controller may delete (the first ``MAX_CANDIDATES`` by name; ``candidate_count`` of them in all); the node
    and zone skew and the health after it, the worst over the candidates; ``replica_set``: the ReplicaSet a
    Deployment scales down ("" for the other kinds)."""

    replicas: int
    candidates: tuple[Candidate, ...]
    candidate_count: int
    node_skew: int
    zone_skew: int
    health: str
    replica_set: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"replicas": self.replicas}
        if self.replica_set:
            out["replicaSet"] = self.replica_set
        out["candidates"] = [{"pod": c.pod, "node": c.node, "zone": c.zone} for c in self.candidates]
        out["candidateCount"] = self.candidate_count
        out["nodeSkew"] = self.node_skew
        out["zoneSkew"] = self.zone_skew
        out["health"] = self.health
        return out
