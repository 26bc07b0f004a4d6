"""The public face of the index: :class:`SpreadIndex` (events in, reports out); see :mod:`spreadwatch.index`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from spreadwatch.index.building import ReportBuilder
from spreadwatch.index.candidates import CandidateSets
from spreadwatch.index.comparing import ProfileComparison, kept
from spreadwatch.index.hard_filter import HardFilter
from spreadwatch.index.loading import ListLoader
from spreadwatch.index.predicting import REFRESH_BATCH, Predictor
from spreadwatch.index.safety import Safety
from spreadwatch.index.state import (
    CandidateSet,
    IndexSizes,
    IndexState,
    KeptParts,
    LabelGroup,
    NamespaceState,
    Workload,
)
from spreadwatch.index.workloads import WorkloadTracker, anchors
from spreadwatch.model import (
    Controller,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    Record,
    Service,
    WorkloadKey,
    label_key,
)
from spreadwatch.report import (
    PLACEMENT_OUTCOMES,
    CandidateLayout,
    Comparison,
    Health,
    Outcome,
    Placement,
    ReportOptions,
    SpreadReport,
    classify_placement,
)
from spreadwatch.scoring import Profile, WorkloadRef, ZoneKey, is_workload, zone_key
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores
from spreadwatch.scoring.window import WindowModel
from spreadwatch.snapshot import Snapshot, paused_gc

__all__ = ["SpreadIndex"]


class SpreadIndex(IndexState):
    """Incremental cluster state and per-workload spread (see :mod:`spreadwatch.index` for costs).

    Implements ``scoring.ClusterLookup``. Not thread-safe: the operator calls it from one event loop.
    """

    def __init__(self, profile: Profile, options: ReportOptions | None = None, compare: Profile | None = None) -> None:
        super().__init__(profile, options)
        #: Services, controllers, workloads and (its part) the pod counts (:mod:`~.workloads`)
        self._workloads = WorkloadTracker(
            self._records,
            self._ns_of,
            self._touch,
            self._sig_ids,
            self._workload_refreshed,
            self._workloads_added,
            self._workload_dropped,
        )
        self._counts = self._workloads.counts
        #: the nodes passing each scheduling-constraint signature's filters (:mod:`~.candidates`)
        self._candidate_sets = CandidateSets(self._records, self._touch)
        #: a workload's candidate set (cached per signature; O(nodes) to build after a node change)
        self._candidate_set: Callable[[Workload], CandidateSet] = self._candidate_sets.of
        #: PodTopologySpread's Filter of the workloads with DoNotSchedule constraints (:mod:`~.hard_filter`)
        self._hard_filter = HardFilter(self._records, self._touch)
        #: each workload's spreading report and the scheduler's window (:mod:`~.building`)
        self._builder = ReportBuilder(
            self._records, self._candidate_set, self._hard_filter, self._counts.term_counts, self._topology_scored
        )
        #: the whole scheduler profile's prediction of each workload's next pod (:mod:`~.predicting`)
        self._prediction = Predictor(
            self._records,
            self._candidate_set,
            self._builder.window_size,
            self._counts.term_counts,
            self._builder.node_order,
        )
        #: each report's comparison with a profile scored from this index's counts (:mod:`~.comparing`)
        self._comparing = ProfileComparison(self._records, compare, self._candidate_set)
        #: placements checked against this profile's reports (:meth:`check_placement`), by outcome
        self.placements: dict[str, int] = dict.fromkeys(PLACEMENT_OUTCOMES, 0)
        #: the first listing in bulk (:mod:`~.loading`): the workloads deferred while it loads
        self._loader = ListLoader(self._ns_of)
        #: each controller's pods and each PodDisruptionBudget's counts, the forecasts in a report (:mod:`~.safety`)
        self._safety = Safety(
            self._records,
            self._touch,
            self._candidate_set,
            self._workloads.replicasets_of,
            self._prediction.room_counts,
        )
        #: ``--compare-profile`` that this index cannot score from its own counts (:mod:`~.comparing`): a
        #: second index fed the same events (without window samples and prediction: a comparison shows neither);
        #: reports carry its ``comparison``
        self.shadow = (
            SpreadIndex(compare, dataclasses.replace(self.options, window_samples=0, scheduler=None))
            if compare is not None and self.sibling is None
            else None
        )

    @property
    def scheduler(self) -> SchedulerProfile | None:
        """The scheduler profile predicted with (None: no prediction; only the PodTopologySpread profile v1.29
        has one). O(1)."""
        return self._prediction.scheduler

    @property
    def predicted_placements(self) -> dict[str, int]:
        """Placements checked against the prediction, by outcome. O(1)."""
        return self._prediction.predicted_placements

    def stale_predictions(self, limit: int = REFRESH_BATCH) -> set[WorkloadKey]:
        """Up to ``limit`` workloads whose report's prediction is stale, in turn (:mod:`~.predicting`). O(limit)
        amortised."""
        return self._prediction.stale_predictions(limit)

    def refresh_predictions(self) -> None:
        """Rebuild every report whose prediction is stale (tests, what-if). O(stale reports)."""
        self._prediction.refresh_predictions()

    @property
    def sibling(self) -> Profile | None:
        """The profile reports are compared with when this index scores it from its own counts (else None).
        O(1)."""
        return self._comparing.sibling

    @property
    def compared(self) -> Profile | None:
        """The profile every report is compared with (None: none). O(1)."""
        return self.sibling if self.shadow is None else self.shadow.profile

    def placement_counts(self) -> dict[str, dict[str, int]]:
        """Checked placements by profile (this one's, and the compared one's) and outcome. O(1)."""
        out = {self.profile.name: dict(self.placements)}
        sibling = self._comparing.sibling
        if sibling is not None:
            out[sibling.name] = dict(self._comparing.sibling_placements)
        if self.shadow is not None:
            out[self.shadow.profile.name] = dict(self.shadow.placements)
        return out

    def load(self, snapshot: Snapshot) -> None:
        """Add every record of a snapshot; workloads are computed once at the end. The records go to this
        index's own handlers (not through :meth:`apply`, which would also give them to the shadow index: it
        loads the snapshot itself). O(objects + W×G)."""
        with paused_gc():
            fresh = not any(ns.workloads for ns in self._ns.values())
            for node in snapshot.nodes:
                self._apply_node(node)
            for namespace in snapshot.namespaces:
                self._ns_of(namespace.name).labels = namespace.labels
                self._prediction.namespace_seen(namespace.name, namespace.labels)
            for volume in snapshot.volumes:
                self._prediction.apply_storage(volume)
            for claim in snapshot.claims:
                self._prediction.apply_storage(claim)
            for svc in snapshot.services:
                self._workloads.apply_service(svc)
            if fresh:
                self._counts.count_bulk(snapshot.pods, self._apply_pod)
                self._prediction.pods_loaded(snapshot.pods)
            else:
                for pod in snapshot.pods:
                    self._apply_pod(pod)
            workloads: list[Controller] = []
            ns_name: str | None = None
            for ctrl in snapshot.controllers:
                if ctrl.namespace != ns_name:  # (a snapshot's controllers come namespace by namespace)
                    ns_name = ctrl.namespace
                    ns = self._ns_of(ns_name)
                ns.controllers.setdefault(ctrl.kind, {})[ctrl.name] = ctrl
                if ctrl.kind == "ReplicaSet":
                    ns.replicasets_by_owner = None
                if is_workload(ctrl):
                    workloads.append(ctrl)
            self._add_workloads(workloads)
            self._safety.load(snapshot.budgets, fresh)
        if self.shadow is not None:
            self.shadow.load(snapshot)

    def apply(self, record: Record) -> None:
        """Add or update one object (an informer ADDED/MODIFIED event)."""
        if self.shadow is not None:
            self.shadow.apply(record)
        self._apply_record(record)

    def _apply_record(self, record: Record) -> None:
        """One object to this index's own handlers (not the shadow's). O(1) + the handler's."""
        if isinstance(record, Pod):
            self._apply_pod(record)
        elif isinstance(record, Node):
            self._apply_node(record)
        elif isinstance(record, Service):
            self._workloads.apply_service(record)
        elif isinstance(record, Controller):
            self._apply_controller(record)
        elif isinstance(record, Namespace):
            self._ns_of(record.name).labels = record.labels
            self._prediction.namespace_seen(record.name, record.labels)
        elif isinstance(record, (PersistentVolumeClaim, PersistentVolume)):
            self._prediction.apply_storage(record)
        elif isinstance(record, PodDisruptionBudget):
            self._safety.apply_budget(record)

    # --- each change, told to the parts that keep state of it after the spread core took it ------------------

    def _apply_pod(self, pod: Pod) -> None:
        ns = self._ns.get(pod.namespace)
        old = ns.pods.get(pod.name) if ns is not None else None
        self._counts.apply_pod(pod)
        self._prediction.pod_changed(old, pod)
        if old is not pod and old != pod:
            self._safety.pod_changed(pod.namespace, old, pod)

    def _pod_removed(self, old: Pod) -> None:
        """A pod removed (a DELETED event): out of the prediction's state and the safety's. O(labels + B)."""
        self._prediction.pod_changed(old, None)
        self._safety.pod_changed(old.namespace, old, None)

    def _apply_controller(self, ctrl: Controller) -> None:
        """A controller: deferred while its namespace is loading (:meth:`start_loading`), else the event path's.
        O(1) then."""
        if not self._loader.defer(ctrl):
            old = self._workloads.apply_controller(ctrl)
            self._safety.controller_changed(self._ns[ctrl.namespace], old, ctrl)

    def _controller_removed(self, ns: NamespaceState, ctrl: Controller) -> None:
        """A controller removed (a DELETED event): nor deferred any more, its workload dropped. O(W)."""
        self._loader.forget(ctrl)
        self._workloads.controller_changed(ns, ctrl, None)
        self._safety.controller_changed(ns, ctrl, None)

    def _workload_refreshed(self, w: Workload, before: Mapping[str, str] | None) -> None:
        """A workload prepared again (``before``: its next pod's labels before): one whose labels change (or
        which is added) leaves and joins budgets. O(1), or with budgets in the namespace O(W) on a label
        change."""
        after = w.pod.labels if w.pod is not None else None
        if after is not before and after != before:
            self._safety.members_changed(w.ctrl.namespace, (before, after))

    def _workloads_added(self, keys: list[WorkloadKey]) -> None:
        """Workloads added: dirty, and no longer removed. O(keys)."""
        if self._removed:
            self._removed.difference_update(keys)
        self._dirty.update(keys)

    def _workload_dropped(self, key: WorkloadKey, w: Workload) -> None:
        """A workload dropped: removed (not dirty), and out of the budgets' members. O(1) without budgets."""
        self._dirty.discard(key)
        self._removed.add(key)
        self._safety.members_changed(key.namespace, (w.pod.labels if w.pod is not None else None,))

    def _add_workloads(self, ctrls: Iterable[Controller]) -> None:
        """Workloads added in bulk (``load``, a first listing's end): tracked, then the safety's members.
        O(workloads × their groups)."""
        ctrls = list(ctrls)
        self._workloads.add_workloads(ctrls)
        self._safety.workloads_added(ctrls)

    def _apply_node(self, node: Node) -> None:
        """A node added or changed: its record and zone kept; a change of what the filters read (labels, taints,
        unschedulable) goes to :meth:`_node_changed`. O(1), else the change's cost."""
        self._comparing.node_applied(node)
        old = self._nodes.get(node.name)
        self._nodes[node.name] = node
        if old is None or (old.labels, old.taints, old.unschedulable) != (
            node.labels,
            node.taints,
            node.unschedulable,
        ):
            old_zone = self._zones.get(node.name)
            self._zones[node.name] = zone_key(node.labels, self.profile)
            self._node_changed(old, old_zone, node)
        self._prediction.node_applied(old, node)

    def _node_changed(self, old: Node | None, old_zone: ZoneKey | None, new: Node | None) -> None:
        """A node added, changed (``old_zone``: its zone before) or removed (``new`` None): the window layouts,
        the candidate sets and the Filter's domains it alters go, the workloads using them dirtied; then the
        parts. O(candidate sets + W)."""
        self._comparing.node_changed(old, new)
        self._builder.node_changed()
        self._candidate_sets.node_changed(old, old_zone, new)
        self._hard_filter.node_changed(old, new)
        self._prediction.node_changed(old, new)
        self._safety.node_changed(old, old_zone, new)

    def _topology_scored(self, w: Workload, groups: CandidateGroups, scores: GroupScores) -> None:
        self._prediction.topology_scored(w, groups, scores)

    # --- the public API -------------------------------------------------------------------------------------

    def start_loading(self) -> None:
        """The informers' first listing begins: until :meth:`finish_loading`, the workloads of namespaces that
        have none yet are deferred and their listed pods filed in bulk (:mod:`spreadwatch.index.loading`).
        O(1)."""
        if self.shadow is not None:
            self.shadow.start_loading()
        self._loader.start()

    def apply_listed(self, records: Sequence[Record]) -> None:
        """Add or update the records of one list page: as :meth:`apply` each, pods of namespaces that are
        loading filed in bulk. O(records) + the event path for the others."""
        if self.shadow is not None:
            self.shadow.apply_listed(records)
        bulk, rest = self._loader.split(records)
        if bulk:  # (pods of namespaces that are loading: label groups, the prediction's loads, the safety's)
            self._counts.count_bulk(bulk, self._apply_pod)
            self._prediction.pods_loaded(bulk)
            self._safety.pods_filed(bulk)
        for record in rest:
            self._apply_record(record)

    def finish_loading(self, budget: int = 1000) -> bool:
        """Add about ``budget`` deferred workloads in bulk (whole namespaces); True once loading has ended (call
        again until then). O(workloads added × their label groups)."""
        ctrls, done = self._loader.take(budget)
        if ctrls:
            self._add_workloads(ctrls)
        if self.shadow is not None:
            return self.shadow.finish_loading(budget) and done
        return done

    def check_placement(self, pod: Pod, now: Callable[[], str]) -> list[tuple[WorkloadKey, Placement]]:
        """Check a new binding against the reports held just before it; call it *before* :meth:`apply` (pod).

        A binding is a pod that counts (bound, not terminal, not deleting) whose previous record was unbound,
        or that the index did not hold. For each workload whose selector matches the pod and whose report is
        neither skipped nor in error, the pod's node is classified against that report
        (:func:`~spreadwatch.report.classify_placement`), counted in :attr:`placements` and kept as the
        workload's ``lastPlacement`` (``now()``: the time, RFC 3339, asked for bindings only). The shadow
        index checks its own reports. Returns the placements (workload, placement). O(labels + anchored
        candidates) to find the A matching workloads, then per workload O(listed nodes + zones), plus a
        report rebuild (O(busy nodes)) when the report was dirty — as the writer would rebuild it anyway."""
        if self.shadow is not None:
            self.shadow.check_placement(pod, now)
        ns = self._ns.get(pod.namespace)
        if ns is None or not pod.counts:
            return []
        old = ns.pods.get(pod.name)
        if old is not None and old.node_name:
            return []
        group = ns.groups.get(label_key(pod.labels)) or LabelGroup(pod.labels)  # (a new label set: a stand-in)
        node, seen = pod.node_name, now()
        zone = self._zones.get(node)
        out: list[tuple[WorkloadKey, Placement]] = []
        for key in sorted(self._counts.group_matches(ns, group)):
            w = ns.workloads[key]
            report = self.report_for(key)
            if report is None:
                continue
            self._comparing.check(w, node, node in self._candidate_set(w).names)  # (v1.28: no PodTopologySpread Filter)
            if report.skipped or report.health is Health.ERROR:
                continue
            candidate = self.is_candidate(key, node)
            outcome = classify_placement(report, node, zone, candidate)
            previous = w.placement.consecutive_misses if w.placement is not None else 0
            misses = 0 if outcome is Outcome.BEST_NODE else previous + 1
            predicted = self._prediction.predicted_outcome(w, report, node)
            w.placement = Placement(pod.name, node, outcome.value, seen, misses, predicted)
            self.placements[outcome.value] += 1
            self._touch(w, key)
            out.append((key, w.placement))
        return out

    def _build(self, w: Workload) -> SpreadReport:
        """A report with its prediction, safety forecasts and the workload's last checked placement, if any.
        After a full build the parts the node loads do not change are kept (``w.kept``, with the prediction on;
        any change of the workload's own state drops them): a refresh of its stale prediction then rebuilds only
        the prediction and the room for replacements (about a third of a full build's cost). O(1) more than
        building them."""
        kept = w.kept
        if kept is None:
            base = self._comparing.with_sibling(w, self._builder.build(w))
            report = self._predicted(w, base)
            own = self._safety.own_forecasts(w, report)
            if self.scheduler is not None:
                w.kept = KeptParts(base, own)
        else:
            report, own = self._predicted(w, kept.base), kept.own
        report = self._safety.with_forecasts(w, report, own)
        if w.placement is None:
            return report
        return msgspec.structs.replace(report, last_placement=w.placement)

    def _predicted(self, w: Workload, base: SpreadReport) -> SpreadReport:
        """``base`` (compared already) with its prediction; an Error report made by the prediction (a template
        the API server would refuse) gets its comparison too."""
        report = self._prediction.with_prediction(w, base)
        if report.health is Health.ERROR and base.health is not Health.ERROR:
            report = self._comparing.with_sibling(w, report)
        return report

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """Remove one object (a DELETED event); unknown objects are ignored."""
        if self.shadow is not None:
            self.shadow.remove(kind, namespace, name)
        if kind == "Pod":
            ns = self._ns.get(namespace)
            old = ns.pods.pop(name, None) if ns else None
            if ns is not None and old is not None:
                self._counts.shift(ns, old, -1)
                self._pod_removed(old)
        elif kind == "Node":
            old_node = self._nodes.pop(name, None)
            if old_node is not None:
                self._node_changed(old_node, self._zones.pop(name, None), None)
        elif kind == "Service":
            ns = self._ns.get(namespace)
            if ns is not None:
                self._workloads.drop_service(ns, name)
        elif kind == "Namespace":
            ns = self._ns.get(name)
            if ns is not None:
                ns.labels = {}
            self._prediction.namespace_seen(name, None)
        elif kind == "PodDisruptionBudget":
            self._safety.remove_budget(namespace, name)
        elif self._prediction.remove_storage(kind, namespace, name):
            pass
        else:
            ns = self._ns.get(namespace)
            ctrl = ns.controllers.get(kind, {}).pop(name, None) if ns else None
            if ns is not None and ctrl is not None:
                if kind == "ReplicaSet":
                    ns.replicasets_by_owner = None
                self._controller_removed(ns, ctrl)

    def workload_keys(self) -> list[WorkloadKey]:
        return sorted(k for ns in self._ns.values() for k in ns.workloads)

    def report_for(self, key: WorkloadKey) -> SpreadReport | None:
        """The current report of a workload (rebuilt if it changed). O(busy nodes) when dirty, else O(1)."""
        built = self._built(key)
        if built is None:
            return None
        w, report = built
        other = self.shadow.report_for(key) if self.shadow is not None else None
        if other is not None:
            if w.compared is None or w.compared[0] is not report or w.compared[1] is not other:
                w.compared = (report, other, self._with_comparison(report, other, key))
            report = w.compared[2]
        w.published = report
        return report

    def published_report(self, key: WorkloadKey) -> SpreadReport | None:
        """The report :meth:`report_for` last returned for the workload — current, or the last one built while
        a change waits for its rebuild (None: never built, or an unknown workload). Never builds: the operator's
        /metrics reads this in the event loop while the writer builds each changed report after its debounce
        (building every report in a scrape held the loop for 6.1 s at the envelope right after ready). O(1)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        return w.published if w is not None else None

    def _with_comparison(self, report: SpreadReport, other: SpreadReport, key: WorkloadKey) -> SpreadReport:
        """``report`` plus the shadow profile's best score/nodes and whether the best sets overlap (both reports
        current: their workloads' candidate sets and Filter views are). O(listed nodes + zone pairs)
        (:meth:`~spreadwatch.index.comparing.ProfileComparison.overlap`)."""
        shadow = self.shadow
        assert shadow is not None
        mine, theirs = self._workload(key), shadow._workload(key)
        overlap = (
            mine is not None
            and theirs is not None
            and not mine.error
            and not theirs.error
            and self._comparing.overlap(
                report,
                self._candidate_set(mine).layout,
                self._zones,
                other,
                shadow._candidate_set(theirs).layout,
                shadow._zones,
                kept(mine),
                kept(theirs),
            )
        )
        comparison = Comparison(shadow.profile.name, other.best_score, other.best_nodes, other.best_node_count, overlap)
        return msgspec.structs.replace(report, comparison=comparison)

    def _workload(self, key: WorkloadKey) -> Workload | None:
        ns = self._ns.get(key.namespace)
        return ns.workloads.get(key) if ns is not None else None

    def reports(self) -> list[SpreadReport]:
        """Every workload's report, sorted by namespace, kind, name (the GC is paused while they are built).
        O(W log W) plus the dirty reports' building; namespace by namespace, without a look-up per workload."""
        out: list[SpreadReport] = []
        with paused_gc():
            if self.shadow is not None:  # each report carries its comparison: report_for adds it
                for key in self.workload_keys():
                    report = self.report_for(key)
                    if report is not None:
                        out.append(report)
                return out
            build = self._build
            for name in sorted(self._ns):
                workloads = self._ns[name].workloads
                for key in sorted(workloads):  # the keys of one namespace: (namespace, kind, name) order
                    w = workloads[key]
                    report = w.report
                    if report is None:
                        report = w.report = build(w)
                    w.published = report
                    out.append(report)
        return out

    def report_of_controller(self, ctrl: Controller) -> SpreadReport:
        """A one-off report for a controller that is not a workload (a Deployment's ReplicaSet)."""
        w = Workload(ctrl, WorkloadRef.of(ctrl))
        self._workloads.prepare(w)
        w.anchors = anchors(w.selector) if w.counting else ()
        self._counts.recount(self._ns_of(ctrl.namespace), w)
        return self._build(w)

    def take_dirty(self, stale: bool = True) -> tuple[set[WorkloadKey], set[WorkloadKey]]:
        """(workloads whose report may have changed, workloads removed) since the last call; ``stale``: with
        a batch of workloads whose prediction is stale (:meth:`stale_predictions`). The writer asks for that
        batch once per cycle, not on every event: per event, 100 pod events/s handed 20,000 stale predictions
        a second at the envelope and the operator fell behind (every report pending)."""
        dirty, removed = self._dirty, self._removed
        self._dirty, self._removed = set(), set()
        if stale:
            dirty |= self._prediction.stale_predictions()
        if self.shadow is not None:  # a report also changes when its comparison does
            dirty |= self.shadow.take_dirty(stale)[0]
        return dirty - removed, removed

    def sizes(self) -> IndexSizes:
        return IndexSizes(
            nodes=len(self._nodes),
            pods=sum(len(ns.pods) for ns in self._ns.values()),
            services=sum(len(ns.services) for ns in self._ns.values()),
            controllers=sum(len(c) for ns in self._ns.values() for c in ns.controllers.values()),
            workloads=sum(len(ns.workloads) for ns in self._ns.values()),
            label_groups=sum(len(ns.groups) for ns in self._ns.values()),
            candidate_sets=len(self._candidate_sets),
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
        if kind == "PodDisruptionBudget":
            return self._safety.budget_keys()
        storage = self._prediction.storage_keys(kind)
        if storage is not None:
            return storage
        return {(name, ctrl) for name, ns in self._ns.items() for ctrl in ns.controllers.get(kind, ())}

    def report_is_current(self, key: WorkloadKey) -> bool:
        """Whether ``report_for`` would return a cached report (False: it rebuilds, or the workload is
        unknown). O(1)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        current = w is not None and w.report is not None
        return current and (self.shadow is None or self.shadow.report_is_current(key))

    def owned_pods(self, namespace: str, kind: str, name: str) -> list[Pod]:
        """The pods whose controller is ``kind/name`` (any phase; a Deployment's: its ReplicaSets'), for
        ``simulate`` and the tests. O(its pods)."""
        return self._safety.owned_pods(namespace, kind, name)

    def replicasets_of(self, deployment: Controller) -> list[Controller]:
        """The ReplicaSets a Deployment controls, by name. O(its ReplicaSets)."""
        return self._safety.replicasets_of(deployment)

    def budget_count(self) -> int:
        """PodDisruptionBudgets held. O(namespaces)."""
        return self._safety.budget_count()

    def _built(self, key: WorkloadKey) -> tuple[Workload, SpreadReport] | None:
        """A workload and its current report, built now if it is dirty (None: unknown workload). O(1) when
        the report is current, else the building's cost."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None:
            return None
        if w.report is None:
            w.report = self._build(w)
        return w, w.report

    def candidate_layout(self, key: WorkloadKey, *, build: bool = True) -> CandidateLayout | None:
        """A workload's candidate nodes by zone (each list sorted) and excluded-node counts — for one with
        DoNotSchedule constraints, those PodTopologySpread's Filter passes as of its current report (built now
        if dirty; with ``build=False`` as of its last report, never building one: see
        :meth:`published_report`). None for an unknown workload or one in Error. Shared by workloads with the
        same scheduling constraints; its nodes are never mutated (a node change replaces it; only report
        building's memo caches grow), so another thread may read it. O(1) when current."""
        if build:
            built = self._built(key)
            w = built[0] if built is not None else None
        else:
            ns = self._ns.get(key.namespace)
            w = ns.workloads.get(key) if ns else None
        if w is None or w.error:
            return None
        if w.filtered is not None:
            return w.filtered.layout
        return self._candidate_set(w).layout

    def is_candidate(self, key: WorkloadKey, node: str) -> bool:
        """Whether ``node`` is a candidate of the workload's next pod (after PodTopologySpread's Filter for
        one with DoNotSchedule constraints), as of its current report. O(1) once it is built."""
        built = self._built(key)
        if built is None or built[0].error:
            return False
        w = built[0]
        if w.filtered is not None:
            return w.filtered.passes(node)
        return node in self._candidate_set(w).names

    def window_model(self, key: WorkloadKey) -> WindowModel | None:
        """The window model of a workload's next pod (None: unknown, in Error or skipped), for ``simulate``
        and the tests. O(busy nodes) after its report is built."""
        built = self._built(key)
        if built is None:
            return None
        w, report = built
        if report.skipped or w.error:
            return None
        return self._builder.window_model(w)

    def services_in(self, namespace: str) -> Iterable[Service]:
        """``ClusterLookup``: the namespace's Services. O(1)."""
        return self._workloads.services_in(namespace)

    def controllers_in(self, kind: str, namespace: str) -> Iterable[Controller]:
        """``ClusterLookup``: the namespace's controllers of a kind. O(1)."""
        return self._workloads.controllers_in(kind, namespace)

    def controller(self, key: WorkloadKey) -> Controller | None:
        """``ClusterLookup``: a controller by key (a Deployment's stand-in ReplicaSet too). O(1)."""
        return self._workloads.controller(key)

    def spread_plan(self, key: WorkloadKey) -> str:
        """v1.29: how PodTopologySpread scores the workload, as text ("" for other profiles). O(constraints)."""
        return self._workloads.spread_plan(key)

    def namespace_count(self) -> int:
        """Namespaces the index holds any state for (labels, pods, Services or controllers). O(1)."""
        return len(self._ns)
