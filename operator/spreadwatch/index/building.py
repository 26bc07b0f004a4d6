"""Building a workload's report from the index's sparse state (SelectorSpread, or PodTopologySpread for
``v1.29``): O(nodes with matching pods + zones × top_n), plus O(groups) for v1.29."""

from __future__ import annotations

import gc

from spreadwatch.index.state import CandidateSet, Workload
from spreadwatch.index.workloads import WorkloadTracking
from spreadwatch.report import CandidateLayout, ReportInput, SpreadReport, build_report, error_report
from spreadwatch.report.topology import build_topology_report
from spreadwatch.scoring.topology_groups import group_candidates, score_groups

__all__ = ["ReportBuilding", "best_set"]

_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C (its own __new__ is Python code); once per report


def best_set(report: SpreadReport, layout: CandidateLayout | None) -> set[str]:
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


class ReportBuilding(WorkloadTracking):
    """Reports from the counts, candidate sets and (v1.29) candidate groups."""

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
        groups = self._topo_groups.get((w.sig, keys))
        if groups is None:
            nodes = (self._nodes[n] for n in candidates.names)
            groups = self._topo_groups[(w.sig, keys)] = group_candidates(nodes, keys, self._zones)
        template = self._template(w)
        if w.multi:
            scores = score_groups(plan, template, groups, self._term_counts(w), self._nodes, keep=keep)
        else:  # every term counts the workload's pods
            per_term = [w.counts if w.counting else {}] * len(terms)
            scores = score_groups(plan, template, groups, per_term, self._nodes, shared=True, keep=keep)
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
        return build_topology_report(_new_tuple(ReportInput, fields), groups, scores, keep)

    def _build(self, w: Workload) -> SpreadReport:
        replicas = w.ctrl.replicas
        if w.error:
            return error_report(w.ref, self.profile.name, replicas, w.error)
        candidates = self._candidate_set(w)
        if w.plan is not None and not w.skip:
            return self._build_topology(w, candidates)
        layout = candidates.layout
        fields = (w.ref, self.profile, w.selector_text, replicas, layout, w.counts, self._zones, self.options)
        return build_report(_new_tuple(ReportInput, fields), w.skip, candidates.names)
