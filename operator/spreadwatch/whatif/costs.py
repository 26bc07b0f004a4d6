"""``spreadwatch rebalance``'s deletion costs: ``controller.kubernetes.io/pod-deletion-cost`` values that keep the
zones even on the next scale-downs of a ReplicaSet-based workload (a plan: spreadwatch writes nothing).

The ReplicaSet controller deletes, among assigned, Running, Ready pods, the lowest pod-deletion-cost first
(rule 4 of ``ActivePodsWithRanks.Less``, before the colocation rank and the ages). The plan orders the
workload's pods greedily: from the zone with the most of its pods (ties: by name), the node there with the
most (ties: by name), the pod the controller would delete first there (its first candidate by name); and
gives them costs in that order, spaced by :data:`COST_STEP` (room to insert a pod by hand), the first to go
the lowest. A pod created later has no annotation (cost 0): it goes before every planned pod.
Pods that are not assigned, Running and Ready go first whatever their cost: the plan says how many.

Cost: O(p² log p) for p pods (each step ranks the pods of one node).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

from spreadwatch.controllers import colocated_ranks, deletion_candidates
from spreadwatch.model import DELETION_COST, Pod
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile, WorkloadRef
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif.simulate import WhatIf

__all__ = ["COST_STEP", "CostPlan", "CostStep", "plan_deletion_costs"]

#: the spacing of the proposed costs (100, 200, ...)
COST_STEP: Final = 100
_RANKED: Final = frozenset({"Deployment", "ReplicaSet", "ReplicationController"})


@dataclass(frozen=True, slots=True)
class CostStep:
    """The n-th pod the next scale-downs delete, its proposed cost, and the pods per zone after it."""

    step: int
    pod: str
    node: str
    zone: str
    cost: int
    zones_after: tuple[tuple[str, int], ...]

    @property
    def zone_skew(self) -> int:
        counts = [c for _, c in self.zones_after]
        return max(counts) - min(counts) if counts else 0


@dataclass(frozen=True, slots=True)
class CostPlan:
    """The proposed costs (in deletion order) and the kubectl commands; ``message`` when there is no plan."""

    workload: WorkloadRef
    message: str
    steps: tuple[CostStep, ...]
    first_anyway: int  # pods deleted before any planned one: not assigned, Running and Ready

    def commands(self) -> list[str]:
        ns = self.workload.namespace
        return [
            f"kubectl annotate pod {s.pod} -n {ns} {DELETION_COST}={s.cost} --overwrite"
            for s in sorted(self.steps, key=lambda s: s.pod)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "firstAnyway": self.first_anyway,
            "steps": [
                {
                    "step": s.step,
                    "pod": s.pod,
                    "node": s.node,
                    "zone": s.zone,
                    "cost": s.cost,
                    "zonesAfter": dict(s.zones_after),
                    "zoneSkew": s.zone_skew,
                }
                for s in self.steps
            ],
            "commands": self.commands(),
        }


def _steady(pod: Pod) -> bool:
    """Assigned, Running and Ready: ranked by its cost before anything else but rules 1-3."""
    return bool(pod.node_name) and pod.phase == "Running" and pod.ready


def plan_deletion_costs(
    snapshot: Snapshot, workload: str, profile: Profile, options: ReportOptions | None = None
) -> CostPlan:
    """The deletion costs that keep ``workload``'s zones even on its next scale-downs (see the module
    docstring); for a StatefulSet, none (it deletes by ordinal)."""
    sim = WhatIf(snapshot, workload, profile, options)
    ctrl = sim.workload
    if ctrl.kind not in _RANKED:
        return CostPlan(sim.ref, "a StatefulSet scales down by ordinal: pod-deletion-cost does not apply", (), 0)
    pods = [p for p in sim.index.owned_pods(ctrl.namespace, ctrl.kind, ctrl.name) if p.active]
    steady = [p for p in pods if _steady(p)]
    if not steady:
        return CostPlan(sim.ref, "no assigned, Running and Ready pod to order", (), len(pods))
    related = {p.name: r for p, r in zip(pods, colocated_ranks(pods, pods if ctrl.kind == "Deployment" else []),
                                          strict=True)}  # fmt: skip
    layout = sim.index.candidate_layout(ctrl.key)
    candidate_zones = {z[1] for z in layout.zones} if layout is not None else set()
    zones = sorted(candidate_zones | {sim.zone_name(p.node_name) for p in steady})
    left = list(steady)
    steps: list[CostStep] = []
    while left:
        per_zone = Counter(sim.zone_name(p.node_name) for p in left)
        zone = min(per_zone, key=lambda z: (-per_zone[z], z))
        per_node = Counter(p.node_name for p in left if sim.zone_name(p.node_name) == zone)
        node = min(per_node, key=lambda n: (-per_node[n], n))
        here = [p for p in left if p.node_name == node]
        victim = deletion_candidates(here, [related[p.name] for p in here])[0]
        left.remove(victim)
        after = Counter(sim.zone_name(p.node_name) for p in left)
        steps.append(
            CostStep(
                len(steps) + 1,
                victim.name,
                node,
                zone,
                COST_STEP * (len(steps) + 1),
                tuple((z, after.get(z, 0)) for z in zones),
            )
        )
    first = len(pods) - len(steady)
    note = f"; {first} pod(s) not assigned, Running and Ready go first whatever their cost" if first else ""
    return CostPlan(sim.ref, f"{len(steps)} pod(s) ordered, the zones kept even{note}", tuple(steps), first)

