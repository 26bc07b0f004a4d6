"""``spreadwatch simulate --rollout``: the spread through a Deployment's rolling update, sync by sync.

The deployment controller's ``rolloutRolling`` (:mod:`spreadwatch.controllers.deployment`): scale the new
ReplicaSet up as far as maxSurge allows (``NewRSNewReplicas``), else scale old ReplicaSets down as far as
maxUnavailable allows — their unavailable pods first, then oldest ReplicaSet first
(``reconcileOldReplicaSets``); each ReplicaSet scaled down deletes its pods in the ReplicaSet controller's order
(the first candidate by name, ranks taken once per scale-down, as ``getPodsToDelete`` does). A ``Recreate``
Deployment scales every old ReplicaSet to 0, then the new one up.

The new ReplicaSet is the Deployment's newest when its rollout is under way (an old ReplicaSet still has
replicas, or it has fewer than the Deployment), else a new one as ``kubectl rollout restart`` makes (the same
template, a new ``pod-template-hash``). Each new pod is placed by the report's prediction in the simulated
state (the first best node by name: its spreading selector is the new ReplicaSet's) and is taken to be Ready
at once (``minReadySeconds``, image pulls and probes are not modelled); the old pods keep their readiness. A new
pod no node passes the filters for stays Pending (``simulate``'s :class:`PendingStep`; shown ``(Pending)``): never
available, so the rollout stalls where maxUnavailable stops it, as the controller's does.

After every step: the node and zone skew of the Deployment's pods (every ReplicaSet's, on its candidate
nodes, as a report counts them) and the spread verdict; the worst on the way and at the end. Cost: O(steps ×
(placements × candidate nodes + pods log)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from spreadwatch.controllers import (
    ReplicaSetSize,
    colocated_ranks,
    creation_order,
    deletion_candidates,
    fenceposts,
    old_scale_downs,
    reconcile_new,
)
from spreadwatch.errors import InputError
from spreadwatch.model import Controller, OwnerRef, Pod, intern_labels
from spreadwatch.report import Health, ReportOptions, SpreadReport, judge
from spreadwatch.report.forecast import spread_facts
from spreadwatch.scoring import Profile, WorkloadRef, newest_replicaset
from spreadwatch.selectors import Operator, Requirement
from spreadwatch.snapshot import Snapshot
from spreadwatch.timestamps import rfc3339
from spreadwatch.whatif.simulate import PendingStep, WhatIf

__all__ = ["RolloutForecast", "RolloutStep", "simulate_rollout"]

_HASH: Final = "pod-template-hash"
_NEW_HASH: Final = "whatif"


@dataclass(frozen=True, slots=True)
class RolloutStep:
    """One scaling of one ReplicaSet: its replicas before and after, the pods added (placed) or deleted, and the
    Deployment's spread after it."""

    step: int
    replica_set: str
    replicas_before: int
    replicas_after: int
    added: tuple[tuple[str, str, str], ...]  # (pod, node, zone)
    deleted: tuple[tuple[str, str, str], ...]
    pods: int
    node_skew: int
    zone_skew: int
    health: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "replicaSet": self.replica_set,
            "replicas": [self.replicas_before, self.replicas_after],
            "added": [{"pod": p, "node": n, "zone": z} for p, n, z in self.added],
            "deleted": [{"pod": p, "node": n, "zone": z} for p, n, z in self.deleted],
            "pods": self.pods,
            "nodeSkew": self.node_skew,
            "zoneSkew": self.zone_skew,
            "health": self.health,
        }


@dataclass(frozen=True, slots=True)
class RolloutForecast:
    """The rollout step by step, the worst skew reached on the way and the spread at the end."""

    workload: WorkloadRef
    profile: str
    new_replica_set: str
    restart: bool  # a new ReplicaSet was made (no rollout was under way)
    max_surge: int
    max_unavailable: int
    initial: SpreadReport
    steps: tuple[RolloutStep, ...]
    worst_node_skew: int
    worst_zone_skew: int
    final: SpreadReport

    def to_dict(self) -> dict[str, Any]:
        last = self.steps[-1] if self.steps else None
        return {
            "newReplicaSet": self.new_replica_set,
            "restart": self.restart,
            "maxSurge": self.max_surge,
            "maxUnavailable": self.max_unavailable,
            "steps": [s.to_dict() for s in self.steps],
            "worst": {"nodeSkew": self.worst_node_skew, "zoneSkew": self.worst_zone_skew},
            "end": {
                "nodeSkew": last.node_skew if last else self.initial.node_skew,
                "zoneSkew": last.zone_skew if last else self.initial.zone_skew,
                "health": last.health if last else self.initial.health.value,
            },
            "final": self.final.to_dict(),
        }


class _Rollout:
    """The simulated Deployment: its ReplicaSets' replicas, and the pods they hold in the index."""

    def __init__(self, sim: WhatIf) -> None:
        self.sim = sim
        self.deployment = sim.workload
        self.sets: dict[str, Controller] = {rs.name: rs for rs in sim.index.replicasets_of(self.deployment)}
        newest = newest_replicaset(self.deployment, self.sets.values())
        under_way = newest is not None and (
            newest.replicas != self.deployment.replicas
            or any(rs.replicas for rs in self.sets.values() if rs.name != newest.name)
        )
        self.restart = not under_way
        if under_way:
            assert newest is not None
            self.new = newest
        else:
            self.new = self._new_replicaset(newest)
            sim.index.apply(self.new)
            self.sets[self.new.name] = self.new
        sim.make_next(self.new)

    def _new_replicaset(self, newest: Controller | None) -> Controller:
        """The ReplicaSet ``kubectl rollout restart`` would make: the same template, a new hash, the next
        revision, created now, 0 replicas."""
        d = self.deployment
        labels = dict(newest.template_labels if newest is not None else d.template_labels)
        labels[_HASH] = _NEW_HASH
        owner = next((rs.controller for rs in self.sets.values() if rs.controller is not None), None)
        return Controller(
            kind="ReplicaSet",
            api_version="apps/v1",
            namespace=d.namespace,
            name=f"{d.name}-{_NEW_HASH}",
            uid=f"{d.uid}-{_NEW_HASH}",
            labels=intern_labels(labels),
            selector=d.selector.add(Requirement(_HASH, Operator.EQUALS, (_NEW_HASH,))),
            selector_map=None,
            selector_error=d.selector_error,
            template_labels=intern_labels(labels),
            template=newest.template if newest is not None else d.template,
            controller=owner or OwnerRef("apps/v1", "Deployment", d.name, d.uid),
            replicas=0,
            revision=max((rs.revision for rs in self.sets.values()), default=0) + 1,
            creation=rfc3339(),
        )

    def pods(self, rs: str) -> list[Pod]:
        return [p for p in self.sim.index.owned_pods(self.deployment.namespace, "ReplicaSet", rs) if p.active]

    def size(self, rs: str) -> ReplicaSetSize:
        """A ReplicaSet as the controller sees it: spec.replicas and its Ready pods (available). O(its pods)."""
        record = self.sets[rs]
        return ReplicaSetSize(record, record.replicas, sum(1 for p in self.pods(rs) if p.ready))

    def resize(self, rs: str, replicas: int) -> None:
        self.sets[rs] = self.sim.resize(self.sets[rs], replicas)

    @property
    def old(self) -> list[str]:
        return sorted((n for n in self.sets if n != self.new.name), key=lambda n: creation_order(self.sets[n]))

    def scale_up(self, target: int) -> tuple[tuple[str, str, str], ...]:
        """The new ReplicaSet to ``target``: each new pod placed by the prediction, Ready at once."""
        added = []
        for i in range(target - self.sets[self.new.name].replicas):
            step = self.sim.next_step(i + 1, None)
            if isinstance(step, PendingStep):  # no node passes the filters: created, it stays Pending (and
                pod = self.sim.bind("", ready=False)  # never available: the rollout stalls, as it does for real)
                added.append((pod.name, "", ""))
                continue
            pod = self.sim.bind(step.node, ready=True)
            added.append((pod.name, step.node, self.sim.zone_name(step.node)))
        self.resize(self.new.name, target)
        return tuple(added)

    def scale_down(self, rs: str, target: int) -> tuple[tuple[str, str, str], ...]:
        """An old ReplicaSet to ``target``: ``getPodsToDelete`` (ranks once, then the first candidate by name)."""
        pods = self.pods(rs)
        related = [p for name in self.sets for p in self.pods(name)]
        ranks = dict(zip((p.name for p in pods), colocated_ranks(pods, related), strict=True))
        deleted = []
        for _ in range(max(0, len(pods) - target)):
            victim = deletion_candidates(pods, [ranks[p.name] for p in pods])[0]
            pods.remove(victim)
            self.sim.unbind(victim)
            deleted.append((victim.name, victim.node_name, self.sim.zone_name(victim.node_name)))
        self.resize(rs, target)
        return tuple(deleted)

    def spread(self) -> tuple[int, int, int, str]:
        """The Deployment's pods (every ReplicaSet's) on its candidate nodes: (pods, node skew, zone skew,
        verdict). O(pods + zones)."""
        layout = self.sim.index.candidate_layout(self.deployment.key)
        if layout is None:
            return 0, 0, 0, Health.IMBALANCED.value
        names = {n for nodes in layout.by_zone.values() for n in nodes}
        busy: dict[str, int] = {}
        for rs in self.sets:
            for p in self.pods(rs):
                if p.counts and p.node_name in names:
                    busy[p.node_name] = busy.get(p.node_name, 0) + 1
        facts = spread_facts(busy, layout, self.sim.node_zones)
        health = judge(facts, self.sim.options.thresholds)[0]
        return facts.pods, facts.node_skew, facts.zone_skew, health.value


def simulate_rollout(
    snapshot: Snapshot, workload: str, profile: Profile, options: ReportOptions | None = None
) -> RolloutForecast:
    """Forecast a Deployment's rolling update (see the module docstring). InputError for other kinds."""
    sim = WhatIf(snapshot, workload, profile, options)
    d = sim.workload
    if d.kind != "Deployment":
        raise InputError(f"{d.key}: --rollout forecasts a Deployment's rolling update, not a {d.kind}'s")
    initial = sim.report()
    roll = _Rollout(sim)
    try:
        surge, unavailable = fenceposts(d)
    except ValueError as err:
        raise InputError(f"{d.key}: {err}") from None
    steps: list[RolloutStep] = []

    def record(rs: str, before: int, added: tuple[tuple[str, str, str], ...], deleted: tuple[Any, ...]) -> None:
        pods, node_skew, zone_skew, health = roll.spread()
        after = roll.sets[rs].replicas
        steps.append(RolloutStep(len(steps) + 1, rs, before, after, added, deleted, pods, node_skew, zone_skew, health))

    new = roll.new.name
    guard = 4 * (d.replicas + sum(rs.replicas for rs in roll.sets.values())) + 8
    while guard > 0:
        guard -= 1
        if d.scaling.recreate:
            downs = {name: 0 for name in roll.old if roll.sets[name].replicas}
            if downs:
                for name in downs:
                    before = roll.sets[name].replicas
                    record(name, before, (), roll.scale_down(name, 0))
                continue
            if roll.sets[new].replicas < d.replicas:
                before = roll.sets[new].replicas
                record(new, before, roll.scale_up(d.replicas), ())
            break
        total = sum(rs.replicas for rs in roll.sets.values())
        current = roll.sets[new].replicas
        target = reconcile_new(d, total, current)
        if target > current:
            record(new, current, roll.scale_up(target), ())
            continue
        if target < current:
            record(new, current, (), roll.scale_down(new, target))
            continue
        downs = old_scale_downs(d, roll.size(new), [roll.size(name) for name in roll.old])
        if not downs:
            break
        for name in roll.old:
            if name in downs:
                before = roll.sets[name].replicas
                record(name, before, (), roll.scale_down(name, downs[name]))
    final = sim.report()
    return RolloutForecast(
        sim.ref,
        profile.name,
        new,
        roll.restart,
        surge,
        unavailable,
        initial,
        tuple(steps),
        max((s.node_skew for s in steps), default=initial.node_skew),
        max((s.zone_skew for s in steps), default=initial.zone_skew),
        final,
    )
