"""Workloads: Services and controllers, each workload's next pod, spreading selector and anchors.

A workload's *anchor* is one equality/``in`` requirement of its selector: the workload is indexed under its
``(key, value)`` pairs, so a new label set only tests the workloads anchored on one of its labels (plus the
few whose selectors have no such requirement). A Service or controller change refreshes the workloads it
can affect: O(W) selector checks, plus O(G) recount per workload whose selector changed.

:class:`WorkloadTracker` is one part of :class:`~spreadwatch.index.SpreadIndex`: it keeps the Services,
controllers, workloads and anchors in the index's namespace states and owns the pod counts
(:class:`~spreadwatch.index.counting.PodCounts`), which it tells each workload's change; the index is told
each workload refreshed, added or dropped through the callables it gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial

from spreadwatch.errors import ConstraintError, SelectorError
from spreadwatch.index.counting import PodCounts
from spreadwatch.index.state import IndexRecords, NamespaceState, Workload
from spreadwatch.model import Controller, Pod, Service, WorkloadKey
from spreadwatch.scoring import (
    ClusterLookup,
    SelectorMode,
    SpreadSelector,
    WorkloadRef,
    build_spread_selector,
    is_workload,
    representative_pod,
    skip_reason,
)
from spreadwatch.scoring.selection import followed_owner, owner_merged_selector
from spreadwatch.scoring.topology import SpreadPlan, plan_with
from spreadwatch.scoring.topology_filter import FilterPlan, check_constraints, plan_filter
from spreadwatch.selectors import POSITIVE_OPERATORS, Requirement, Selector

__all__ = ["WorkloadTracker", "anchors"]

_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C (its own __new__ is Python code)


def _count_by(w: Workload, selectors: Iterable[Selector]) -> tuple[Selector, ...]:
    """v1.29: set the selector the workload's pods are counted by — the constraints' one selector, else ANY_OF
    the distinct ones (``multi``: each constraint counted apart) — and return the distinct ones.
    O(constraints)."""
    distinct = tuple(dict.fromkeys(selectors))
    if len(distinct) == 1:
        w.selector = SpreadSelector(SelectorMode.OWNER_MERGED, distinct)
    else:
        w.multi = True
        w.selector = SpreadSelector(SelectorMode.ANY_OF, tuple(s for s in distinct if not s.empty and not s.nothing))
    return distinct


class _Once:
    """A default-selector builder called at most once (the scoring and the filter plan may both want it)."""

    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], Selector]) -> None:
        self._build = build
        self._value: Selector | None = None

    def __call__(self) -> Selector:
        if self._value is None:
            self._value = self._build()
        return self._value


def _anchor_of(sel: Selector) -> tuple[tuple[str, str], ...] | None:
    """The (key, value) pairs of the selector's first positive requirement with the fewest values (None:
    it has none); the first with a single value ends the search (a valid one has at least one value).
    O(requirements), O(1) for the usual selector, whose first requirement is an equality."""
    best: Requirement | None = None
    for req in sel.requirements:
        if req.op in POSITIVE_OPERATORS and (best is None or len(req.values) < len(best.values)):
            best = req
            if len(req.values) == 1:
                return ((req.key, req.values[0]),)
    return None if best is None else tuple([(best.key, v) for v in best.values])


def anchors(selector: SpreadSelector | None) -> tuple[tuple[str, str], ...] | None:
    """Index keys for a selector: any label set it matches has one of them. None: cannot be anchored.
    O(requirements)."""
    if selector is None or selector.empty:
        return ()
    if selector.mode is SelectorMode.ANY_OF:
        keys: list[tuple[str, str]] = []
        for sel in selector.selectors:
            found = _anchor_of(sel)
            if found is None:
                return None
            keys.extend(found)
        return tuple(keys)
    for sel in selector.selectors:
        found = _anchor_of(sel)
        if found is not None:
            return found
    return None


_SELECTS_ALL = ("", "")  # the index entry of a Service with an empty (not nil) selector: it selects every pod


def _service_anchor(selector: Mapping[str, str]) -> tuple[str, str]:
    """The one (key, value) a Service is indexed under: any pod it selects carries it. O(1)."""
    return next(iter(selector.items()), _SELECTS_ALL)


def _unindex_service(ns: NamespaceState, svc: Service) -> None:
    if svc.selector is not None:
        item = _service_anchor(svc.selector)
        names = ns.services_by_label.get(item)
        if names is not None:
            names.discard(svc.name)
            if not names:
                del ns.services_by_label[item]


def _service_candidates(ns: NamespaceState, labels: Mapping[str, str]) -> list[Service]:
    """The Services indexed under one of ``labels`` (plus those selecting every pod), in the namespace's
    order: the only ones that can select a pod with these labels. O(labels + those Services)."""
    by_label = ns.services_by_label
    hits = list(filter(None, map(by_label.get, labels.items())))
    everything = by_label.get(_SELECTS_ALL)
    if everything:
        hits.append(everything)
    if not hits:
        return []
    if len(hits) == 1 and len(hits[0]) == 1:  # the usual case: one Service, found under one label
        return [ns.services[name] for name in hits[0]]
    found: set[str] = set().union(*hits)
    order = ns.service_order
    return [ns.services[n] for n in sorted(found, key=order.__getitem__)]


class _PodLookup:
    """A ``ClusterLookup`` for one pod: the given Services, and the index's controllers."""

    __slots__ = ("_index", "_services")

    def __init__(self, index: ClusterLookup, services: list[Service]) -> None:
        self._index = index
        self._services = services

    def services_in(self, namespace: str) -> Iterable[Service]:
        return self._services

    def controllers_in(self, kind: str, namespace: str) -> Iterable[Controller]:
        return self._index.controllers_in(kind, namespace)

    def controller(self, key: WorkloadKey) -> Controller | None:
        return self._index.controller(key)


class WorkloadTracker:
    """Services, controllers and workloads (see the module docstring); implements ``scoring.ClusterLookup``.
    O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`), ``ns_of`` (a namespace's
    state, made if new), ``touch`` (dirty a workload's report), ``sig_ids`` (scheduling-constraint signature
    -> its id, shared with the candidate sets) and what the index is told: ``refreshed`` (a workload
    prepared again, with its next pod's labels before), ``added`` (workloads added) and ``dropped`` (a
    workload dropped).
    """

    __slots__ = ("_added", "_dropped", "_ns", "_ns_of", "_refreshed", "_sig_ids", "_touch", "counts", "profile")

    def __init__(
        self,
        records: IndexRecords,
        ns_of: Callable[[str], NamespaceState],
        touch: Callable[[Workload, WorkloadKey], None],
        sig_ids: dict[tuple[object, ...], int],
        refreshed: Callable[[Workload, Mapping[str, str] | None], None],
        added: Callable[[list[WorkloadKey]], None],
        dropped: Callable[[WorkloadKey, Workload], None],
    ) -> None:
        self.profile, self._ns, self._ns_of, self._touch = records.profile, records.namespaces, ns_of, touch
        self._sig_ids, self._refreshed, self._added, self._dropped = sig_ids, refreshed, added, dropped
        #: pods, label groups and each workload's counts (:mod:`~.counting`), told each workload's change here
        self.counts = PodCounts(records, ns_of, touch)

    def services_in(self, namespace: str) -> Iterable[Service]:
        ns = self._ns.get(namespace)
        return ns.services.values() if ns else ()

    def controllers_in(self, kind: str, namespace: str) -> Iterable[Controller]:
        ns = self._ns.get(namespace)
        return ns.controllers.get(kind, {}).values() if ns else ()

    def controller(self, key: WorkloadKey) -> Controller | None:
        namespace, kind, name = key
        ns = self._ns.get(namespace)
        return self._controller_in(ns, kind, name) if ns is not None else None

    @staticmethod
    def _controller_in(ns: NamespaceState, kind: str, name: str) -> Controller | None:
        """A controller of the namespace by kind and name; a Deployment's stand-in ReplicaSet is found too.
        O(1), O(W) for a ReplicaSet not in the namespace."""
        found = ns.controllers.get(kind, {}).get(name)
        if found is None and kind == "ReplicaSet":
            for w in ns.workloads.values():
                if w.standin is not None and w.standin.name == name:
                    return w.standin
        return found

    def apply_service(self, svc: Service) -> None:
        """A Service added or changed: indexed, and the workloads it selected or selects refreshed. O(W)."""
        ns = self._ns_of(svc.namespace)
        old = ns.services.get(svc.name)
        ns.services[svc.name] = svc
        if old is None:
            ns.service_order[svc.name] = ns.service_seq
            ns.service_seq += 1
        elif old.selector == svc.selector:
            return
        else:
            _unindex_service(ns, old)
        if svc.selector is not None:
            ns.services_by_label.setdefault(_service_anchor(svc.selector), set()).add(svc.name)
        if ns.workloads:  # (none yet while a snapshot loads)
            self._refresh_matching(ns, old.selector if old else None, svc.selector)

    def drop_service(self, ns: NamespaceState, name: str) -> None:
        """Forget a Service (a DELETED event) and refresh the workloads it selected. O(W)."""
        svc = ns.services.pop(name, None)
        if svc is not None:
            ns.service_order.pop(name, None)
            _unindex_service(ns, svc)
            self._refresh_matching(ns, svc.selector, None)

    def _lookup_for(self, ns: NamespaceState, labels: Mapping[str, str]) -> ClusterLookup:
        """The index as a ``ClusterLookup`` for a pod with ``labels``: only the Services indexed under one of
        its labels (the others cannot select it). O(labels + those Services)."""
        return _PodLookup(self, _service_candidates(ns, labels))

    def _default_selector(self, ns: NamespaceState, pod: Pod) -> Selector:
        """v1.28's merged selector of ``pod`` (``build_spread_selector`` in OWNER_MERGED mode, from the
        index's structures: no ``ClusterLookup``). O(labels + Services indexed under them + requirements)."""
        items = pod.labels.items()
        services = [
            svc
            for svc in _service_candidates(ns, pod.labels)
            if svc.selector is not None and svc.selector.items() <= items
        ]
        ref = followed_owner(pod)
        owner = self._controller_in(ns, ref.kind, ref.name) if ref is not None else None
        return owner_merged_selector(services, owner)

    def replicasets_of(self, ns: NamespaceState, owner: str) -> list[Controller]:
        """The namespace's ReplicaSets whose controller is named ``owner`` (``representative_pod`` checks the
        kind and uid). O(1), or O(ReplicaSets in the namespace) after a ReplicaSet change."""
        by_owner = ns.replicasets_by_owner
        if by_owner is None:
            by_owner = ns.replicasets_by_owner = {}
            for rs in ns.controllers.get("ReplicaSet", {}).values():
                if rs.controller is not None:
                    by_owner.setdefault(rs.controller.name, []).append(rs)
        return by_owner.get(owner, [])

    def _refresh_matching(
        self, ns: NamespaceState, old: Mapping[str, str] | None, new: Mapping[str, str] | None
    ) -> None:
        """Refresh workloads whose next pod is selected by the old or new Service selector. O(W)."""
        for w in list(ns.workloads.values()):
            if w.pod is None:
                continue
            labels = w.pod.labels
            if any(sel is not None and all(labels.get(k) == v for k, v in sel.items()) for sel in (old, new)):
                self.refresh(ns, w)

    def apply_controller(self, ctrl: Controller) -> Controller | None:
        """A controller added or changed: stored, and its workload (and those it affects) refreshed; returns its
        previous record. O(W) for a workload's selector change."""
        ns = self._ns_of(ctrl.namespace)
        by_name = ns.controllers.setdefault(ctrl.kind, {})
        old = by_name.get(ctrl.name)
        by_name[ctrl.name] = ctrl
        if ctrl.kind == "ReplicaSet":
            ns.replicasets_by_owner = None
        self.controller_changed(ns, old, ctrl)
        return old

    def controller_changed(self, ns: NamespaceState, old: Controller | None, new: Controller | None) -> None:
        """A controller's change (``new`` None: ``old`` removed): its workload added, refreshed or dropped, and
        the workloads whose selection it takes part in refreshed. O(W)."""
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
                self.refresh(ns, w)
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
                self.refresh(ns, target)

    def _add_workload(self, ctrl: Controller) -> None:
        ns = self._ns_of(ctrl.namespace)
        key = ctrl.key
        w = Workload(ctrl, WorkloadRef.of(ctrl))
        ns.workloads[key] = w
        self._added([key])
        self.refresh(ns, w, force=True)

    def add_workloads(self, ctrls: Iterable[Controller]) -> None:
        """Add workloads in bulk (``load``), as :meth:`_add_workload` does one by one, namespace by namespace:
        every workload prepared and filed under its anchors, the label-group index entries of the new anchors
        built in one pass over the namespace's groups, then every workload counted; the namespace's epoch is
        bumped once. O(workloads × their groups + groups × labels of the namespaces with new anchors)."""
        by_ns: dict[str, list[Controller]] = {}
        for ctrl in ctrls:
            found = by_ns.get(ctrl.namespace)
            if found is None:
                by_ns[ctrl.namespace] = [ctrl]
            else:
                found.append(ctrl)
        keys: list[WorkloadKey] = []
        for name, members in by_ns.items():
            ns = self._ns_of(name)
            first = not ns.workloads  # counted in one pass over the groups, without building their index
            added: list[Workload] = []
            fresh: set[tuple[str, str]] = set()
            for ctrl in members:
                key = _new_tuple(WorkloadKey, (name, ctrl.kind, ctrl.name))  # ctrl.key, made in C
                old = ns.workloads.get(key)
                if old is not None:  # (a load into a loaded index)
                    self._unindex(ns, key, old.anchors)
                    fresh.intersection_update(ns.anchor_index)
                w = ns.workloads[key] = Workload(ctrl, WorkloadRef.of(ctrl))
                self.prepare(w, ns)
                fresh.update(self._file_anchors(ns, key, w))
                added.append(w)
                keys.append(key)
            if first:
                self.counts.count_first(ns, added)
            else:
                if fresh:  # one pass over the namespace's groups for all the new anchors
                    self.counts.index_groups(ns, fresh)
                for w in added:
                    self.counts.recount(ns, w)
            self.counts.invalidate_groups(ns)
        self._added(keys)

    def _drop_workload(self, ns: NamespaceState, key: WorkloadKey) -> None:
        w = ns.workloads.pop(key, None)
        if w is None:
            return
        self._unindex(ns, key, w.anchors)
        self.counts.invalidate_groups(ns)
        self._dropped(key, w)

    def prepare(self, w: Workload, ns: NamespaceState | None = None) -> None:
        """Compute the workload's next pod, skip reason, error, spreading selector and whether it counts pods
        (``ns``: the workload's namespace state, when the caller has it). O(ReplicaSets of a Deployment + the
        pod's Services)."""
        ctrl = w.ctrl
        if ns is None:
            ns = self._ns_of(ctrl.namespace)
        replicasets = self.replicasets_of(ns, ctrl.name) if ctrl.kind == "Deployment" else ()
        pod, rs = representative_pod(ctrl, replicasets)
        w.pod = pod
        sig_ids = self._sig_ids
        w.sig = sig_ids.setdefault(pod.template.constraint_key, len(sig_ids))  # (the pod's is ``template_of(w)``)
        w.standin = rs if rs is not None and rs.name not in ns.controllers.get("ReplicaSet", {}) else None
        w.error = ""
        if ctrl.selector_error:
            w.error = f"InvalidSelector: {ctrl.selector_error}"
        elif rs is not None and rs.selector_error:
            w.error = f"InvalidSelector: ReplicaSet {rs.name}: {rs.selector_error}"
        elif pod.template.spread_constraints:
            try:
                check_constraints(pod.template.spread_constraints)
            except ConstraintError as err:
                w.error = f"InvalidConstraint: {err}"
        profile = self.profile
        if profile.pod_topology_spread:
            self._prepare_topology(w, pod, ns)
        else:
            w.skip = skip_reason(pod, profile)
            if w.error or w.skip:
                w.selector, w.selector_text = None, ""
            elif profile.mode is SelectorMode.OWNER_MERGED:  # v1.28: the one merged selector, and its text
                merged = self._default_selector(ns, pod)
                w.selector = _new_tuple(SpreadSelector, (SelectorMode.OWNER_MERGED, (merged,)))
                w.selector_text = str(merged)
            else:
                w.selector = self._spread_selector(ns, pod)
                w.selector_text = str(w.selector)
        selector = w.selector
        w.counting = (not w.skip or w.hard is not None) and not w.error and selector is not None and not selector.empty

    def _spread_selector(self, ns: NamespaceState, pod: Pod) -> SpreadSelector:
        """``build_spread_selector`` of the profile, for the modes other than v1.28's (whose one merged selector
        :meth:`_default_selector` builds from the index's structures directly)."""
        return build_spread_selector(pod, self._lookup_for(ns, pod.labels), self.profile)

    def _merged_selector(self, ns: NamespaceState, pod: Pod) -> Selector:
        """v1.29's default selector: ``build_spread_selector(...).selectors[0]`` (the one merged selector)."""
        if self.profile.mode is SelectorMode.OWNER_MERGED:
            return self._default_selector(ns, pod)
        return self._spread_selector(ns, pod).selectors[0]

    def _prepare_topology(self, w: Workload, pod: Pod, ns: NamespaceState) -> None:
        """v1.29: the scoring plan, the DoNotSchedule constraints (PodTopologySpread's Filter), and the selector
        pods are counted by (ANY_OF the distinct ones of both if they differ)."""
        w.plan, w.hard, w.filtered, w.skip, w.selector = None, None, None, "", None
        w.multi, w.selector_text, w.plan_error = False, "", False
        if w.error:
            return
        default = _Once(partial(self._merged_selector, ns, pod))
        try:
            plan = plan_with(pod, self.profile, default)
            hard = plan_filter(pod, self.profile, default)
        except SelectorError as err:
            w.error, w.plan_error = f"InvalidSelector: {err}", True
            return
        w.plan, w.hard, w.skip, w.selector_text = plan, hard, plan.skip_reason, plan.selector_text
        if hard is not None:
            self._hard_selector(w, plan, hard)
            return
        if plan.skip_reason:
            return
        if plan.selector is not None:  # default constraints: every term has the default selector
            w.selector = _new_tuple(SpreadSelector, (SelectorMode.OWNER_MERGED, (plan.selector,)))
            return
        _count_by(w, [t.selector for t in plan.terms])

    @staticmethod
    def _hard_selector(w: Workload, plan: SpreadPlan, hard: FilterPlan) -> None:
        """v1.29 with DoNotSchedule constraints: the selector pods are counted by (of every scoring and hard
        constraint) and its text. O(constraints)."""
        selectors = [] if plan.skip_reason else [t.selector for t in plan.terms]
        selectors.extend(t.selector for t in hard.terms)
        distinct = _count_by(w, selectors)
        w.selector_text = "; ".join(dict.fromkeys(str(s) for s in distinct))

    def refresh(self, ns: NamespaceState, w: Workload, force: bool = False) -> None:
        """Prepare a workload again (``force``: a new one) and refile it if its selector changed; then dirty
        it and tell the index (``refreshed``). O(1), plus O(its groups) for a selector change."""
        key = w.ctrl.key
        before = w.pod.labels if w.pod is not None else None
        old_selector, old_counting = w.selector, w.counting
        self.prepare(w, ns)
        if force or w.selector != old_selector or w.counting != old_counting:
            old_anchors = w.anchors
            self._index_workload(ns, key, w)
            self._unindex(ns, key, old_anchors, keep=w.anchors)  # after: an anchor kept keeps its group index
            self.counts.invalidate_groups(ns)
        self._touch(w, key)
        self._refreshed(w, before)

    def _index_workload(self, ns: NamespaceState, key: WorkloadKey, w: Workload) -> None:
        """File a prepared workload under its anchors and count its pods from the label groups.
        O(anchors + the groups they point at), plus O(groups in the namespace) for an anchor new to it."""
        fresh = self._file_anchors(ns, key, w)
        if fresh:
            self.counts.index_groups(ns, fresh)
        self.counts.recount(ns, w)

    @staticmethod
    def _file_anchors(ns: NamespaceState, key: WorkloadKey, w: Workload) -> list[tuple[str, str]]:
        """File a prepared workload under its anchors (or as unanchored); returns the anchors no workload of
        the namespace had (the label-group index has no entry for them yet). O(anchors)."""
        found = anchors(w.selector) if w.counting else ()
        w.anchors = found
        if found is None:
            ns.unanchored.add(key)
            return []
        fresh: list[tuple[str, str]] = []
        index = ns.anchor_index
        for item in found:
            keys = index.get(item)
            if keys is None:
                index[item] = {key}
                fresh.append(item)
            else:
                keys.add(key)
        return fresh

    @staticmethod
    def _unindex(
        ns: NamespaceState,
        key: WorkloadKey,
        anchored: tuple[tuple[str, str], ...] | None,
        keep: tuple[tuple[str, str], ...] | None = (),
    ) -> None:
        """Take a workload off the anchors it was filed under (``keep``: its new ones, left as they are; None:
        it is unanchored now); an anchor no workload has any more drops its label-group index entry.
        O(anchors)."""
        if keep is not None:
            ns.unanchored.discard(key)
        kept = keep or ()
        for item in anchored or ():
            if item in kept:
                continue
            keys = ns.anchor_index.get(item)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del ns.anchor_index[item]
                    ns.group_index.pop(item, None)

    def spread_plan(self, key: WorkloadKey) -> str:
        """v1.29: how PodTopologySpread scores the workload, as text ("" for other profiles). O(constraints)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None or w.plan is None:
            return ""
        source = "own constraints" if w.plan.source == "pod" else w.plan.source
        terms = ", ".join(f"{t.topology_key} maxSkew {t.max_skew}" for t in w.plan.terms)
        return f"PodTopologySpread, {source}: {terms}" if terms else f"PodTopologySpread, {source}"
