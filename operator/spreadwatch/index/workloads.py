"""Workloads: Services and controllers, each workload's next pod, spreading selector and anchors.

A workload's *anchor* is one equality/``in`` requirement of its selector: the workload is indexed under its
``(key, value)`` pairs, so a new label set only tests the workloads anchored on one of its labels (plus the
few whose selectors have no such requirement). A Service or controller change refreshes the workloads it
can affect: O(W) selector checks, plus O(G) recount per workload whose selector changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spreadwatch.errors import SelectorError
from spreadwatch.index.counting import PodCounting
from spreadwatch.index.state import NamespaceState, Workload
from spreadwatch.model import Controller, Pod, Service, WorkloadKey
from spreadwatch.scoring import (
    SelectorMode,
    SpreadSelector,
    WorkloadRef,
    build_spread_selector,
    is_workload,
    representative_pod,
    skip_reason,
)
from spreadwatch.scoring.topology import plan_spread
from spreadwatch.selectors import Operator, Selector

__all__ = ["WorkloadTracking", "anchors"]

_POSITIVE = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)


def anchors(selector: SpreadSelector | None) -> tuple[tuple[str, str], ...] | None:
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


class WorkloadTracking(PodCounting):
    """Services, controllers and workloads; implements ``scoring.ClusterLookup``."""

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

    def _apply_service(self, svc: Service) -> None:
        ns = self._ns_of(svc.namespace)
        old = ns.services.get(svc.name)
        ns.services[svc.name] = svc
        if old is not None and old.selector == svc.selector:
            return
        self._refresh_matching(ns, old.selector if old else None, svc.selector)

    def _refresh_matching(
        self, ns: NamespaceState, old: Mapping[str, str] | None, new: Mapping[str, str] | None
    ) -> None:
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

    def _controller_changed(self, ns: NamespaceState, old: Controller | None, new: Controller | None) -> None:
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
        w = Workload(ctrl, WorkloadRef.of(ctrl))
        ns.workloads[key] = w
        self._removed.discard(key)
        self._refresh(ns, w, force=True)

    def _drop_workload(self, ns: NamespaceState, key: WorkloadKey) -> None:
        w = ns.workloads.pop(key, None)
        if w is None:
            return
        self._unindex(ns, key, w)
        self._invalidate_groups(ns)
        self._dirty.discard(key)
        self._removed.add(key)

    def _prepare(self, w: Workload) -> None:
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

    def _prepare_topology(self, w: Workload, pod: Pod) -> None:
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

    def _refresh(self, ns: NamespaceState, w: Workload, force: bool = False) -> None:
        key = w.ctrl.key
        old_selector, old_counting = w.selector, w.counting
        self._prepare(w)
        if force or w.selector != old_selector or w.counting != old_counting:
            self._unindex(ns, key, w)
            w.anchors = anchors(w.selector) if w.counting else ()
            if w.anchors is None:
                ns.unanchored.add(key)
            else:
                for item in w.anchors:
                    ns.anchor_index.setdefault(item, set()).add(key)
            self._invalidate_groups(ns)
            self._recount(ns, w)
        self._touch(w, key)

    def _unindex(self, ns: NamespaceState, key: WorkloadKey, w: Workload) -> None:
        ns.unanchored.discard(key)
        for item in w.anchors or ():
            keys = ns.anchor_index.get(item)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del ns.anchor_index[item]

    def spread_plan(self, key: WorkloadKey) -> str:
        """v1.29: how PodTopologySpread scores the workload, as text ("" for other profiles). O(constraints)."""
        ns = self._ns.get(key.namespace)
        w = ns.workloads.get(key) if ns else None
        if w is None or w.plan is None:
            return ""
        source = "own constraints" if w.plan.source == "pod" else w.plan.source
        terms = ", ".join(f"{t.topology_key} maxSkew {t.max_skew}" for t in w.plan.terms)
        return f"PodTopologySpread, {source}: {terms}" if terms else f"PodTopologySpread, {source}"
