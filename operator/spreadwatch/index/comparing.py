"""Each report's ``comparison``: the workload under a second profile (``--compare-profile``, by default the
other spreading plugin).

The default pair — PodTopologySpread (``v1.29``) scoring, SelectorSpread ``v1.28`` compared — counts the same
pods: PodTopologySpread's default constraints take the selector ``v1.28`` builds, with the same next pod,
controllers and Services. So the index scores ``v1.28`` from its own counts and candidate sets (the *sibling*
profile: :func:`shares_counts`), keeping only ``v1.28``'s zone of each node and its layout of each candidate
set; the comparison is made with the report, O(busy nodes + zones) more, and nothing else is kept per
workload. Any other pair (a SelectorSpread profile compared with ``v1.29``, or generations that build the
selector differently) is scored by a *shadow* index fed the same events (``SpreadIndex``), which holds its
own copy of the pods, label groups and workloads: at bench/synth.py scale 1.0 (5,000 nodes, 10,000
workloads) the sibling adds ~10 MiB (~1 MiB of zones and layouts, the rest each report's ``Comparison`` and
the layouts' report memos), a shadow ~85 MiB.

Whether the two best sets overlap is decided without listing them (:meth:`ProfileComparison.overlap`):
the listed nodes one by one, the unlisted ones per (zone, sibling zone) pair of the candidate set, memoised
per pair of layouts: O(listed nodes + zone pairs) per report.

:class:`ProfileComparison` is one part of :class:`~spreadwatch.index.SpreadIndex`: it owns the sibling's zones,
layouts and placement counts and the zone-pair memo, and reads the index's node zones and candidate sets
through what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from spreadwatch.index.state import CandidateSet, IndexRecords, Workload
from spreadwatch.model import Node
from spreadwatch.report import (
    PLACEMENT_OUTCOMES,
    CandidateLayout,
    Comparison,
    Health,
    ReportInput,
    SpreadReport,
    build_report,
    classify_placement,
    error_report,
)
from spreadwatch.scoring import Profile, SelectorMode, ZoneKey, skip_reason, zone_key

__all__ = ["ProfileComparison", "kept", "shares_counts"]

_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C (its own __new__ is Python code); once per report

#: zone pair (this profile's zone, the other's) -> the candidates in both, by name
_ZonePairs = dict[tuple[ZoneKey | None, ZoneKey | None], list[str]]


def shares_counts(profile: Profile, compare: Profile) -> bool:
    """Whether ``compare`` can be scored from ``profile``'s counts: ``profile`` is PodTopologySpread with default
    constraints (their selector is ``v1.28``'s) and ``compare`` a SelectorSpread generation building that same
    selector (``v1.28``). O(1)."""
    return (
        profile.pod_topology_spread
        and profile.mode is SelectorMode.OWNER_MERGED
        and bool(profile.default_constraints.constraints)
        and not compare.pod_topology_spread
        and compare.mode is SelectorMode.OWNER_MERGED
    )


def _empty_scores(report: SpreadReport) -> dict[ZoneKey | None, int]:
    """Zone -> the score of its empty (unlisted) candidates (the zoneless ones under None; a zone the report
    does not list scores ``emptyNodeScore``). O(zones)."""
    out: dict[ZoneKey | None, int] = {(z.region, z.zone): z.empty_node_score for z in report.zones}
    out[None] = report.empty_node_score
    return out


def kept(w: Workload) -> Callable[[str], bool] | None:
    """Which candidates of its shared set a workload's report keeps: PodTopologySpread's Filter's (v1.29,
    DoNotSchedule constraints), None for all. O(1)."""
    filtered = w.filtered if w.hard is not None else None
    return filtered.passes if filtered is not None else None


class ProfileComparison:
    """The comparison of every report with the sibling profile, and the overlap of two reports' best sets
    (see the module docstring). O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`: its profile, options and node zones),
    the compared profile (``compare``; None: none) and ``candidate_set`` (a workload's candidate set). The index
    tells it of each node (``node_applied``, ``node_changed``) before its own state takes the change.
    """

    __slots__ = (
        "_candidate_set",
        "_pairs",
        "_sibling_layouts",
        "_sibling_zones",
        "_zones",
        "options",
        "sibling",
        "sibling_placements",
    )

    def __init__(
        self, records: IndexRecords, compare: Profile | None, candidate_set: Callable[[Workload], CandidateSet]
    ) -> None:
        self.options, self._zones, self._candidate_set = records.options, records.zones, candidate_set
        #: the profile reports are compared with when this index scores it from its own counts (else None)
        self.sibling = compare if compare is not None and shares_counts(records.profile, compare) else None
        #: placements checked against the sibling's reports (``SpreadIndex.check_placement``), by outcome
        self.sibling_placements: dict[str, int] = dict.fromkeys(PLACEMENT_OUTCOMES, 0)
        self._sibling_zones: dict[str, ZoneKey | None] = {}  # node -> its zone under the sibling profile
        #: a candidate set (by id, the object kept to check it) -> its layout under the sibling's zones
        self._sibling_layouts: dict[int, tuple[CandidateSet, CandidateLayout]] = {}
        #: (layout, other layout) by ids, both kept -> their zone pairs (:meth:`_zone_pairs`)
        self._pairs: dict[tuple[int, int], tuple[CandidateLayout, CandidateLayout, _ZonePairs]] = {}

    # --- nodes ------------------------------------------------------------------------------------------------

    def node_applied(self, node: Node) -> None:
        """A node added or changed: its zone under the sibling profile. O(1)."""
        if self.sibling is not None:
            self._sibling_zones[node.name] = zone_key(node.labels, self.sibling)

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A changed candidate set is a new object: the layouts and zone pairs of the old ones go (``new`` None:
        ``old`` removed). O(1)."""
        if new is None and old is not None:
            self._sibling_zones.pop(old.name, None)
        self._sibling_layouts.clear()
        self._pairs.clear()

    # --- the sibling's reports --------------------------------------------------------------------------------

    def _sibling_layout(self, candidates: CandidateSet) -> CandidateLayout:
        """The candidate set's layout under the sibling's zones (built as the sibling's own index would: the
        names in order, each zone's list sorted). O(1) cached, O(candidates log candidates) to build."""
        cached = self._sibling_layouts.get(id(candidates))
        if cached is not None and cached[0] is candidates:
            return cached[1]
        zones = self._sibling_zones
        by_zone: dict[ZoneKey | None, list[str]] = {}
        for name in sorted(candidates.names):
            by_zone.setdefault(zones[name], []).append(name)
        layout = CandidateLayout(by_zone, candidates.layout.excluded)
        self._sibling_layouts[id(candidates)] = (candidates, layout)
        return layout

    def _sibling_report(self, w: Workload) -> SpreadReport:
        """The workload's report under the sibling profile, from this index's state: its controller's error
        (not the pod's own constraints', which the sibling skips), its skip reason, the counts this profile
        keeps when the sibling counts too (the same selector), the sibling's layout and zones. Not kept.
        O(busy nodes + zones × top_n)."""
        sibling = self.sibling
        assert sibling is not None
        error = "" if w.plan_error else w.error
        if error:
            return error_report(w.ref, sibling.name, w.ctrl.replicas, error)
        assert w.pod is not None
        skip = skip_reason(w.pod, sibling)
        counts = w.counts if w.counting and not skip else {}
        candidates = self._candidate_set(w)
        fields = (
            w.ref,
            sibling,
            "" if skip else w.selector_text,
            w.ctrl.replicas,
            self._sibling_layout(candidates),
            counts,
            self._sibling_zones,
            self.options,
        )
        return build_report(_new_tuple(ReportInput, fields), skip, candidates.names)

    def with_sibling(self, w: Workload, report: SpreadReport) -> SpreadReport:
        """The workload's report with its comparison when a sibling profile is scored. O(busy nodes + zones)."""
        sibling = self.sibling
        if sibling is None:
            return report
        other = self._sibling_report(w)
        overlap = False
        if not w.error:
            candidates = self._candidate_set(w)
            theirs = self._sibling_layout(candidates)  # (the sibling, SelectorSpread, has no PodTopologySpread Filter)
            mine = candidates.layout
            overlap = self.overlap(report, mine, self._zones, other, theirs, self._sibling_zones, kept(w))
        comparison = Comparison(sibling.name, other.best_score, other.best_nodes, other.best_node_count, overlap)
        return msgspec.structs.replace(report, comparison=comparison)

    def check(self, w: Workload, node: str, candidate: bool) -> None:
        """Count a new binding on ``node`` against the sibling's report of ``w`` (built now: the state just
        before the binding), unless that report is skipped or in error. O(busy nodes + zones)."""
        if self.sibling is None:
            return
        other = self._sibling_report(w)
        if not other.skipped and other.health is not Health.ERROR:
            outcome = classify_placement(other, node, self._sibling_zones.get(node), candidate)
            self.sibling_placements[outcome.value] += 1

    # --- overlap ----------------------------------------------------------------------------------------------

    def _zone_pairs(self, mine: CandidateLayout, theirs: CandidateLayout) -> _ZonePairs:
        """The candidates of two layouts of one candidate set (shared, as every workload of a scheduling-constraint
        signature shares it) grouped by (their zone in ``mine``, in ``theirs``), memoised per pair of layouts.
        O(candidates) once."""
        key = (id(mine), id(theirs))
        cached = self._pairs.get(key)
        if cached is not None and cached[0] is mine and cached[1] is theirs:
            return cached[2]
        zone_of = {name: zone for zone, names in theirs.by_zone.items() for name in names}
        pairs: _ZonePairs = {}
        for zone, names in mine.by_zone.items():
            for name in names:
                pairs.setdefault((zone, zone_of[name]), []).append(name)
        self._pairs[key] = (mine, theirs, pairs)
        return pairs

    def overlap(
        self,
        report: SpreadReport,
        mine: CandidateLayout,
        my_zones: Mapping[str, ZoneKey | None],
        other: SpreadReport,
        theirs: CandidateLayout,
        their_zones: Mapping[str, ZoneKey | None],
        mine_has: Callable[[str], bool] | None = None,
        theirs_has: Callable[[str], bool] | None = None,
    ) -> bool:
        """Whether a node is a candidate with the best score in both reports: ``mine``/``theirs`` are the layouts
        of the workload's shared candidate set under each profile's zones, ``my_zones``/``their_zones`` each
        node's zone, ``mine_has``/``theirs_has`` which candidates each report keeps (PodTopologySpread's Filter;
        None: all). A listed node has its listed score, any other its zone's empty-node score. O(listed nodes +
        zone pairs), plus the unlisted candidates of a best pair a Filter rejects."""
        best, their_best = report.best_score, other.best_score
        listed = {e.node: e.score for e in report.nodes}
        their_listed = {e.node: e.score for e in other.nodes}
        empty, their_empty = _empty_scores(report), _empty_scores(other)
        default, their_default = report.empty_node_score, other.empty_node_score
        for name, score in listed.items():
            if score != best or (theirs_has is not None and not theirs_has(name)):
                continue
            found = their_listed.get(name)
            if (their_empty.get(their_zones[name], their_default) if found is None else found) == their_best:
                return True
        for name, score in their_listed.items():
            if score != their_best or name in listed or (mine_has is not None and not mine_has(name)):
                continue
            if empty.get(my_zones[name], default) == best:
                return True
        for (zone, their_zone), names in self._zone_pairs(mine, theirs).items():
            if empty.get(zone, default) == best and their_empty.get(their_zone, their_default) == their_best:
                for name in names:
                    if name in listed or name in their_listed:
                        continue
                    if (mine_has is None or mine_has(name)) and (theirs_has is None or theirs_has(name)):
                        return True
        return False
