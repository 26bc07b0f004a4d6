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

from spreadwatch.report.build import ReportInput, empty_names
from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import SpreadFacts, judge
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores
from spreadwatch.scoring.zones import GA_ZONE

__all__ = ["build_topology_report"]

_Entry = tuple[int, str, ZoneKey | None]  # (-score, node, zone): sorts by score descending, then name
_NO_ZONE = ("", "")
_new_tuple = tuple.__new__  # a NodeEntry from its five fields, without NamedTuple's Python-level __new__


def _clamp(score: int) -> int:
    return max(0, min(MAX_NODE_SCORE, score))


def _facts(
    inp: ReportInput, groups: CandidateGroups, scores: GroupScores, any_empty: bool
) -> tuple[SpreadFacts, dict[ZoneKey, int]]:
    """What the verdict looks at, from the candidates with matching pods of the first constraint (the zone
    sums per candidate group); also every candidate zone's pod sum. O(pods' nodes + groups + zones)."""
    layout, counts = inp.layout, inp.counts
    zone_counts: dict[ZoneKey, int] = dict.fromkeys(layout.zones, 0)
    with_pods: set[ZoneKey | None] = set()
    zone_of_group = groups.zones
    for g, pods in enumerate(scores.group_pods):
        if pods:
            zone = zone_of_group[g]
            with_pods.add(zone)
            if zone is not None:
                zone_counts[zone] += pods
    max_node = max(counts.values(), default=0)
    busiest_zone = max(zone_counts, key=zone_counts.__getitem__, default=None)
    facts = SpreadFacts(
        sum(scores.group_pods),
        layout.total,
        len(counts),
        max((n for n, c in counts.items() if c == max_node), default=""),
        len(with_pods) if zone_counts else 0,
        busiest_zone[1] if busiest_zone else "",
        len(layout.by_zone) if zone_counts else 0,
        max_node - (0 if any_empty or not counts else min(counts.values())),
        (max(zone_counts.values()) - min(zone_counts.values())) if zone_counts else 0,
    )
    return facts, zone_counts


def build_topology_report(inp: ReportInput, groups: CandidateGroups, scores: GroupScores) -> SpreadReport:
    """The report; ``inp.counts``: ``scores.pods`` (for pods, skews and health). O(groups + busy nodes)."""
    options = inp.options
    busy = scores.busy
    top_n = options.top_n
    zone_of_group = groups.zones
    normalized = scores.normalized
    # per group: own counts -> -score (sorting (-score, node) puts the best first, then by name)
    neg = [{key: -normalized(raw) for key, raw in per.items()} for per in scores.raws]
    scored: list[_Entry] = [(neg[g][key], name, zone_of_group[g]) for name, g, key in scores.rows]
    # per zone, the groups with empty candidates: the biggest sets emptyNodeScore, the others are listed;
    # a zone without empty candidates gets what an empty node like its first group's would score (clamped
    # to 0-100: such a node is hypothetical and would move min/max itself)
    group_raw, busy_per_group, names_of = scores.group_raw, scores.busy_per_group, groups.names
    empty_score: dict[ZoneKey | None, int] = {}
    empty_total: dict[int, int] = {}
    exceptions: list[_Entry] = []
    best_empty: list[_Entry] = []
    for zone, members in groups.by_zone.items():
        entries = [
            (normalized(group_raw[g]), len(names_of[g]) - busy_per_group[g], g)
            for g in members
            if len(names_of[g]) > busy_per_group[g]
        ]
        if not entries:
            empty_score[zone] = _clamp(normalized(group_raw[members[0]]))
            continue
        if len(entries) > 1:
            entries.sort(key=lambda e: (-e[1], repr(groups.sigs[e[2]])))
        zone_score = empty_score[zone] = entries[0][0]
        for score, empty, g in entries:
            empty_total[score] = empty_total.get(score, 0) + empty
            names = names_of[g]
            if score != zone_score:
                exceptions.extend((-score, n, zone) for n in empty_names(names, busy, None))
            best_empty.extend((-score, n, zone) for n in empty_names(names, busy, top_n))
    pool = scored + best_empty
    pool.sort()
    top = pool[:top_n]
    omitted = max(0, len(scored) - options.max_nodes)
    if omitted:
        counts = inp.counts
        listed = set(sorted(scored, key=lambda e: (-counts.get(e[1], 0), e[1]))[: options.max_nodes])
    else:
        listed = set(scored)
    listed.update(top)  # an entry is the same tuple wherever it comes from: the set keeps one per node
    listed.update(exceptions)
    get_pods = busy.get
    nodes: tuple[NodeEntry, ...] = tuple(
        _new_tuple(NodeEntry, (n, (z or _NO_ZONE)[1], (z or _NO_ZONE)[0], get_pods(n, 0), -s))
        for s, n, z in sorted(listed)
    )
    present = {-e[0] for e in scored}
    present.update(empty_total)
    best = max(present, default=0)
    facts, zone_counts = _facts(inp, groups, scores, bool(empty_total))
    health, reasons = judge(facts, options.thresholds)
    zone_index = next((i for i, t in enumerate(scores.plan.terms) if t.topology_key == GA_ZONE), None)
    zone_domain = scores.domains[zone_index] if zone_index is not None else {}
    by_zone = inp.layout.by_zone
    zones = tuple(
        ZoneEntry(z[1], z[0], zone_counts[z], len(by_zone[z]), zone_domain.get(z[1], 0), empty_score.get(z, 0))
        for z in sorted(zone_counts)
    )
    if None in empty_score:
        zoneless = empty_score[None]
    else:  # no zoneless candidate: what one with only a hostname label would score
        sig = tuple(k == HOSTNAME_KEY or None for k in groups.keys)
        zoneless = _clamp(normalized(scores.raw(sig, (0,) * len(groups.keys))))
    return SpreadReport(
        workload=inp.workload,
        profile=inp.profile.name,
        selector=inp.selector,
        skipped=False,
        skip_reason="",
        replicas=inp.replicas,
        pods=facts.pods,
        candidate_nodes=inp.layout.total,
        excluded_nodes=inp.layout.excluded_sorted,
        nodes=nodes,
        nodes_omitted=omitted,
        zones=zones,
        empty_node_score=zoneless,
        best_score=best,
        worst_score=min(present, default=0),
        best_nodes=tuple(n for s, n, _ in top if s == -best),
        best_node_count=sum(1 for e in scored if e[0] == -best) + empty_total.get(best, 0),
        node_skew=facts.node_skew,
        zone_skew=facts.zone_skew,
        health=health,
        reasons=tuple(reasons),
    )
