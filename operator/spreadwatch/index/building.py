"""Building a workload's report from the index's sparse state (SelectorSpread, or PodTopologySpread for
``v1.29``): O(nodes with matching pods + zones × top_n), plus O(groups) for v1.29; then the scheduler's
window (scoring/window.py): O(1) when it scores every candidate, else O(window samples × (groups log n +
busy candidates)), plus O(n) per candidate set after a node change.

:class:`ReportBuilder` is one part of :class:`~spreadwatch.index.SpreadIndex`: it owns the scheduler's node
order and the window layouts on it, and is given what it reads (the index's records, a workload's candidate
set, PodTopologySpread's Filter, the per-constraint counts)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping

import msgspec

from spreadwatch.index.hard_filter import HardFilter
from spreadwatch.index.state import CandidateSet, IndexRecords, Workload, template_of
from spreadwatch.report import (
    Health,
    ReportInput,
    SpreadReport,
    build_report,
    error_report,
)
from spreadwatch.report.filtering import unschedulable, with_filter
from spreadwatch.report.topology import build_topology_report
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

__all__ = ["ReportBuilder"]

_PROBABILITY_DIGITS = 4  # reports round the probabilities (the sampled ones are estimates anyway)

_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C (its own __new__ is Python code); once per report


class ReportBuilder:
    """Reports from the counts, candidate sets and (v1.29) candidate groups (see the module docstring). O(1) to
    create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`), ``candidate_set`` (a
    workload's candidate set), ``hard_filter`` (PodTopologySpread's Filter), ``term_counts`` (v1.29, per
    constraint, node -> matching pods) and ``scored`` (told what a v1.29 report scored its pod with: the
    prediction reads it); told each node change by the index (:meth:`node_changed`).
    """

    __slots__ = (
        "_candidate_set",
        "_hard_filter",
        "_nodes",
        "_order",
        "_scored",
        "_term_counts",
        "_topo_groups",
        "_window_layouts",
        "_zones",
        "options",
        "profile",
    )

    def __init__(
        self,
        records: IndexRecords,
        candidate_set: Callable[[Workload], CandidateSet],
        hard_filter: HardFilter,
        term_counts: Callable[[Workload], list[dict[str, int]]],
        scored: Callable[[Workload, CandidateGroups, GroupScores], None],
    ) -> None:
        self.profile, self.options = records.profile, records.options
        self._nodes, self._zones, self._topo_groups = records.nodes, records.zones, records.topo_groups
        self._candidate_set, self._hard_filter = candidate_set, hard_filter
        self._term_counts, self._scored = term_counts, scored
        #: the scheduler's node order (scoring/window.py; None: to rebuild after a node change) and the window
        #: layouts on it, per candidate set or candidate groups (by id, the object kept to check it)
        self._order: tuple[str, ...] | None = None
        self._window_layouts: dict[int, tuple[object, WindowLayout]] = {}

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
        template = template_of(w)
        if w.multi:
            scores = score_groups(plan, template, groups, self._term_counts(w), self._nodes, keep=keep)
        else:  # every term counts the workload's pods
            per_term = [w.counts if w.counting else {}] * len(terms)
            scores = score_groups(plan, template, groups, per_term, self._nodes, shared=True, keep=keep)
        self._scored(w, groups, scores)
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
            per_term = list(self._term_counts(w)) if w.multi else [w.counts if w.counting else {}] * len(terms)
        f = self._hard_filter.filtered(w, candidates, keys, hard_counts, per_term[0] if scored else hard_counts[0])
        w.filtered = f
        fields = (w.ref, self.profile, w.selector_text, w.ctrl.replicas, f.layout, f.counts, self._zones, self.options)
        model: WindowModel | None = None
        if scored:
            keep = not gc.isenabled() and not f.rejected  # (a view's memos die with it)
            template = template_of(w)
            scores = score_groups(plan, template, f.groups, per_term, self._nodes, shared=not w.multi, keep=keep)
            inp = _new_tuple(ReportInput, (*fields[:5], scores.pods, *fields[6:]))
            report = build_topology_report(inp, f.groups, scores, keep)
        else:
            report = build_report(_new_tuple(ReportInput, fields), w.skip, f.groups.group_of.keys())
        report = with_filter(report, self._hard_filter.filter_facts(f, candidates), self.options.thresholds)
        if scored and self._sampled(report):
            model = self._topology_model(f.groups, scores, cache=not f.rejected)
        return self._with_window(report, model)

    def build(self, w: Workload) -> SpreadReport:
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

    def node_changed(self) -> None:
        """A node added, changed or removed: the scheduler's node order and the window layouts on it go. O(1)."""
        self._order = None
        self._window_layouts.clear()

    def node_order(self) -> tuple[str, ...]:
        """The scheduler's node order (scoring/window.py), kept until a node changes. O(1), O(n log n) after a
        node change."""
        if self._order is None:
            self._order = scheduler_order((name, tree_zone(node.labels)) for name, node in self._nodes.items())
        return self._order

    def window_size(self) -> int:
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
        layout = WindowLayout.build(self.node_order(), group_of(), n_groups)
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
        return WindowModel(layout, self.window_size(), tuple(i for i, _ in busy), scorer, class_zone)

    def _topology_model(self, groups: CandidateGroups, scores: GroupScores, cache: bool = True) -> WindowModel:
        """PodTopologySpread's window model: the candidate groups as class groups. O(busy nodes) (+ O(n) for a
        new layout)."""
        layout = self._window_layout(groups, lambda: groups.group_of, len(groups.sigs), cache)
        index = layout.index
        class_zone = (*[groups.zones[g] for _, g, _ in scores.rows], *groups.zones)
        rows = tuple(index[name] for name, _, _ in scores.rows)
        return WindowModel(layout, self.window_size(), rows, TopologyClasses(groups, scores), class_zone)

    def _sampled(self, report: SpreadReport) -> bool:
        """Whether the report's probabilities need window samples: the scheduler scores only some of its
        candidates, and ``--window-samples`` asks for them. O(1)."""
        return self.options.window_samples > 0 and self.window_size() < report.candidate_nodes

    def _with_window(self, report: SpreadReport, model: WindowModel | None) -> SpreadReport:
        """``report`` with the window's size and the best-node probabilities: from ``model``, else 1 when every
        candidate is scored (so the report's best nodes are the window's), else none. O(1) without a model."""
        if model is None:
            scored = min(self.window_size(), report.candidate_nodes)
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

    def window_model(self, w: Workload) -> WindowModel:
        """The window model of a workload's next pod, its report built (not skipped, not in Error). O(busy
        nodes)."""
        candidates = self._candidate_set(w)
        if w.plan is None:
            return self._selector_model(candidates, w.counts)
        template = template_of(w)
        terms = w.plan.terms
        if w.filtered is not None:  # DoNotSchedule constraints: the candidates the Filter passed
            f = w.filtered
            per_term = list(self._term_counts(w)) if w.multi else [w.counts if w.counting else {}] * len(terms)
            scores = score_groups(w.plan, template, f.groups, per_term, self._nodes, shared=not w.multi, keep=False)
            return self._topology_model(f.groups, scores, cache=not f.rejected)
        groups = self._topo_groups[(w.sig, tuple([t.topology_key for t in terms]), ())]
        if w.multi:
            scores = score_groups(w.plan, template, groups, self._term_counts(w), self._nodes, keep=False)
        else:
            per_term = [w.counts if w.counting else {}] * len(w.plan.terms)
            scores = score_groups(w.plan, template, groups, per_term, self._nodes, shared=True, keep=False)
        return self._topology_model(groups, scores)
