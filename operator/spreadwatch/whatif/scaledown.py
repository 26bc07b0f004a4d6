"""``spreadwatch simulate --scale-down N``: N scale-downs by one replica, step by step, the controllers' way.

Each step reads the workload's report in the simulated state — its ``scaleDown`` forecast (the pods, any of
which the controller may delete next: report/forecast.py over :mod:`spreadwatch.controllers`) — deletes one of
them (by default the first by name; with a seed, one drawn uniformly), and lowers ``spec.replicas`` (a
Deployment's and the ReplicaSet its ``scale`` takes the replica from). The next step ranks again, as the next
scale-down would. Cost per step: the report's rebuild, O(the workload's pods log + busy nodes).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from spreadwatch.controllers import colocated_ranks
from spreadwatch.errors import InputError
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif.simulate import Simulation, WhatIf, check_count

__all__ = ["ScaleDownStep", "simulate_scale_down"]


@dataclass(frozen=True, slots=True)
class ScaleDownStep:
    """One scale-down by one: the candidates, the pod deleted (its node, zone and rank: the active related pods
    on its node), and the workload's spread after it."""

    step: int
    pod: str
    node: str
    zone: str
    rank: int
    candidates: tuple[str, ...]
    candidate_count: int
    replica_set: str
    node_skew: int
    zone_skew: int
    health: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "pod": self.pod,
            "node": self.node,
            "zone": self.zone,
            "rank": self.rank,
            "candidates": list(self.candidates),
            "candidateCount": self.candidate_count,
        }
        if self.replica_set:
            out["replicaSet"] = self.replica_set
        out.update(nodeSkew=self.node_skew, zoneSkew=self.zone_skew, health=self.health)
        return out


def simulate_scale_down(
    snapshot: Snapshot,
    workload: str,
    profile: Profile,
    count: int,
    options: ReportOptions | None = None,
    seed: int | None = None,
) -> Simulation:
    """Scale ``workload`` down by ``count`` replicas, one at a time (see the module docstring). InputError when
    a step would delete no pod (too few active pods, or none above the remaining replicas)."""
    check_count(count)
    sim = WhatIf(snapshot, workload, profile, options)
    rng = random.Random(seed) if seed is not None else None
    initial = sim.report()
    ctrl = sim.workload
    if count > ctrl.replicas:
        raise InputError(f"{ctrl.key}: cannot scale down by {count}, it has {ctrl.replicas} replicas")
    steps: list[ScaleDownStep] = []
    namespace = ctrl.namespace
    for i in range(1, count + 1):
        forecast = sim.report().scale_down
        if forecast is None or not forecast.candidates:
            raise InputError(f"{ctrl.key}: scale-down {i} of {count} would delete no pod")
        names = [c.pod for c in forecast.candidates]
        chosen = rng.choice(names) if rng is not None else names[0]
        pods = {p.name: p for p in sim.index.owned_pods(namespace, ctrl.kind, ctrl.name) if p.active}
        victim = pods[chosen]
        rank = 0
        if ctrl.kind == "Deployment":  # ranked against every pod of the Deployment
            rank = colocated_ranks([victim], pods.values())[0]
        sim.unbind(victim)
        if forecast.replica_set:
            rs = next(r for r in sim.index.replicasets_of(sim.workload) if r.name == forecast.replica_set)
            sim.resize(rs, rs.replicas - 1)
        sim.resize(sim.workload, sim.workload.replicas - 1)
        after = sim.report()
        steps.append(
            ScaleDownStep(
                i,
                chosen,
                victim.node_name,
                sim.zone_name(victim.node_name),
                rank,
                tuple(names),
                forecast.candidate_count,
                forecast.replica_set,
                after.node_skew,
                after.zone_skew,
                after.health.value,
            )
        )
    return Simulation(sim.ref, profile.name, seed, initial, tuple(steps), sim.report())
