"""PodTopologySpread's Filter in the index (profile ``v1.29``): a workload's candidates after its DoNotSchedule
constraints.

A workload with hard constraints shares its candidate set, and its candidate groups (split by the hard keys
too), with every workload of its scheduling constraints; the Filter takes away rejected groups and rejected
busy nodes as views (scoring/filtered_groups.py). Per rebuild: the hard constraints' per-node counts (the
workload's own counts, or per constraint from the label groups when selectors differ), PreFilter from each
constraint's :class:`~spreadwatch.scoring.topology_filter.DomainTable` (built once per node change and
scheduling-constraint signature: O(nodes)) in O(nodes with matching pods), the rejections in O(groups +
nodes with matching pods), the views in O(groups + removed nodes) — never O(nodes). Workloads without hard
constraints never come here.

:class:`HardFilter` is one part of :class:`~spreadwatch.index.SpreadIndex`, given to the report building
(:mod:`~spreadwatch.index.building`): it owns the Filter's domain tables and reads the index's nodes, zones,
namespaces and candidate groups through what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from spreadwatch.index.state import CandidateSet, FilteredCandidates, IndexRecords, Workload, template_of
from spreadwatch.model import Node, WorkloadKey
from spreadwatch.report import CandidateLayout
from spreadwatch.report.filtering import FilterFacts
from spreadwatch.report.spread_report import FilteredNode
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.filtered_groups import NameView, rejections, restrict_groups
from spreadwatch.scoring.topology_filter import (
    REASON_POD_TOPOLOGY_SPREAD,
    DomainTable,
    FilterPlan,
    compliance,
    domain_table,
    rejected_values,
    sparse_prefilter,
)
from spreadwatch.scoring.topology_groups import CandidateGroups, group_candidates

__all__ = ["HardFilter"]


def _restrict_layout(base: CandidateLayout, view: CandidateGroups, rejected: int) -> CandidateLayout:
    """The candidate layout of the candidates ``view`` keeps: each zone's sorted names filtered through the
    view (zones left empty dropped), ``PodTopologySpread`` counted among the excluded. O(groups + zones)."""
    sizes: dict[ZoneKey | None, int] = {}
    for zone, members in view.by_zone.items():
        sizes[zone] = sum(len(view.names[g]) for g in members)
    group_of = view.group_of

    def drop(name: str) -> bool:
        return group_of.get(name) is None

    by_zone = {zone: NameView(names, drop, sizes[zone]) for zone, names in base.by_zone.items() if sizes.get(zone)}
    return CandidateLayout(by_zone, {**base.excluded, REASON_POD_TOPOLOGY_SPREAD: rejected})


class HardFilter:
    """PodTopologySpread's Filter of the workloads with DoNotSchedule constraints (see the module docstring).
    O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`) and ``touch`` (dirty a
    workload's report).
    """

    __slots__ = ("_domain_tables", "_nodes", "_ns", "_topo_groups", "_touch", "_zones", "options", "profile")

    def __init__(self, records: IndexRecords, touch: Callable[[Workload, WorkloadKey], None]) -> None:
        self.profile, self.options, self._touch = records.profile, records.options, touch
        self._nodes, self._zones, self._ns, self._topo_groups = (
            records.nodes,
            records.zones,
            records.namespaces,
            records.topo_groups,
        )
        #: PodTopologySpread's Filter domains per (signature id, hard keys, key, inclusion policies); dropped on
        #: any node change
        self._domain_tables: dict[tuple[object, ...], DomainTable] = {}

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A node's labels or taints (or the node itself) come or go: the Filter's domains may change, for every
        workload with hard constraints, candidate or not. O(W) (only under v1.29 with such workloads)."""
        if not self.profile.pod_topology_spread:
            return
        if old is not None and new is not None and (old.labels, old.taints) == (new.labels, new.taints):
            return
        self._domain_tables.clear()
        for ns in self._ns.values():
            for key, w in ns.workloads.items():
                if w.hard is not None and not w.error:
                    self._touch(w, key)

    def hard_counts(self, w: Workload, hard: FilterPlan) -> list[Mapping[str, int]]:
        """Per hard constraint, node -> matching pods: the workload's counts when every constraint counts them,
        else from the namespace's label groups. O(1), or O(groups × constraints)."""
        if not w.multi:
            return [w.counts if w.counting else {}] * len(hard.terms)
        out: list[dict[str, int]] = [{} for _ in hard.terms]
        ns = self._ns.get(w.ctrl.namespace)
        if ns is None:
            return list(out)
        for group in ns.groups.values():
            for i, term in enumerate(hard.terms):
                if not term.selector.empty and term.selector.matches(group.labels):
                    per_node = out[i]
                    for node, c in group.nodes.items():
                        per_node[node] = per_node.get(node, 0) + c
        return list(out)

    def _tables_of(self, w: Workload, hard: FilterPlan) -> tuple[DomainTable, ...]:
        """Each hard constraint's domains, cached per (signature, keys, key, inclusion policies) until a node
        changes. O(terms), or O(nodes) per table to build."""
        tables = []
        keys = hard.keys
        template = template_of(w)
        for i, term in enumerate(hard.terms):
            cache_key = (w.sig, keys, term.topology_key, term.honor_affinity, term.honor_taints)
            found = self._domain_tables.get(cache_key)
            if found is None:
                found = self._domain_tables[cache_key] = domain_table(hard, i, template, self._nodes.values())
            tables.append(found)
        return tuple(tables)

    def _split_groups(
        self, w: Workload, candidates: CandidateSet, keys: tuple[str, ...], split: tuple[str, ...]
    ) -> CandidateGroups:
        """The candidate groups of the scoring ``keys``, split by the hard ``split`` keys; cached per candidate
        set. O(1), or O(candidates × keys) to build."""
        cache_key = (w.sig, keys, split)
        groups = self._topo_groups.get(cache_key)
        if groups is None:
            nodes = (self._nodes[n] for n in candidates.names)
            groups = self._topo_groups[cache_key] = group_candidates(nodes, keys, self._zones, split)
        return groups

    def filtered(
        self,
        w: Workload,
        candidates: CandidateSet,
        keys: tuple[str, ...],
        per_term: Sequence[Mapping[str, int]],
        counts: Mapping[str, int],
    ) -> FilteredCandidates:
        """The workload's candidates after the Filter (``keys``: the scoring constraints' keys; ``per_term``: the
        hard constraints' counts, :meth:`hard_counts`; ``counts``: the report's pod counts).
        O(groups × constraints + nodes with matching pods)."""
        hard = w.hard
        assert hard is not None
        tables = self._tables_of(w, hard)
        state = sparse_prefilter(hard, tables, per_term)
        groups = self._split_groups(w, candidates, keys, hard.keys)
        kept, removed = rejections(groups, hard, rejected_values(state), tables, per_term)
        if all(kept) and not removed:
            return FilteredCandidates(state, groups, candidates.layout, 0, 0, counts)
        view = restrict_groups(groups, kept, removed)
        rejected = groups.total - view.total
        missing = sum(
            len(groups.names[g]) for g, split in enumerate(groups.splits) if any(v is None or v is False for v in split)
        )
        return FilteredCandidates(
            state, view, _restrict_layout(candidates.layout, view, rejected), rejected, missing, counts
        )

    def filter_facts(self, f: FilteredCandidates, candidates: CandidateSet) -> FilterFacts:
        """What the report adds for the Filter: compliance, the rejected nodes with pods (up to the report's
        node cap, most pods first). O(nodes with pods)."""
        zones = self._zones
        filtered: list[FilteredNode] = []
        if f.rejected:
            members = candidates.names
            for name, count in f.counts.items():
                if count > 0 and name in members and not f.passes(name):
                    zone = zones.get(name)
                    filtered.append(
                        FilteredNode(name, "", "", count)
                        if zone is None
                        else FilteredNode(name, zone[1], zone[0], count)
                    )
            filtered.sort(key=lambda e: (-e.pods, e.node))
            del filtered[self.options.max_nodes :]
        return FilterFacts(
            compliance(f.state), tuple(filtered), f.rejected, candidates.layout, candidates.names, f.counts, zones
        )
