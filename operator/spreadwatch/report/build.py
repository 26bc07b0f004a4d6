"""Build a :class:`SpreadReport` from sparse spread state.

Input is what the incremental index keeps: candidate node names grouped by zone (sorted), the matching-pod
count of each candidate node that has any, and excluded-node reason counts. Cost: O(nodes with matching
pods + zones × top_n), independent of the number of empty candidate nodes.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import filterfalse, islice
from operator import itemgetter
from typing import Final, NamedTuple

from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.scoring import Profile, WorkloadRef, ZoneKey
from spreadwatch.scoring.normalize import ZONE_WEIGHTING
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.scoring.window import DEFAULT_WINDOW_SAMPLES

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_TOP_N",
    "CandidateLayout",
    "ReportInput",
    "ReportOptions",
    "build_report",
    "empty_names",
    "error_report",
    "node_entry",
]

DEFAULT_TOP_N = 3
DEFAULT_MAX_NODES = 500

_NODE_WEIGHT: Final = 1.0 - ZONE_WEIGHTING
_new_tuple = tuple.__new__  # a NamedTuple from a tuple in C: NodeEntry(*fields) runs a Python __new__
_name, _pods, _score = itemgetter(0), itemgetter(3), itemgetter(4)  # a NodeEntry's node, pods and score, in C


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """Report shape and verdict settings (``--top-nodes``, ``--max-report-nodes``, health thresholds), and the
    scheduler's window: ``--window-samples`` (window starts averaged for the best-node probabilities, 0 for
    none) and ``--percentage-of-nodes-to-score`` (None: the profile's, from ``--scheduler-config``, else 0).

    ``scheduler``: the kube-scheduler profile whose prediction reports carry (None: no prediction);
    ``prediction_partial``: why every prediction is partial (the operator's own view: ``--namespace``)."""

    top_n: int = DEFAULT_TOP_N
    max_nodes: int = DEFAULT_MAX_NODES
    thresholds: HealthThresholds = field(default_factory=HealthThresholds)
    window_samples: int = DEFAULT_WINDOW_SAMPLES
    score_percentage: int | None = None
    scheduler: SchedulerProfile | None = None
    prediction_partial: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CandidateLayout:
    """Candidate nodes by zone (None: no zone), each list sorted by name; excluded reason → count.

    The derived fields are computed once (a layout is shared by every workload with the same scheduling
    constraints), so building a report does not redo them: O(zones + reasons) at construction. The memos are
    caches :func:`build_report` fills (the zone-level part of a report per zone counts: most reports on one
    layout share it); the node lists and every other field are never mutated, so another thread may read them.
    """

    by_zone: Mapping[ZoneKey | None, Sequence[str]]
    excluded: Mapping[str, int]
    total: int = field(init=False)  # candidate nodes
    sizes: Mapping[ZoneKey | None, int] = field(init=False, repr=False, compare=False)  # candidates per zone
    zones: tuple[ZoneKey, ...] = field(init=False, repr=False, compare=False)  # the zones (not None), in order
    excluded_sorted: Mapping[str, int] = field(init=False, repr=False, compare=False)  # by reason; never mutated
    #: memo of build_report (its only mutable part, a cache): the zone-level part of a report per zone counts
    zone_memo: dict[tuple[object, ...], _ZoneLevel] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: memo of build_report: the empty nodes' entries per (zone, score) pairs and top_n, shared by the
    #: zone-level entries with the same scores (a few hundred bytes each)
    pool_memo: dict[tuple[object, ...], tuple[_ZoneScores, tuple[NodeEntry, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: memo of :meth:`heads`, per ``top_n``
    head_memo: dict[int, frozenset[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sizes = {z: len(names) for z, names in self.by_zone.items()}
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "total", sum(sizes.values()))
        object.__setattr__(self, "zones", tuple(z for z in self.by_zone if z is not None))
        object.__setattr__(self, "excluded_sorted", dict(sorted(self.excluded.items())))

    def heads(self, top_n: int) -> frozenset[str]:
        """The first ``top_n`` candidate names of every zone. O(zones × top_n) once, then O(1)."""
        found = self.head_memo.get(top_n)
        if found is None:
            found = self.head_memo[top_n] = frozenset(n for names in self.by_zone.values() for n in names[:top_n])
        return found


_ZoneScores = tuple[tuple[ZoneKey | None, int], ...]  # (zone, score of its empty nodes), in the layout's order


class _ZoneLevel(NamedTuple):
    """What a report's zone counts and busy nodes per zone decide on one layout (shared by every report with
    the same ones: most reports on a layout share a few)."""

    zone_part: dict[ZoneKey, float]  # the zone part of the score (weighted)
    scores: _ZoneScores
    zones: tuple[ZoneEntry, ...]  # the report's zones, sorted
    empties: tuple[NodeEntry, ...]  # each zone's first top_n nodes, as empty nodes
    zone_skew: int  # max - min pods over the zones (0 without zones)
    busiest_zone: str  # the name of the first zone with the most pods ("" without zones)
    empty_total: dict[int, int]  # score -> empty candidate nodes scoring it
    every_zone_left: bool  # every zone has an empty candidate node
    top_scores: dict[ZoneKey | None, int]  # the score of a busy node with the most pods (node part 0.0), by zone


_MEMO_LIMIT: Final = 4096  # entries of each memo of a layout before it is cleared (≤ ~3 MiB)


def _zone_level(
    layout: CandidateLayout,
    zone_counts: Mapping[ZoneKey | None, int],
    busy_per_group: Mapping[ZoneKey | None, int],
    top: float,
    skipped: bool,
    top_n: int,
) -> _ZoneLevel:
    """The zone part of the score (SpreadSummary.breakdown's operations in its order), the score of each
    zone's empty nodes (their node part is exactly ``top``) and of its busy nodes with the most pods (their
    node part is ``top * 0.0`` = 0.0), the zone entries, each zone's first ``top_n`` nodes as empty node
    entries and the empty nodes per score. O(zones × top_n)."""
    max_zone = max(zone_counts.values(), default=0)
    fzone = float(max_zone)
    zone_part: dict[ZoneKey, float] = {}
    scores: list[tuple[ZoneKey | None, int]] = []
    top_scores: dict[ZoneKey | None, int] = {}
    rows: list[tuple[ZoneKey, int, int, int, int]] = []
    sizes = layout.sizes
    empty_total: dict[int, int] = {}
    every_zone_left = True
    for z in layout.by_zone:
        if z is None:
            s = 0 if skipped else int(top)
            top_scores[z] = 0 if skipped else int(top * 0.0)
        else:
            c = zone_counts[z]
            zone_score = top if max_zone == 0 else top * (float(max_zone - c) / fzone)
            part = zone_part[z] = ZONE_WEIGHTING * zone_score
            s = 0 if skipped else int(top * _NODE_WEIGHT + part)
            top_scores[z] = 0 if skipped else int(top * 0.0 * _NODE_WEIGHT + part)
            rows.append((z, c, sizes[z], 0 if skipped else int(zone_score), s))
        scores.append((z, s))
        left = sizes[z] - busy_per_group.get(z, 0)
        if left > 0:
            empty_total[s] = empty_total.get(s, 0) + left
        else:
            every_zone_left = False
    rows.sort()
    zones = tuple([_new_tuple(ZoneEntry, (z[1], z[0], c, n, zs, s)) for z, c, n, zs, s in rows])
    pool_key = (*scores, top_n)
    shared = layout.pool_memo.get(pool_key)
    if shared is None:
        if len(layout.pool_memo) >= _MEMO_LIMIT:
            layout.pool_memo.clear()
        by_zone = layout.by_zone
        empties = tuple([node_entry(n, z, 0, s) for z, s in scores for n in by_zone[z][:top_n]])
        shared = layout.pool_memo[pool_key] = (tuple(scores), empties)
    zone_skew = (max_zone - min(zone_counts.values())) if zone_counts else 0
    busiest = next((z[1] for z, c in zone_counts.items() if c == max_zone and z is not None), "")
    return _ZoneLevel(
        zone_part, shared[0], zones, shared[1], zone_skew, busiest, empty_total, every_zone_left, top_scores
    )


def empty_names(names: Iterable[str], busy: Mapping[str, object], limit: int | None) -> list[str]:
    """The first ``limit`` (all when None) of ``names`` not in ``busy``, in order. O(limit + busy names)."""
    out: list[str] = []
    for name in names:
        if limit is not None and len(out) >= limit:
            break
        if name not in busy:
            out.append(name)
    return out


def node_entry(name: str, zone: ZoneKey | None, pods: int, score: int) -> NodeEntry:
    """A listed node; a zoneless one has empty zone and region. O(1)."""
    return _new_tuple(
        NodeEntry, (name, zone[1], zone[0], pods, score) if zone is not None else (name, "", "", pods, score)
    )


def _by_pods(entry: NodeEntry) -> tuple[int, str]:
    """Sort key of a node entry: most pods first, then by name."""
    return (-entry[3], entry[0])


def _rank(pool: list[NodeEntry]) -> None:
    """Sort node entries best first, then by name (the names are distinct): by name, then stably by score,
    highest first, both keys read in C. O(n log n)."""
    pool.sort(key=_name)
    pool.sort(key=_score, reverse=True)


def error_report(workload: WorkloadRef, profile: str, replicas: int, reason: str) -> SpreadReport:
    """A report for a workload that cannot be scored (health Error)."""
    return SpreadReport(
        workload,
        profile,
        "",
        False,
        "",
        replicas,
        0,
        0,
        {},
        (),
        0,
        (),
        0,
        0,
        0,
        (),
        0,
        0,
        0,
        Health.ERROR,
        (reason,),
        next_pod_schedulable=None,
    )


class ReportInput(NamedTuple):
    """What both builders (this module's and :mod:`~spreadwatch.report.topology`'s) read: the workload, the
    profile scoring it, its selector (text) and replicas, copied into the report; its candidate nodes
    (``layout``); ``counts``, nodes with matching pods -> their count; ``node_zone``, at least those nodes'
    zones; and the report options."""

    workload: WorkloadRef
    profile: Profile
    selector: str
    replicas: int
    layout: CandidateLayout
    counts: Mapping[str, int]
    node_zone: Mapping[str, ZoneKey | None]
    options: ReportOptions


def build_report(inp: ReportInput, skip_reason: str, candidates: AbstractSet[str] | None = None) -> SpreadReport:
    """The report of one workload.

    ``counts`` maps nodes with matching pods to their count (entries of 0 are ignored; with ``candidates``
    given, so are nodes not in it); ``node_zone`` gives at least those nodes' zones. A non-empty
    ``skip_reason`` makes every score 0 (health Skipped). The scores are
    :meth:`~spreadwatch.scoring.SpreadSummary.score`'s, computed from the node and zone parts (the same float
    operations in the same order; a node without matching pods has the node part ``max_score`` exactly, as
    ``max_node / max_node`` is 1.0, and one with ``max_node`` pods has the node part 0.0).

    O(busy nodes × log + zones × top_n), in as few Python steps as that allows: this runs once per workload,
    10,000 times for a cold start at 150,000 pods. What depends only on the zone counts and the busy nodes
    per zone (zone parts and entries, the empty nodes' scores and entries, the busy scores when every busy
    node has the same count, as most workloads' do) comes from the layout's memo; ``counts`` is used as is
    when it holds only candidates with pods; the node entries are sorted with keys read in C.
    """
    workload, profile, selector, replicas, layout, counts, node_zone, options = inp
    skipped = bool(skip_reason)
    busy: Mapping[str, int]
    if (candidates is None or counts.keys() <= candidates) and min(counts.values(), default=1) > 0:
        busy = counts
    elif candidates is None:
        busy = {n: c for n, c in counts.items() if c > 0}
    else:
        busy = {n: c for n, c in counts.items() if c > 0 and n in candidates}
    pods_on = list(busy.values())
    node_zones = list(map(node_zone.__getitem__, busy))
    max_node = max(pods_on, default=0)
    min_node = min(pods_on, default=0)
    busy_per_group: dict[ZoneKey | None, int] = {}
    for zone in node_zones:
        busy_per_group[zone] = busy_per_group.get(zone, 0) + 1
    zone_counts: dict[ZoneKey | None, int]
    if min_node == max_node:  # every busy node has max_node pods (or there is none)
        zone_counts = {z: busy_per_group.get(z, 0) * max_node for z in layout.zones}
    else:
        zone_counts = dict.fromkeys(layout.zones, 0)
        zone_counts[None] = 0  # zoneless busy nodes add here; dropped below
        for zone, count in zip(node_zones, pods_on, strict=True):
            zone_counts[zone] += count
        del zone_counts[None]
    top = float(profile.max_score)
    top_n = options.top_n
    head_n = max(top_n, 0)  # empty nodes listed per zone
    memo = layout.zone_memo
    memo_key = (top, skipped, head_n, *zone_counts.values(), *[busy_per_group.get(z, 0) for z in layout.by_zone])
    level = memo.get(memo_key)
    if level is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        level = memo[memo_key] = _zone_level(layout, zone_counts, busy_per_group, top, skipped, head_n)
    zone_part, zone_scores, zones, empties, zone_skew, busiest_zone, empty_total, every_left, top_scores = level
    # the pool: node entries, best first, then by name; each zone's first top_n empty nodes (the memo's when
    # no busy node is among them), then the busy nodes
    pool: list[NodeEntry]
    if every_left and busy.keys().isdisjoint(layout.heads(head_n)):
        pool = list(empties)
    else:
        pool = []
        unlisted = busy.__contains__
        sizes = layout.sizes
        for z, s in zone_scores:
            if sizes[z] - busy_per_group.get(z, 0) > 0:
                names = islice(filterfalse(unlisted, layout.by_zone[z]), head_n)
                pool.extend([node_entry(n, z, 0, s) for n in names])
    if min_node == max_node:  # every busy node scores its zone's top score
        scored = [
            _new_tuple(NodeEntry, (n, z[1], z[0], c, top_scores[z]) if z is not None else (n, "", "", c, top_scores[z]))
            for n, c, z in zip(busy, pods_on, node_zones, strict=True)
        ]
    else:  # busy nodes have count > 0, so max_node > 0 (the zone part exists whenever a node has a zone)
        fmax = float(max_node)
        scored = [
            _new_tuple(
                NodeEntry,
                (
                    n,
                    z[1],
                    z[0],
                    c,
                    0 if skipped else int(top * (float(max_node - c) / fmax) * _NODE_WEIGHT + zone_part[z]),
                )
                if z is not None
                else (n, "", "", c, 0 if skipped else int(top * (float(max_node - c) / fmax))),
            )
            for n, c, z in zip(busy, pods_on, node_zones, strict=True)
        ]
    pool += scored
    _rank(pool)
    omitted = max(0, len(scored) - options.max_nodes)
    if omitted:
        kept = heapq.nsmallest(options.max_nodes, scored, key=_by_pods)
        listed = {e[0]: e for e in kept}
        for entry in pool[:top_n]:
            listed.setdefault(entry[0], entry)
        ranked = list(listed.values())
        _rank(ranked)
        nodes = tuple(ranked)
    else:  # every busy node is listed: the busy ones plus the best empty ones, in pool order
        nodes = (*pool[:head_n], *filter(_pods, pool[head_n:]))
    best_total = list(map(_score, scored))
    if pool and top_n > 0:  # the pool holds a node of every score present: every busy one, empty ones per zone
        best, worst = pool[0][4], pool[-1][4]
    else:
        present = set(best_total)
        present.update(empty_total)
        best, worst = max(present, default=0), min(present, default=0)
    best_nodes = tuple([e[0] for e in pool[:top_n] if e[4] == best])  # the best come first, by name
    node_skew = max_node - (0 if empty_total or not busy else min_node)
    pods = sum(pods_on)
    if skipped:
        health, reasons = Health.SKIPPED, [skip_reason]
    else:
        facts = _new_tuple(
            SpreadFacts,
            (
                pods,
                layout.total,
                len(busy),
                next(n for n, c in busy.items() if c == max_node) if busy else "",
                len(busy_per_group) if zone_counts else 0,
                busiest_zone,
                len(layout.by_zone) if zone_counts else 0,
                node_skew,
                zone_skew,
            ),
        )
        health, reasons = judge(facts, options.thresholds)
    return SpreadReport(
        workload,
        profile.name,
        selector,
        skipped,
        skip_reason,
        replicas,
        pods,
        layout.total,
        layout.excluded_sorted,
        nodes,
        omitted,
        zones,
        0 if skipped else int(top),
        best,
        worst,
        best_nodes,
        best_total.count(best) + empty_total.get(best, 0),
        node_skew,
        zone_skew,
        health,
        tuple(reasons),
    )
