"""PodTopologySpread scores from sparse state, for the incremental index and the reports.

Candidates are grouped by (zone key, *signature*): per constraint key, the node's label value (None when
missing), and for ``kubernetes.io/hostname`` only whether the label is there. Every empty candidate node
(no matching pod of any constraint) of one group has the same raw score, so a workload's scores need
O(groups + nodes with matching pods) work instead of O(candidates). The arithmetic is
:mod:`spreadwatch.scoring.topology`'s, step for step (the index's property test compares the two paths).

:func:`group_candidates` costs O(candidates × keys) and is cached by the index per candidate set and key
tuple; :func:`score_groups` costs O(groups × constraints + nodes with matching pods × constraints).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from spreadwatch.model import Node, PodTemplate
from spreadwatch.scoring.candidates import has_untolerated_taint, node_affinity_matches
from spreadwatch.scoring.gomath import go_log, go_round
from spreadwatch.scoring.topology import HOSTNAME_KEY, MAX_NODE_SCORE, SpreadPlan
from spreadwatch.scoring.zones import ZoneKey

__all__ = ["CandidateGroups", "GroupKey", "GroupScores", "Signature", "group_candidates", "score_groups", "signature"]

Signature = tuple[str | bool | None, ...]
GroupKey = tuple[ZoneKey | None, Signature]


def signature(labels: Mapping[str, str], keys: Sequence[str]) -> Signature:
    """Per key the label value (None: missing); for the hostname key only whether it is present. O(keys)."""
    return tuple((key in labels) if key == HOSTNAME_KEY else labels.get(key) for key in keys)


@dataclass(frozen=True, slots=True)
class CandidateGroups:
    """Candidate nodes by (zone, signature) for one tuple of topology keys; names sorted per group."""

    keys: tuple[str, ...]
    groups: Mapping[GroupKey, tuple[str, ...]]
    total: int


def group_candidates(
    candidates: Iterable[Node], keys: tuple[str, ...], zone_of: Mapping[str, ZoneKey | None]
) -> CandidateGroups:
    """Group candidates by zone and signature. O(candidates × keys)."""
    groups: dict[GroupKey, list[str]] = {}
    total = 0
    for node in candidates:
        total += 1
        groups.setdefault((zone_of[node.name], signature(node.labels, keys)), []).append(node.name)
    return CandidateGroups(keys, {k: tuple(sorted(v)) for k, v in groups.items()}, total)


def _missing(sig: Signature) -> bool:
    return any(v is None or v is False for v in sig)


@dataclass(frozen=True, slots=True)
class GroupScores:
    """One workload's PodTopologySpread scores: per busy candidate and per group of empty candidates."""

    plan: SpreadPlan
    weights: tuple[float, ...]
    sizes: tuple[int, ...]
    domains: tuple[Mapping[str, int], ...]
    ignored: int  # candidates left out (missing keys)
    busy_raw: Mapping[str, int | None]  # candidate with matching pods -> raw score (None: ignored)
    busy_groups: Mapping[str, GroupKey]  # candidate with matching pods -> its group
    group_raw: Mapping[GroupKey, int | None]  # empty candidates of a group -> raw score
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
        total = 0.0
        weights, domains = self.weights, self.domains
        for i, term in enumerate(self.plan.terms):
            value = sig[i]
            if value is None or value is False:
                continue
            count = own[i] if term.hostname else domains[i][str(value)]
            total += float(count) * weights[i] + float(term.max_skew - 1)
        return go_round(total)


def score_groups(
    plan: SpreadPlan,
    template: PodTemplate,
    groups: CandidateGroups,
    candidate_names: frozenset[str],
    counts: Sequence[Mapping[str, int]],
    node_of: Mapping[str, Node],
    zone_of: Mapping[str, ZoneKey | None],
    signatures: dict[str, Signature] | None = None,
) -> GroupScores:
    """PreScore, Score and NormalizeScore's min/max from sparse per-term counts over all nodes.

    ``groups`` must be grouped by ``tuple(t.topology_key for t in plan.terms)``; ``signatures`` (optional)
    memoises node signatures for these keys across calls (the caller drops it when a node changes).
    O(groups × terms + nodes with matching pods × terms)."""
    terms = plan.terms
    require_all = plan.require_all
    domains: list[dict[str, int]] = [{} for _ in terms]
    ignored = 0
    for (_, sig), names in groups.groups.items():
        if require_all and _missing(sig):
            ignored += len(names)
            continue
        for i, term in enumerate(terms):
            if not term.hostname:
                value = sig[i]
                domains[i].setdefault(value if isinstance(value, str) else "", 0)
    keys = groups.keys
    any_affinity = bool(template.node_selector) or template.required_terms is not None
    for i, term in enumerate(terms):
        if term.hostname or not domains[i]:
            continue
        domain = domains[i]
        topology_key = term.topology_key
        check_affinity = term.honor_affinity and any_affinity
        for name, count in counts[i].items():
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
    sizes = tuple(groups.total - ignored if t.hostname else len(domains[i]) for i, t in enumerate(terms))
    weights = tuple(go_log(float(size + 2)) for size in sizes)
    partial = GroupScores(plan, weights, sizes, tuple(domains), ignored, {}, {}, {}, 0, 0)
    distinct = list({id(c): c for c in counts}.values())  # the terms often share one count map
    busy: set[str] = set()
    for per_node in distinct:
        busy.update(candidate_names.intersection(per_node))
    shared = len(distinct) == 1 and len(terms) > 0  # every term counts the same pods: own = (count,) * terms
    n_terms = len(terms)
    zero = (0,) * n_terms
    busy_raw: dict[str, int | None] = {}
    busy_groups: dict[str, GroupKey] = {}
    busy_per_group: dict[GroupKey, int] = {}
    memo: dict[tuple[Signature, tuple[int, ...]], int | None] = {}
    cache: dict[str, Signature] = {} if signatures is None else signatures
    first = distinct[0] if shared else {}
    for name in busy:
        node_sig = cache.get(name)
        if node_sig is None:
            node_sig = cache[name] = signature(node_of[name].labels, keys)
        own = (first.get(name, 0),) * n_terms if shared else tuple(c.get(name, 0) for c in counts)
        memo_key = (node_sig, own)
        if memo_key in memo:
            raw = memo[memo_key]
        else:
            raw = memo[memo_key] = partial.raw(node_sig, own)
        busy_raw[name] = raw
        key = (zone_of[name], node_sig)
        busy_groups[name] = key
        busy_per_group[key] = busy_per_group.get(key, 0) + 1
    group_raw: dict[GroupKey, int | None] = {}
    valid: list[int] = [r for r in busy_raw.values() if r is not None]
    for key, names in groups.groups.items():
        raw = partial.raw(key[1], zero)
        group_raw[key] = raw
        if raw is not None and len(names) > busy_per_group.get(key, 0):
            valid.append(raw)
    return GroupScores(
        plan,
        weights,
        sizes,
        tuple(domains),
        ignored,
        busy_raw,
        busy_groups,
        group_raw,
        min(valid, default=0),
        max(valid, default=0),
    )
