"""The window of nodes kube-scheduler actually scores, and the odds that its choice is a report's best node.

From 100 nodes on, kube-scheduler (v1.28–v1.36, ``numFeasibleNodesToFind`` in pkg/scheduler/schedule_one.go)
stops filtering once it has :func:`nodes_to_score` feasible nodes and scores only those. It examines the
nodes from a start index that rotates over its snapshot's node list — the node tree's order, zones taken
round robin (:func:`scheduler_order`) — so each pod is scored on a *window* of the candidates, and the scores
are window-local: SelectorSpread's maxima and zone sums, and PodTopologySpread's domains, weights and min/max,
are taken over the window's nodes only (PodTopologySpread still counts the pods of every node in a domain).

The model (docs/scoring.md §11): the window is the first ``k`` candidates, in :func:`scheduler_order`,
at or after a start position uniformly random over all ``n`` nodes (cyclic); the scheduler picks uniformly
among the window's best nodes. :class:`WindowModel` holds one workload's candidates as *classes* — each
candidate with matching pods alone, the empty candidates of each group (zone, or zone and topology
signature) together — so one window costs O(groups × log + busy candidates), whatever its size. Under
PodTopologySpread a candidate no other beats under any window's weights makes every window holding one pick
an all-candidate best node: when every window holds one (:meth:`WindowModel.always_best`), the probabilities
are exactly 1 without a window evaluated.
Pure: no I/O, no randomness beyond the seeded starts of :func:`sample_starts`.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, pairwise
from typing import Final, NamedTuple, Protocol

from spreadwatch.scoring.gomath import go_log
from spreadwatch.scoring.normalize import SpreadSummary
from spreadwatch.scoring.profiles import PROFILES
from spreadwatch.scoring.topology import MAX_NODE_SCORE
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores, raw_score
from spreadwatch.scoring.zones import ZoneKey, zone_key

__all__ = [
    "DEFAULT_WINDOW_SAMPLES",
    "MIN_FEASIBLE_NODES",
    "MIN_FEASIBLE_PERCENTAGE",
    "ClassScorer",
    "SelectorClasses",
    "TopologyClasses",
    "WindowLayout",
    "WindowModel",
    "WindowOdds",
    "adaptive_percentage",
    "nodes_to_score",
    "sample_starts",
    "scheduler_order",
    "tree_zone",
]

MIN_FEASIBLE_NODES: Final = 100  # minFeasibleNodesToFind: fewer nodes are all scored, and never fewer are
MIN_FEASIBLE_PERCENTAGE: Final = 5  # minFeasibleNodesPercentageToFind: the adaptive percentage's floor
_ADAPTIVE_BASE: Final = 50  # the adaptive percentage is 50 − nodes/125
_NODES_PER_POINT: Final = 125
#: Window starts sampled per report (``--window-samples``; every start when the cluster has no more nodes).
#: 16: the knee of accuracy against CPU measured at the envelope (bench/window_figures.py, docs/scoring.md
#: §11): SelectorSpread's bestNodeProbability within 0.04 of the exact all-starts value for 95 % of the
#: workloads (0.065 with 8 samples, 0.028 with 32), for ~11 µs per sample and report (PodTopologySpread's are
#: mostly exact without sampling: :meth:`WindowModel.always_best`)
DEFAULT_WINDOW_SAMPLES: Final = 16
_WINDOW_MEMO: Final = 4096  # windows memoised per layout
_TREE_PROFILE: Final = PROFILES["v1.28"]  # GetZoneKey since v1.17: beta labels win, GA ones else


def adaptive_percentage(all_nodes: int) -> int:
    """``percentageOfNodesToScore: 0``: ``max(5, 50 − n/125)`` (integer division). O(1)."""
    return max(MIN_FEASIBLE_PERCENTAGE, _ADAPTIVE_BASE - all_nodes // _NODES_PER_POINT)


def nodes_to_score(all_nodes: int, percentage: int) -> int:
    """``numFeasibleNodesToFind``: every node below 100 nodes; else ``max(100, n × pct / 100)`` with the
    percentage given (1–100) or, for 0, :func:`adaptive_percentage`. O(1)."""
    if all_nodes < MIN_FEASIBLE_NODES:
        return all_nodes
    pct = percentage or adaptive_percentage(all_nodes)
    return max(MIN_FEASIBLE_NODES, all_nodes * pct // 100)


def tree_zone(labels: Mapping[str, str]) -> ZoneKey | None:
    """The node tree's zone of a node (``GetZoneKey``: beta zone/region labels win, else the GA ones; None
    without either), whatever profile scores. O(1)."""
    return zone_key(labels, _TREE_PROFILE)


def scheduler_order(nodes: Iterable[tuple[str, ZoneKey | None]]) -> tuple[str, ...]:
    """The snapshot's node list as the node tree builds it, from ``(name, tree zone)`` pairs: zones in order
    of first appearance, one node of each zone per round, exhausted zones skipped. Assumed (docs/scoring.md
    §10): the scheduler met the nodes in name order (its first listing), so zones appear in the order of
    their first node's name and each zone's nodes follow by name. O(n log n)."""
    by_zone: dict[ZoneKey | None, list[str]] = {}
    for name, zone in sorted(nodes, key=lambda pair: pair[0]):
        by_zone.setdefault(zone, []).append(name)
    lists = list(by_zone.values())
    out: list[str] = []
    for i in range(max(map(len, lists), default=0)):
        out.extend(names[i] for names in lists if i < len(names))
    return tuple(out)


@lru_cache(maxsize=64)
def sample_starts(all_nodes: int, samples: int, seed: int = 0) -> tuple[tuple[int, ...], bool]:
    """Start positions to average over, and whether they are all of them (exact): every position when
    ``all_nodes <= samples``, else one uniformly random position (``random.Random(seed)``) in each of
    ``samples`` equal strata (stratified sampling: the estimate's error is at most that of plain sampling).
    O(samples), memoised (every report of a cluster asks for the same starts)."""
    if all_nodes <= samples:
        return tuple(range(all_nodes)), True
    rng = random.Random(seed)
    bounds = [i * all_nodes // samples for i in range(samples + 1)]
    return tuple(lo + rng.randrange(hi - lo) for lo, hi in pairwise(bounds)), False


@dataclass(frozen=True, slots=True)
class WindowLayout:
    """One candidate set on the scheduler's node order: each candidate's position among all ``all_nodes``
    (ascending), its class group, and each group's candidate indexes (sorted), so a window's nodes per group
    take two bisections. Built in O(n); shared by every workload with the same candidates and groups."""

    all_nodes: int
    names: tuple[str, ...]  # the candidates in scheduler order
    positions: tuple[int, ...]  # candidate index -> position in the order of all nodes
    groups: tuple[int, ...]  # candidate index -> group
    members: tuple[tuple[int, ...], ...]  # group -> its candidate indexes
    index: Mapping[str, int] = field(repr=False)  # candidate name -> candidate index
    #: memo of :meth:`window`: (start, size) -> (first candidate, candidates per group); every workload on
    #: this layout averages over the same starts
    _windows: dict[tuple[int, int], tuple[int, list[int]]] = field(default_factory=dict, repr=False, compare=False)
    #: memo of :meth:`spread`: groups -> (their candidate indexes, sorted; the longest cyclic gap between them)
    _spreads: dict[tuple[int, ...], tuple[tuple[int, ...], int]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def build(cls, order: Sequence[str], group_of: Mapping[str, int], n_groups: int) -> WindowLayout:
        """The layout of the candidates ``group_of`` names (with their groups) in ``order``. O(n)."""
        names: list[str] = []
        positions: list[int] = []
        groups: list[int] = []
        members: list[list[int]] = [[] for _ in range(n_groups)]
        for pos, name in enumerate(order):
            g = group_of.get(name)
            if g is not None:
                members[g].append(len(names))
                names.append(name)
                positions.append(pos)
                groups.append(g)
        return cls(
            len(order),
            tuple(names),
            tuple(positions),
            tuple(groups),
            tuple(tuple(m) for m in members),
            {n: i for i, n in enumerate(names)},
        )

    def window(self, start: int, size: int) -> tuple[int, list[int]]:
        """The first candidate index and the candidates per group of the window of ``size`` from node
        position ``start`` (memoised; up to a few thousand entries). O(groups log m) the first time."""
        key = (start, size)
        found = self._windows.get(key)
        if found is None:
            if len(self._windows) >= _WINDOW_MEMO:
                self._windows.clear()
            first = self.first(start)
            found = self._windows[key] = (first, self.counts(first, size))
        return found

    def spread(self, groups: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
        """The candidate indexes of ``groups``, sorted, and the longest cyclic distance from one to the next (the
        number of candidates for a single one), memoised: O(their candidates × log) the first time."""
        found = self._spreads.get(groups)
        if found is None:
            merged = tuple(sorted(i for g in groups for i in self.members[g]))
            found = self._spreads[groups] = (merged, _longest_gap(merged, len(self.names)))
        return found

    def first(self, start: int) -> int:
        """The candidate index the scheduler's filter reaches first from node position ``start``. O(log m)."""
        j = bisect_left(self.positions, start)
        return 0 if j == len(self.positions) else j

    def counts(self, first: int, size: int) -> list[int]:
        """Candidates per group among the ``size`` candidates from index ``first`` on (cyclic). O(groups log m)."""
        m = len(self.names)
        end = first + size
        out = []
        for idx in self.members:
            if end <= m:
                out.append(bisect_left(idx, end) - bisect_left(idx, first))
            else:
                out.append(len(idx) - bisect_left(idx, first) + bisect_left(idx, end - m))
        return out


def _longest_gap(indexes: Sequence[int], m: int) -> int:
    """The longest cyclic distance from one of the sorted candidate ``indexes`` to the next, out of ``m``
    (m for one index, m + 1 for none). O(len(indexes))."""
    if not indexes:
        return m + 1
    if len(indexes) == 1:
        return m
    return max(*(b - a for a, b in pairwise(indexes)), indexes[0] + m - indexes[-1])


def _gap_without(merged: Sequence[int], longest: int, removed: set[int], m: int) -> int:
    """:func:`_longest_gap` of the sorted candidate indexes ``merged`` (whose longest gap is ``longest``) once
    the positions ``removed`` are taken out: each run of removed positions joins the gaps around it.
    O(len(removed))."""
    count = len(merged)
    if len(removed) >= count:
        return m + 1
    worst = longest
    for p in removed:
        if (p - 1) % count in removed:
            continue  # (inside a run: its first position measures it)
        q = p
        while (q + 1) % count in removed:
            q = (q + 1) % count
        worst = max(worst, (merged[(q + 1) % count] - merged[(p - 1) % count]) % m or m)
    return worst


class ClassScorer(Protocol):
    """Window-local scores of a workload's classes: rows ``0..busy-1`` are the candidates with matching
    pods, ``busy + g`` the empty candidates of group ``g``."""

    @property
    def busy(self) -> int: ...

    def dominant(self) -> tuple[int, ...]:
        """Groups whose empty candidates are best in every window that holds one of them, and all-candidate
        best (a window holding one picks an all-candidate best node); () when none is known to be."""
        ...

    def classes(self, counts: Sequence[int], inside: Sequence[int]) -> list[tuple[int, int, int]]:
        """``(class, nodes, score)`` of every class present in a window holding ``counts`` candidates per
        group and the busy rows ``inside``."""
        ...


class SelectorClasses:
    """SelectorSpread on a window: maxNode and the zone sums over the window's nodes (``counts`` per zone
    group; a zone is present when the window has one of its nodes). O(groups + rows) per window."""

    def __init__(
        self, zones: Sequence[ZoneKey | None], max_score: int, rows: Sequence[tuple[int, int]]
    ) -> None:
        self.zones = tuple(zones)  # group -> zone
        self.max_score = max_score
        self.rows = tuple(rows)  # busy row -> (group, matching pods)

    @property
    def busy(self) -> int:
        return len(self.rows)

    def dominant(self) -> tuple[int, ...]:
        """None: SelectorSpread's zone part is relative to the window's zones, so any node can lose."""
        return ()

    def classes(self, counts: Sequence[int], inside: Sequence[int]) -> list[tuple[int, int, int]]:
        zones, rows = self.zones, self.rows
        sums: dict[ZoneKey, int] = {}
        for g, c in enumerate(counts):
            zone = zones[g]
            if c and zone is not None:
                sums[zone] = 0
        busy_in = [0] * len(zones)
        max_node = 0
        for r in inside:
            g, c = rows[r]
            busy_in[g] += 1
            max_node = max(max_node, c)
            z = zones[g]
            if z is not None:
                sums[z] += c
        summary = SpreadSummary.of(self.max_score, max_node, sums)
        out = [(r, 1, summary.score(rows[r][1], zones[rows[r][0]])) for r in inside]
        base = len(rows)
        for g, c in enumerate(counts):
            if c > busy_in[g]:
                out.append((base + g, c - busy_in[g], summary.score(0, zones[g])))
        return out


class TopologyClasses:
    """PodTopologySpread on a window: each constraint's domains are the values present among the window's
    (not ignored) nodes, its weight ``log(size + 2)`` (hostname: the window's not ignored nodes), a domain
    counts the pods of every node (``scores.domains``, as for all candidates), and NormalizeScore takes the
    window's min/max. O(groups × constraints + rows) per window (the weights and group scores memoised)."""

    def __init__(self, groups: CandidateGroups, scores: GroupScores) -> None:
        plan = scores.plan
        self.terms = plan.terms
        doms = groups.domains(plan.require_all)
        self.ignored = doms.ignored
        self._any_ignored = any(self.ignored)
        self.values = doms.group_values
        self.present = groups.present
        self.domains = scores.domains
        self.skews = tuple(float(t.max_skew - 1) for t in plan.terms)
        n_terms = len(plan.terms)
        self.rows = tuple((g, own if isinstance(own, tuple) else (own,) * n_terms) for _, g, own in scores.rows)
        self._zeros = (0,) * n_terms
        self._full = frozenset(scores.full)  # groups without an empty candidate
        self._weights: dict[tuple[int, ...], tuple[float, ...]] = {}
        #: weights -> raw scores of the busy rows and of each group's empty candidates (None: ignored)
        self._raws: dict[tuple[float, ...], tuple[list[int | None], list[int | None]]] = {}

    @property
    def busy(self) -> int:
        return len(self.rows)

    def dominant(self) -> tuple[int, ...]:
        """Groups whose empty candidates no candidate beats under any window's weights: in each constraint a
        node of such a group lacks the key, or has the fewest matching pods of the candidates with it — and
        none, at maxSkew 1, when some candidate lacks the key. A term adds ``count × weight + maxSkew − 1`` with
        every weight ``log(size + 2)`` > 1, so two candidates whose terms differ differ by more than the
        rounding: in a window holding such a node its best are the candidates scoring as it does under every
        weight, all-candidate best nodes (ignored candidates score 0 there). A candidate's counts are its
        group's domains' but for the hostname term, where an empty one has the fewest (none): so the groups
        decide. O(groups × constraints)."""
        ignored, present, domains, n_terms = self.ignored, self.present, self.domains, len(self.terms)
        lowest: list[float] = [0.0 if term.hostname else float("inf") for term in self.terms]
        lacking = [False] * n_terms
        kept = [g for g in range(len(ignored)) if not ignored[g]]
        for g in kept:
            terms = present[g]
            if len(terms) < n_terms:
                has = {i for i, _ in terms}
                for i in range(n_terms):
                    lacking[i] = lacking[i] or i not in has
            for i, value in terms:
                if value is not None:
                    lowest[i] = min(lowest[i], domains[i][value])
        skews = self.skews

        def beats_all(g: int) -> bool:
            for i, value in present[g]:
                count = 0 if value is None else domains[i][value]
                if count != lowest[i] or (lacking[i] and (count or skews[i])):
                    return False
            return True

        return tuple(g for g in kept if g not in self._full and beats_all(g))

    def _window_weights(self, counts: Sequence[int]) -> tuple[float, ...]:
        ignored = self.ignored
        kept = counts if not self._any_ignored else [0 if ignored[g] else c for g, c in enumerate(counts)]
        sizes: list[int] = []
        for i, term in enumerate(self.terms):
            sizes.append(sum(kept) if term.hostname else len(set(compress(self.values[i], kept))))
        key = tuple(sizes)
        found = self._weights.get(key)
        if found is None:
            found = self._weights[key] = tuple(go_log(float(s + 2)) for s in sizes)
        return found

    def _class_raws(self, weights: tuple[float, ...]) -> tuple[list[int | None], list[int | None]]:
        """The raw scores of every busy row and of each group's empty candidates under ``weights`` (None for an
        ignored group), memoised per weights: a workload's windows mostly share one. O(rows + groups) once."""
        found = self._raws.get(weights)
        if found is None:
            ignored, present, domains, skews = self.ignored, self.present, self.domains, self.skews
            busy = [None if ignored[g] else raw_score(present[g], own, domains, weights, skews) for g, own in self.rows]
            zeros = self._zeros
            groups = range(len(ignored))
            empty = [None if ignored[g] else raw_score(present[g], zeros, domains, weights, skews) for g in groups]
            found = self._raws[weights] = (busy, empty)
        return found

    def classes(self, counts: Sequence[int], inside: Sequence[int]) -> list[tuple[int, int, int]]:
        busy_raw, empty_raw = self._class_raws(self._window_weights(counts))
        rows = self.rows
        busy_in = [0] * len(counts)
        raws: list[tuple[int, int, int | None]] = []
        for r in inside:
            busy_in[rows[r][0]] += 1
            raws.append((r, 1, busy_raw[r]))
        base = len(rows)
        for g, c in enumerate(counts):
            if c > busy_in[g]:
                raws.append((base + g, c - busy_in[g], empty_raw[g]))
        valid = [raw for _, _, raw in raws if raw is not None]
        low, high = min(valid, default=0), max(valid, default=0)
        return [(cls, nodes, _normalized(raw, low, high)) for cls, nodes, raw in raws]


def _normalized(raw: int | None, low: int, high: int) -> int:
    """NormalizeScore of one raw score (0 for an ignored node). O(1)."""
    if raw is None:
        return 0
    return MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - raw) // high


class WindowOdds(NamedTuple):
    """How many nodes the scheduler scores for the next pod, and the probabilities (0–1; None: not computed)
    that it picks one of the report's best nodes, and a node in a best node's zone; ``exact``: averaged
    over every start, not sampled."""

    nodes_scored: int
    best_node: float | None
    best_zone: float | None
    exact: bool


@dataclass(frozen=True, slots=True)
class WindowModel:
    """One workload's next pod under the window model: its candidates' layout, the window size, the busy
    rows' candidate indexes and the class scorer."""

    layout: WindowLayout
    size: int  # nodes scored per pod (nodes_to_score)
    rows: tuple[int, ...]  # busy row -> candidate index
    scorer: ClassScorer
    class_zone: tuple[ZoneKey | None, ...]  # class -> its zone
    #: memo of :meth:`best`: (the all-candidate best classes, their zones), made on first use
    _best: list[tuple[frozenset[int], frozenset[ZoneKey | None]]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", min(self.size, len(self.layout.names)))

    def best(self) -> tuple[frozenset[int], frozenset[ZoneKey | None]]:
        """The classes of the all-candidate best set and their zones, which :meth:`outcome` compares each
        window's choice with. O(groups + rows) once."""
        if not self._best:
            classes = self.scorer.classes([len(idx) for idx in self.layout.members], range(len(self.rows)))
            top = max((s for _, _, s in classes), default=0)
            best = frozenset(c for c, _, s in classes if s == top)
            self._best.append((best, frozenset(self.class_zone[c] for c in best)))
        return self._best[0]

    @property
    def whole(self) -> bool:
        """Every candidate is scored (the window is all of them)."""
        return self.size >= len(self.layout.names)

    def window(self, start: int) -> tuple[int, list[int], list[int]]:
        """The window from node position ``start``: its first candidate index, candidates per group and the
        busy rows inside. O(groups log m + rows)."""
        m = len(self.layout.names)
        if not m:
            return 0, [], []
        size = self.size
        first, counts = self.layout.window(start, size)
        inside = [r for r, idx in enumerate(self.rows) if (idx - first) % m < size]
        return first, counts, inside

    def best_classes(self, start: int) -> list[tuple[int, int]]:
        """``(class, nodes)`` of the window's best-scoring classes from ``start``. O(one window)."""
        _, counts, inside = self.window(start)
        classes = self.scorer.classes(counts, inside)
        top = max((s for _, _, s in classes), default=0)
        return [(c, n) for c, n, s in classes if s == top]

    def outcome(self, start: int) -> tuple[float, float]:
        """The probabilities that the scheduler, scoring the window from ``start`` and picking uniformly among
        its best, picks an all-candidate best node, and a node in a best node's zone. O(one window)."""
        best = self.best_classes(start)
        total = sum(n for _, n in best)
        if not total:
            return 0.0, 0.0
        classes, zones = self.best()
        on_best = sum(n for c, n in best if c in classes)
        in_zone = sum(n for c, n in best if self.class_zone[c] in zones)
        return on_best / total, in_zone / total

    def odds(self, samples: int, seed: int = 0) -> WindowOdds:
        """The outcome averaged over uniformly random starts: exactly 1 when every candidate is scored, else
        over :func:`sample_starts` (exact when ``samples`` ≥ nodes); ``samples`` 0 computes none.
        O(samples × one window)."""
        if not self.layout.names:
            return WindowOdds(0, None, None, True)
        if self.whole:
            return WindowOdds(self.size, 1.0, 1.0, True)
        if samples <= 0:
            return WindowOdds(self.size, None, None, False)
        if self.always_best():
            return WindowOdds(self.size, 1.0, 1.0, True)
        return self.sampled(samples, seed)

    def always_best(self) -> bool:
        """Whether every window holds an empty candidate of a :meth:`~ClassScorer.dominant` group: then every
        window's pick is an all-candidate best node, and both probabilities are exactly 1 (what averaging every
        start would give). O(busy rows) after the layout's spread of those groups."""
        groups = self.scorer.dominant()
        if not groups:
            return False
        merged, longest = self.layout.spread(groups)
        removed = {j for idx in self.rows if (j := bisect_left(merged, idx)) < len(merged) and merged[j] == idx}
        return _gap_without(merged, longest, removed, len(self.layout.names)) <= self.size

    def sampled(self, samples: int, seed: int = 0) -> WindowOdds:
        """The outcome averaged over :func:`sample_starts` (exact when ``samples`` ≥ nodes). O(samples × one
        window)."""
        starts, exact = sample_starts(self.layout.all_nodes, samples, seed)
        node_sum = zone_sum = 0.0
        for start in starts:
            on_best, in_zone = self.outcome(start)
            node_sum += on_best
            zone_sum += in_zone
        return WindowOdds(self.size, node_sum / len(starts), zone_sum / len(starts), exact)

    def best_nodes(self, start: int) -> list[str]:
        """The window's best nodes from ``start`` (its nodes with the highest window-local score), in the
        scheduler's order. O(window)."""
        best = {c for c, _ in self.best_classes(start)}
        busy = len(self.rows)
        layout = self.layout
        m = len(layout.names)
        row_of = {idx: r for r, idx in enumerate(self.rows)}
        out = []
        first = layout.first(start) if m else 0
        for d in range(self.size):
            i = (first + d) % m
            r = row_of.get(i)
            if (busy + layout.groups[i] if r is None else r) in best:
                out.append(layout.names[i])
        return out

    def pick(self, start: int, rng: random.Random) -> str:
        """The node the scheduler picks from the window at ``start``: uniformly among its best. O(window)."""
        return rng.choice(self.best_nodes(start))
