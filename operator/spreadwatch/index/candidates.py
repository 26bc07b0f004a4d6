"""Candidate sets: the nodes that pass a workload's scheduling constraints, cached per constraint signature.

Most workloads share one signature (tolerations, nodeSelector, required affinity), so a candidate set is
computed once (O(nodes)) and shared. A node event drops only the sets the node's change alters and dirties
only the workloads using them: O(candidate sets) filter checks + O(W) signature look-ups.

:class:`CandidateSets` is one part of :class:`~spreadwatch.index.SpreadIndex` (whose other parts are given its
``of``): it owns the cached sets and reads the index's nodes, zones and namespaces through what it is given.
"""

from __future__ import annotations

from collections.abc import Callable

from spreadwatch.index.state import CandidateSet, IndexRecords, Workload, template_of
from spreadwatch.model import Node, PodTemplate, Taint, WorkloadKey
from spreadwatch.report import CandidateLayout
from spreadwatch.scoring import ZoneKey, exclusion_reason
from spreadwatch.scoring.candidates import (
    REASON_NODE_AFFINITY,
    affinity_label_keys,
    node_affinity_matches,
    taint_reason,
)

__all__ = ["CandidateSets"]


class CandidateSets:
    """The cached candidate sets (see the module docstring). O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`: its profile, nodes, zones,
    namespaces and candidate groups, dropped with the sets they split) and ``touch`` (dirty a workload's
    report); told each node change by the index after its nodes and zones took it.
    """

    __slots__ = ("_candidates", "_nodes", "_ns", "_topo_groups", "_touch", "_zones", "profile")

    def __init__(self, records: IndexRecords, touch: Callable[[Workload, WorkloadKey], None]) -> None:
        self.profile, self._touch = records.profile, touch
        self._nodes, self._zones, self._ns = records.nodes, records.zones, records.namespaces
        self._topo_groups = records.topo_groups
        self._candidates: dict[int, CandidateSet] = {}  # signature id -> candidate set

    def __len__(self) -> int:
        """Candidate sets cached. O(1)."""
        return len(self._candidates)

    def node_changed(self, old: Node | None, old_zone: ZoneKey | None, new: Node | None) -> None:
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
        node = new or old
        name = node.name if node is not None else ""
        for ns in self._ns.values():
            for key, w in ns.workloads.items():
                if not w.error and (w.multi or name in w.counts):
                    self._touch(w, key)

    def of(self, w: Workload) -> CandidateSet:
        """The workload's candidate set (cached per signature). Building one is O(nodes) dict look-ups: the
        taint filters run once per distinct (unschedulable, taints) of the nodes (most nodes have none), the
        affinity filter only for a template with a nodeSelector or required node affinity, once per distinct
        values of the labels it reads (per node with ``matchFields``)."""
        cached = self._candidates.get(w.sig)
        if cached is None:
            template = template_of(w)
            by_zone: dict[ZoneKey | None, list[str]] = {}
            excluded: dict[str, int] = {}
            by_taints: dict[tuple[bool, tuple[Taint, ...]], str | None] = {}
            affinity = bool(template.node_selector) or template.required_terms is not None
            label_keys = affinity_label_keys(template) if affinity else ()
            by_values: dict[tuple[str | None, ...], bool] = {}
            nodes, zones = self._nodes, self._zones
            for name in sorted(nodes):
                node = nodes[name]
                key = (node.unschedulable, node.taints)
                if key in by_taints:
                    reason = by_taints[key]
                else:
                    reason = by_taints[key] = taint_reason(node.unschedulable, node.taints, template)
                if reason is None and affinity:
                    if label_keys is None:
                        matches = node_affinity_matches(node, template)
                    else:
                        labels = node.labels
                        values = tuple([labels.get(k) for k in label_keys])
                        found = by_values.get(values)
                        if found is None:
                            found = by_values[values] = node_affinity_matches(node, template)
                        matches = found
                    if not matches:
                        reason = REASON_NODE_AFFINITY
                if reason is None:
                    by_zone.setdefault(zones[name], []).append(name)
                else:
                    excluded[reason] = excluded.get(reason, 0) + 1
            names = frozenset(n for names in by_zone.values() for n in names)
            cached = self._candidates[w.sig] = CandidateSet(names, CandidateLayout(by_zone, excluded), template)
        return cached
