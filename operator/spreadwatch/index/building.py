"""Building a workload's report from the index's sparse state (SelectorSpread, or PodTopologySpread for
``v1.29``): O(nodes with matching pods + zones × top_n), plus O(groups) for v1.29; then the scheduler's
window (scoring/window.py): O(1) when it scores every candidate, else O(window samples × (groups log n +
busy candidates)), plus O(n) per candidate set after a node change."""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping

import msgspec

from spreadwatch.index.candidates import CandidateSets
from spreadwatch.index.hard_filter import HardFilter
from spreadwatch.index.state import CandidateSet, Workload
from spreadwatch.index.workloads import WorkloadTracking
from spreadwatch.model import Node, WorkloadKey
from spreadwatch.report import (
    CandidateLayout,
    Health,
    ReportInput,
    ReportOptions,
    SpreadReport,
    build_report,
    error_report,
)
from spreadwatch.report.filtering import unschedulable, with_filter
from spreadwatch.report.topology import build_topology_report
from spreadwatch.scoring import Profile, ZoneKey, zone_key
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores, group_candidates, score_groups
from spreadwatch.scoring.window import (
    SelectorClasses,
    TopologyClasses,
    WindowLayout,
    WindowModel,
    nodes_to_score,
    scheduler_order,
    tree_zone,
)

__all__ = ["ReportBuilding"]

_PROBABILITY_DIGITS = 4  # reports round the probabilities (the sampled ones are estimates anyway)

_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C (its own __new__ is Python code); once per report


class ReportBuilding(WorkloadTracking):
    """Reports from the counts, candidate sets and (v1.29) candidate groups."""

    def __init__(self, profile: Profile, options: ReportOptions | None = None) -> None:
        super().__init__(profile, options)
        #: the nodes passing each scheduling-constraint signature's filters (:mod:`~.candidates`)
        self._candidate_sets = CandidateSets(self._records, self._touch)
        #: a workload's candidate set (cached per signature; O(nodes) to build after a node change)
        self._candidate_set: Callable[[Workload], CandidateSet] = self._candidate_sets.of
        #: PodTopologySpread's Filter of the workloads with DoNotSchedule constraints (:mod:`~.hard_filter`)
        self._hard_filter = HardFilter(self._records, self._touch)

    def _build_topology(self, w: Workload, candidates: CandidateSet) -> SpreadReport:
        """v1.29: the candidate groups (once per candidate set and keys), the scores, the report. The shared
        memos (levels, zone-level parts) grow only while the cyclic GC is paused (``reports()``, a load): a
        memo entry made while it runs is a long-lived container, and each counts towards its next collection
        (kept per pod event, they set off full collections); then the memos are only read."""
        keep = not gc.isenabled()
        plan = w.plan
        assert plan is not None
        terms = plan.terms
        keys = tuple([t.topology_key for t in terms])
        groups = self._topo_groups.get((w.sig, keys, ()))
        if groups is None:
            nodes = (self._nodes[n] for n in candidates.names)
            groups = self._topo_groups[(w.sig, keys, ())] = group_candidates(nodes, keys, self._zones)
        template = self._template(w)
        if w.multi:
            scores = score_groups(plan, template, groups, self._counts.term_counts(w), self._nodes, keep=keep)
        else:  # every term counts the workload's pods
            per_term = [w.counts if w.counting else {}] * len(terms)
            scores = score_groups(plan, template, groups, per_term, self._nodes, shared=True, keep=keep)
        self._topology_scored(w, groups, scores)
        fields = (
            w.ref,
            self.profile,
            w.selector_text,
            w.ctrl.replicas,
            candidates.layout,
            scores.pods,
            self._zones,
            self.options,
        )
        report = build_topology_report(_new_tuple(ReportInput, fields), groups, scores, keep)
        if report.skipped or not self._sampled(report):
            return self._with_window(report, None)
        return self._with_window(report, self._topology_model(groups, scores))

    def _topology_scored(self, w: Workload, groups: CandidateGroups, scores: GroupScores) -> None:
        """What :meth:`_build_topology` scored the workload's pod with (the prediction reads it). O(1)."""

    def _build_hard(self, w: Workload, candidates: CandidateSet) -> SpreadReport:
        """v1.29 with DoNotSchedule constraints: the candidates the Filter passes (index/hard_filter.py), scored
        on them (or all 0 when no constraint scores), then the pod counts of the candidates of the other
        filters, the compliance and the rejected nodes with pods (report/filtering.py). O(groups × constraints
        + nodes with matching pods), plus the scoring's cost on the filtered groups."""
        plan, hard = w.plan, w.hard
        assert plan is not None
        assert hard is not None
        hard_counts = self._hard_filter.hard_counts(w, hard)
        scored = not w.skip
        terms = plan.terms if scored else ()
        keys = tuple([t.topology_key for t in terms])
        per_term: list[Mapping[str, int]] = []
        if scored:
            per_term = list(self._counts.term_counts(w)) if w.multi else [w.counts if w.counting else {}] * len(terms)
        f = self._hard_filter.filtered(w, candidates, keys, hard_counts, per_term[0] if scored else hard_counts[0])
        w.filtered = f
        fields = (w.ref, self.profile, w.selector_text, w.ctrl.replicas, f.layout, f.counts, self._zones, self.options)
        model: WindowModel | None = None
        if scored:
            keep = not gc.isenabled() and not f.rejected  # (a view's memos die with it)
            template = self._template(w)
            scores = score_groups(plan, template, f.groups, per_term, self._nodes, shared=not w.multi, keep=keep)
            inp = _new_tuple(ReportInput, (*fields[:5], scores.pods, *fields[6:]))
            report = build_topology_report(inp, f.groups, scores, keep)
        else:
            report = build_report(_new_tuple(ReportInput, fields), w.skip, f.groups.group_of.keys())
        report = with_filter(report, self._hard_filter.filter_facts(f, candidates), self.options.thresholds)
        if scored and self._sampled(report):
            model = self._topology_model(f.groups, scores, cache=not f.rejected)
        return self._with_window(report, model)

    def _build(self, w: Workload) -> SpreadReport:
        """The report of a workload; a report without any candidate node says the next replica stays Pending
        (O(1) more)."""
        report = self._build_report(w)
        if report.candidate_nodes or report.health is Health.ERROR:
            return report
        f = w.filtered if w.hard is not None else None
        return unschedulable(report, len(self._nodes), f.missing if f is not None else 0)

    def _build_report(self, w: Workload) -> SpreadReport:
        replicas = w.ctrl.replicas
        if w.error:
            return error_report(w.ref, self.profile.name, replicas, w.error)
        candidates = self._candidate_set(w)
        if w.hard is not None:
            return self._build_hard(w, candidates)
        if w.plan is not None and not w.skip:
            return self._build_topology(w, candidates)
        layout = candidates.layout
        fields = (w.ref, self.profile, w.selector_text, replicas, layout, w.counts, self._zones, self.options)
        report = build_report(_new_tuple(ReportInput, fields), w.skip, candidates.names)
        if report.skipped or not self._sampled(report):
            return self._with_window(report, None)
        return self._with_window(report, self._selector_model(candidates, w.counts))

    def _apply_node(self, node: Node) -> None:
        """A node added or changed: its record and zone kept; a change of what the filters read (labels, taints,
        unschedulable) goes to :meth:`_node_changed`. O(1), else the change's cost."""
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
        """A node added, changed (``old_zone``: its zone before) or removed (``new`` None): the scheduler's node
        order and the window layouts on it go; the candidate sets and the Filter's domains it alters, with the
        workloads using them dirtied. O(candidate sets + W)."""
        self._order = None
        self._window_layouts.clear()
        self._candidate_sets.node_changed(old, old_zone, new)
        self._hard_filter.node_changed(old, new)

    def _node_order(self) -> tuple[str, ...]:
        """The scheduler's node order (scoring/window.py), kept until a node changes. O(1), O(n log n) after a
        node change."""
        if self._order is None:
            self._order = scheduler_order((name, tree_zone(node.labels)) for name, node in self._nodes.items())
        return self._order

    def _window_size(self) -> int:
        """Nodes the scheduler scores per pod in this cluster (``numFeasibleNodesToFind``). O(1)."""
        percentage = self.options.score_percentage
        return nodes_to_score(len(self._nodes), self.profile.score_percentage if percentage is None else percentage)

    def _window_layout(
        self, owner: object, group_of: Callable[[], Mapping[str, int]], n_groups: int, cache: bool = True
    ) -> WindowLayout:
        """The window layout of a candidate set or candidate groups (``owner``) on the node order, cached
        until a node changes (``cache``: not for a workload's own filtered view); ``group_of`` (candidate ->
        group) is called only to build it. O(n) to build."""
        cached = self._window_layouts.get(id(owner))
        if cached is not None and cached[0] is owner:
            return cached[1]
        layout = WindowLayout.build(self._node_order(), group_of(), n_groups)
        if cache:
            self._window_layouts[id(owner)] = (owner, layout)
        return layout

    def _selector_model(self, candidates: CandidateSet, counts: dict[str, int]) -> WindowModel:
        """SelectorSpread's window model: one class group per zone. O(busy nodes) (+ O(n) for a new layout)."""
        by_zone = candidates.layout.by_zone
        zones = list(by_zone)
        layout = self._window_layout(
            candidates, lambda: {n: g for g, z in enumerate(zones) for n in by_zone[z]}, len(zones)
        )
        index, groups = layout.index, layout.groups
        busy = [(index[n], c) for n, c in counts.items() if c > 0 and n in index]
        scorer = SelectorClasses(zones, self.profile.max_score, [(groups[i], c) for i, c in busy])
        class_zone = (*[zones[groups[i]] for i, _ in busy], *zones)
        return WindowModel(layout, self._window_size(), tuple(i for i, _ in busy), scorer, class_zone)

    def _topology_model(self, groups: CandidateGroups, scores: GroupScores, cache: bool = True) -> WindowModel:
        """PodTopologySpread's window model: the candidate groups as class groups. O(busy nodes) (+ O(n) for a
        new layout)."""
        layout = self._window_layout(groups, lambda: groups.group_of, len(groups.sigs), cache)
        index = layout.index
        class_zone = (*[groups.zones[g] for _, g, _ in scores.rows], *groups.zones)
        rows = tuple(index[name] for name, _, _ in scores.rows)
        return WindowModel(layout, self._window_size(), rows, TopologyClasses(groups, scores), class_zone)

    def _sampled(self, report: SpreadReport) -> bool:
        """Whether the report's probabilities need window samples: the scheduler scores only some of its
        candidates, and ``--window-samples`` asks for them. O(1)."""
        return self.options.window_samples > 0 and self._window_size() < report.candidate_nodes

    def _with_window(self, report: SpreadReport, model: WindowModel | None) -> SpreadReport:
        """``report`` with the window's size and the best-node probabilities: from ``model``, else 1 when every
        candidate is scored (so the report's best nodes are the window's), else none. O(1) without a model."""
        if model is None:
            scored = min(self._window_size(), report.candidate_nodes)
            whole = 1.0 if scored == report.candidate_nodes and not report.skipped and scored else None
            return msgspec.structs.replace(
                report, nodes_scored=scored, best_node_probability=whole, best_zone_probability=whole
            )
        odds = model.odds(self.options.window_samples)
        node = None if odds.best_node is None else round(odds.best_node, _PROBABILITY_DIGITS)
        zone = None if odds.best_zone is None else round(odds.best_zone, _PROBABILITY_DIGITS)
        return msgspec.structs.replace(
            report, nodes_scored=odds.nodes_scored, best_node_probability=node, best_zone_probability=zone
        )

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

    def candidate_layout(self, key: WorkloadKey) -> CandidateLayout | None:
        """A workload's candidate nodes by zone and excluded-node counts — for one with DoNotSchedule
        constraints, those PodTopologySpread's Filter passes as of its current report (built now if dirty).
        None for an unknown workload or one in Error. O(1) when current."""
        built = self._built(key)
        if built is None or built[0].error:
            return None
        w = built[0]
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
        candidates = self._candidate_set(w)
        if w.plan is None:
            return self._selector_model(candidates, w.counts)
        template = self._template(w)
        terms = w.plan.terms
        if w.filtered is not None:  # DoNotSchedule constraints: the candidates the Filter passed
            f = w.filtered
            per_term = list(self._counts.term_counts(w)) if w.multi else [w.counts if w.counting else {}] * len(terms)
            scores = score_groups(w.plan, template, f.groups, per_term, self._nodes, shared=not w.multi, keep=False)
            return self._topology_model(f.groups, scores, cache=not f.rejected)
        groups = self._topo_groups[(w.sig, tuple([t.topology_key for t in terms]), ())]
        if w.multi:
            scores = score_groups(w.plan, template, groups, self._counts.term_counts(w), self._nodes, keep=False)
        else:
            per_term = [w.counts if w.counting else {}] * len(w.plan.terms)
            scores = score_groups(w.plan, template, groups, per_term, self._nodes, shared=True, keep=False)
        return self._topology_model(groups, scores)
