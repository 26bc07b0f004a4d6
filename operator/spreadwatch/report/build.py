"""Build a :class:`SpreadReport` from sparse spread state.

Input is what the incremental index keeps: candidate node names grouped by zone (sorted), the matching-pod
count of each candidate node that has any, and excluded-node reason counts. Cost: O(nodes with matching
pods + zones × top_n), independent of the number of empty candidate nodes.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.scoring import Profile, SpreadSummary, WorkloadRef, ZoneKey

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_TOP_N",
    "CandidateLayout",
    "ReportOptions",
    "build_report",
    "empty_names",
    "error_report",
    "node_entry",
    "spread_facts",
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
    """Candidate nodes by zone (None: no zone), each list sorted by name; excluded reason → count."""

    by_zone: Mapping[ZoneKey | None, Sequence[str]]
    excluded: Mapping[str, int]
    total: int = field(init=False)  # candidate nodes (computed once: a layout is shared by many workloads)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(len(names) for names in self.by_zone.values()))


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


def spread_facts(
    layout: CandidateLayout, counts: Mapping[str, int], node_zone: Mapping[str, ZoneKey | None], any_empty: bool
) -> tuple[SpreadFacts, dict[ZoneKey, int]]:
    """What the verdict looks at, from the candidates with matching pods (``counts``, all > 0, and their
    zones; ``any_empty``: some candidate has none); also every candidate zone's pod sum. O(counts + zones)."""
    zone_counts: dict[ZoneKey, int] = {z: 0 for z in layout.by_zone if z is not None}
    groups_with_pods: set[ZoneKey | None] = set()
    for name, count in counts.items():
        zone = node_zone[name]
        if zone is not None:
            zone_counts[zone] += count
        groups_with_pods.add(zone)
    max_node = max(counts.values(), default=0)
    busiest_zone = max(zone_counts, key=lambda z: zone_counts[z], default=None)
    facts = SpreadFacts(
        pods=sum(counts.values()),
        candidate_nodes=layout.total,
        nodes_with_pods=len(counts),
        busiest_node=max(counts, key=lambda n: (counts[n], n), default=""),
        zones_with_pods=len(groups_with_pods) if zone_counts else 0,
        busiest_zone=busiest_zone[1] if busiest_zone else "",
        candidate_zones=len(layout.by_zone) if zone_counts else 0,
        node_skew=max_node - (0 if any_empty or not counts else min(counts.values())),
        zone_skew=(max(zone_counts.values()) - min(zone_counts.values())) if zone_counts else 0,
    )
    return facts, zone_counts


def _by_score(entry: tuple[int, str, int, ZoneKey | None]) -> tuple[int, str]:
    return (-entry[0], entry[1])


def _by_pods(entry: tuple[int, str, int, ZoneKey | None]) -> tuple[int, str]:
    return (-entry[2], entry[1])


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


def build_report(
    workload: WorkloadRef,
    profile: Profile,
    selector: str,
    skip_reason: str,
    layout: CandidateLayout,
    counts: Mapping[str, int],
    node_zone: Mapping[str, ZoneKey | None],
    replicas: int,
    options: ReportOptions,
) -> SpreadReport:
    """The report of one workload.

    ``counts`` maps candidate nodes with matching pods (count > 0) to their count; ``node_zone`` gives
    those nodes' zones. A non-empty ``skip_reason`` makes every score 0 (health Skipped).
    """
    skipped = bool(skip_reason)
    busy = {n: c for n, c in counts.items() if c > 0}
    busy_per_group: dict[ZoneKey | None, int] = {}
    for name in busy:
        zone = node_zone[name]
        busy_per_group[zone] = busy_per_group.get(zone, 0) + 1
    empty_count = {z: len(names) - busy_per_group.get(z, 0) for z, names in layout.by_zone.items()}
    facts, zone_counts = spread_facts(layout, busy, node_zone, any(c > 0 for c in empty_count.values()))
    summary = SpreadSummary.of(profile.max_score, max(busy.values(), default=0), zone_counts)

    memo: dict[tuple[int, ZoneKey | None], int] = {}

    def score(count: int, zone: ZoneKey | None) -> int:
        """Nodes with the same count in the same zone score the same: compute each pair once."""
        key = (count, zone)
        value = memo.get(key)
        if value is None:
            value = memo[key] = 0 if skipped else summary.score(count, zone)
        return value

    scored = []
    for n, c in busy.items():
        z = node_zone[n]
        scored.append((score(c, z), n, c, z))
    top_n = options.top_n
    empty_score: dict[ZoneKey | None, int] = {}
    best_empty: list[tuple[int, str, int, ZoneKey | None]] = []
    for z, names in layout.by_zone.items():
        empty_score[z] = score(0, z)
        if empty_count[z] > 0:
            best_empty.extend((empty_score[z], n, 0, z) for n in empty_names(names, busy, top_n))
    pool = scored + best_empty
    # sorted()[:n] equals nsmallest (both stable) and is faster for the usual few dozen entries
    top = sorted(pool, key=_by_score)[:top_n] if len(pool) <= 256 else heapq.nsmallest(top_n, pool, key=_by_score)
    omitted = max(0, len(scored) - options.max_nodes)
    kept = heapq.nsmallest(options.max_nodes, scored, key=_by_pods) if omitted else scored
    listed = {e[1]: e for e in kept}
    for entry in top:
        listed.setdefault(entry[1], entry)
    nodes = tuple(node_entry(n, z, c, s) for s, n, c, z in sorted(listed.values(), key=_by_score))
    scores_present = {s for s, _, _, _ in scored}
    scores_present.update(empty_score[z] for z, count in empty_count.items() if count > 0)
    best = max(scores_present, default=0)
    worst = min(scores_present, default=0)
    best_pool = [n for s, n, _, _ in scored if s == best] + [n for s, n, _, _ in best_empty if s == best]
    best_total = sum(1 for s, _, _, _ in scored if s == best) + sum(
        count for z, count in empty_count.items() if count > 0 and empty_score[z] == best
    )
    zones = tuple(
        ZoneEntry(
            zone=z[1],
            region=z[0],
            pods=zone_counts[z],
            candidate_nodes=len(layout.by_zone[z]),
            zone_score=0 if skipped else int(summary.zone_score(z)),
            empty_node_score=empty_score[z],
        )
        for z in sorted(zone_counts)
    )
    if skipped:
        health, reasons = Health.SKIPPED, [skip_reason]
    else:
        health, reasons = judge(facts, options.thresholds)
    return SpreadReport(
        workload=workload,
        profile=profile.name,
        selector=selector,
        skipped=skipped,
        skip_reason=skip_reason,
        replicas=replicas,
        pods=facts.pods,
        candidate_nodes=layout.total,
        excluded_nodes=dict(sorted(layout.excluded.items())),
        nodes=nodes,
        nodes_omitted=omitted,
        zones=zones,
        empty_node_score=empty_score.get(None, score(0, None)),
        best_score=best,
        worst_score=worst,
        best_nodes=tuple(sorted(best_pool)[:top_n]),
        best_node_count=best_total,
        node_skew=facts.node_skew,
        zone_skew=facts.zone_skew,
        health=health,
        reasons=tuple(reasons),
    )
