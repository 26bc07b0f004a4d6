"""The SpreadReport of a workload under profile ``v1.29`` (PodTopologySpread).

Pod counts, skews and the health verdict follow SelectorSpread's reports (on the first constraint's
matching pods); the scores come from :class:`~spreadwatch.scoring.topology_groups.GroupScores`. Every
candidate node's score stays derivable: ``nodes`` lists the candidates with matching pods (up to
``max_nodes``), the top-N, and every empty candidate whose score differs from its zone's ``emptyNodeScore``
(e.g. a node without the hostname label, or one in another domain of a custom key); any other candidate
scores its zone's ``emptyNodeScore`` (zoneless: the top-level one). For this profile a zone is the
``topology.kubernetes.io/zone`` label (beta-only nodes are zoneless), and ``zoneScore`` is the zone's
matching-pod count as the zone constraint counts it (all nodes that pass the inclusion policies), 0 without
a zone constraint.

The zone-level part of a report (each zone's emptyNodeScore, the zone entries, the zone facts of the
verdict, each group's first empty candidates) depends only on the scores' :class:`Level` (the pods per
candidate group) and min/max: when every zone holds one candidate group it is computed once per such pair
and kept in the level's memo. Cost: O(nodes with matching pods + listed nodes), plus O(groups + zones ×
top_n) when the zone-level part is new (always, when a zone holds several groups).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Final, NamedTuple, cast

from spreadwatch.report.build import CandidateLayout, ReportInput
from spreadwatch.report.spread_report import NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import SpreadFacts, judge
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores

__all__ = ["build_topology_report"]

_Entry = tuple[int, str, NodeEntry]  # (-score, node, its entry): sorts by score descending, then name
_new_tuple = tuple.__new__  # a NodeEntry/ZoneEntry from its fields, without NamedTuple's Python-level __new__
_count_then_name = itemgetter(1, 0)  # a (node, pods) item's sort key: pods, then name
_MEMO_LIMIT: Final = 64  # zone-level parts kept per Level (one per min/max seen) before its memo is cleared
_SHARED_LIMIT: Final = 4096  # empty-candidate entry lists kept per CandidateGroups before its memo is cleared


class _ZoneLevel(NamedTuple):
    """A report's zone-level part: the same for every report with the same Level, min/max, ``top_n`` and
    groups without empty candidates, when every zone holds one group."""

    empty_score: dict[ZoneKey | None, int]  # zone -> its emptyNodeScore
    empties: tuple[tuple[int, int], ...]  # (group, score of its empty candidates), the groups with some
    exceptions: list[_Entry]  # the empty candidates not scoring their zone's emptyNodeScore
    best_empty: list[_Entry]  # the best ``top_n`` empty candidates, sorted (never mutated)
    lowest: int  # the lowest score of an empty candidate (above every score without any)
    zones: tuple[ZoneEntry, ...]
    zoneless: int  # the top-level emptyNodeScore
    pods: int  # the first constraint's matching pods on candidates
    zones_with_pods: int
    busiest_zone: str
    candidate_zones: int
    zone_skew: int


def _clamp(score: int) -> int:
    return max(0, min(MAX_NODE_SCORE, score))


def _empty_entries(groups: CandidateGroups, g: int, score: int, names: Iterable[str]) -> list[_Entry]:
    """The pool entries of group ``g``'s empty candidates ``names``, all scoring ``score``. O(names)."""
    zn, rg = groups.places[g]
    return [(-score, n, _new_tuple(NodeEntry, (n, zn, rg, 0, score))) for n in names]


def _busiest(pods: Mapping[str, int]) -> tuple[str, int]:
    """The node with the most pods (the last name among equals) and its count; ("", 0) without any. Every count
    is at least 1, so when the most is 1 (a workload spread one pod a node, the usual case) it is the last name,
    found without a key per node. O(nodes with pods)."""
    if not pods:
        return "", 0
    most = max(pods.values())
    if most == 1:
        return max(pods), 1
    return max(pods.items(), key=_count_then_name)


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


def _best_empty(
    groups: CandidateGroups, empties: Sequence[tuple[int, int]], busy: Mapping[str, int], top_n: int
) -> list[_Entry]:
    """The best ``top_n`` pool entries of each group's first ``top_n`` empty candidates, sorted. O(groups ×
    top_n × log + busy names among them)."""
    out: list[_Entry] = []
    names_of = groups.names
    for g, score in empties:
        first = _first_empty(names_of[g], busy, top_n) if busy else names_of[g][: max(top_n, 0)]
        out.extend(_empty_entries(groups, g, score, first))
    out.sort()
    return out[: max(top_n, 0)]  # only the best top_n of them can be among a report's top_n


def _shared_best_empty(
    groups: CandidateGroups, empties: Sequence[tuple[int, int]], top_n: int, keep: bool
) -> list[_Entry]:
    """:func:`_best_empty` without busy candidates among the first names, shared by every level whose groups
    with empty candidates score the same (``groups.memo``, filled only with ``keep``, as is each group's first
    ``top_n`` entries per score; a few KiB each). O(1) when known, else O(groups × top_n × log)."""
    memo = groups.memo
    key = (top_n, *empties)
    found = memo.get(key)
    if found is None:
        if keep and len(memo) >= _SHARED_LIMIT:
            memo.clear()
        out: list[_Entry] = []
        names_of = groups.names
        for g, score in empties:  # a group's first entries per score: shared by every empties holding them
            part = memo.get((None, g, score, top_n))
            if part is None:
                part = _empty_entries(groups, g, score, names_of[g][: max(top_n, 0)])
                if keep:
                    memo[(None, g, score, top_n)] = part
            out.extend(cast("list[_Entry]", part))
        out.sort()
        found = out[: max(top_n, 0)]
        if keep:
            memo[key] = found
    return cast("list[_Entry]", found)


def _empty_scores(
    groups: CandidateGroups, scores: GroupScores, busy: Mapping[str, int]
) -> tuple[dict[ZoneKey | None, int], list[tuple[int, int]], list[_Entry]]:
    """Per zone, the groups with empty candidates: the biggest sets the zone's emptyNodeScore, the others'
    nodes are listed (exceptions). A zone without empty candidates gets what an empty node like its first
    group's would score (clamped to 0-100: such a node is hypothetical and would move min/max itself).
    Returns (zone -> emptyNodeScore, (group, score) of the groups with empty candidates, exceptions).
    O(groups + exceptions)."""
    high, low = scores.max_raw, scores.min_raw
    group_raw, busy_per_group, names_of, full = scores.group_raw, scores.busy_per_group, groups.names, scores.full
    normalized = scores.normalized
    empty_score: dict[ZoneKey | None, int] = {}
    empties: list[tuple[int, int]] = []
    exceptions: list[_Entry] = []
    for zone, members in groups.by_zone.items():
        if len(members) == 1:  # the usual case: one group, its score is the zone's
            g = members[0]
            raw = group_raw[g]
            score = 0 if raw is None else (MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - raw) // high)
            if g in full:
                empty_score[zone] = _clamp(score)
                continue
            empty_score[zone] = score
            empties.append((g, score))
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
        for score, _, g in entries:
            empties.append((g, score))
            if score != zone_score:  # every empty node of the group is listed
                exceptions.extend(_empty_entries(groups, g, score, [n for n in names_of[g] if n not in busy]))
    return empty_score, empties, exceptions


def _zone_level(
    groups: CandidateGroups,
    scores: GroupScores,
    layout: CandidateLayout,
    top_n: int,
    busy: Mapping[str, int],
    keep: bool,
) -> _ZoneLevel:
    """The zone-level part; ``busy``: the candidates with matching pods (empty: as if none were among each
    group's first ``top_n``); ``keep``: the shared entries may go into ``groups.memo``. O(groups + zones ×
    top_n + exceptions)."""
    empty_score, empties, exceptions = _empty_scores(groups, scores, busy)
    zone_counts: dict[ZoneKey, int] = dict.fromkeys(layout.zones, 0)
    with_pods: set[ZoneKey | None] = set()
    zone_of_group = groups.zones
    for g, count in enumerate(scores.group_pods):
        if count:
            zone = zone_of_group[g]
            with_pods.add(zone)
            if zone is not None:
                zone_counts[zone] += count
    busiest_zone = max(zone_counts, key=zone_counts.__getitem__, default=None)
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
    counts = zone_counts.values()
    fields = (
        empty_score,
        tuple(empties),
        exceptions,
        _shared_best_empty(groups, empties, top_n, keep) if not busy else _best_empty(groups, empties, busy, top_n),
        min([score for _, score in empties], default=MAX_NODE_SCORE + 1),
        zones,
        zoneless,
        sum(scores.group_pods),
        len(with_pods) if zone_counts else 0,
        busiest_zone[1] if busiest_zone else "",
        len(by_zone) if zone_counts else 0,
        (max(counts) - min(counts)) if zone_counts else 0,
    )
    return _new_tuple(_ZoneLevel, fields)


def build_topology_report(
    inp: ReportInput, groups: CandidateGroups, scores: GroupScores, keep: bool = True
) -> SpreadReport:
    """The report; ``inp.counts``: ``scores.pods`` (for pods, skews and health); ``keep``: a new zone-level
    part goes into the memos (else they are only read, see
    :func:`~spreadwatch.scoring.topology_groups.score_groups`). O(busy nodes + listed
    nodes), plus O(groups + zones × top_n) for a zone-level part not in the memo."""
    options = inp.options
    layout = inp.layout
    busy = scores.busy
    top_n = options.top_n
    if groups.single:
        memo = scores.level.memo
        memo_key = (scores.min_raw, scores.max_raw, top_n, scores.full)
        found = memo.get(memo_key)
        if found is None:
            found = _zone_level(groups, scores, layout, top_n, {}, keep)
            if keep:
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                memo[memo_key] = found
        level = cast(_ZoneLevel, found)
        if busy.keys().isdisjoint(groups.heads(top_n)):
            best_empty = level.best_empty
        else:
            best_empty = _best_empty(groups, level.empties, busy, top_n)
    else:
        level = _zone_level(groups, scores, layout, top_n, busy, keep)
        best_empty = level.best_empty
    high = scores.max_raw
    total = high + scores.min_raw
    zone_labels, region_labels = groups.zone_labels, groups.region_labels
    # (-score, node, entry) sorts the best first, then by name; NormalizeScore inline
    scored: list[_Entry]
    if scores.shared and high and not scores.ignored:  # own counts are the pods, and no raw is None
        scored = [
            (
                -(s := MAX_NODE_SCORE * (total - raw) // high),
                name,
                _new_tuple(NodeEntry, (name, zone_labels[g], region_labels[g], pods, s)),
            )
            for (name, g, pods), raw in zip(scores.rows, cast("list[int]", scores.row_raw), strict=True)
        ]
    else:
        scored = [
            (
                -(s := 0 if raw is None else (MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (total - raw) // high)),
                name,
                _new_tuple(NodeEntry, (name, zone_labels[g], region_labels[g], busy[name], s)),
            )
            for (name, g, _), raw in zip(scores.rows, scores.row_raw, strict=True)
        ]
    scored.sort()
    exceptions = level.exceptions
    omitted = max(0, len(scored) - options.max_nodes)
    if top_n > 0 and not omitted and not exceptions:  # the usual case: no sort of the empty entries
        head = scored[:top_n] + best_empty[:top_n]
        head.sort()
        top = head[:top_n]
        entries = scored + [e for e in top if e[1] not in busy]
        if len(entries) > len(scored):
            entries.sort()
    else:
        pool = scored + best_empty
        pool.sort()
        top = pool[:top_n]
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
    empties = level.empties
    if top:  # top holds the best; the last of scored or the lowest empty score is the worst
        best = -top[0][0]
        worst = min(-scored[-1][0], level.lowest) if scored else level.lowest
    else:
        present = {-e[0] for e in scored}
        present.update([score for _, score in empties])
        best, worst = max(present, default=0), min(present, default=0)
    best_total = bisect_right(scored, -best, key=itemgetter(0))  # scored is sorted: the best come first
    names_of, busy_per_group = groups.names, scores.busy_per_group
    for g, score in empties:
        if score == best:
            best_total += len(names_of[g]) - busy_per_group[g]
    pods = scores.pods
    busiest, max_node = _busiest(pods)
    facts: SpreadFacts = _new_tuple(
        SpreadFacts,
        (
            level.pods,
            layout.total,
            len(pods),
            busiest,
            level.zones_with_pods,
            level.busiest_zone,
            level.candidate_zones,
            max_node - (0 if empties or not pods else min(pods.values())),
            level.zone_skew,
        ),
    )
    health, reasons = judge(facts, options.thresholds)
    return SpreadReport(
        inp.workload,
        inp.profile.name,
        inp.selector,
        False,
        "",
        inp.replicas,
        facts.pods,
        layout.total,
        layout.excluded_sorted,
        tuple([e[2] for e in entries]),
        omitted,
        level.zones,
        level.zoneless,
        best,
        worst,
        tuple([e[1] for e in top if e[0] == -best]),
        best_total,
        facts.node_skew,
        facts.zone_skew,
        health,
        tuple(reasons),
    )
