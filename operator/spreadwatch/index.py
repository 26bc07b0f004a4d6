"""The incremental spread index: cluster state and every workload's spread, kept current event by event.

The operator's handlers and ``spreadwatch analyze`` both feed records into a :class:`SpreadIndex` and read
:class:`~spreadwatch.report.SpreadReport` s back. Data structures (per namespace):

* **label groups** — counting pods (bound, not deleting, not terminal) grouped by their exact label set
  (pods of one ReplicaSet share one), each with a node → count map and a cached list of the workloads whose
  spreading selector matches that label set;
* **anchor index** — for each workload, one equality/``in`` requirement of its selector (its *anchor*)
  indexes it under ``(key, value)``; a new label set only tests the workloads anchored on one of its labels
  (plus the few whose selectors have no such requirement);
* **workload state** — representative next pod, spreading selector, and a sparse node → matching-pod count
  map (only nodes with matching pods);
* **candidate sets** — cached per scheduling-constraint signature (tolerations, nodeSelector, required
  affinity), since most workloads share one; rebuilt lazily after a node change.

Costs (W: workloads in the namespace, G: label groups in the namespace, A: workloads a pod matches):

==================================  ==========================================================================
``apply(pod)`` / ``remove_pod``     O(labels + A) — O(labels + anchored candidates) for a new label set
``apply(service)`` / controller     O(W) selector checks, plus O(G) recount per workload whose selector changed
``apply(node)`` / ``remove_node``   O(signatures + W); dirties only workloads whose candidate set changes
                                    (rebuilt lazily, O(nodes) per signature)
``report_for`` (dirty workload)     O(nodes with matching pods + zones × top_n)
``load(snapshot)``                  O(objects + workloads × G)
==================================  ==========================================================================

Only slim records are stored (see :mod:`spreadwatch.model`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from spreadwatch.errors import SelectorError
from spreadwatch.model import Controller, Namespace, Node, Pod, PodTemplate, Record, Service, WorkloadKey
from spreadwatch.model import label_key as label_key_of
from spreadwatch.report import CandidateLayout, Comparison, ReportOptions, SpreadReport, build_report, error_report
from spreadwatch.report.topology import build_topology_report
from spreadwatch.scoring import (
    Profile,
    SelectorMode,
    SpreadSelector,
    WorkloadRef,
    ZoneKey,
    build_spread_selector,
    exclusion_reason,
    is_workload,
    representative_pod,
    skip_reason,
    zone_key,
)
from spreadwatch.scoring.topology import SpreadPlan, plan_spread
from spreadwatch.scoring.topology_groups import CandidateGroups, Signature, group_candidates, score_groups
from spreadwatch.selectors import Operator, Selector
from spreadwatch.snapshot import Snapshot, paused_gc

__all__ = ["IndexSizes", "SpreadIndex"]

_LabelKey = frozenset[tuple[str, str]]
_POSITIVE = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)


@dataclass(slots=True)
class _Group:
    labels: Mapping[str, str]
    nodes: dict[str, int] = field(default_factory=dict)
    matches: list[WorkloadKey] | None = None
    epoch: int = -1  # the namespace epoch ``matches`` was computed at


@dataclass(slots=True)
class _Workload:
    ctrl: Controller
    ref: WorkloadRef
    pod: Pod | None = None
    standin: Controller | None = None
    selector: SpreadSelector | None = None
    skip: str = ""
    error: str = ""
    anchors: tuple[tuple[str, str], ...] | None = ()  # None: no anchor, tested against every new label set
    counts: dict[str, int] = field(default_factory=dict)
    report: SpreadReport | None = None
    selector_text: str = ""
    sig: int = -1  # id of the scheduling-constraint signature (candidate sets are cached per signature)
    plan: SpreadPlan | None = None  # PodTopologySpread (v1.29): the scoring constraints
    multi: bool = False  # v1.29: the constraints count pods with different selectors
    compared: tuple[SpreadReport, SpreadReport, SpreadReport] | None = None  # (own, other, with comparison)

    @property
    def counting(self) -> bool:
        """Whether pods can count for this workload at all."""
        return not self.skip and not self.error and self.selector is not None and not self.selector.empty


@dataclass(slots=True)
class _Namespace:
    pods: dict[str, Pod] = field(default_factory=dict)
    groups: dict[_LabelKey, _Group] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    controllers: dict[str, dict[str, Controller]] = field(default_factory=dict)
    workloads: dict[WorkloadKey, _Workload] = field(default_factory=dict)
    anchor_index: dict[tuple[str, str], set[WorkloadKey]] = field(default_factory=dict)
    unanchored: set[WorkloadKey] = field(default_factory=set)
    group_index: dict[tuple[str, str], set[_LabelKey]] = field(default_factory=dict)  # label -> groups having it
    epoch: int = 0  # bumped whenever a workload selector changes: invalidates every group's ``matches``
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Candidates:
    names: frozenset[str]
    layout: CandidateLayout
    template: PodTemplate  # the constraints it was computed for (a node change re-checks one node against it)


@dataclass(frozen=True, slots=True)
class IndexSizes:
    """Object counts, for self-metrics."""

    nodes: int
    pods: int
    services: int
    controllers: int
    workloads: int
    label_groups: int
    candidate_sets: int


def _anchors(selector: SpreadSelector | None) -> tuple[tuple[str, str], ...] | None:
    """Index keys for a selector: any label set it matches has one of them. None: cannot be anchored."""
    if selector is None or selector.empty:
        return ()

    def best(sel: Selector) -> tuple[tuple[str, str], ...] | None:
        options = [r for r in sel.requirements if r.op in _POSITIVE]
        if not options:
            return None
        req = min(options, key=lambda r: len(r.values))
        return tuple((req.key, v) for v in req.values)

    if selector.mode is SelectorMode.ANY_OF:
        keys: list[tuple[str, str]] = []
        for sel in selector.selectors:
            found = best(sel)
            if found is None:
                return None
            keys.extend(found)
        return tuple(keys)
    for sel in selector.selectors:
        found = best(sel)
        if found is not None:
            return found
    return None


def _best_set(report: SpreadReport, layout: CandidateLayout | None) -> set[str]:
    """Every candidate node with the report's best score: listed ones, and the unlisted (empty) nodes of the
    zones whose emptyNodeScore is the best. O(candidates)."""
    if layout is None:
        return set()
    listed = {e.node: e.score for e in report.nodes}
    best = report.best_score
    empty = {(z.region, z.zone): z.empty_node_score for z in report.zones}
    out = {n for n, s in listed.items() if s == best}
    for zone, names in layout.by_zone.items():
        score = report.empty_node_score if zone is None else empty.get(zone, report.empty_node_score)
        if score == best:
            out.update(n for n in names if n not in listed)
    return out


class SpreadIndex:
    """Incremental cluster state and per-workload spread (see the module docstring for costs).

    Implements ``scoring.ClusterLookup``. Not thread-safe: the operator calls it from one event loop.
    """

    def __init__(self, profile: Profile, options: ReportOptions | None = None, compare: Profile | None = None) -> None:
        self.profile = profile
        self.options = options or ReportOptions()
        #: ``--compare-profile``: a second index fed the same events; reports carry its ``comparison``
        self.shadow = SpreadIndex(compare, self.options) if compare is not None else None
        self._ns: dict[str, _Namespace] = {}
        self._nodes: dict[str, Node] = {}
        self._zones: dict[str, ZoneKey | None] = {}
        self._candidates: dict[int, _Candidates] = {}  # signature id -> candidate set
        self._topo_groups: dict[tuple[int, tuple[str, ...]], CandidateGroups] = {}  # v1.29, per candidate set
        self._node_sigs: dict[tuple[str, ...], dict[str, Signature]] = {}  # v1.29: node signatures per key tuple
        self._sig_ids: dict[tuple[object, ...], int] = {}  # constraint signature -> small int (cheap to hash)
        self._dirty: set[WorkloadKey] = set()
        self._removed: set[WorkloadKey] = set()

    # --- ClusterLookup ------------------------------------------------------------------------------------

    def services_in(self, namespace: str) -> Iterable[Service]:
        ns = self._ns.get(namespace)
        return ns.services.values() if ns else ()

    def controllers_in(self, kind: str, namespace: str) -> Iterable[Controller]:
        ns = self._ns.get(namespace)
        return ns.controllers.get(kind, {}).values() if ns else ()

    def controller(self, key: WorkloadKey) -> Controller | None:
        namespace, kind, name = key
        ns = self._ns.get(namespace)
        if ns is None:
            return None
        found = ns.controllers.get(kind, {}).get(name)
        if found is None and kind == "ReplicaSet":
            for w in ns.workloads.values():
                if w.standin is not None and w.standin.name == name:
                    return w.standin
        return found

    # --- bulk load ----------------------------------------------------------------------------------------

    def load(self, snapshot: Snapshot) -> None:
        """Add every record of a snapshot; workloads are computed once at the end. O(objects + W×G)."""
        with paused_gc():
            fresh = not any(ns.workloads for ns in self._ns.values())
            records: list[Record] = [*snapshot.nodes, *snapshot.namespaces, *snapshot.services]
            if not fresh:
                records.extend(snapshot.pods)
            for record in records:
                self.apply(record)
            if fresh:
                self._count_bulk(snapshot.pods)
            for ctrl in snapshot.controllers:
                self._ns_of(ctrl.namespace).controllers.setdefault(ctrl.kind, {})[ctrl.name] = ctrl
            for ctrl in snapshot.controllers:
                if is_workload(ctrl):
                    self._add_workload(ctrl)
        if self.shadow is not None:
            self.shadow.load(snapshot)

    # --- events -------------------------------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        """Add or update one object (an informer ADDED/MODIFIED event)."""
        if self.shadow is not None:
            self.shadow.apply(record)
        if isinstance(record, Pod):
            self._apply_pod(record)
        elif isinstance(record, Node):
            self._apply_node(record)
        elif isinstance(record, Service):
            self._apply_service(record)
        elif isinstance(record, Controller):
            self._apply_controller(record)
        elif isinstance(record, Namespace):
            self._ns_of(record.name).labels = record.labels

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """Remove one object (a DELETED event); unknown objects are ignored."""
        if self.shadow is not None:
            self.shadow.remove(kind, namespace, name)
        if kind == "Pod":
            ns = self._ns.get(namespace)
            old = ns.pods.pop(name, None) if ns else None
            if ns is not None and old is not None:
                self._uncount(ns, old)
        elif kind == "Node":
            old_node = self._nodes.pop(name, None)
            if old_node is not None:
                self._node_changed(old_node, self._zones.pop(name, None), None)
        elif kind == "Service":
            ns = self._ns.get(namespace)
            svc = ns.services.pop(name, None) if ns else None
            if ns is not None and svc is not None:
                self._refresh_matching(ns, svc.selector, None)
        elif kind == "Namespace":
            ns = self._ns.get(name)
            if ns is not None:
                ns.labels = {}
        else:
            ns = self._ns.get(namespace)
            ctrl = ns.controllers.get(kind, {}).pop(name, None) if ns else None
            if ns is not None and ctrl is not None:
                self._controller_changed(ns, ctrl, None)

    # --- reading ------------------------------------------------------------------------------------------

    def workload_keys(self) -> list[WorkloadKey]:
        return sorted(k for ns in self._ns.values() for k in ns.workloads)

    def report_for(self, key: WorkloadKey) -> SpreadReport | None:
        """The current report of a workload (rebuilt if it changed). O(busy nodes) when dirty, else O(1)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None:
            return None
        if w.report is None:
            w.report = self._build(w)
        if self.shadow is None:
            return w.report
        other = self.shadow.report_for(key)
        if other is None:
            return w.report
        if w.compared is None or w.compared[0] is not w.report or w.compared[1] is not other:
            w.compared = (w.report, other, self._with_comparison(w.report, other, key))
        return w.compared[2]

    def _with_comparison(self, report: SpreadReport, other: SpreadReport, key: WorkloadKey) -> SpreadReport:
        """``report`` plus the shadow profile's best score/nodes and whether the best sets overlap. O(candidates)."""
        assert self.shadow is not None
        mine = _best_set(report, self.candidate_layout(key))
        theirs = _best_set(other, self.shadow.candidate_layout(key))
        comparison = Comparison(
            self.shadow.profile.name, other.best_score, other.best_nodes, other.best_node_count, bool(mine & theirs)
        )
        return dataclasses.replace(report, comparison=comparison)

    def reports(self) -> list[SpreadReport]:
        """Every workload's report, sorted by namespace, kind, name (the GC is paused while they are built)."""
        out = []
        with paused_gc():
            for key in self.workload_keys():
                report = self.report_for(key)
                if report is not None:
                    out.append(report)
        return out

    def report_of_controller(self, ctrl: Controller) -> SpreadReport:
        """A one-off report for a controller that is not a workload (a Deployment's ReplicaSet)."""
        w = _Workload(ctrl, WorkloadRef.of(ctrl))
        self._prepare(w)
        w.anchors = _anchors(w.selector) if w.counting else ()
        self._recount(self._ns_of(ctrl.namespace), w)
        return self._build(w)

    def take_dirty(self) -> tuple[set[WorkloadKey], set[WorkloadKey]]:
        """(workloads whose report may have changed, workloads removed) since the last call."""
        dirty, removed = self._dirty, self._removed
        self._dirty, self._removed = set(), set()
        if self.shadow is not None:  # a report also changes when its comparison does
            dirty |= self.shadow.take_dirty()[0]
        return dirty - removed, removed

    def sizes(self) -> IndexSizes:
        return IndexSizes(
            nodes=len(self._nodes),
            pods=sum(len(ns.pods) for ns in self._ns.values()),
            services=sum(len(ns.services) for ns in self._ns.values()),
            controllers=sum(len(c) for ns in self._ns.values() for c in ns.controllers.values()),
            workloads=sum(len(ns.workloads) for ns in self._ns.values()),
            label_groups=sum(len(ns.groups) for ns in self._ns.values()),
            candidate_sets=len(self._candidates),
        )

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        ns = self._ns.get(namespace)
        return ns.labels if ns else {}

    def counts_of(self, key: WorkloadKey) -> Mapping[str, int]:
        """Matching counting pods per node (all nodes, candidate or not) — for tests and metrics."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        return dict(w.counts) if w else {}

    def object_keys(self, kind: str) -> set[tuple[str, str]]:
        """``(namespace, name)`` of every held record of a kind (namespace "" for nodes and namespaces).

        Namespaces count only while they carry labels (removing one just forgets its labels). O(records of
        the kind); used to reconcile the index with a fresh listing after a watch gap.
        """
        if kind == "Node":
            return {("", name) for name in self._nodes}
        if kind == "Namespace":
            return {("", name) for name, ns in self._ns.items() if ns.labels}
        if kind == "Pod":
            return {(name, pod) for name, ns in self._ns.items() for pod in ns.pods}
        if kind == "Service":
            return {(name, svc) for name, ns in self._ns.items() for svc in ns.services}
        return {(name, ctrl) for name, ns in self._ns.items() for ctrl in ns.controllers.get(kind, ())}

    # --- internals: pods ----------------------------------------------------------------------------------

    def _ns_of(self, name: str) -> _Namespace:
        ns = self._ns.get(name)
        if ns is None:
            ns = self._ns[name] = _Namespace()
        return ns

    def _apply_pod(self, pod: Pod) -> None:
        ns = self._ns_of(pod.namespace)
        old = ns.pods.get(pod.name)
        ns.pods[pod.name] = pod
        if old is not None:
            if old.counts and pod.counts and old.node_name == pod.node_name and old.labels == pod.labels:
                return
            self._uncount(ns, old)
        self._count(ns, pod)

    def _count_bulk(self, pods: Iterable[Pod]) -> None:
        """File and count pods while no workload exists yet (bulk load): a pod only joins its label group,
        without the per-event look-up of matching workloads (they are counted from the groups when added).
        A pod already held takes the event path. O(pods)."""
        ns_name: str | None = None
        held: dict[str, Pod] = {}
        groups: dict[_LabelKey, _Group] = {}
        group_index: dict[tuple[str, str], set[_LabelKey]] = {}
        for pod in pods:
            if pod.namespace != ns_name:
                ns_name = pod.namespace
                ns = self._ns_of(ns_name)
                held, groups, group_index = ns.pods, ns.groups, ns.group_index
            name = pod.name
            if name in held:
                self._apply_pod(pod)
                continue
            held[name] = pod
            if not pod.counts:
                continue
            labels = pod.labels
            label_key = label_key_of(labels)
            group = groups.get(label_key)
            if group is None:
                group = groups[label_key] = _Group(labels)
                for item in label_key:
                    keys = group_index.get(item)
                    if keys is None:
                        group_index[item] = {label_key}
                    else:
                        keys.add(label_key)
            nodes = group.nodes
            node = pod.node_name
            nodes[node] = nodes.get(node, 0) + 1

    def _group_matches(self, ns: _Namespace, group: _Group) -> list[WorkloadKey]:
        cached = group.matches
        if cached is not None and group.epoch == ns.epoch:
            return cached
        candidates: set[WorkloadKey] = set(ns.unanchored)
        for item in group.labels.items():
            found = ns.anchor_index.get(item)
            if found:
                candidates |= found
        matches = []
        for key in candidates:
            w = ns.workloads[key]
            if w.counting and w.selector is not None and w.selector.matches(group.labels):
                matches.append(key)
        group.matches, group.epoch = matches, ns.epoch
        return matches

    def _count(self, ns: _Namespace, pod: Pod) -> None:
        if not pod.counts:
            return
        label_key = label_key_of(pod.labels)
        group = ns.groups.get(label_key)
        if group is None:
            group = ns.groups[label_key] = _Group(pod.labels)
            for item in label_key:
                ns.group_index.setdefault(item, set()).add(label_key)
        node = pod.node_name
        group.nodes[node] = group.nodes.get(node, 0) + 1
        for key in self._group_matches(ns, group):
            w = ns.workloads[key]
            w.counts[node] = w.counts.get(node, 0) + 1
            self._touch(w, key)

    def _uncount(self, ns: _Namespace, pod: Pod) -> None:
        if not pod.counts:
            return
        label_key = label_key_of(pod.labels)
        group = ns.groups.get(label_key)
        if group is None:
            return
        node = pod.node_name
        left = group.nodes.get(node, 0) - 1
        if left > 0:
            group.nodes[node] = left
        else:
            group.nodes.pop(node, None)
        for key in self._group_matches(ns, group):
            w = ns.workloads[key]
            c = w.counts.get(node, 0) - 1
            if c > 0:
                w.counts[node] = c
            else:
                w.counts.pop(node, None)
            self._touch(w, key)
        if not group.nodes:
            del ns.groups[label_key]
            for item in label_key:
                keys = ns.group_index.get(item)
                if keys is not None:
                    keys.discard(label_key)
                    if not keys:
                        del ns.group_index[item]

    def _touch(self, w: _Workload, key: WorkloadKey) -> None:
        w.report = None
        self._dirty.add(key)

    # --- internals: nodes ---------------------------------------------------------------------------------

    def _apply_node(self, node: Node) -> None:
        old = self._nodes.get(node.name)
        self._nodes[node.name] = node
        if old is not None and (old.labels, old.taints, old.unschedulable) == (
            node.labels,
            node.taints,
            node.unschedulable,
        ):
            return
        old_zone = self._zones.get(node.name)
        self._zones[node.name] = zone_key(node.labels, self.profile)
        self._node_changed(old, old_zone, node)

    def _node_changed(self, old: Node | None, old_zone: ZoneKey | None, new: Node | None) -> None:
        """Drop the candidate sets this node's change alters and dirty only the workloads using them.

        A set changes when the node enters or leaves it, changes zone inside it, or moves between exclusion
        reasons. O(candidate sets) filter checks + O(W) signature look-ups — instead of rebuilding every
        workload's report on any node event (a cordon or a label change used to dirty them all).
        """
        new_zone = self._zones.get(new.name) if new is not None else None

        def placement(node: Node | None, zone: ZoneKey | None, template: PodTemplate) -> tuple[object, ...]:
            if node is None:
                return ("absent",)
            reason = exclusion_reason(node, template)
            if reason is not None:
                return ("excluded", reason)
            return ("candidate", zone, dict(node.labels)) if topology else ("candidate", zone)

        topology = self.profile.pod_topology_spread
        if topology:
            self._topology_node_changed(old, new)

        changed = {
            sig
            for sig, cands in self._candidates.items()
            if placement(old, old_zone, cands.template) != placement(new, new_zone, cands.template)
        }
        if not changed:
            return
        for sig in changed:
            del self._candidates[sig]
        for group_key in [k for k in self._topo_groups if k[0] in changed]:
            del self._topo_groups[group_key]
        for ns in self._ns.values():
            for key, w in ns.workloads.items():
                if not w.error and w.sig in changed:
                    self._touch(w, key)

    def _topology_node_changed(self, old: Node | None, new: Node | None) -> None:
        """v1.29: a node's labels or taints decide which domain its pods count in, candidate or not: dirty
        the workloads with matching pods on it (all multi-selector ones). O(W)."""
        if old is not None and new is not None and (old.labels, old.taints) == (new.labels, new.taints):
            return
        self._node_sigs.clear()
        node = new or old
        name = node.name if node is not None else ""
        for ns in self._ns.values():
            for key, w in ns.workloads.items():
                if not w.error and (w.multi or name in w.counts):
                    self._touch(w, key)

    @staticmethod
    def _template(w: _Workload) -> PodTemplate:
        return w.pod.template if w.pod is not None else w.ctrl.template

    def _candidate_set(self, w: _Workload) -> _Candidates:
        cached = self._candidates.get(w.sig)
        if cached is None:
            template = self._template(w)
            by_zone: dict[ZoneKey | None, list[str]] = {}
            excluded: dict[str, int] = {}
            for name in sorted(self._nodes):
                reason = exclusion_reason(self._nodes[name], template)
                if reason is None:
                    by_zone.setdefault(self._zones[name], []).append(name)
                else:
                    excluded[reason] = excluded.get(reason, 0) + 1
            names = frozenset(n for names in by_zone.values() for n in names)
            cached = self._candidates[w.sig] = _Candidates(names, CandidateLayout(by_zone, excluded), template)
        return cached

    # --- internals: services and controllers --------------------------------------------------------------

    def _apply_service(self, svc: Service) -> None:
        ns = self._ns_of(svc.namespace)
        old = ns.services.get(svc.name)
        ns.services[svc.name] = svc
        if old is not None and old.selector == svc.selector:
            return
        self._refresh_matching(ns, old.selector if old else None, svc.selector)

    def _refresh_matching(self, ns: _Namespace, old: Mapping[str, str] | None, new: Mapping[str, str] | None) -> None:
        """Refresh workloads whose next pod is selected by the old or new Service selector. O(W)."""
        for w in list(ns.workloads.values()):
            if w.pod is None:
                continue
            labels = w.pod.labels
            if any(sel is not None and all(labels.get(k) == v for k, v in sel.items()) for sel in (old, new)):
                self._refresh(ns, w)

    def _apply_controller(self, ctrl: Controller) -> None:
        ns = self._ns_of(ctrl.namespace)
        by_name = ns.controllers.setdefault(ctrl.kind, {})
        old = by_name.get(ctrl.name)
        by_name[ctrl.name] = ctrl
        self._controller_changed(ns, old, ctrl)

    def _controller_changed(self, ns: _Namespace, old: Controller | None, new: Controller | None) -> None:
        ctrl = new or old
        assert ctrl is not None
        key = ctrl.key
        if new is None:
            self._drop_workload(ns, key)
        elif is_workload(new):
            w = ns.workloads.get(key)
            if w is None:
                self._add_workload(new)
            else:
                w.ctrl, w.ref = new, WorkloadRef.of(new)
                self._refresh(ns, w)
        else:
            self._drop_workload(ns, key)
        affected: set[WorkloadKey] = set()
        for c in (old, new):
            if c is not None and c.kind == "ReplicaSet" and c.controller is not None:
                affected.add(WorkloadKey(c.namespace, "Deployment", c.controller.name))
        if self.profile.mode is not SelectorMode.OWNER_MERGED:
            # An invalid StatefulSet selector makes GetPodStatefulSets fail for the whole namespace.
            poisons = ctrl.kind == "StatefulSet" and any(c is not None and c.selector_error for c in (old, new))
            for wk, w in ns.workloads.items():
                if w.pod is not None and (
                    poisons
                    or any(
                        c is not None and not c.selector.empty and c.selector.matches(w.pod.labels) for c in (old, new)
                    )
                ):
                    affected.add(wk)
        affected.discard(key)
        for wk in affected:
            target = ns.workloads.get(wk)
            if target is not None:
                self._refresh(ns, target)

    def _add_workload(self, ctrl: Controller) -> None:
        ns = self._ns_of(ctrl.namespace)
        key = ctrl.key
        w = _Workload(ctrl, WorkloadRef.of(ctrl))
        ns.workloads[key] = w
        self._removed.discard(key)
        self._refresh(ns, w, force=True)

    def _drop_workload(self, ns: _Namespace, key: WorkloadKey) -> None:
        w = ns.workloads.pop(key, None)
        if w is None:
            return
        self._unindex(ns, key, w)
        self._invalidate_groups(ns)
        self._dirty.discard(key)
        self._removed.add(key)

    # --- internals: workload refresh ----------------------------------------------------------------------

    def _prepare(self, w: _Workload) -> None:
        """Compute the workload's next pod, skip reason, error and spreading selector."""
        ctrl = w.ctrl
        replicasets = self.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, rs = representative_pod(ctrl, replicasets)
        w.pod = pod
        sig_key = self._template(w).constraint_key
        w.sig = self._sig_ids.setdefault(sig_key, len(self._sig_ids))
        real = self._ns_of(ctrl.namespace).controllers.get("ReplicaSet", {})
        w.standin = rs if rs is not None and rs.name not in real else None
        w.error = ""
        if ctrl.selector_error:
            w.error = f"InvalidSelector: {ctrl.selector_error}"
        elif rs is not None and rs.selector_error:
            w.error = f"InvalidSelector: ReplicaSet {rs.name}: {rs.selector_error}"
        if self.profile.pod_topology_spread:
            self._prepare_topology(w, pod)
            return
        w.skip = skip_reason(pod, self.profile)
        w.selector = None if (w.error or w.skip) else build_spread_selector(pod, self, self.profile)
        w.selector_text = str(w.selector) if w.selector is not None else ""

    def _prepare_topology(self, w: _Workload, pod: Pod) -> None:
        """v1.29: the plan, and the selector pods are counted by (ANY_OF the distinct ones if they differ)."""
        w.plan, w.skip, w.selector, w.multi, w.selector_text = None, "", None, False, ""
        if w.error:
            return
        try:
            plan = plan_spread(pod, self, self.profile)
        except SelectorError as err:
            w.error = f"InvalidSelector: {err}"
            return
        w.plan, w.skip, w.selector_text = plan, plan.skip_reason, plan.selector_text
        if plan.skip_reason:
            return
        distinct = tuple(dict.fromkeys(t.selector for t in plan.terms))
        if len(distinct) == 1:
            w.selector = SpreadSelector(SelectorMode.OWNER_MERGED, distinct)
        else:
            w.multi = True
            w.selector = SpreadSelector(
                SelectorMode.ANY_OF, tuple(s for s in distinct if not s.empty and not s.nothing)
            )

    def _refresh(self, ns: _Namespace, w: _Workload, force: bool = False) -> None:
        key = w.ctrl.key
        old_selector, old_counting = w.selector, w.counting
        self._prepare(w)
        if force or w.selector != old_selector or w.counting != old_counting:
            self._unindex(ns, key, w)
            w.anchors = _anchors(w.selector) if w.counting else ()
            if w.anchors is None:
                ns.unanchored.add(key)
            else:
                for item in w.anchors:
                    ns.anchor_index.setdefault(item, set()).add(key)
            self._invalidate_groups(ns)
            self._recount(ns, w)
        self._touch(w, key)

    def _unindex(self, ns: _Namespace, key: WorkloadKey, w: _Workload) -> None:
        ns.unanchored.discard(key)
        for item in w.anchors or ():
            keys = ns.anchor_index.get(item)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del ns.anchor_index[item]

    @staticmethod
    def _invalidate_groups(ns: _Namespace) -> None:
        """O(1): every group's cached workload list is stale from now on."""
        ns.epoch += 1

    @staticmethod
    def _recount(ns: _Namespace, w: _Workload) -> None:
        """Counts from the label groups the workload's anchors point at (all groups if unanchored)."""
        counts: dict[str, int] = {}
        selector = w.selector
        if w.counting and selector is not None:
            groups: Iterable[_Group]
            if w.anchors is None:
                groups = ns.groups.values()
            else:
                keys: set[_LabelKey] = set()
                for item in w.anchors:
                    found = ns.group_index.get(item)
                    if found:
                        keys |= found
                groups = (ns.groups[k] for k in keys)
            for group in groups:
                if selector.matches(group.labels):
                    for node, c in group.nodes.items():
                        counts[node] = counts.get(node, 0) + c
        w.counts = counts

    def _term_counts(self, w: _Workload) -> list[dict[str, int]]:
        """v1.29 with different selectors: per constraint, node -> matching pods, from the label groups.
        O(groups in the namespace × constraints)."""
        assert w.plan is not None
        terms = w.plan.terms
        out: list[dict[str, int]] = [{} for _ in terms]
        ns = self._ns.get(w.ctrl.namespace)
        if ns is None:
            return out
        for group in ns.groups.values():
            for i, term in enumerate(terms):
                if not term.selector.empty and term.selector.matches(group.labels):
                    per_node = out[i]
                    for node, c in group.nodes.items():
                        per_node[node] = per_node.get(node, 0) + c
        return out

    def _build_topology(self, w: _Workload, candidates: _Candidates) -> SpreadReport:
        plan = w.plan
        assert plan is not None
        keys = tuple(t.topology_key for t in plan.terms)
        groups = self._topo_groups.get((w.sig, keys))
        if groups is None:
            nodes = (self._nodes[n] for n in candidates.names)
            groups = self._topo_groups[(w.sig, keys)] = group_candidates(nodes, keys, self._zones)
        if w.multi:
            per_term = self._term_counts(w)
        else:
            empty = not w.counting
            per_term = [{} if empty else w.counts for _ in plan.terms]
        signatures = self._node_sigs.setdefault(keys, {})
        scores = score_groups(
            plan, self._template(w), groups, candidates.names, per_term, self._nodes, self._zones, signatures
        )
        first = per_term[0] if per_term else {}
        counts = {n: c for n, c in first.items() if n in candidates.names and c > 0}
        zones = {n: self._zones.get(n) for n in (*counts, *scores.busy_raw)}
        return build_topology_report(
            w.ref,
            self.profile,
            w.selector_text,
            candidates.layout,
            groups,
            scores,
            counts,
            zones,
            w.ctrl.replicas,
            self.options,
        )

    def _build(self, w: _Workload) -> SpreadReport:
        replicas = w.ctrl.replicas
        if w.error:
            return error_report(w.ref, self.profile.name, replicas, w.error)
        candidates = self._candidate_set(w)
        if w.plan is not None and not w.skip:
            return self._build_topology(w, candidates)
        return build_report(
            w.ref,
            self.profile,
            w.selector_text,
            w.skip,
            candidates.layout,
            w.counts,
            self._zones,
            replicas,
            self.options,
            candidates.names,
        )

    def __iter__(self) -> Iterator[SpreadReport]:
        return iter(self.reports())

    # --- read-only accessors for the metrics ---------------------------------------------------------------

    def candidate_layout(self, key: WorkloadKey) -> CandidateLayout | None:
        """A workload's candidate nodes by zone (each list sorted) and excluded-node counts; None for an
        unknown workload or one in Error. Shared by workloads with the same scheduling constraints and never
        mutated (a node change replaces it), so another thread may read it. O(1) cached, O(nodes) after a
        node change."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None or w.error:
            return None
        return self._candidate_set(w).layout

    def spread_plan(self, key: WorkloadKey) -> str:
        """v1.29: how PodTopologySpread scores the workload, as text ("" for other profiles). O(constraints)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None or w.plan is None:
            return ""
        source = "own constraints" if w.plan.source == "pod" else w.plan.source
        terms = ", ".join(f"{t.topology_key} maxSkew {t.max_skew}" for t in w.plan.terms)
        return f"PodTopologySpread, {source}: {terms}" if terms else f"PodTopologySpread, {source}"

    def report_is_current(self, key: WorkloadKey) -> bool:
        """Whether ``report_for`` would return a cached report (False: it rebuilds, or the workload is
        unknown). O(1)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        current = w is not None and w.report is not None
        return current and (self.shadow is None or self.shadow.report_is_current(key))

    def namespace_count(self) -> int:
        """Namespaces the index holds any state for (labels, pods, Services or controllers). O(1)."""
        return len(self._ns)
