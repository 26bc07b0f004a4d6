"""The SpreadReport of a workload under profile ``v1.29`` (PodTopologySpread).

Pod counts, skews and the health verdict are computed as for SelectorSpread (:func:`build_report`, on the
first constraint's matching pods); the scores come from :class:`~spreadwatch.scoring.topology_groups.GroupScores`.
Every candidate node's score stays derivable: ``nodes`` lists the candidates with matching pods (up to
``max_nodes``), the top-N, and every empty candidate whose score differs from its zone's
``emptyNodeScore`` (e.g. a node without the hostname label, or one in another domain of a custom key);
any other candidate scores its zone's ``emptyNodeScore`` (zoneless: the top-level one). For this profile
a zone is the ``topology.kubernetes.io/zone`` label (beta-only nodes are zoneless), and ``zoneScore`` is the
zone's matching-pod count as the zone constraint counts it (all nodes that pass the inclusion policies).
Cost: O(groups + nodes with matching pods + listed nodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from spreadwatch.report.build import CandidateLayout, ReportOptions, build_report
from spreadwatch.report.structure import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.scoring import Profile, WorkloadRef, ZoneKey
from spreadwatch.scoring.topology import HOSTNAME_KEY
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupKey, GroupScores
from spreadwatch.scoring.zones import GA_ZONE

__all__ = ["build_topology_report"]


def _entry(name: str, zone: ZoneKey | None, pods: int, score: int) -> NodeEntry:
    return NodeEntry(name, zone[1], zone[0], pods, score) if zone is not None else NodeEntry(name, "", "", pods, score)


def build_topology_report(
    workload: WorkloadRef,
    profile: Profile,
    selector: str,
    layout: CandidateLayout,
    groups: CandidateGroups,
    scores: GroupScores,
    counts: Mapping[str, int],
    node_zone: Mapping[str, ZoneKey | None],
    replicas: int,
    options: ReportOptions,
) -> SpreadReport:
    """The report; ``counts``: candidate nodes with matching pods of the first constraint (for pods, skews
    and health), ``node_zone``: the zone of every busy candidate (``scores.busy_raw`` keys included)."""
    base = build_report(workload, profile, selector, "", layout, counts, node_zone, replicas, options)
    busy = scores.busy_raw
    scored = [(scores.normalized(raw), name) for name, raw in busy.items()]
    # per zone: the empty-node groups, the most common one sets emptyNodeScore, the others are listed
    per_zone: dict[ZoneKey | None, list[tuple[int, GroupKey, list[str]]]] = {}
    any_group: dict[ZoneKey | None, GroupKey] = {}
    for key, names in groups.groups.items():
        any_group.setdefault(key[0], key)
        empty = [n for n in names if n not in busy]
        if empty:
            per_zone.setdefault(key[0], []).append((scores.normalized(scores.group_raw[key]), key, empty))
    # a zone without empty candidates: what an empty node like its first group's would score
    empty_score: dict[ZoneKey | None, int] = {
        z: scores.normalized(scores.group_raw[key]) for z, key in any_group.items() if z not in per_zone
    }
    exceptions: list[tuple[int, str, ZoneKey | None]] = []
    best_empty: list[tuple[int, str, ZoneKey | None]] = []
    empty_total: dict[int, int] = {}
    for zone, entries in per_zone.items():
        entries.sort(key=lambda e: (-len(e[2]), e[1][1].__repr__()))
        empty_score[zone] = entries[0][0]
        for score, _, empties in entries:
            empty_total[score] = empty_total.get(score, 0) + len(empties)
            if score != empty_score[zone]:
                exceptions.extend((score, n, zone) for n in empties)
            best_empty.extend((score, n, zone) for n in empties[: options.top_n])
    pool = [(s, n, node_zone[n]) for s, n in scored] + best_empty
    top = sorted(pool, key=lambda e: (-e[0], e[1]))[: options.top_n]
    by_pods = sorted(scored, key=lambda e: (-counts.get(e[1], 0), e[1]))
    omitted = max(0, len(by_pods) - options.max_nodes)
    listed: dict[str, NodeEntry] = {}
    for s, n in by_pods[: options.max_nodes]:
        listed[n] = _entry(n, node_zone[n], counts.get(n, 0), s)
    for s, n, z in [*top, *exceptions]:
        listed.setdefault(n, _entry(n, z, counts.get(n, 0), s))
    present = {s for s, _ in scored} | set(empty_total)
    best = max(present, default=0)
    best_pool = sorted(n for s, n, _ in pool if s == best)
    zone_index = next((i for i, t in enumerate(scores.plan.terms) if t.topology_key == GA_ZONE), None)
    zones = tuple(
        ZoneEntry(
            zone=z.zone,
            region=z.region,
            pods=z.pods,
            candidate_nodes=z.candidate_nodes,
            zone_score=scores.domains[zone_index].get(z.zone, 0) if zone_index is not None else 0,
            empty_node_score=empty_score.get((z.region, z.zone), 0),
        )
        for z in base.zones
    )
    if None in empty_score:
        zoneless = empty_score[None]
    else:  # no empty zoneless candidate: what one with only a hostname label would score
        sig = tuple(k == HOSTNAME_KEY or None for k in groups.keys)
        zoneless = scores.normalized(scores.raw(sig, (0,) * len(groups.keys)))
    return dataclasses.replace(
        base,
        nodes=tuple(sorted(listed.values(), key=lambda e: (-e.score, e.node))),
        nodes_omitted=omitted,
        zones=zones,
        empty_node_score=zoneless,
        best_score=best,
        worst_score=min(present, default=0),
        best_nodes=tuple(best_pool[: options.top_n]),
        best_node_count=sum(1 for s, _ in scored if s == best) + empty_total.get(best, 0),
    )
