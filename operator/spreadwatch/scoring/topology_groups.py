"""PodTopologySpread scores from sparse state, for the incremental index and the reports.

Candidates are grouped by (zone key, *signature*): per constraint key, the node's label value (None when
missing), and for ``kubernetes.io/hostname`` only whether the label is there. Every empty candidate node
(no matching pod of any constraint) of one group has the same raw score, so a workload's scores need
O(groups + nodes with matching pods) work instead of O(candidates). The arithmetic is
:mod:`spreadwatch.scoring.topology`'s, step for step (the index's property test compares the two paths).

What depends only on the candidate set and the keys is computed once per :class:`CandidateGroups` (cached by
the index per candidate set and key tuple): the groups, every candidate's group, and per ``require_all`` the
domains' values, sizes and weights (:meth:`CandidateGroups.domains`). Per workload, a candidate's pods count
in its group's domains (candidates passed the scheduler's filters for the same nodeSelector, affinity and
tolerations, hence the inclusion policies); only non-candidate nodes with matching pods are checked one by
one. What depends only on the matching pods per group (the domain counts, the empty candidates' raw scores,
the raw score per group and own counts) is a :class:`Level`, shared through ``CandidateGroups.levels`` by
every workload with the same pods per group (the 10,000 workloads of bench/synth.py at scale 1.0 need 3,651).
:func:`group_candidates` costs O(candidates × keys); :func:`score_groups` costs O(nodes with matching pods ×
constraints), plus O(groups × constraints) for a new level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple, cast

from spreadwatch.model import Node, PodTemplate
from spreadwatch.scoring.candidates import has_untolerated_taint, node_affinity_matches
from spreadwatch.scoring.gomath import go_log, go_round
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE, SpreadPlan, SpreadTerm
from spreadwatch.scoring.zones import GA_ZONE, ZoneKey

__all__ = [
    "CandidateGroups",
    "Domains",
    "GroupKey",
    "GroupScores",
    "Level",
    "Signature",
    "group_candidates",
    "raw_score",
    "score_groups",
]

Signature = tuple[str | bool | None, ...]
_Own = int | tuple[int, ...]  # a busy candidate's own counts: one count for all terms, or one per term
GroupKey = tuple[ZoneKey | None, Signature | tuple[Signature, Signature]]  # zone, signature (and split one)
_new_tuple = tuple.__new__  # a NamedTuple from its fields in C (its own __new__ is Python code)
_MEMO_LIMIT: Final = 4096  # levels kept per CandidateGroups before the memo is cleared (a few KiB each)


def _value(value: str | bool | None) -> str:
    """A signature value as a domain value (a missing label is the empty value). O(1)."""
    return value if isinstance(value, str) else ""


def _missing(sig: Signature) -> bool:
    return any(v is None or v is False for v in sig)


class Level(NamedTuple):
    """What a workload's scores share with every other one on the same :class:`CandidateGroups` with the same
    ``require_all``, maxSkews and matching pods per group (and domain counts): the domain counts, each group's
    empty-candidate raw score (None: ignored), per group the raw score of every own count seen so far (filled
    as reports need them) and the report builder's memo (its zone-level part per min/max)."""

    domains: tuple[dict[str, int], ...]
    group_raw: tuple[int | None, ...]
    valid: tuple[int, ...]  # the groups' raw scores that are not None
    raws: list[dict[_Own, int | None]]
    memo: dict[tuple[object, ...], object]


class Domains(NamedTuple):
    """PreScore's candidate-only half for one tuple of keys and one ``require_all``: which groups are ignored
    (a key missing), each non-hostname key's domain values (a missing value is ``""``), the sizes and the
    weights ``log(size + 2)``."""

    ignored: tuple[bool, ...]  # per group
    ignored_nodes: int
    values: tuple[tuple[str, ...], ...]  # per key: the domain values in first-seen order (empty for hostname)
    group_values: tuple[tuple[str | None, ...], ...]  # per key, per group: its domain value (None: ignored, hostname)
    sizes: tuple[int, ...]
    weights: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class CandidateGroups:
    """Candidate nodes by (zone, signature) for one tuple of topology keys, as parallel per-group tuples
    (names sorted per group) in first-seen order; ``group_of`` maps every candidate to its group, ``by_zone``
    every zone to its groups (in group order)."""

    keys: tuple[str, ...]
    zones: tuple[ZoneKey | None, ...]
    places: tuple[tuple[str, str], ...]  # per group: its (zone, region) labels as a report lists them ("" zoneless)
    zone_labels: tuple[str, ...]  # per group: the zone of ``places``
    region_labels: tuple[str, ...]  # per group: the region of ``places``
    sigs: tuple[Signature, ...]
    names: tuple[Sequence[str], ...]  # (a filtered view's may be views: scoring/filtered_groups.py)
    group_of: Mapping[str, int]
    present: tuple[tuple[tuple[int, str | None], ...], ...]  # per group: (key index, value; None: hostname)
    by_zone: Mapping[ZoneKey | None, tuple[int, ...]]
    total: int
    zone_index: int | None  # the index of the ``topology.kubernetes.io/zone`` key, if it is one
    single: bool  # every zone holds one group (so a zone's empty candidates all score alike)
    smallest: int  # the fewest candidates of a group (fewer busy candidates leave every group an empty one)
    #: per group: its values of the ``split`` keys of :func:`group_candidates` (hostname: presence), which
    #: group the candidates no further for scoring (PodTopologySpread's Filter decides by them)
    splits: tuple[Signature, ...] = ()
    _domains: dict[bool, Domains] = field(default_factory=dict, compare=False, repr=False)
    #: memo of :func:`score_groups`: per (require_all, skews, pods per group[, domain counts]) its Level
    levels: dict[tuple[object, ...], Level] = field(default_factory=dict, compare=False, repr=False)
    #: memo of the report builder shared by every level (the empty candidates' entries per their scores)
    memo: dict[tuple[object, ...], object] = field(default_factory=dict, compare=False, repr=False)
    _heads: dict[int, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def heads(self, top_n: int) -> frozenset[str]:
        """The first ``top_n`` names of every group. O(groups × top_n) once, then O(1)."""
        found = self._heads.get(top_n)
        if found is None:
            found = self._heads[top_n] = frozenset(n for names in self.names for n in names[: max(top_n, 0)])
        return found

    def domains(self, require_all: bool) -> Domains:
        """The :class:`Domains` for ``require_all``, computed once. O(groups × keys) the first time, then O(1)."""
        found = self._domains.get(require_all)
        if found is not None:
            return found
        keys = self.keys
        # a group without candidates (only in a view filtered by PodTopologySpread's Filter) counts as ignored
        ignored = tuple(
            (require_all and _missing(sig)) or not names for sig, names in zip(self.sigs, self.names, strict=True)
        )
        values: list[dict[str, None]] = [{} for _ in keys]
        for g, sig in enumerate(self.sigs):
            if ignored[g]:
                continue
            for i, key in enumerate(keys):
                if key != HOSTNAME_KEY:
                    value = sig[i]
                    values[i][_value(value)] = None
        ignored_nodes = sum(len(names) for names, out in zip(self.names, ignored, strict=True) if out)
        sizes = tuple(
            self.total - ignored_nodes if key == HOSTNAME_KEY else len(values[i]) for i, key in enumerate(keys)
        )
        group_values = tuple(
            tuple(None if key == HOSTNAME_KEY or ignored[g] else _value(sig[i]) for g, sig in enumerate(self.sigs))
            for i, key in enumerate(keys)
        )
        found = self._domains[require_all] = Domains(
            ignored,
            ignored_nodes,
            tuple(tuple(v) for v in values),
            group_values,
            sizes,
            tuple(go_log(float(size + 2)) for size in sizes),
        )
        return found


def _signatures(labels: Sequence[Mapping[str, str]], keys: tuple[str, ...]) -> Iterable[Signature]:
    """Each node's signature for ``keys`` (hostname: presence), built a key at a time. O(nodes × keys)."""
    columns = [[key in ls for ls in labels] if key == HOSTNAME_KEY else [ls.get(key) for ls in labels] for key in keys]
    return zip(*columns, strict=True) if columns else [()] * len(labels)


def group_candidates(
    candidates: Iterable[Node],
    keys: tuple[str, ...],
    zone_of: Mapping[str, ZoneKey | None],
    split: tuple[str, ...] = (),
) -> CandidateGroups:
    """Group candidates by zone and signature, and further by their signature for ``split`` (the keys of
    PodTopologySpread's hard constraints, kept in ``splits``). O(candidates × keys)."""
    nodes = list(candidates)
    labels = [node.labels for node in nodes]
    own = _signatures(labels, keys)
    sigs: Iterable[Signature | tuple[Signature, Signature]] = (
        zip(own, _signatures(labels, split), strict=True) if split else own
    )
    groups: dict[GroupKey, list[str]] = {}
    for node, sig in zip(nodes, sigs, strict=True):
        name = node.name
        group_key = (zone_of[name], sig)
        found = groups.get(group_key)
        if found is None:
            groups[group_key] = [name]
        else:
            found.append(name)
    total = len(nodes)
    group_of: dict[str, int] = {}
    by_zone: dict[ZoneKey | None, list[int]] = {}
    for g, ((zone, _), names) in enumerate(groups.items()):
        group_of.update(dict.fromkeys(names, g))
        by_zone.setdefault(zone, []).append(g)
    sigs_of: list[Signature] = [cast(Signature, sig[0] if split else sig) for _, sig in groups]
    return CandidateGroups(
        keys,
        tuple(zone for zone, _ in groups),
        tuple(("", "") if zone is None else (zone[1], zone[0]) for zone, _ in groups),
        tuple("" if zone is None else zone[1] for zone, _ in groups),
        tuple("" if zone is None else zone[0] for zone, _ in groups),
        tuple(sigs_of),
        tuple(tuple(sorted(names)) for names in groups.values()),
        group_of,
        tuple(_present(sig) for sig in sigs_of),
        {zone: tuple(gs) for zone, gs in by_zone.items()},
        total,
        keys.index(GA_ZONE) if GA_ZONE in keys else None,
        all(len(gs) == 1 for gs in by_zone.values()),
        min((len(names) for names in groups.values()), default=0),
        tuple(cast(Signature, sig[1]) for _, sig in groups) if split else (),
    )


class GroupScores(NamedTuple):
    """One workload's PodTopologySpread scores: per busy candidate (one with matching pods of any constraint)
    and per group of empty candidates. ``normalized`` turns a raw score into the 0-100 one."""

    plan: SpreadPlan
    weights: tuple[float, ...]
    sizes: tuple[int, ...]
    domains: tuple[Mapping[str, int], ...]  # per constraint: domain value -> matching pods (empty for hostname)
    ignored: int  # candidates left out (missing keys)
    busy: Mapping[str, int]  # busy candidate -> the first constraint's matching pods on it (may be 0)
    pods: Mapping[str, int]  # the busy candidates with matching pods of the first constraint -> their count
    group_pods: Sequence[int]  # per group: the first constraint's matching pods on its candidates
    rows: Sequence[tuple[str, int, _Own]]  # per busy candidate: (name, group, own counts: key of ``raws``)
    raws: Sequence[Mapping[_Own, int | None]]  # per group: own counts -> raw score (None: ignored); the level's
    busy_per_group: Sequence[int]  # per group: its busy candidates
    group_raw: Sequence[int | None]  # per group: the raw score of its empty candidates (None: ignored)
    min_raw: int
    max_raw: int
    level: Level  # what this workload shares with every one with the same pods per group
    row_raw: Sequence[int | None]  # per busy candidate (as ``rows``): its raw score
    full: tuple[int, ...]  # the groups without an empty candidate
    shared: bool  # every term counts the same pods: a row's own counts are its pods (an int)

    def normalized(self, raw: int | None) -> int:
        """NormalizeScore of one raw score (0 for an ignored node). O(1)."""
        if raw is None:
            return 0
        if self.max_raw == 0:
            return MAX_NODE_SCORE
        return MAX_NODE_SCORE * (self.max_raw + self.min_raw - raw) // self.max_raw

    def raw(self, sig: Signature, own: Sequence[int]) -> int | None:
        """Score's integer for a candidate with this signature and own pod counts (None: ignored). O(terms)."""
        if self.plan.require_all and _missing(sig):
            return None
        skews = tuple(float(t.max_skew - 1) for t in self.plan.terms)
        return raw_score(_present(sig), own, self.domains, self.weights, skews)


def _present(sig: Signature) -> tuple[tuple[int, str | None], ...]:
    """The keys a node with this signature has: (index, domain value; None for hostname). O(keys)."""
    return tuple((i, None if v is True else v) for i, v in enumerate(sig) if v is not None and v is not False)


def raw_score(
    present: Sequence[tuple[int, str | None]],
    own: Sequence[int],
    domains: Sequence[Mapping[str, int]],
    weights: Sequence[float],
    skews: Sequence[float],
) -> int:
    """Score: ``round(Σ count × weight + (maxSkew − 1))`` in constraint order over the keys the node has
    (``present``: their indexes and domain values, None for hostname, whose count is the node's own). O(terms)."""
    total = 0.0
    for i, value in present:
        total += float(own[i] if value is None else domains[i][value]) * weights[i] + skews[i]
    return go_round(total)


def _split(
    per_node: Mapping[str, int], group_of: Mapping[str, int], n_groups: int
) -> tuple[list[int], list[tuple[str, int]]]:
    """Matching pods per candidate group, and the non-candidate nodes with theirs. O(nodes with pods)."""
    sums = [0] * n_groups
    outside: list[tuple[str, int]] = []
    for name, count in per_node.items():
        g = group_of.get(name)
        if g is None:
            outside.append((name, count))
        else:
            sums[g] += count
    return sums, outside


def _count_outside(
    domain: dict[str, int],
    term: SpreadTerm,
    require_all: bool,
    template: PodTemplate,
    keys: tuple[str, ...],
    outside: Iterable[tuple[str, int]],
    node_of: Mapping[str, Node],
) -> None:
    """Add the matching pods of non-candidate nodes to ``domain``: those that have the keys (when required)
    and pass the constraint's inclusion policies (candidates always pass them: they passed the same filters).
    O(those nodes)."""
    check_affinity = term.honor_affinity and (bool(template.node_selector) or template.required_terms is not None)
    topology_key = term.topology_key
    for name, count in outside:
        holder = node_of.get(name)
        if holder is None:
            continue
        labels = holder.labels
        if require_all and not all(k in labels for k in keys):
            continue
        if check_affinity and not node_affinity_matches(holder, template):
            continue
        if term.honor_taints and holder.taints and has_untolerated_taint(holder, template):
            continue
        value = labels.get(topology_key, "")
        if value in domain:
            domain[value] += count


def _domain_counts(
    terms: Sequence[SpreadTerm],
    doms: Domains,
    per_term: Sequence[tuple[Sequence[int], Sequence[tuple[str, int]]]],
    require_all: bool,
    template: PodTemplate,
    keys: tuple[str, ...],
    node_of: Mapping[str, Node],
) -> tuple[dict[str, int], ...]:
    """Per constraint, domain value -> matching pods (empty for hostname), from the per-group sums and the
    non-candidate nodes with pods (``per_term``). O(terms × groups + those nodes)."""
    out: list[dict[str, int]] = []
    for i, term in enumerate(terms):
        values = doms.values[i]
        if not values:
            out.append({})
            continue
        domain = dict.fromkeys(values, 0)
        sums, outside = per_term[i]
        for g, value in enumerate(doms.group_values[i]):
            if value is not None and sums[g]:
                domain[value] += sums[g]
        if outside:
            _count_outside(domain, term, require_all, template, keys, outside, node_of)
        out.append(domain)
    return tuple(out)


def _level(
    groups: CandidateGroups, doms: Domains, domains: tuple[dict[str, int], ...], skews: tuple[float, ...]
) -> Level:
    """A new :class:`Level`: every group's empty-candidate raw score. O(groups × terms)."""
    zeros = (0,) * len(skews)
    group_raw = tuple(
        [
            None if out else raw_score(present, zeros, domains, doms.weights, skews)
            for present, out in zip(groups.present, doms.ignored, strict=True)
        ]
    )
    return Level(
        domains,
        group_raw,
        tuple([raw for raw in group_raw if raw is not None]),
        [{} for _ in group_raw],
        {},
    )


def score_groups(
    plan: SpreadPlan,
    template: PodTemplate,
    groups: CandidateGroups,
    counts: Sequence[Mapping[str, int]],
    node_of: Mapping[str, Node],
    shared: bool = False,
    keep: bool = True,
) -> GroupScores:
    """PreScore, Score and NormalizeScore's min/max from sparse per-term counts over all nodes.

    ``groups`` must be grouped by ``tuple(t.topology_key for t in plan.terms)``; ``shared``: every term counts
    the same pods (``counts`` holds one map per term all the same), so a node's own counts are one number. A
    candidate's domain values are its group's, and its raw score depends only on its group and own counts.
    What depends only on the pods per group (and the domain counts) — the domains, the empty candidates'
    raw scores, the raw score of each (group, own counts) — is a :class:`Level` shared through
    ``groups.levels`` by every workload with the same ones. ``keep``: a new level goes into that memo and new
    raw scores into the level; without it the memos are only read (what is new lives as long as the scores):
    the index keeps them only while the cyclic GC is paused, since every container kept while it runs counts
    towards its next collection. O(nodes with matching pods × terms), plus O(groups × terms) when the level
    is new or a non-candidate node has matching pods."""
    terms = plan.terms
    n_terms = len(terms)
    require_all = plan.require_all
    doms = groups.domains(require_all)
    group_of = groups.group_of
    n_groups = len(groups.sigs)
    busy_per_group = [0] * n_groups
    skews = tuple([float(t.max_skew - 1) for t in terms])
    busy: Mapping[str, int]
    rows: Sequence[tuple[str, int, _Own]]
    domains: tuple[dict[str, int], ...] | None = None
    if shared and terms:
        first = counts[0]
        get_group = group_of.get
        found = [(name, g, count) for name, count in first.items() if (g := get_group(name)) is not None]
        group_pods = [0] * n_groups
        for _, g, count in found:
            busy_per_group[g] += 1
            group_pods[g] += count
        if len(found) == len(first):  # every node with matching pods is a candidate
            busy = first
        else:
            busy = {name: count for name, _, count in found}
            outside = [(name, count) for name, count in first.items() if name not in group_of]
            per_shared = [(group_pods, outside)] * n_terms
            domains = _domain_counts(terms, doms, per_shared, require_all, template, groups.keys, node_of)
        pods: Mapping[str, int] = busy
        rows = found
    else:
        union: dict[str, int] = {}
        for per_node in {id(c): c for c in counts}.values():
            union.update((name, 0) for name, count in per_node.items() if count > 0 and name in group_of)
        listed: list[tuple[str, int, _Own]] = []
        for name in union:
            own_counts = tuple(c.get(name, 0) for c in counts)
            g = group_of[name]
            union[name] = own_counts[0] if own_counts else 0
            listed.append((name, g, own_counts))
            busy_per_group[g] += 1
        busy, rows = union, listed
        pods = {name: count for name, count in union.items() if count > 0}
        per_term = [_split(c, group_of, n_groups) for c in counts]
        group_pods = per_term[0][0] if per_term else [0] * n_groups
        domains = _domain_counts(terms, doms, per_term, require_all, template, groups.keys, node_of)
    sums = tuple(group_pods)
    levels = groups.levels
    key = (
        (require_all, skews, sums)
        if domains is None
        else (require_all, skews, sums, tuple([tuple(d.values()) for d in domains]))
    )
    level = levels.get(key)
    fresh = level is None
    if level is None:
        if domains is None:
            per_sums = [(group_pods, ())] * n_terms
            domains = _domain_counts(terms, doms, per_sums, require_all, template, groups.keys, node_of)
        level = _level(groups, doms, domains, skews)
        if keep:
            if len(levels) >= _MEMO_LIMIT:
                levels.clear()
            levels[key] = level
    raws = level.raws
    row_raw = [raws[g].get(own) for _, g, own in rows]
    busy_raws: list[int]
    if None in row_raw:  # a (group, own counts) not seen on this level yet, or an ignored group
        if not (keep or fresh):  # a kept level is only read: the new raw scores go to copies of its maps
            raws = [dict(per) for per in raws]
        ignored, present, weights = doms.ignored, groups.present, doms.weights
        for j, (_, g, own) in enumerate(rows):
            if row_raw[j] is not None:
                continue
            per = raws[g]
            if own in per:  # computed for an earlier row
                row_raw[j] = per[own]
            elif ignored[g]:
                per[own] = None
            else:
                per_term_own = own if isinstance(own, tuple) else (own,) * n_terms
                row_raw[j] = per[own] = raw_score(present[g], per_term_own, level.domains, weights, skews)
        busy_raws = [raw for raw in row_raw if raw is not None]
    else:
        busy_raws = cast("list[int]", row_raw)  # no None in it
    if len(rows) < groups.smallest:  # every group keeps an empty candidate
        full: tuple[int, ...] = ()
        valid = [*level.valid, *busy_raws]
    else:
        names = groups.names
        full = tuple([g for g in range(n_groups) if len(names[g]) <= busy_per_group[g]])
        valid = [raw for g, raw in enumerate(level.group_raw) if raw is not None and g not in full]
        valid.extend(busy_raws)
    return _new_tuple(
        GroupScores,
        (
            plan,
            doms.weights,
            doms.sizes,
            level.domains,
            doms.ignored_nodes,
            busy,
            pods,
            group_pods,
            rows,
            raws,
            busy_per_group,
            level.group_raw,
            min(valid, default=0),
            max(valid, default=0),
            level,
            row_raw,
            full,
            shared and bool(terms),
        ),
    )
