"""Build a :class:`SpreadReport` from sparse spread state.

Input is what the incremental index keeps: candidate node names grouped by zone (sorted), the matching-pod
count of each candidate node that has any, and excluded-node reason counts. Cost: O(nodes with matching
pods + zones × top_n), independent of the number of empty candidate nodes.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.scoring import Profile, WorkloadRef, ZoneKey
from spreadwatch.scoring.normalize import ZONE_WEIGHTING

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


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """Report shape and verdict settings (``--top-nodes``, ``--max-report-nodes``, health thresholds)."""

    top_n: int = DEFAULT_TOP_N
    max_nodes: int = DEFAULT_MAX_NODES
    thresholds: HealthThresholds = field(default_factory=HealthThresholds)


@dataclass(frozen=True, slots=True)
class CandidateLayout:
    """Candidate nodes by zone (None: no zone), each list sorted by name; excluded reason → count.

    The derived fields are computed once (a layout is shared by every workload with the same scheduling
    constraints), so building a report does not redo them: O(zones + reasons) at construction.
    """

    by_zone: Mapping[ZoneKey | None, Sequence[str]]
    excluded: Mapping[str, int]
    total: int = field(init=False)  # candidate nodes
    sizes: Mapping[ZoneKey | None, int] = field(init=False, repr=False, compare=False)  # candidates per zone
    zones: tuple[ZoneKey, ...] = field(init=False, repr=False, compare=False)  # the zones (not None), in order
    excluded_sorted: Mapping[str, int] = field(init=False, repr=False, compare=False)  # by reason; never mutated

    def __post_init__(self) -> None:
        sizes = {z: len(names) for z, names in self.by_zone.items()}
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "total", sum(sizes.values()))
        object.__setattr__(self, "zones", tuple(z for z in self.by_zone if z is not None))
        object.__setattr__(self, "excluded_sorted", dict(sorted(self.excluded.items())))


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
    return NodeEntry(name, zone[1], zone[0], pods, score) if zone is not None else NodeEntry(name, "", "", pods, score)


def _by_pods(entry: tuple[int, str, int, ZoneKey | None]) -> tuple[int, str]:
    """Sort key of a (-score, node, pods, zone) entry: most pods first, then by name."""
    return (-entry[2], entry[1])


def _zone_score(max_score: int, max_zone: int, count: int) -> float:
    """The zone component before weighting (``SpreadSummary.zone_score``'s arithmetic). O(1)."""
    top = float(max_score)
    return top if max_zone == 0 else top * (float(max_zone - count) / float(max_zone))


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


def build_report(inp: ReportInput, skip_reason: str, candidates: Container[str] | None = None) -> SpreadReport:
    """The report of one workload.

    ``counts`` maps nodes with matching pods to their count (entries of 0 are ignored; with ``candidates``
    given, so are nodes not in it); ``node_zone`` gives at least those nodes' zones. A non-empty
    ``skip_reason`` makes every score 0 (health Skipped). The scores are
    :meth:`~spreadwatch.scoring.SpreadSummary.score`'s, computed once per distinct (count, zone) from the
    node and zone parts (the same float operations in the same order). O(busy nodes + zones × top_n).
    """
    workload, profile, selector, replicas, layout, counts, node_zone, options = inp
    skipped = bool(skip_reason)
    by_zone = layout.by_zone
    sizes = layout.sizes
    zone_counts: dict[ZoneKey, int] = dict.fromkeys(layout.zones, 0)
    busy: dict[str, int] = {}
    for name, count in counts.items():
        if count > 0 and (candidates is None or name in candidates):
            busy[name] = count
    busy_per_group: dict[ZoneKey | None, int] = {}
    rows: list[tuple[str, int, ZoneKey | None]] = []
    for name, count in busy.items():
        zone = node_zone[name]
        rows.append((name, count, zone))
        if zone is not None:
            zone_counts[zone] += count
        busy_per_group[zone] = busy_per_group.get(zone, 0) + 1
    max_node = max(busy.values(), default=0)
    max_zone = max(zone_counts.values(), default=0)
    top_score = profile.max_score
    top = float(top_score)
    # score = int(node part(count) + zone part(zone)), SpreadSummary.breakdown's operations in its order
    zone_part: dict[ZoneKey, float] = (
        {} if skipped else {z: ZONE_WEIGHTING * _zone_score(top_score, max_zone, c) for z, c in zone_counts.items()}
    )
    node_weight = 1.0 - ZONE_WEIGHTING

    def score(count: int, zone: ZoneKey | None) -> int:
        if skipped:
            return 0
        f_score = top if max_node == 0 else top * (float(max_node - count) / float(max_node))
        return int(f_score * node_weight + zone_part[zone]) if zone is not None else int(f_score)

    # entries (-score, node, pods, zone) sort by score descending, then name, without a key function;
    # busy nodes have count > 0, so max_node > 0 (the zone part exists whenever a node has a zone)
    fmax = float(max_node)
    scored = (
        [(0, n, c, z) for n, c, z in rows]
        if skipped
        else [
            (
                -int(top * (float(max_node - c) / fmax) * node_weight + zone_part[z])
                if z is not None
                else -int(top * (float(max_node - c) / fmax)),
                n,
                c,
                z,
            )
            for n, c, z in rows
        ]
    )
    top_n = options.top_n
    empty_score: dict[ZoneKey | None, int] = {}
    empty_total: dict[int, int] = {}  # score -> empty candidate nodes scoring it
    best_empty: list[tuple[int, str, int, ZoneKey | None]] = []
    for z, names in by_zone.items():
        s = empty_score[z] = score(0, z)
        left = sizes[z] - busy_per_group.get(z, 0)
        if left > 0:
            empty_total[s] = empty_total.get(s, 0) + left
            best_empty.extend((-s, n, 0, z) for n in empty_names(names, busy, top_n))
    pool = scored + best_empty
    pool.sort()
    omitted = max(0, len(scored) - options.max_nodes)
    if omitted:
        kept = heapq.nsmallest(options.max_nodes, scored, key=_by_pods)
        listed = {e[1]: e for e in kept}
        for entry in pool[:top_n]:
            listed.setdefault(entry[1], entry)
        entries = sorted(listed.values())
    else:  # every busy node is listed: the busy ones plus the best empty ones, in pool order
        entries = [e for i, e in enumerate(pool) if e[2] > 0 or i < top_n]
    nodes = tuple(node_entry(n, z, c, -s) for s, n, c, z in entries)
    present = {-e[0] for e in scored}
    present.update(empty_total)
    best = max(present, default=0)
    worst = min(present, default=0)
    best_nodes = tuple(sorted(e[1] for e in pool if e[0] == -best)[:top_n])
    best_total = sum(1 for e in scored if e[0] == -best) + empty_total.get(best, 0)
    zones = tuple(
        ZoneEntry(
            z[1],
            z[0],
            zone_counts[z],
            sizes[z],
            0 if skipped else int(_zone_score(top_score, max_zone, zone_counts[z])),
            empty_score[z],
        )
        for z in sorted(zone_counts)
    )
    node_skew = max_node - (0 if empty_total or not busy else min(busy.values()))
    zone_skew = (max_zone - min(zone_counts.values())) if zone_counts else 0
    pods = sum(busy.values())
    if skipped:
        health, reasons = Health.SKIPPED, [skip_reason]
    else:
        busiest_zone = max(zone_counts, key=zone_counts.__getitem__, default=None)
        facts = SpreadFacts(
            pods,
            layout.total,
            len(busy),
            max((n for n, c in busy.items() if c == max_node), default=""),
            len(busy_per_group) if zone_counts else 0,
            busiest_zone[1] if busiest_zone else "",
            len(by_zone) if zone_counts else 0,
            node_skew,
            zone_skew,
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
        empty_score[None] if None in empty_score else score(0, None),
        best,
        worst,
        best_nodes,
        best_total,
        node_skew,
        zone_skew,
        health,
        tuple(reasons),
    )
