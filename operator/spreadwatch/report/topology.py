"""The SpreadReport of a workload under profile ``v1.29`` (PodTopologySpread).

Pod counts, skews and the health verdict follow SelectorSpread's reports (on the first constraint's
matching pods); the scores come from :class:`~spreadwatch.scoring.topology_groups.GroupScores`. Every
candidate node's score stays derivable: ``nodes`` lists the candidates with matching pods (up to
``max_nodes``), the top-N, and every empty candidate whose score differs from its zone's ``emptyNodeScore``
(e.g. a node without the hostname label, or one in another domain of a custom key); any other candidate
scores its zone's ``emptyNodeScore`` (zoneless: the top-level one). For this profile a zone is the
``topology.kubernetes.io/zone`` label (beta-only nodes are zoneless), and ``zoneScore`` is the zone's
matching-pod count as the zone constraint counts it (all nodes that pass the inclusion policies), 0 without
a zone constraint. Cost: O(groups + nodes with matching pods + listed nodes), the zone sums per candidate
group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spreadwatch.report.build import CandidateLayout, ReportInput
from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import SpreadFacts, judge
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores

__all__ = ["build_topology_report"]

_Entry = tuple[int, str, str, str]  # (-score, node, zone, region): sorts by score descending, then name
_new_tuple = tuple.__new__  # a NodeEntry/ZoneEntry from its fields, without NamedTuple's Python-level __new__


def _clamp(score: int) -> int:
    return max(0, min(MAX_NODE_SCORE, score))


def _first_empty(names: Sequence[str], busy: Mapping[str, int], limit: int) -> list[str]:
    """The first ``limit`` of ``names`` without matching pods, in order. O(limit + busy names among them)."""
    out: list[str] = []
    if limit > 0:
        for name in names:
            if name not in busy:
                out.append(name)
                if len(out) == limit:
                    break
    return out


def _facts(
    layout: CandidateLayout,
    pods: Mapping[str, int],
    zone_of_group: Sequence[ZoneKey | None],
    group_pods: Sequence[int],
    any_empty: bool,
) -> tuple[SpreadFacts, dict[ZoneKey, int]]:
    """What the verdict looks at, from the candidates with matching pods of the first constraint (``pods``;
    ``group_pods`` their sums per candidate group); also every candidate zone's pod sum. O(pods + groups)."""
    zone_counts: dict[ZoneKey, int] = dict.fromkeys(layout.zones, 0)
    with_pods: set[ZoneKey | None] = set()
    for g, count in enumerate(group_pods):
        if count:
            zone = zone_of_group[g]
            with_pods.add(zone)
            if zone is not None:
                zone_counts[zone] += count
    max_node = max(pods.values(), default=0)
    busiest_zone = max(zone_counts, key=zone_counts.__getitem__, default=None)
    facts = SpreadFacts(
        sum(group_pods),
        layout.total,
        len(pods),
        max([n for n, c in pods.items() if c == max_node], default=""),
        len(with_pods) if zone_counts else 0,
        busiest_zone[1] if busiest_zone else "",
        len(layout.by_zone) if zone_counts else 0,
        max_node - (0 if any_empty or not pods else min(pods.values())),
        (max(zone_counts.values()) - min(zone_counts.values())) if zone_counts else 0,
    )
    return facts, zone_counts


def _empty_candidates(
    groups: CandidateGroups, scores: GroupScores, top_n: int
) -> tuple[dict[ZoneKey | None, int], dict[int, int], list[_Entry], list[_Entry]]:
    """Per zone, the groups with empty candidates: the biggest sets the zone's emptyNodeScore, the others'
    nodes are listed (exceptions). A zone without empty candidates gets what an empty node like its first
    group's would score (clamped to 0-100: such a node is hypothetical and would move min/max itself).
    Returns (zone -> emptyNodeScore, score -> empty candidates, exceptions, each group's first ``top_n``
    empty candidates). O(groups + top_n × groups + busy nodes + exceptions)."""
    busy = scores.busy
    high, low = scores.max_raw, scores.min_raw
    group_raw, busy_per_group, names_of = scores.group_raw, scores.busy_per_group, groups.names
    normalized = scores.normalized
    empty_score: dict[ZoneKey | None, int] = {}
    empty_total: dict[int, int] = {}
    exceptions: list[_Entry] = []
    best_empty: list[_Entry] = []
    places = groups.places
    for zone, members in groups.by_zone.items():
        if len(members) == 1:  # the usual case: one group, its score is the zone's
            g = members[0]
            zn, rg = places[g]
            raw = group_raw[g]
            score = 0 if raw is None else (MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - raw) // high)
            names = names_of[g]
            left = len(names) - busy_per_group[g]
            if left <= 0:
                empty_score[zone] = _clamp(score)
                continue
            empty_score[zone] = score
            empty_total[score] = empty_total.get(score, 0) + left
            first = _first_empty(names, busy, top_n) if busy_per_group[g] else names[:top_n]
            best_empty.extend([(-score, n, zn, rg) for n in first])
            continue
        entries = [
            (normalized(group_raw[g]), len(names_of[g]) - busy_per_group[g], g)
            for g in members
            if len(names_of[g]) > busy_per_group[g]
        ]
        if not entries:
            empty_score[zone] = _clamp(normalized(group_raw[members[0]]))
            continue
        entries.sort(key=lambda e: (-e[1], repr(groups.sigs[e[2]])))
        zone_score = empty_score[zone] = entries[0][0]
        for score, empty, g in entries:
            zn, rg = places[g]
            empty_total[score] = empty_total.get(score, 0) + empty
            if score != zone_score:  # every empty node of the group is listed
                free = [n for n in names_of[g] if n not in busy]
                exceptions.extend([(-score, n, zn, rg) for n in free])
            else:
                free = _first_empty(names_of[g], busy, top_n)
            best_empty.extend([(-score, n, zn, rg) for n in free[:top_n]])
    return empty_score, empty_total, exceptions, best_empty


def build_topology_report(inp: ReportInput, groups: CandidateGroups, scores: GroupScores) -> SpreadReport:
    """The report; ``inp.counts``: ``scores.pods`` (for pods, skews and health). O(groups + busy nodes)."""
    options = inp.options
    layout = inp.layout
    busy = scores.busy
    top_n = options.top_n
    high = scores.max_raw
    total = high + scores.min_raw
    places = groups.places
    raws = scores.raws
    # (-score, node, zone, region) sorts the best first, then by name; NormalizeScore inline
    scored: list[_Entry] = [
        (
            0
            if (raw := raws[g][key]) is None
            else (-MAX_NODE_SCORE if high == 0 else -(MAX_NODE_SCORE * (total - raw) // high)),
            name,
            *places[g],
        )
        for name, g, key in scores.rows
    ]
    empty_score, empty_total, exceptions, best_empty = _empty_candidates(groups, scores, top_n)
    pool = scored + best_empty
    pool.sort()
    top = pool[:top_n]
    omitted = max(0, len(scored) - options.max_nodes)
    if omitted:
        counts = inp.counts
        listed = set(sorted(scored, key=lambda e: (-counts.get(e[1], 0), e[1]))[: options.max_nodes])
        listed.update(top)  # an entry is the same tuple wherever it comes from: the set keeps one per node
        listed.update(exceptions)
        entries = sorted(listed)
    else:  # every busy node, the top ones and the exceptions: the pool's busy and top entries, in order
        entries = [e for i, e in enumerate(pool) if i < top_n or e[1] in busy]
        if exceptions:
            entries = sorted({*entries, *exceptions})
    get_pods = busy.get
    nodes: tuple[NodeEntry, ...] = tuple(
        [_new_tuple(NodeEntry, (n, zn, rg, get_pods(n, 0), -s)) for s, n, zn, rg in entries]
    )
    negated = [e[0] for e in scored]
    present = {-s for s in negated}
    present.update(empty_total)
    best = max(present, default=0)
    facts, zone_counts = _facts(layout, scores.pods, groups.zones, scores.group_pods, bool(empty_total))
    health, reasons = judge(facts, options.thresholds)
    zone_domain = scores.domains[groups.zone_index] if groups.zone_index is not None else {}
    by_zone = layout.by_zone
    zones: tuple[ZoneEntry, ...] = tuple(
        [
            _new_tuple(
                ZoneEntry,
                (z[1], z[0], zone_counts[z], len(by_zone[z]), zone_domain.get(z[1], 0), empty_score.get(z, 0)),
            )
            for z in sorted(zone_counts)
        ]
    )
    if None in empty_score:
        zoneless = empty_score[None]
    else:  # no zoneless candidate: what one with only a hostname label would score
        sig = tuple(k == HOSTNAME_KEY or None for k in groups.keys)
        zoneless = _clamp(scores.normalized(scores.raw(sig, (0,) * len(groups.keys))))
    return SpreadReport(
        workload=inp.workload,
        profile=inp.profile.name,
        selector=inp.selector,
        skipped=False,
        skip_reason="",
        replicas=inp.replicas,
        pods=facts.pods,
        candidate_nodes=layout.total,
        excluded_nodes=layout.excluded_sorted,
        nodes=nodes,
        nodes_omitted=omitted,
        zones=zones,
        empty_node_score=zoneless,
        best_score=best,
        worst_score=min(present, default=0),
        best_nodes=tuple([e[1] for e in top if e[0] == -best]),
        best_node_count=negated.count(-best) + empty_total.get(best, 0),
        node_skew=facts.node_skew,
        zone_skew=facts.zone_skew,
        health=health,
        reasons=tuple(reasons),
    )
