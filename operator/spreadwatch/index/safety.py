"""The safety forecasts' incremental state: each controller's pods and each PodDisruptionBudget's counts.

Kept per namespace, event by event, beside the spread state (:class:`Safety`, one part of
:class:`~spreadwatch.index.SpreadIndex`: it owns these and reads the index's namespaces, zones and candidate
sets through what it is given):

* **owned pods** — each controller's pods (``(kind, name)`` of the pod's controller ownerReference → the pods,
  bound or not, any phase): a workload's own pods, which its controller scales down and its budget counts;
* **budget counts** — for each PodDisruptionBudget, over the pods its selector selects in its namespace (any
  phase, as the disruption controller lists them): how many, how many are healthy (Ready, not being deleted)
  and on which nodes, and their controllers (the scales its expected pods add up). A pod event finds the
  budgets selecting its labels by them (anchored like workloads: a budget is filed under one equality term
  of its selector), so it costs O(labels + budgets selecting it);
* **which budgets a workload has** — those selecting its next pod's labels, found the same way when its
  report is built (their workloads, for the shared-budget note, recounted only after a workload or budget
  of the namespace changed).

The report of a workload is built from these (:meth:`Safety.with_forecasts`, report/forecast.py): its
resilience (zone and node loss under its budget; the room for the replacements from the node loads the
prediction keeps, :meth:`~spreadwatch.index.predicting.Predictor.room_counts`, so a stale prediction's refresh
refreshes it too) and its next scale-down (:mod:`spreadwatch.controllers`).
A pod change dirties its controller's workload and, when a budget's counts change, the workloads that budget
selects; a budget change dirties the workloads it selected and selects; a controller's replica change the
workloads of the budgets counting its pods; a workload added, dropped or whose next pod's labels change, the
workloads sharing a budget with it.

Costs (P: pods of the namespace, B: budgets selecting a pod's labels, W: workloads of the namespace):
``apply(pod)`` O(labels + B) more; ``apply(budget)`` O(P) (one label-map test per distinct map) plus O(W);
a report O(its pods log + nodes with them), plus O(W) per budget after a workload change in its namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from spreadwatch.controllers import (
    BudgetError,
    ReplicaSetSize,
    budget_status,
    colocated_ranks,
    deletion_candidates,
    next_condemned,
    scale_shares,
)
from spreadwatch.index.state import CandidateSet, IndexRecords, NamespaceState, OwnForecasts, Workload
from spreadwatch.model import (
    INVALID_DELETION_COST,
    TERMINAL_PHASES,
    Controller,
    Node,
    OwnerRef,
    Pod,
    PodDisruptionBudget,
    WorkloadKey,
)
from spreadwatch.report import Health, SpreadReport
from spreadwatch.report.forecast import Budget, RoomCounts, resilience_of, scale_down_of, with_safety, zone_outage
from spreadwatch.report.safety import ScaleDown
from spreadwatch.scoring import ZoneKey, newest_replicaset
from spreadwatch.selectors import POSITIVE_OPERATORS, Selector

__all__ = ["BudgetCounts", "Safety", "SafetyNamespace"]

_Owner = tuple[str, str]  # (kind, name) of a pod's controller
_RANKED_KINDS: Final = frozenset({"Deployment", "ReplicaSet", "ReplicationController"})


@dataclass(slots=True)
class BudgetCounts:
    """One PodDisruptionBudget and the pods it selects, kept current pod by pod."""

    pdb: PodDisruptionBudget
    pods: int = 0
    healthy: int = 0
    healthy_on: dict[str, int] = field(default_factory=dict)
    owners: dict[OwnerRef | None, int] = field(default_factory=dict)  # None: pods without a controller


@dataclass(slots=True)
class SafetyNamespace:
    """One namespace's owned pods and budgets."""

    owned: dict[_Owner, list[Pod]] = field(default_factory=dict)
    budgets: dict[str, BudgetCounts] = field(default_factory=dict)
    anchored: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # one term of a budget's selector
    unanchored: set[str] = field(default_factory=set)  # budgets whose selector has no equality/in term
    epoch: int = 0  # bumped when a workload of the namespace is added or dropped, or its next pod's labels change
    #: budget -> the workloads it selects (their next pod's labels), found at ``members_epoch``
    members: dict[str, tuple[WorkloadKey, ...]] = field(default_factory=dict)
    members_epoch: int = -1


def _anchors(selector: Selector) -> tuple[tuple[str, str], ...] | None:
    """The (key, value) pairs of the selector's first positive term with the fewest values: a label set it
    selects has one of them (None: no such term, as for the empty selector, which selects every pod). O(terms)."""
    best = None
    for req in selector.requirements:
        if req.op in POSITIVE_OPERATORS and (best is None or len(req.values) < len(best.values)):
            best = req
    return None if best is None else tuple((best.key, v) for v in best.values)


def _healthy(pod: Pod) -> bool:
    """``countHealthyPods``: not being deleted, and Ready."""
    return not pod.deleting and pod.ready


def _same_for_budgets(old: Pod | None, new: Pod | None) -> bool:
    """Whether two records of a pod count the same in any budget: same labels, node, controller and health."""
    return (
        old is not None
        and new is not None
        and old.labels is new.labels
        and old.node_name == new.node_name
        and old.controller == new.controller
        and _healthy(old) == _healthy(new)
    )


def _owner_of(pod: Pod) -> _Owner | None:
    c = pod.controller
    return None if c is None else (c.kind, c.name)


class Safety:
    """Owned pods, budgets, and the forecasts they give each report (see the module docstring). O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`: its namespaces, node zones and report
    options), ``touch`` (dirty a workload's report), ``candidate_set`` (a workload's candidate set),
    ``replicasets_of`` (a namespace's ReplicaSets by their controller's name) and ``room_counts`` (the copies of a
    workload's next pod its candidate nodes take, per zone and node; None without the prediction's loads). The
    index tells it each change after its own state has taken it (``pod_changed``, ``members_changed``,
    ``controller_changed``, ``node_changed``, ...).
    """

    __slots__ = ("_candidate_set", "_ns", "_replicasets_of", "_room_counts", "_safety", "_touch", "_zones", "options")

    def __init__(
        self,
        records: IndexRecords,
        touch: Callable[[Workload, WorkloadKey], None],
        candidate_set: Callable[[Workload], CandidateSet],
        replicasets_of: Callable[[NamespaceState, str], list[Controller]],
        room_counts: Callable[[Workload, CandidateSet], RoomCounts | None],
    ) -> None:
        self._ns, self._zones, self.options = records.namespaces, records.zones, records.options
        self._touch, self._candidate_set, self._replicasets_of = touch, candidate_set, replicasets_of
        self._room_counts = room_counts
        self._safety: dict[str, SafetyNamespace] = {}

    def _safety_of(self, namespace: str) -> SafetyNamespace:
        found = self._safety.get(namespace)
        if found is None:
            found = self._safety[namespace] = SafetyNamespace()
        return found

    # --- pods ------------------------------------------------------------------------------------------------

    def pods_filed(self, pods: Sequence[Pod]) -> None:
        """Pods a first listing filed in bulk (index/loading.py: without the event path), the index holding
        none of them before: each under its controller and in the counts of its namespace's budgets held so
        far (a budget listed later scans the namespace). O(pods × (1 + B))."""
        for pod in pods:
            self.pod_changed(pod.namespace, None, pod)

    def pod_changed(self, namespace: str, old: Pod | None, new: Pod | None) -> None:
        """A pod added or changed (``old`` its previous record, if any), or removed (``new`` None): under its
        controller and in its budgets' counts; their workloads dirtied. O(labels + B)."""
        sns = self._safety_of(namespace)
        touched: set[WorkloadKey] = set()
        for pod, gone in ((old, True), (new, False)):
            owner = _owner_of(pod) if pod is not None else None
            if pod is None or owner is None:
                continue
            pods = sns.owned.get(owner)
            if gone:
                if pods is not None:
                    pods[:] = [p for p in pods if p.name != pod.name]
                    if not pods:
                        del sns.owned[owner]
            elif pods is None:
                sns.owned[owner] = [pod]
            else:
                pods.append(pod)
            key = self._workload_of(namespace, owner)
            if key is not None:
                touched.add(key)
        if sns.budgets and not _same_for_budgets(old, new):
            for name in self._count_budgets(sns, old, -1) | self._count_budgets(sns, new, 1):
                touched.update(self._budget_workloads(namespace, sns.budgets[name]))
        self._touch_keys(namespace, touched)

    def _count_budgets(self, sns: SafetyNamespace, pod: Pod | None, delta: int) -> set[str]:
        """Add (``delta`` 1) or take out (-1) one pod from the counts of the budgets selecting it; returns those
        whose counts changed. O(labels + B)."""
        if pod is None:
            return set()
        names = self._budgets_selecting(sns, pod.labels)
        for name in names:
            _add(sns.budgets[name], pod, delta)
        return set(names)

    def _budgets_selecting(self, sns: SafetyNamespace, labels: Mapping[str, str]) -> tuple[str, ...]:
        """The budgets whose selector selects ``labels``, by name: those filed under one of its labels, and
        the unanchored ones, tested. O(labels + B) (not cached: a cache per label map costs more memory than
        the lookups cost time)."""
        anchored = sns.anchored
        names: set[str] | None = set(sns.unanchored) if sns.unanchored else None
        for item in labels.items():
            hit = anchored.get(item)
            if hit:
                names = hit | names if names else hit
        if not names:
            return ()
        budgets = sns.budgets
        if len(names) == 1:
            (name,) = names
            return (name,) if budgets[name].pdb.selector.matches(labels) else ()
        return tuple(sorted(n for n in names if budgets[n].pdb.selector.matches(labels)))

    # --- budgets ---------------------------------------------------------------------------------------------

    def apply_budget(self, pdb: PodDisruptionBudget, scan: bool = True) -> None:
        """Add or update a budget: its counts from the namespace's pods, and the workloads it selected or
        selects are dirtied (without ``scan``, a bulk load: it counts every budget in one pass, and every
        workload is dirty anyway). O(P + W)."""
        sns = self._safety_of(pdb.namespace)
        before = self._drop_budget(sns, pdb.namespace, pdb.name, scan)
        counts = sns.budgets[pdb.name] = BudgetCounts(pdb)
        anchored = _anchors(pdb.selector)
        if anchored is None:
            sns.unanchored.add(pdb.name)
        else:
            for item in anchored:
                sns.anchored.setdefault(item, set()).add(pdb.name)
        sns.members_epoch = -1
        ns = self._ns.get(pdb.namespace)
        if scan and ns is not None:
            selected: dict[int, bool] = {}  # id(label map) -> selected (the pods of one ReplicaSet share one)
            matches = pdb.selector.matches
            for pod in ns.pods.values():
                hit = selected.get(id(pod.labels))
                if hit is None:
                    hit = selected[id(pod.labels)] = matches(pod.labels)
                if hit:
                    _add(counts, pod, 1)
        if scan:
            self._touch_keys(pdb.namespace, set(before) | set(self._budget_workloads(pdb.namespace, counts)))

    def remove_budget(self, namespace: str, name: str) -> None:
        """Forget a budget (a DELETED event) and dirty the workloads it selected. O(W)."""
        sns = self._safety.get(namespace)
        if sns is not None:
            self._touch_keys(namespace, set(self._drop_budget(sns, namespace, name)))

    def _drop_budget(
        self, sns: SafetyNamespace, namespace: str, name: str, dirty: bool = True
    ) -> tuple[WorkloadKey, ...]:
        counts = sns.budgets.get(name)
        if counts is None:
            return ()
        before = self._budget_workloads(namespace, counts) if dirty else ()  # (while it is still held)
        del sns.budgets[name]
        sns.unanchored.discard(name)
        for item in _anchors(counts.pdb.selector) or ():
            names = sns.anchored.get(item)
            if names is not None:
                names.discard(name)
                if not names:
                    del sns.anchored[item]
        sns.members_epoch = -1
        return before

    def _budget_workloads(self, namespace: str, counts: BudgetCounts) -> tuple[WorkloadKey, ...]:
        """The workloads whose next pod the budget selects. O(1), or after a workload of the namespace changed
        O(W × (labels + budgets selecting each)) once for all its budgets."""
        sns = self._safety_of(namespace)
        if sns.members_epoch != sns.epoch:
            members: dict[str, list[WorkloadKey]] = {}
            ns = self._ns.get(namespace)
            for key, w in sorted(ns.workloads.items()) if ns is not None else ():
                if w.pod is not None:
                    for name in self._budgets_selecting(sns, w.pod.labels):
                        members.setdefault(name, []).append(key)
            sns.members = {name: tuple(keys) for name, keys in members.items()}
            sns.members_epoch = sns.epoch
        return sns.members.get(counts.pdb.name, ())

    def owned_pods(self, namespace: str, kind: str, name: str) -> list[Pod]:
        """The pods whose controller is ``kind/name`` (any phase; a Deployment's: its ReplicaSets'), for
        ``simulate`` and the tests. O(its pods)."""
        ns = self._ns.get(namespace)
        ctrl = ns.controllers.get(kind, {}).get(name) if ns is not None else None
        if ctrl is None or ns is None:
            return list(self._safety_of(namespace).owned.get((kind, name), ()))
        return list(self._pods_of(self._safety_of(namespace), ns, ctrl))

    def replicasets_of(self, deployment: Controller) -> list[Controller]:
        """The ReplicaSets a Deployment controls, by name. O(its ReplicaSets)."""
        ns = self._ns.get(deployment.namespace)
        return sorted(self._deployment_replicasets(ns, deployment), key=lambda rs: rs.name) if ns else []

    def budget_count(self) -> int:
        """PodDisruptionBudgets held. O(namespaces)."""
        return sum(len(sns.budgets) for sns in self._safety.values())

    def budget_keys(self) -> set[tuple[str, str]]:
        """``(namespace, name)`` of every budget held (reconciling after a watch gap). O(budgets)."""
        return {(ns, name) for ns, sns in self._safety.items() for name in sns.budgets}

    # --- workloads and controllers ---------------------------------------------------------------------------

    def _workload_of(self, namespace: str, owner: _Owner) -> WorkloadKey | None:
        """The workload whose pods a controller's are: a Deployment's for its ReplicaSet's. O(1)."""
        ns = self._ns.get(namespace)
        if ns is None:
            return None
        kind, name = owner
        if kind == "ReplicaSet":
            rs = ns.controllers.get("ReplicaSet", {}).get(name)
            if rs is not None and rs.controller is not None and rs.controller.kind == "Deployment":
                kind, name = "Deployment", rs.controller.name
        key = WorkloadKey(namespace, kind, name)
        return key if key in ns.workloads else None

    def _touch_keys(self, namespace: str, keys: Iterable[WorkloadKey]) -> None:
        ns = self._ns.get(namespace)
        if ns is None:
            return
        for key in keys:
            w = ns.workloads.get(key)
            if w is not None:
                self._touch(w, key)

    def workloads_added(self, ctrls: Iterable[Controller]) -> None:
        """Workloads added in bulk (their controllers): as :meth:`members_changed`, namespace by namespace.
        O(workloads), plus :meth:`members_changed`'s cost per namespace with budgets."""
        by_ns: dict[str, list[Mapping[str, str] | None]] = {}
        for ctrl in ctrls:
            ns = self._ns.get(ctrl.namespace)
            w = ns.workloads.get(ctrl.key) if ns is not None else None
            by_ns.setdefault(ctrl.namespace, []).append(w.pod.labels if w is not None and w.pod is not None else None)
        for namespace, labels in by_ns.items():
            self.members_changed(namespace, labels)

    def members_changed(self, namespace: str, labels: Iterable[Mapping[str, str] | None]) -> None:
        """Workloads of the namespace with next pods of ``labels`` were added, dropped or relabelled (leaving
        and joining budgets): the budgets' members are recounted (lazily) and the workloads sharing a budget
        selecting any of those labels are dirtied (their shared-budget note). O(1) without budgets, else
        O(W + labels × B)."""
        sns = self._safety_of(namespace)
        sns.epoch += 1
        if not sns.budgets:
            return
        names = {n for lab in labels if lab is not None for n in self._budgets_selecting(sns, lab)}
        touched: set[WorkloadKey] = set()
        for name in names:
            touched.update(self._budget_workloads(namespace, sns.budgets[name]))
        self._touch_keys(namespace, touched)

    def controller_changed(self, ns: NamespaceState, old: Controller | None, new: Controller | None) -> None:
        """A controller's scale (or identity) counts in the expected pods of the budgets selecting its pods:
        their workloads are dirtied when it changes. O(budgets of the namespace × their controllers)."""
        ctrl = new or old
        if ctrl is None:
            return
        sns = self._safety.get(ctrl.namespace)
        if sns is None or not sns.budgets:
            return
        if (
            old is not None
            and new is not None
            and (old.replicas, old.uid, old.controller)
            == (
                new.replicas,
                new.uid,
                new.controller,
            )
        ):
            return
        names = {ctrl.name}
        if ctrl.kind == "Deployment":
            names.update(rs.name for rs in self._replicasets_of(ns, ctrl.name))
        touched: set[WorkloadKey] = set()
        for counts in sns.budgets.values():
            if any(ref is not None and ref.name in names for ref in counts.owners):
                touched.update(self._budget_workloads(ctrl.namespace, counts))
        self._touch_keys(ctrl.namespace, touched)

    def node_changed(self, old: Node | None, old_zone: ZoneKey | None, new: Node | None) -> None:
        """A node changing zone moves the Ready pods on it between zones: dirty the workloads owning pods
        there (a candidate node's change already dirties the workloads whose candidate set it changes).
        O(1) unless its zone changed, then O(pods)."""
        if old is None or new is None or old_zone == self._zones.get(new.name):
            return
        for name, sns in self._safety.items():
            keys = {
                key
                for owner, pods in sns.owned.items()
                if any(p.node_name == new.name for p in pods) and (key := self._workload_of(name, owner)) is not None
            }
            self._touch_keys(name, keys)

    # --- bulk load -------------------------------------------------------------------------------------------

    def load(self, pdbs: Sequence[PodDisruptionBudget], fresh: bool) -> None:
        """A snapshot's budgets (``pdbs``). Into an empty index (``fresh``: its pods were filed without the event path)
        every held pod is filed under its controller and the budgets are counted in one pass over the pods
        of the namespaces that have any; else each budget scans its namespace. O(pods × (1 + B))."""
        if not fresh:
            for pdb in pdbs:
                self.apply_budget(pdb)
            return
        for name, ns in self._ns.items():
            owned: dict[_Owner, list[Pod]] = {}
            for pod in ns.pods.values():
                owner = _owner_of(pod)
                if owner is not None:
                    found = owned.get(owner)
                    if found is None:
                        owned[owner] = [pod]
                    else:
                        found.append(pod)
            if owned:
                self._safety_of(name).owned = owned
        for pdb in pdbs:
            self.apply_budget(pdb, scan=False)
        for namespace, sns in self._safety.items():
            held = self._ns.get(namespace)
            if not sns.budgets or held is None:
                continue
            budgets = sns.budgets
            for name, counts in budgets.items():  # (recounted: budgets held before the load too)
                budgets[name] = BudgetCounts(counts.pdb)
            labels: object = None
            names: tuple[str, ...] = ()
            for pod in held.pods.values():
                if pod.labels is not labels:  # (a listing's pods of one ReplicaSet share one label map)
                    labels, names = pod.labels, self._budgets_selecting(sns, pod.labels)
                for name in names:
                    _add(budgets[name], pod, 1)

    # --- the forecasts in a report ---------------------------------------------------------------------------

    def own_forecasts(self, w: Workload, report: SpreadReport) -> OwnForecasts | None:
        """The forecasts' parts made from the workload's own pods and budgets alone — its budget, its next
        scale-down and the notes on bad input — (None for an Error report, which has none): what a refresh of
        its stale prediction reuses (:meth:`with_forecasts`). O(its pods log)."""
        if report.health is Health.ERROR:
            return None
        ctrl = w.ctrl
        namespace = ctrl.namespace
        sns = self._safety_of(namespace)
        terminal = TERMINAL_PHASES
        pods: list[Pod] = []
        invalid: list[str] = []
        for p in self._pods_of(sns, self._ns[namespace], ctrl):
            if p.deleting or p.phase in terminal:
                continue
            pods.append(p)
            if p.deletion_cost == INVALID_DELETION_COST:
                invalid.append(p.name)
        notes: list[str] = []
        budget = self._budget_of(sns, w, notes) if sns.budgets else None
        if invalid and ctrl.kind in _RANKED_KINDS:
            invalid.sort()
            more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
            notes.append(
                f"InvalidPodDeletionCost: pod {invalid[0]}{more}: controller.kubernetes.io/pod-deletion-cost "
                "is not an int32; the ReplicaSet controller counts it as 0"
            )
        scale_down = self._scale_down(w, self._ns[namespace], sns, pods, report, self._candidate_set(w))
        return OwnForecasts(budget, scale_down, tuple(notes))

    def with_forecasts(self, w: Workload, report: SpreadReport, own: OwnForecasts | None) -> SpreadReport:
        """The workload's report with its resilience (the room for replacements counted now, from the node loads),
        scale-down forecast and safety verdict, ``own`` from :meth:`own_forecasts` (the report unchanged
        without). O(its pods + nodes with them)."""
        if own is None:
            return report
        ctrl = w.ctrl
        ready_on: dict[str, int] = {}
        for p in self._pods_of(self._safety_of(ctrl.namespace), self._ns[ctrl.namespace], ctrl):
            if p.ready_after is not None and p.node_name and not p.deleting and p.phase not in TERMINAL_PHASES:
                ready_on[p.node_name] = ready_on.get(p.node_name, 0) + 1
        candidates = self._candidate_set(w)
        layout = candidates.layout
        resilience = resilience_of(
            ready_on, ctrl.replicas, self._zones, layout, candidates.names, own.budget,
            self._room_counts(w, candidates),
        )  # fmt: skip
        unsafe = zone_outage(resilience, sum(ready_on.values()), ctrl.replicas, layout, self.options.thresholds)
        return with_safety(report, resilience, own.scale_down, unsafe, own.notes)

    def _pods_of(self, sns: SafetyNamespace, ns: NamespaceState, ctrl: Controller) -> Sequence[Pod]:
        """A workload's own pods (a Deployment's: its ReplicaSets'; the index's own list otherwise: read only).
        O(its pods) for a Deployment, O(1) otherwise."""
        if ctrl.kind != "Deployment":
            return sns.owned.get((ctrl.kind, ctrl.name), ())
        owned = sns.owned
        return [p for rs in self._deployment_replicasets(ns, ctrl) for p in owned.get(("ReplicaSet", rs.name), ())]

    def _deployment_replicasets(self, ns: NamespaceState, deployment: Controller) -> list[Controller]:
        """The ReplicaSets a Deployment controls (``getReplicaSetsWithSameController``: by the controller's
        uid). O(its ReplicaSets)."""
        return [
            rs
            for rs in self._replicasets_of(ns, deployment.name)
            if rs.controller is not None and (not deployment.uid or rs.controller.uid in ("", deployment.uid))
        ]

    def _budget_of(self, sns: SafetyNamespace, w: Workload, notes: list[str]) -> Budget | None:
        """The workload's budget: the first by name of those selecting its next pod that the disruption
        controller can sync; a note for each it cannot and for one shared with other workloads. O(B + its
        controllers), O(W) per budget after a workload change in the namespace."""
        if w.pod is None or not sns.budgets:
            return None
        names = self._budgets_selecting(sns, w.pod.labels)
        chosen: Budget | None = None
        namespace = w.ctrl.namespace
        ns = self._ns[namespace]

        def lookup(kind: str, name: str) -> Controller | None:
            return ns.controllers.get(kind, {}).get(name)

        for name in names:
            counts = sns.budgets[name]
            try:
                status = budget_status(counts.pdb, counts.pods, counts.healthy, counts.owners, lookup)
            except BudgetError as err:
                notes.append(
                    f"InvalidPodDisruptionBudget: {name}: {err}; the disruption controller allows no disruption"
                )
                continue
            if chosen is None:
                chosen = Budget(name, status, counts.healthy_on, len(names))
                shared = [k for k in self._budget_workloads(namespace, counts) if k != w.ctrl.key]
                if shared:
                    others = ", ".join(f"{k.kind} {k.name}" for k in shared[:3]) + (", ..." if len(shared) > 3 else "")
                    notes.append(
                        f"PdbSelectsSeveralWorkloads: PodDisruptionBudget {name} selects the pods of "
                        f"{len(shared) + 1} workloads (also {others}): its budget is theirs together"
                    )
        return chosen

    def _scale_down(
        self,
        w: Workload,
        ns: NamespaceState,
        sns: SafetyNamespace,
        pods: list[Pod],
        report: SpreadReport,
        candidates: CandidateSet,
    ) -> ScaleDown | None:
        """The next scale-down by one replica (None when it would delete no pod). O(its pods log)."""
        ctrl = w.ctrl
        if ctrl.replicas <= 0 or not pods:
            return None
        replica_set = ""
        if ctrl.kind == "StatefulSet":
            victim = next_condemned(pods, ctrl.replicas - 1, ctrl.scaling.ordinal_start)
            chosen = [victim] if victim is not None else []
        elif ctrl.kind == "Deployment":
            chosen, replica_set = self._deployment_candidates(ns, sns, ctrl, pods)
        else:
            if len(pods) <= ctrl.replicas - 1:
                return None
            related = self._related_pods(ns, sns, ctrl)
            chosen = deletion_candidates(pods, colocated_ranks(pods, related) if related else None)
        names = candidates.names
        busy = {n: c for n, c in w.counts.items() if c > 0 and n in names} if w.counting else {}
        selector = w.selector

        def counted(pod: Pod) -> bool:
            return pod.counts and pod.node_name in names and selector is not None and selector.matches(pod.labels)

        return scale_down_of(
            report,
            chosen,
            ctrl.replicas - 1,
            counted,
            busy,
            candidates.layout,
            self._zones,
            self.options.thresholds,
            replica_set,
        )

    def _related_pods(self, ns: NamespaceState, sns: SafetyNamespace, ctrl: Controller) -> list[Pod]:
        """``getIndirectlyRelatedPods``: the pods of every controller of the kind with the same controller
        (by uid) — none without a controller. O(their pods)."""
        owner = ctrl.controller
        if owner is None:
            return []
        return [
            p
            for other in ns.controllers.get(ctrl.kind, {}).values()
            if other.controller is not None and other.controller.uid == owner.uid
            for p in sns.owned.get((ctrl.kind, other.name), ())
        ]

    def _deployment_candidates(
        self, ns: NamespaceState, sns: SafetyNamespace, deployment: Controller, pods: list[Pod]
    ) -> tuple[list[Pod], str]:
        """A Deployment shrunk by one: the ReplicaSet ``scale`` takes the replica from and its candidates,
        ranked against every pod of the Deployment (``pods``: its active ones). O(ReplicaSets + pods log)."""
        replicasets = self._deployment_replicasets(ns, deployment)
        target = deployment.replicas - 1
        on_node: dict[str, int] = {}
        for p in pods:
            on_node[p.node_name] = on_node.get(p.node_name, 0) + 1
        active = [rs for rs in replicasets if rs.replicas > 0]
        if len(active) == 1:  # the usual case: the one active ReplicaSet takes the new replica count
            shares = {active[0].name: target}
        else:
            newest = newest_replicaset(deployment, replicasets)
            sizes = [ReplicaSetSize(rs, rs.replicas, rs.scaling.available) for rs in replicasets]
            new = next((s for s in sizes if newest is not None and s.rs.name == newest.name), None)
            old = [s for s in sizes if s is not new]
            shares = scale_shares(msgspec.structs.replace(deployment, replicas=target), new, old)
        replicas = {rs.name: rs.replicas for rs in replicasets}
        out: dict[str, Pod] = {}
        shrunk = ""
        for name, size in sorted(shares.items()):
            if size >= replicas.get(name, 0):
                continue
            rs_pods = [p for p in pods if p.controller is not None and p.controller.name == name]
            if len(rs_pods) <= size:
                continue
            shrunk = shrunk or name
            for p in deletion_candidates(rs_pods, [on_node[p.node_name] for p in rs_pods]):
                out[p.name] = p
        return sorted(out.values(), key=_name), shrunk


def _name(pod: Pod) -> str:
    return pod.name


def _add(counts: BudgetCounts, pod: Pod, delta: int) -> None:
    """Count (``delta`` 1) or uncount (-1) one selected pod in a budget. O(1)."""
    counts.pods += delta
    owner = pod.controller
    left = counts.owners.get(owner, 0) + delta
    if left > 0:
        counts.owners[owner] = left
    else:
        counts.owners.pop(owner, None)
    if _healthy(pod):
        counts.healthy += delta
        node = pod.node_name
        if node:
            on = counts.healthy_on.get(node, 0) + delta
            if on > 0:
                counts.healthy_on[node] = on
            else:
                counts.healthy_on.pop(node, None)
