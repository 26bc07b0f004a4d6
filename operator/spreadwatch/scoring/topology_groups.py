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
one. :func:`group_candidates` costs O(candidates × keys); :func:`score_groups` costs O(groups × constraints
+ nodes with matching pods × constraints).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

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
    "Signature",
    "group_candidates",
    "score_groups",
    "signature",
]

Signature = tuple[str | bool | None, ...]
_Own = int | tuple[int, ...]  # a busy candidate's own counts: one count for all terms, or one per term
GroupKey = tuple[ZoneKey | None, Signature]


def signature(labels: Mapping[str, str], keys: Sequence[str]) -> Signature:
    """Per key the label value (None: missing); for the hostname key only whether it is present. O(keys)."""
    return tuple((key in labels) if key == HOSTNAME_KEY else labels.get(key) for key in keys)


def _value(value: str | bool | None) -> str:
    """A signature value as a domain value (a missing label is the empty value). O(1)."""
    return value if isinstance(value, str) else ""


def _missing(sig: Signature) -> bool:
    return any(v is None or v is False for v in sig)


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
    sigs: tuple[Signature, ...]
    names: tuple[tuple[str, ...], ...]
    group_of: Mapping[str, int]
    present: tuple[tuple[tuple[int, str | None], ...], ...]  # per group: (key index, value; None: hostname)
    by_zone: Mapping[ZoneKey | None, tuple[int, ...]]
    total: int
    zone_index: int | None  # the index of the ``topology.kubernetes.io/zone`` key, if it is one
    _domains: dict[bool, Domains] = field(default_factory=dict, compare=False, repr=False)

    def domains(self, require_all: bool) -> Domains:
        """The :class:`Domains` for ``require_all``, computed once. O(groups × keys) the first time, then O(1)."""
        found = self._domains.get(require_all)
        if found is not None:
            return found
        keys = self.keys
        ignored = tuple(require_all and _missing(sig) for sig in self.sigs)
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


def group_candidates(
    candidates: Iterable[Node], keys: tuple[str, ...], zone_of: Mapping[str, ZoneKey | None]
) -> CandidateGroups:
    """Group candidates by zone and signature. O(candidates × keys)."""
    groups: dict[GroupKey, list[str]] = {}
    total = 0
    for node in candidates:
        total += 1
        groups.setdefault((zone_of[node.name], signature(node.labels, keys)), []).append(node.name)
    group_of: dict[str, int] = {}
    by_zone: dict[ZoneKey | None, list[int]] = {}
    for g, ((zone, _), names) in enumerate(groups.items()):
        group_of.update(dict.fromkeys(names, g))
        by_zone.setdefault(zone, []).append(g)
    return CandidateGroups(
        keys,
        tuple(zone for zone, _ in groups),
        tuple(("", "") if zone is None else (zone[1], zone[0]) for zone, _ in groups),
        tuple(sig for _, sig in groups),
        tuple(tuple(sorted(names)) for names in groups.values()),
        group_of,
        tuple(_present(sig) for _, sig in groups),
        {zone: tuple(gs) for zone, gs in by_zone.items()},
        total,
        keys.index(GA_ZONE) if GA_ZONE in keys else None,
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
    raws: Sequence[Mapping[_Own, int | None]]  # per group: own counts -> raw score (None: ignored)
    busy_per_group: Sequence[int]  # per group: its busy candidates
    group_raw: Sequence[int | None]  # per group: the raw score of its empty candidates (None: ignored)
    min_raw: int
    max_raw: int

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
        return _raw(_present(sig), own, self.domains, self.weights, skews)


def _present(sig: Signature) -> tuple[tuple[int, str | None], ...]:
    """The keys a node with this signature has: (index, domain value; None for hostname). O(keys)."""
    return tuple((i, None if v is True else v) for i, v in enumerate(sig) if v is not None and v is not False)


def _raw(
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


def score_groups(
    plan: SpreadPlan,
    template: PodTemplate,
    groups: CandidateGroups,
    counts: Sequence[Mapping[str, int]],
    node_of: Mapping[str, Node],
    shared: bool = False,
) -> GroupScores:
    """PreScore, Score and NormalizeScore's min/max from sparse per-term counts over all nodes.

    ``groups`` must be grouped by ``tuple(t.topology_key for t in plan.terms)``; ``shared``: every term counts
    the same pods (``counts`` holds one map per term all the same), so a node's own counts are one number. A
    candidate's domain values are its group's, and its raw score depends only on its group and own counts
    (computed once per distinct pair). O(groups × terms + nodes with matching pods × terms)."""
    terms = plan.terms
    n_terms = len(terms)
    require_all = plan.require_all
    doms = groups.domains(require_all)
    group_of = groups.group_of
    n_groups = len(groups.sigs)
    busy_per_group = [0] * n_groups
    busy: Mapping[str, int]
    rows: Sequence[tuple[str, int, _Own]]
    if shared and terms:
        first = counts[0]
        get_group = group_of.get
        found = [(name, g, count) for name, count in first.items() if (g := get_group(name)) is not None]
        if len(found) == len(first):  # every node with matching pods is a candidate
            busy, outside = first, []
        else:
            busy = {name: count for name, _, count in found}
            outside = [(name, count) for name, count in first.items() if name not in group_of]
        group_pods = [0] * n_groups
        for _, g, count in found:
            busy_per_group[g] += 1
            group_pods[g] += count
        pods: Mapping[str, int] = busy
        rows = found
        per_term = [(group_pods, outside)] * n_terms
    else:
        union: dict[str, int] = {}
        for per_node in {id(c): c for c in counts}.values():
            union.update((name, 0) for name, count in per_node.items() if count > 0 and name in group_of)
        listed: list[tuple[str, int, _Own]] = []
        for name in union:
            own = tuple(c.get(name, 0) for c in counts)
            g = group_of[name]
            union[name] = own[0] if own else 0
            listed.append((name, g, own))
            busy_per_group[g] += 1
        busy, rows = union, listed
        pods = {name: count for name, count in union.items() if count > 0}
        per_term = [_split(c, group_of, n_groups) for c in counts]
        group_pods = per_term[0][0] if per_term else [0] * n_groups
    domains: list[Mapping[str, int]] = []
    for i, term in enumerate(terms):
        values = doms.values[i]
        if not values:
            domains.append({})
            continue
        domain = dict.fromkeys(values, 0)
        sums, outside = per_term[i]
        for g, value in enumerate(doms.group_values[i]):
            if value is not None and sums[g]:
                domain[value] += sums[g]
        if outside:
            _count_outside(domain, term, require_all, template, groups.keys, outside, node_of)
        domains.append(domain)
    weights = doms.weights
    skews = tuple(float(t.max_skew - 1) for t in terms)
    present, ignored, names = groups.present, doms.ignored, groups.names
    group_raw: list[int | None] = []
    valid: list[int] = []
    # _raw inline (this runs once per group and per distinct busy (group, own counts) of every report)
    for g in range(n_groups):
        if ignored[g]:
            group_raw.append(None)
            continue
        total = 0.0
        for i, value in present[g]:
            total += float(0 if value is None else domains[i][value]) * weights[i] + skews[i]
        raw = go_round(total)
        group_raw.append(raw)
        if len(names[g]) > busy_per_group[g]:
            valid.append(raw)
    raws: list[dict[_Own, int | None]] = [{} for _ in range(n_groups)]
    for _, g, key in rows:
        per = raws[g]
        if key in per:
            continue
        if ignored[g]:
            per[key] = None
            continue
        own = key if isinstance(key, tuple) else (key,) * n_terms
        total = 0.0
        for i, value in present[g]:
            total += float(own[i] if value is None else domains[i][value]) * weights[i] + skews[i]
        raw = per[key] = go_round(total)
        valid.append(raw)
    return GroupScores(
        plan,
        weights,
        doms.sizes,
        tuple(domains),
        doms.ignored_nodes,
        busy,
        pods,
        group_pods,
        rows,
        raws,
        busy_per_group,
        group_raw,
        min(valid, default=0),
        max(valid, default=0),
    )
