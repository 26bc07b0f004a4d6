"""The SpreadReport of a workload under profile ``v1.29`` (PodTopologySpread).

Pod counts, skews and the health verdict follow SelectorSpread's reports (on the first constraint's
matching pods); the scores come from :class:`~spreadwatch.scoring.topology_groups.GroupScores`. Every
candidate node's score stays derivable: ``nodes`` lists the candidates with matching pods (up to
``max_nodes``), the top-N, and every empty candidate whose score differs from its zone's ``emptyNodeScore``
(e.g. a node without the hostname label, or one in another domain of a custom key); any other candidate
scores its zone's ``emptyNodeScore`` (zoneless: the top-level one). For this profile a zone is the
``topology.kubernetes.io/zone`` label (beta-only nodes are zoneless), and ``zoneScore`` is the zone's
matching-pod count as the zone constraint counts it (all nodes that pass the inclusion policies), 0 without
a zone constraint. Cost: O(groups + nodes with matching pods + listed nodes).
"""

from __future__ import annotations

from spreadwatch.report.build import (
    ReportInput,
    empty_names,
    node_entry,
    spread_facts,
)
from spreadwatch.report.spread_report import SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, judge
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupKey, GroupScores
from spreadwatch.scoring.zones import GA_ZONE

__all__ = ["build_topology_report"]


def _clamp(score: int) -> int:
    return max(0, min(MAX_NODE_SCORE, score))


def build_topology_report(inp: ReportInput, groups: CandidateGroups, scores: GroupScores) -> SpreadReport:
    """The report; ``inp.counts``: candidate nodes with matching pods of the first constraint (count > 0; for
    pods, skews and health), ``inp.node_zone``: the zone of every busy candidate (``scores.busy_raw`` too)."""
    workload, profile, selector, replicas, layout, counts, node_zone, options = inp
    busy = scores.busy_raw
    top_n = options.top_n
    high, low = scores.max_raw, scores.min_raw
    # entries (-score, node): sorted by score descending, then name, without a key function
    if high == 0:
        scored = [(0 if raw is None else -MAX_NODE_SCORE, name) for name, raw in busy.items()]
    else:  # GroupScores.normalized, inline
        scored = [
            (0 if raw is None else -(MAX_NODE_SCORE * (high + low - raw) // high), name) for name, raw in busy.items()
        ]
    busy_per_group: dict[GroupKey, int] = {}
    for key in scores.busy_groups.values():
        busy_per_group[key] = busy_per_group.get(key, 0) + 1
    # per zone, the groups with empty candidates: the biggest sets emptyNodeScore, the others are listed
    per_zone: dict[ZoneKey | None, list[tuple[int, int, GroupKey]]] = {}
    any_group: dict[ZoneKey | None, GroupKey] = {}
    for key, names in groups.groups.items():
        any_group.setdefault(key[0], key)
        empty = len(names) - busy_per_group.get(key, 0)
        if empty > 0:
            per_zone.setdefault(key[0], []).append((scores.normalized(scores.group_raw[key]), empty, key))
    # a zone without empty candidates: what an empty node like its first group's would score
    # (clamped to 0-100: such a node is hypothetical and would move min/max itself)
    empty_score = {z: _clamp(scores.normalized(scores.group_raw[k])) for z, k in any_group.items() if z not in per_zone}
    empty_total: dict[int, int] = {}
    exceptions: list[tuple[int, str, ZoneKey | None]] = []
    best_empty: list[tuple[int, str, ZoneKey | None]] = []
    for zone, entries in per_zone.items():
        entries.sort(key=lambda e: (-e[1], repr(e[2][1])))
        empty_score[zone] = entries[0][0]
        for score, empty, key in entries:
            empty_total[score] = empty_total.get(score, 0) + empty
            names = groups.groups[key]
            if score != empty_score[zone]:
                exceptions.extend((-score, n, zone) for n in empty_names(names, busy, None))
            best_empty.extend((-score, n, zone) for n in empty_names(names, busy, top_n))
    pool = [(s, n, node_zone[n]) for s, n in scored]
    pool.extend(best_empty)
    pool.sort()
    top = pool[:top_n]
    omitted = max(0, len(scored) - options.max_nodes)
    listed: dict[str, tuple[int, str, ZoneKey | None]] = {}
    if omitted:
        by_pods = sorted(scored, key=lambda e: (-counts.get(e[1], 0), e[1]))
        for s, n in by_pods[: options.max_nodes]:
            listed[n] = (s, n, node_zone[n])
    else:
        for s, n, z in pool:
            if n in busy:
                listed[n] = (s, n, z)
    for entry in top:
        listed.setdefault(entry[1], entry)
    for entry in exceptions:
        listed.setdefault(entry[1], entry)
    get_count = counts.get
    nodes = tuple(node_entry(n, z, get_count(n, 0), -s) for s, n, z in sorted(listed.values()))
    present = {-s for s, _ in scored} | set(empty_total)
    best = max(present, default=0)
    any_empty = bool(empty_total)
    facts, zone_counts = spread_facts(layout, counts, node_zone, any_empty)
    health, reasons = judge(facts, options.thresholds)
    zone_index = next((i for i, t in enumerate(scores.plan.terms) if t.topology_key == GA_ZONE), None)
    zones = tuple(
        ZoneEntry(
            zone=z[1],
            region=z[0],
            pods=zone_counts[z],
            candidate_nodes=len(layout.by_zone[z]),
            zone_score=scores.domains[zone_index].get(z[1], 0) if zone_index is not None else 0,
            empty_node_score=empty_score.get(z, 0),
        )
        for z in sorted(zone_counts)
    )
    if None in empty_score:
        zoneless = empty_score[None]
    else:  # no zoneless candidate: what one with only a hostname label would score
        sig = tuple(k == HOSTNAME_KEY or None for k in groups.keys)
        zoneless = _clamp(scores.normalized(scores.raw(sig, (0,) * len(groups.keys))))
    return SpreadReport(
        workload=workload,
        profile=profile.name,
        selector=selector,
        skipped=False,
        skip_reason="",
        replicas=replicas,
        pods=facts.pods,
        candidate_nodes=layout.total,
        excluded_nodes=dict(sorted(layout.excluded.items())),
        nodes=nodes,
        nodes_omitted=omitted,
        zones=zones,
        empty_node_score=zoneless,
        best_score=best,
        worst_score=min(present, default=0),
        best_nodes=tuple(sorted(n for s, n, _ in pool if s == -best)[:top_n]),
        best_node_count=sum(1 for s, _ in scored if s == -best) + empty_total.get(best, 0),
        node_skew=facts.node_skew,
        zone_skew=facts.zone_skew,
        health=Health(health),
        reasons=tuple(reasons),
    )
