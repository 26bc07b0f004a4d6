"""``spreadwatch summary``: the cluster at a glance.

* workloads per health state, and the worst N (SinglePointOfFailure, then ZoneOutageUnsafe, then Imbalanced,
  then Error, by zone skew, node skew and pods);
* per zone: nodes, candidate nodes for an unconstrained pod (not cordoned, no NoSchedule/NoExecute taint)
  and counting pods (bound, not terminal, not deleting);
* per registered profile other than the baseline ``v1.28``: the share of workloads whose *best node set*
  (every candidate node with the best score) differs from the baseline's — the ``v1.28`` → ``v1.29``
  line is the one to read when the PodTopologySpread profile is registered; without it the summary says so.

Cost: one index load per registered profile, O(objects + workloads × (nodes with matching pods + zones²))
each; best node sets are compared in the report's compressed form (busy nodes, per-zone empty-node score).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from spreadwatch.analysis import WorkloadFilter, analyze_index
from spreadwatch.jsonform import each, json_form
from spreadwatch.model import PodTemplate, WorkloadKey
from spreadwatch.report import CandidateLayout, Health, ReportOptions, SpreadReport
from spreadwatch.scoring import PROFILES, Profile, ZoneKey, exclusion_reason, get_profile, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = [
    "BASELINE_PROFILE",
    "COMPARED_PROFILE",
    "HEALTH_ORDER",
    "ClusterSummary",
    "ProfileChange",
    "ZoneSummary",
    "summarize_cluster",
    "worst_key",
]

BASELINE_PROFILE: Final = "v1.28"
COMPARED_PROFILE: Final = "v1.29"
HEALTH_ORDER: Final = (
    Health.UNSCHEDULABLE,
    Health.SINGLE_POINT_OF_FAILURE,
    Health.ZONE_OUTAGE_UNSAFE,
    Health.IMBALANCED,
    Health.ERROR,
    Health.SKIPPED,
    Health.BALANCED,
)
_RANK = {h: i for i, h in enumerate(HEALTH_ORDER)}
_Cell = tuple[ZoneKey | None, ZoneKey | None]  # a candidate node's zone under two profiles
_ZoneMaps = dict[int, tuple[CandidateLayout, dict[str, ZoneKey | None]]]  # id(layout) -> (layout, node -> zone)


def worst_key(report: SpreadReport) -> tuple[int, int, int, int, str, str, str]:
    """Sort key putting the worst spread first."""
    w = report.workload
    return (_RANK[report.health], -report.zone_skew, -report.node_skew, -report.pods, w.namespace, w.kind, w.name)


@dataclass(frozen=True, slots=True)
class ZoneSummary:
    zone: str  # "" for nodes without a zone
    region: str
    nodes: int
    candidate_nodes: int
    pods: int


_ZONE_SUMMARY_FORM = json_form(ZoneSummary)


@dataclass(frozen=True, slots=True)
class ProfileChange:
    """How many workloads' best node set differs between ``baseline`` and ``profile``."""

    profile: str
    baseline: str
    workloads: int  # workloads scored (not Error) under both
    changed: int

    @property
    def share(self) -> float:
        return self.changed / self.workloads if self.workloads else 0.0


_PROFILE_CHANGE_FORM = json_form(
    ProfileChange,
    ("profile", "baseline", "workloads", "changed", "share"),
    convert={"share": partial(round, ndigits=4)},
)


@dataclass(frozen=True, slots=True)
class ClusterSummary:
    profile: str
    workloads: int
    health: Mapping[str, int]
    worst: tuple[SpreadReport, ...]
    zones: tuple[ZoneSummary, ...]
    changes: tuple[ProfileChange, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return _CLUSTER_SUMMARY_FORM(self)


_CLUSTER_SUMMARY_FORM = json_form(
    ClusterSummary,
    rename={"changes": "bestNodeSetChanges"},
    convert={
        "health": dict,
        "worst": each(SpreadReport.to_dict),
        "zones": each(_ZONE_SUMMARY_FORM),
        "changes": each(_PROFILE_CHANGE_FORM),
        "notes": list,
    },
)


def _zones(snapshot: Snapshot, profile: Profile, namespaces: Sequence[str]) -> tuple[ZoneSummary, ...]:
    wanted = set(namespaces)
    free = PodTemplate()
    zone_of = {}
    nodes: Counter[tuple[str, str]] = Counter()
    candidates: Counter[tuple[str, str]] = Counter()
    for node in snapshot.nodes:
        key = zone_key(node.labels, profile) or ("", "")
        zone_of[node.name] = key
        nodes[key] += 1
        if exclusion_reason(node, free) is None:
            candidates[key] += 1
    pods: Counter[tuple[str, str]] = Counter()
    for pod in snapshot.pods:
        if pod.counts and pod.node_name in zone_of and (not wanted or pod.namespace in wanted):
            pods[zone_of[pod.node_name]] += 1
    return tuple(ZoneSummary(z, r, nodes[(r, z)], candidates[(r, z)], pods[(r, z)]) for r, z in sorted(nodes))


@dataclass(frozen=True, slots=True)
class _BestView:
    """A workload's best node set, kept compressed as the report contract allows (docs/report.md): nodes
    with matching pods carry their own score, every other candidate scores its zone's ``emptyNodeScore``."""

    zone_of: Mapping[str, ZoneKey | None]  # every candidate node (shared by workloads with one layout)
    busy: Mapping[str, int]  # node with matching pods -> score
    empty: Mapping[ZoneKey | None, int]  # zone -> score of its nodes without matching pods
    best: int

    def has(self, node: str) -> bool:
        """Whether ``node`` is a best node (False for a node that is no candidate here). O(1)."""
        score = self.busy.get(node)
        if score is not None:
            return score == self.best
        return node in self.zone_of and self.empty[self.zone_of[node]] == self.best


class _BestSets:
    """Every scored workload's best view under one profile. O(objects + workloads × listed nodes)."""

    def __init__(
        self,
        snapshot: Snapshot,
        profile: Profile,
        options: ReportOptions,
        only: WorkloadFilter,
        zone_maps: _ZoneMaps,
    ) -> None:
        index, reports = analyze_index(snapshot, profile, options, only)
        self.views: dict[WorkloadKey, _BestView] = {}
        self.layouts: dict[WorkloadKey, int] = {}
        for report in reports:
            w = report.workload
            layout = index.candidate_layout(w.key)
            if report.health is Health.ERROR or layout is None:
                continue
            held = zone_maps.get(id(layout))
            if held is None:  # the map holds the layout: its id stays unique while the map lives
                held = zone_maps[id(layout)] = (layout, {n: z for z, names in layout.by_zone.items() for n in names})
            empty: dict[ZoneKey | None, int] = {(z.region, z.zone): z.empty_node_score for z in report.zones}
            empty[None] = report.empty_node_score
            busy = {e.node: e.score for e in report.nodes if e.pods > 0}
            key = w.key
            self.views[key] = _BestView(held[1], busy, empty, report.best_score)
            self.layouts[key] = id(layout)


def _cells(a: Mapping[str, ZoneKey | None], b: Mapping[str, ZoneKey | None]) -> dict[str, _Cell] | None:
    """Node -> (zone under a, zone under b); None when the candidate sets differ. O(candidates)."""
    if a.keys() != b.keys():
        return None
    return {n: (z, b[n]) for n, z in a.items()}


def _differs(a: _BestView, b: _BestView, cells: Mapping[str, _Cell] | None, sizes: Mapping[_Cell, int]) -> bool:
    """Whether the two best node sets differ. O(busy nodes + zone pairs); O(candidates) if the candidate
    sets differ."""
    if cells is None:
        return any(a.has(n) != b.has(n) for n in a.zone_of.keys() | b.zone_of.keys())
    busy = a.busy.keys() | b.busy.keys()
    if any(a.has(n) != b.has(n) for n in busy):
        return True
    busy_in: Counter[_Cell] = Counter(cells[n] for n in busy if n in cells)
    for cell, size in sizes.items():
        if size > busy_in[cell]:  # a node without matching pods under either profile: its zones decide
            za, zb = cell
            if (a.empty[za] == a.best) != (b.empty[zb] == b.best):
                return True
    return False


def _changed(base: _BestSets, other: _BestSets, zone_maps: _ZoneMaps) -> tuple[int, int]:
    """(workloads scored under both, workloads whose best node set differs)."""
    pairs: dict[tuple[int, int], tuple[dict[str, _Cell] | None, Counter[_Cell]]] = {}
    common = base.views.keys() & other.views.keys()
    changed = 0
    for key in common:
        pair = (base.layouts[key], other.layouts[key])
        cached = pairs.get(pair)
        if cached is None:
            cells = _cells(zone_maps[pair[0]][1], zone_maps[pair[1]][1])
            cached = pairs[pair] = (cells, Counter(cells.values()) if cells is not None else Counter())
        changed += _differs(base.views[key], other.views[key], *cached)
    return len(common), changed


def summarize_cluster(
    snapshot: Snapshot,
    profile: Profile,
    options: ReportOptions | None = None,
    only: WorkloadFilter | None = None,
    worst: int = 5,
) -> ClusterSummary:
    """The summary of the workloads ``only`` keeps (default: all)."""
    only = only or WorkloadFilter()
    opts = options or ReportOptions()
    _, reports = analyze_index(snapshot, profile, opts, only)
    health = Counter(r.health.value for r in reports)
    ranked = sorted((r for r in reports if r.health is not Health.BALANCED), key=worst_key)
    notes: list[str] = []
    changes: list[ProfileChange] = []
    if BASELINE_PROFILE in PROFILES:
        # every report listed in full: best node sets are read back from the reports
        full = ReportOptions(opts.top_n, max(opts.max_nodes, len(snapshot.nodes)), opts.thresholds)
        zone_maps: _ZoneMaps = {}
        base = _BestSets(snapshot, get_profile(BASELINE_PROFILE), full, only, zone_maps)
        for name, other in PROFILES.items():
            if name != BASELINE_PROFILE:
                sets = _BestSets(snapshot, other, full, only, zone_maps)
                changes.append(ProfileChange(name, BASELINE_PROFILE, *_changed(base, sets, zone_maps)))
    if COMPARED_PROFILE not in PROFILES:
        notes.append(
            f"profile {COMPARED_PROFILE} (PodTopologySpread) is not registered in this build: "
            f"no {BASELINE_PROFILE} -> {COMPARED_PROFILE} comparison"
        )
    return ClusterSummary(
        profile=profile.name,
        workloads=len(reports),
        health={h.value: health.get(h.value, 0) for h in HEALTH_ORDER},
        worst=tuple(ranked[: max(0, worst)]),
        zones=_zones(snapshot, profile, only.namespaces),
        changes=tuple(changes),
        notes=tuple(notes),
    )
