"""``spreadwatch simulate``: place (or remove) replicas one by one and watch the spread change.

Scale-up: each new replica is the workload's representative next pod (``scoring.representative_pod``). At
every step all candidate nodes are scored by the profile with the earlier simulated pods bound (they are
applied to the same :class:`~spreadwatch.index.SpreadIndex` the operator keeps, so the scores are the
index's, for every registered profile), the whole tie set of best nodes is reported, and the pod is bound to
one of them: by default the **first best node by name** (deterministic), with a seed a uniformly random one,
as kube-scheduler's ``selectHost`` does among equal totals. When no node passes the filters (health
Unschedulable: e.g. a DoNotSchedule constraint every domain would break), the replica would stay Pending: a
:class:`PendingStep` marks it, with the scheduler's reason, and the scale-up stops there (the replicas after
it would wait behind it). With a seed and a cluster where kube-scheduler
scores only a window of the candidates (scoring/window.py), each step samples the window's start uniformly
and binds the pod to one of the *window's* best nodes (window-local scores), which may not be an all-node
best node; ``--runs`` then counts, per step, the runs whose pod landed on a best node, in a best node's zone,
or elsewhere, next to the model's probabilities. Scale-down (:mod:`spreadwatch.whatif.scaledown`) and rollouts
(:mod:`spreadwatch.whatif.rollout`) drive the same :class:`WhatIf` the controllers' way.

Cost per step: O(candidate nodes) to read every score back, plus the index's O(labels + matching workloads)
for the pod itself; loading the index is O(objects) once per simulation.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from spreadwatch.analysis import find_workload
from spreadwatch.errors import InputError
from spreadwatch.index import SpreadIndex
from spreadwatch.jsonform import json_form
from spreadwatch.model import TERMINAL_PHASES, Controller, Pod, intern_labels
from spreadwatch.report import Health, ReportOptions, SpreadReport
from spreadwatch.scoring import (
    Profile,
    WorkloadRef,
    ZoneKey,
    is_workload,
    newest_replicaset,
    representative_pod,
    zone_key,
)
from spreadwatch.snapshot import Snapshot

__all__ = [
    "PendingStep",
    "PlacementStep",
    "RunsSummary",
    "Simulation",
    "StepOutcomes",
    "WhatIf",
    "candidate_scores",
    "check_count",
    "simulate_add",
    "simulate_runs",
]

_POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
_LATEST = 4_102_444_800  # 2100-01-01T00:00:00Z: simulated pods are newer than every real one
BEST_NODE, BEST_ZONE, OTHER, PENDING = "best-node", "best-zone", "other", "pending"
_RUN_SAMPLES = 64  # window starts averaged for each run's step probability (every start up to 64 nodes)


def candidate_scores(index: SpreadIndex, report: SpreadReport) -> dict[str, int]:
    """Every candidate node's score (sorted by node name), read back from ``report``.

    A node listed in the report has its score there, any other candidate scores its zone's
    ``emptyNodeScore`` (the report contract, docs/report.md); the index must list every node with matching
    pods (``max_nodes`` ≥ nodes). O(candidate nodes).
    """
    w = report.workload
    layout = index.candidate_layout(w.key)
    if layout is None:
        return {}
    listed = {e.node: e.score for e in report.nodes}
    empty: dict[ZoneKey | None, int] = {(z.region, z.zone): z.empty_node_score for z in report.zones}
    empty[None] = report.empty_node_score
    out: dict[str, int] = {}
    for zone, names in layout.by_zone.items():
        zone_empty = empty.get(zone, report.empty_node_score)
        for name in names:
            out[name] = listed.get(name, zone_empty)
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class PlacementStep:
    """One simulated replica: the tie set of best nodes and the node it was bound to."""

    step: int
    best_score: int
    best_nodes: tuple[str, ...]  # the first ``top_n`` of the tie set, sorted by name
    best_node_count: int
    node: str
    zone: str
    scores: Mapping[str, int] = field(repr=False)  # every candidate's score before this pod was bound
    nodes_scored: int = 0  # nodes kube-scheduler scored for this pod (its window; 0: every candidate)
    outcome: str = BEST_NODE  # where the pod landed: best-node, best-zone (a best node's zone) or other


_PLACEMENT_FORM = json_form(
    PlacementStep,
    ("step", "best_score", "best_nodes", "best_node_count", "node", "zone"),
    convert={"best_nodes": list},
)


@dataclass(frozen=True, slots=True)
class PendingStep:
    """The replica at which the workload stops being schedulable: no node passes the filters, so it would stay
    Pending (``reason``: kube-scheduler's FailedScheduling message; ``plugin``: the filter that rejected the last
    nodes)."""

    step: int
    reason: str
    plugin: str
    pending: bool = True


_PENDING_FORM = json_form(PendingStep, ("step", "pending", "reason", "plugin"))


def _step_dict(step: Any) -> dict[str, Any]:
    if isinstance(step, PlacementStep):
        return _PLACEMENT_FORM(step)
    return _PENDING_FORM(step) if isinstance(step, PendingStep) else dict(step.to_dict())


@dataclass(frozen=True, slots=True)
class Simulation:
    """The result of ``simulate``: the report before, every step, and the report after."""

    workload: WorkloadRef
    profile: str
    seed: int | None
    initial: SpreadReport
    steps: tuple[Any, ...]  # PlacementStep, PendingStep, or whatif.scaledown.ScaleDownStep
    final: SpreadReport

    @property
    def pending(self) -> PendingStep | None:
        """The replica that would stay Pending (a scale-up's last step), if any."""
        last = self.steps[-1] if self.steps else None
        return last if isinstance(last, PendingStep) else None

    def to_dict(self) -> dict[str, Any]:
        """The ``-o json`` form: ``{"steps": [...], "final": <report>}``."""
        return {"steps": [_step_dict(s) for s in self.steps], "final": self.final.to_dict()}


@dataclass(frozen=True, slots=True)
class StepOutcomes:
    """One step of ``simulate --runs K``: the runs whose pod landed on a best node, in a best node's zone (not
    on a best node) or elsewhere, the nodes scored, and the model's probabilities averaged over the runs."""

    step: int
    nodes_scored: int
    best_node: int
    best_zone: int
    other: int
    p_best_node: float
    p_best_zone: float
    pending: int = 0  # runs in which this replica would stay Pending (no node passes the filters)

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "nodesScored": self.nodes_scored,
            "bestNode": self.best_node,
            "bestZone": self.best_zone,
            "other": self.other,
            "pending": self.pending,
            "probability": {"bestNode": round(self.p_best_node, 4), "bestZone": round(self.p_best_zone, 4)},
        }


@dataclass(frozen=True, slots=True)
class RunsSummary:
    """``simulate --runs K``: how the final spread is distributed over K seeded runs, and the outcomes per step."""

    runs: int
    first_seed: int
    node_skew: Mapping[int, int]  # final node skew -> runs
    zone_skew: Mapping[int, int]
    health: Mapping[str, int]
    steps: tuple[StepOutcomes, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "seeds": [self.first_seed, self.first_seed + self.runs - 1],
            "nodeSkew": {str(k): v for k, v in sorted(self.node_skew.items())},
            "zoneSkew": {str(k): v for k, v in sorted(self.zone_skew.items())},
            "health": dict(sorted(self.health.items())),
            "steps": [s.to_dict() for s in self.steps],
        }


class WhatIf:
    """One workload inside a private index that simulated pods are bound to and real pods removed from.

    Nothing leaves the process: the index is loaded from the snapshot and only this object changes it.
    """

    def __init__(
        self, snapshot: Snapshot, workload: str, profile: Profile, options: ReportOptions | None = None
    ) -> None:
        ctrl = find_workload(snapshot, workload)
        owner = ctrl.controller
        if not is_workload(ctrl) and owner is not None:
            raise InputError(f"workload {workload!r}: ReplicaSet of Deployment {owner.name}; use deployment/...")
        opts = options or ReportOptions()
        self.options = opts
        self.profile = profile
        self.workload: Controller = ctrl
        # every node with matching pods stays listed, so every score is derivable from the report
        self.index = SpreadIndex(profile, dataclasses.replace(opts, max_nodes=max(opts.max_nodes, len(snapshot.nodes))))
        self.index.load(snapshot)
        self._zones = {n.name: zone_key(n.labels, profile) for n in snapshot.nodes}
        self._next_pod, _ = representative_pod(ctrl, snapshot.controllers_in("ReplicaSet", ctrl.namespace))
        self._taken = {p.name for p in snapshot.pods if p.namespace == ctrl.namespace}
        # the workload's active pods (bound or not): what a scale-down or an eviction can remove
        self.pods: dict[str, Pod] = {
            p.name: p
            for p in snapshot.pods
            if p.namespace == ctrl.namespace
            and not p.deleting
            and p.phase not in TERMINAL_PHASES
            and ctrl.selector.matches(p.labels)
        }
        self._added = 0
        self._clock = 0  # simulated pods are created (and Ready) one second apart, after every real pod
        initial = self.report()
        if initial.health is Health.ERROR:
            raise InputError(f"workload {workload!r} cannot be simulated: {'; '.join(initial.reasons)}")

    def report(self) -> SpreadReport:
        """The workload's report in the current simulated state. O(busy nodes) after a change, else O(1)."""
        report = self.index.report_for(self.workload.key)
        if report is None:  # only a ReplicaSet of a Deployment has none, and __init__ refuses those
            raise InputError(f"{self.workload.key}: not a workload")
        return report

    def scores(self) -> dict[str, int]:
        """Every candidate node's score for the next pod, sorted by node name. O(candidate nodes)."""
        return candidate_scores(self.index, self.report())

    @property
    def node_zones(self) -> Mapping[str, ZoneKey | None]:
        """Every node's zone under the profile. O(1)."""
        return self._zones

    def zone_name(self, node: str) -> str:
        zone = self._zones.get(node)
        return zone[1] if zone else ""

    def next_step(self, step: int, rng: random.Random | None) -> PlacementStep | PendingStep:
        """Score the candidates and pick the node: first best by name, or with ``rng`` uniformly at random
        among the best of a uniformly random window (the best of all candidates when all are scored); a
        :class:`PendingStep` when no node passes the filters."""
        report = self.report()
        scores = self.scores()
        if not scores:
            reason = report.unschedulable_reason or "no node passes the filters"
            return PendingStep(step, reason, report.unschedulable_plugin or "")
        best = max(scores.values())
        ties = [n for n, s in scores.items() if s == best]
        model = self.index.window_model(self.workload.key) if rng is not None else None
        scored = 0
        if rng is None:
            node = ties[0]
        elif model is not None and not model.whole:
            node = model.pick(rng.randrange(model.layout.all_nodes), rng)
            scored = model.size
        else:
            node = rng.choice(ties)
        if node in ties:
            outcome = BEST_NODE
        else:
            outcome = BEST_ZONE if self.zone_name(node) in {self.zone_name(t) for t in ties} else OTHER
        return PlacementStep(
            step,
            best,
            tuple(ties[: self.options.top_n]),
            len(ties),
            node,
            self.zone_name(node),
            scores,
            scored,
            outcome,
        )

    @property
    def ref(self) -> WorkloadRef:
        return WorkloadRef.of(self.workload)

    def bind(self, node: str, ready: bool = False) -> Pod:
        """Bind a new replica (the representative next pod) to ``node`` (``ready``: Ready at once, as a
        rollout's new pods are taken to be; node "": created unbound, Pending). O(labels + matching workloads)."""
        template = self._next_pod
        labels = dict(template.labels)
        base = self.workload.name
        while True:
            self._added += 1
            if self.workload.kind == "StatefulSet":
                name = f"{base}-{self.workload.replicas + self._added - 1}"
                labels[_POD_NAME_LABEL] = name
            else:
                name = f"{base}-whatif-{self._added}"
            if name not in self._taken:
                break
        self._taken.add(name)
        self._clock += 1
        pod = msgspec.structs.replace(
            template,
            name=name,
            labels=intern_labels(labels),
            node_name=node,
            phase="Running" if node else "Pending",
            uid=f"whatif-{self._added:08d}",
            created=self._clock + _LATEST,
            ready_after=0 if ready else None,
        )
        self.index.apply(pod)
        return pod

    def resize(self, ctrl: Controller, replicas: int) -> Controller:
        """Set a controller's ``spec.replicas`` in the index (the workload's, a Deployment's ReplicaSet's);
        returns the new record. O(the index's controller update)."""
        changed = msgspec.structs.replace(ctrl, replicas=replicas)
        self.index.apply(changed)
        if ctrl.key == self.workload.key:
            self.workload = changed
        return changed

    def scale_to(self, replicas: int) -> None:
        """The workload's replicas (and a Deployment's newest ReplicaSet's) set to ``replicas``. O(1)."""
        if self.workload.kind == "Deployment":
            rs = newest_replicaset(self.workload, self.index.replicasets_of(self.workload))
            if rs is not None:
                self.resize(rs, replicas)
        self.resize(self.workload, replicas)

    def make_next(self, rs: Controller) -> None:
        """New replicas are ``rs``'s pods from now on (a rollout's new ReplicaSet, added to the index). O(1)."""
        self._next_pod, _ = representative_pod(self.workload, [rs])

    def unbind(self, pod: Pod) -> None:
        """Remove a pod (real or simulated) from the index. O(labels + matching workloads)."""
        self.index.remove("Pod", pod.namespace, pod.name)

    def rebind(self, pod: Pod) -> None:
        """Put a removed pod back."""
        self.index.apply(pod)

    def place(self, count: int, rng: random.Random | None = None) -> list[PlacementStep | PendingStep]:
        """Add ``count`` replicas one by one (binding each), up to the first that would stay Pending;
        O(count × candidate nodes)."""
        steps: list[PlacementStep | PendingStep] = []
        for i in range(1, count + 1):
            step = self.next_step(i, rng)
            steps.append(step)
            if isinstance(step, PendingStep):
                break
            self.bind(step.node)
        return steps


def check_count(count: int) -> None:
    if count < 1:
        raise InputError(f"the number of replicas must be at least 1, got {count}")


def simulate_add(
    snapshot: Snapshot,
    workload: str,
    profile: Profile,
    count: int,
    options: ReportOptions | None = None,
    seed: int | None = None,
) -> Simulation:
    """Scale ``workload`` up by ``count`` replicas, placing them one by one (see the module docstring)."""
    check_count(count)
    sim = WhatIf(snapshot, workload, profile, options)
    initial = sim.report()
    steps = sim.place(count, random.Random(seed) if seed is not None else None)
    sim.scale_to(sim.workload.replicas + count)
    return Simulation(sim.ref, profile.name, seed, initial, tuple(steps), sim.report())


def simulate_runs(
    snapshot: Snapshot,
    workload: str,
    profile: Profile,
    count: int,
    runs: int,
    options: ReportOptions | None = None,
    seed: int = 0,
) -> RunsSummary:
    """``runs`` scale-ups by ``count`` with seeds ``seed``, ``seed+1``, ...: the distribution of the final
    node skew, zone skew and health, and per step where the pods landed (each run's window sampled from its
    seed) with the model's probabilities. One index load; O(runs × count × (candidate nodes + 64 windows))."""
    check_count(count)
    if runs < 1:
        raise InputError(f"--runs must be at least 1, got {runs}")
    sim = WhatIf(snapshot, workload, profile, options)
    node_skew: Counter[int] = Counter()
    zone_skew: Counter[int] = Counter()
    health: Counter[str] = Counter()
    outcomes: list[Counter[str]] = [Counter() for _ in range(count)]  # per step: runs per outcome (or PENDING)
    odds = [[0.0, 0.0] for _ in range(count)]
    scored = [0] * count
    for run in range(runs):
        added: list[Pod] = []
        rng = random.Random(seed + run)
        for i in range(1, count + 1):
            model = sim.index.window_model(sim.workload.key)
            if model is not None:
                chance = model.odds(_RUN_SAMPLES, seed)
                odds[i - 1][0] += chance.best_node or 0.0
                odds[i - 1][1] += chance.best_zone or 0.0
            step = sim.next_step(i, rng)
            if isinstance(step, PendingStep):  # this replica and the ones after it would stay Pending
                for later in outcomes[i - 1 :]:
                    later[PENDING] += 1
                break
            outcomes[i - 1][step.outcome] += 1
            scored[i - 1] = step.nodes_scored or len(step.scores)
            added.append(sim.bind(step.node))
        report = sim.report()
        node_skew[report.node_skew] += 1
        zone_skew[report.zone_skew] += 1
        health[report.health.value] += 1
        for pod in added:
            sim.unbind(pod)
    steps = tuple(
        StepOutcomes(
            i + 1, scored[i], c[BEST_NODE], c[BEST_ZONE], c[OTHER], odds[i][0] / runs, odds[i][1] / runs, c[PENDING]
        )
        for i, c in enumerate(outcomes)
    )
    return RunsSummary(runs, seed, dict(node_skew), dict(zone_skew), dict(health), steps)
