"""InterPodAffinity's filter and score, integer for integer (``pkg/scheduler/framework/plugins/interpodaffinity``,
v1.36.4: ``filtering.go``, ``scoring.go``; terms as ``framework.NewPodInfo`` builds them).

**Terms.** An existing pod's terms are used as stored (the API server merged their ``matchLabelKeys`` into
the selector when it created the pod); the incoming pod's get them merged from its own labels
(:func:`incoming_terms`). A term selects a pod when the pod's namespace is one of the term's (no namespaces
and no namespace selector: the term's own pod's namespace) or its namespace's labels match the namespace
selector, and the pod's labels match the label selector. For the incoming pod's terms kube-scheduler first
turns a non-empty namespace selector into the names of the Namespaces that match it
(``mergeAffinityTermNamespacesIfNotEmpty``); an empty one (``{}``) selects every namespace.

**Filter** (PreFilter counts over the pods of every node, the cache's: bound, not terminal, deleting ones
included): the incoming pod's required affinity (every term's topology domain must hold a pod matching all
its terms, unless no pod matches and the pod matches its own terms), its required anti-affinity, and the
existing pods' required anti-affinity against it.

**Score** (PreScore): a per-topology-pair sum of the incoming pod's preferred terms (± weight for each
existing pod they select), and of the existing pods' required affinity (× ``hardPodAffinityWeight``) and
preferred terms that select the incoming pod; a node scores the sum over its pairs; NormalizeScore maps
[min, max] over the scored nodes to [0, 100] in float64, truncated. Skipped (PreScore) when no term matched
anywhere, or with ``ignorePreferredTermsOfExistingPods`` and no preferred term of its own. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple

from spreadwatch.model import Pod, PodAffinityTerm, PodTemplate, WeightedPodAffinityTerm
from spreadwatch.selectors import NOTHING, Operator, Requirement, Selector

__all__ = [
    "INTER_POD_AFFINITY",
    "AffinityFilter",
    "AffinityTerm",
    "IncomingTerms",
    "PodOnNode",
    "affinity_filter",
    "affinity_raw_scores",
    "incoming_terms",
    "node_raw_score",
    "normalize_min_max",
    "term_of",
]

INTER_POD_AFFINITY: Final = "InterPodAffinity"


class PodOnNode(NamedTuple):
    """An existing pod as the plugin sees it: the pod and its node's labels."""

    pod: Pod
    node_labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A term ready to match pods (``framework.AffinityTerm``): ``namespace_selector`` NOTHING when none."""

    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector
    topology_key: str
    weight: int = 0

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is selected (by name, or its labels by the namespace
        selector; unknown labels match as an empty set) and its labels match. O(requirements)."""
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(labels)
        return False


def term_of(term: PodAffinityTerm, namespace: str, weight: int = 0) -> AffinityTerm:
    """``newAffinityTerm`` of a pod in ``namespace``: no namespaces and no namespace selector mean the pod's
    own namespace. O(1)."""
    names = frozenset(term.namespaces or ((namespace,) if term.namespace_selector is None else ()))
    ns_selector = NOTHING if term.namespace_selector is None else term.namespace_selector
    return AffinityTerm(term.selector, names, ns_selector, term.topology_key, weight)


def _with_label_keys(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    """The API server's ``applyMatchLabelKeysAndMismatchLabelKeys`` at pod creation: ``key in (value)`` for
    each matchLabelKeys key the pod has, ``key notin (value)`` for mismatchLabelKeys; none on a nil selector."""
    if not (term.match_label_keys or term.mismatch_label_keys) or term.selector.nothing:
        return term
    extra = [Requirement(k, Operator.IN, (labels[k],)) for k in term.match_label_keys if k in labels]
    extra += [Requirement(k, Operator.NOT_IN, (labels[k],)) for k in term.mismatch_label_keys if k in labels]
    if not extra:
        return term
    return PodAffinityTerm(term.selector.add(*extra), term.topology_key, term.namespaces, term.namespace_selector)


@dataclass(frozen=True, slots=True)
class IncomingTerms:
    """The incoming pod's terms, namespaces resolved against the cluster's Namespaces."""

    required: tuple[AffinityTerm, ...]
    required_anti: tuple[AffinityTerm, ...]
    preferred: tuple[AffinityTerm, ...]
    preferred_anti: tuple[AffinityTerm, ...]

    @property
    def has_preferred(self) -> bool:
        return bool(self.preferred or self.preferred_anti)


def _resolved(term: AffinityTerm, namespaces: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
    """``mergeAffinityTermNamespacesIfNotEmpty``: a non-empty namespace selector becomes the names of the
    Namespaces it matches (then selects nothing by itself); an empty one stays (every namespace)."""
    selector = term.namespace_selector
    if selector.empty or selector.nothing:
        return term
    names = term.namespaces | {name for name, labels in namespaces.items() if selector.matches(labels)}
    return AffinityTerm(term.selector, frozenset(names), NOTHING, term.topology_key, term.weight)


def incoming_terms(
    pod: Pod, namespaces: Mapping[str, Mapping[str, str]], template: PodTemplate | None = None
) -> IncomingTerms:
    """The incoming pod's terms (``template``: its scheduling fields, default the pod's), with its labels'
    matchLabelKeys merged and namespace selectors resolved over ``namespaces`` (name → labels of every
    Namespace). O(terms × namespaces)."""
    t = template or pod.template
    ns, labels = pod.namespace, pod.labels

    def plain(terms: Iterable[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        return tuple(_resolved(term_of(_with_label_keys(x, labels), ns), namespaces) for x in terms)

    def weighted(terms: Iterable[WeightedPodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        return tuple(
            _resolved(term_of(_with_label_keys(x.term, labels), ns, x.weight), namespaces) for x in terms
        )

    return IncomingTerms(
        plain(t.required_affinity),
        plain(t.required_anti_affinity),
        weighted(t.preferred_affinity),
        weighted(t.preferred_anti_affinity),
    )


def _count(counts: dict[tuple[str, str], int], labels: Mapping[str, str], key: str) -> None:
    value = labels.get(key)
    if value is not None:
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + 1


@dataclass(frozen=True, slots=True)
class AffinityFilter:
    """InterPodAffinity's PreFilter state; ``skip``: nothing to check (every node passes)."""

    terms: IncomingTerms
    existing_anti: Mapping[tuple[str, str], int]
    affinity: Mapping[tuple[str, str], int]
    anti: Mapping[tuple[str, str], int]
    self_match: bool  # the pod matches all its own required affinity terms

    @property
    def skip(self) -> bool:
        return not self.existing_anti and not self.terms.required and not self.terms.required_anti

    def passes(self, labels: Mapping[str, str]) -> bool:
        """The Filter for a node with these labels. O(terms + labels)."""
        if self.skip:
            return True
        pods_exist = True
        for term in self.terms.required:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        if not pods_exist and not (not self.affinity and self.self_match):
            return False
        if self.anti:
            for term in self.terms.required_anti:
                value = labels.get(term.topology_key)
                if value is not None and self.anti.get((term.topology_key, value), 0) > 0:
                    return False
        return not (self.existing_anti and any(self.existing_anti.get(item, 0) > 0 for item in labels.items()))


def affinity_filter(
    pod: Pod,
    terms: IncomingTerms,
    existing: Iterable[PodOnNode],
    ns_labels: Mapping[str, str] | None,
) -> AffinityFilter:
    """InterPodAffinity's PreFilter over the existing pods (every node's). O(pods × terms)."""
    existing_anti: dict[tuple[str, str], int] = {}
    affinity: dict[tuple[str, str], int] = {}
    anti: dict[tuple[str, str], int] = {}
    for e in existing:
        p = e.pod
        for raw in p.template.required_anti_affinity:
            term = term_of(raw, p.namespace)
            if term.matches(pod.namespace, pod.labels, ns_labels):
                _count(existing_anti, e.node_labels, term.topology_key)
        if terms.required and all(t.matches(p.namespace, p.labels, None) for t in terms.required):
            for mine in terms.required:
                _count(affinity, e.node_labels, mine.topology_key)
        for mine in terms.required_anti:
            if mine.matches(p.namespace, p.labels, None):
                _count(anti, e.node_labels, mine.topology_key)
    self_match = bool(terms.required) and all(t.matches(pod.namespace, pod.labels, None) for t in terms.required)
    return AffinityFilter(terms, existing_anti, affinity, anti, self_match)


def _add(scores: dict[str, dict[str, int]], key: str, labels: Mapping[str, str], amount: int) -> None:
    value = labels.get(key)
    if value is not None:
        by_value = scores.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + amount


def affinity_raw_scores(
    pod: Pod,
    terms: IncomingTerms,
    existing: Iterable[PodOnNode],
    ns_labels: Mapping[str, str] | None,
    hard_weight: int = 1,
    ignore_existing_preferred: bool = False,
) -> dict[str, dict[str, int]] | None:
    """InterPodAffinity's PreScore: topology key → value → summed weight; None when it skips.
    O(pods × terms)."""
    if ignore_existing_preferred and not terms.has_preferred:
        return None
    scores: dict[str, dict[str, int]] = {}
    for e in existing:
        p, labels = e.pod, e.node_labels
        if not labels or not (terms.has_preferred or p.template.has_pod_affinity):
            continue
        for t in terms.preferred:
            if t.matches(p.namespace, p.labels, None):
                _add(scores, t.topology_key, labels, t.weight)
        for t in terms.preferred_anti:
            if t.matches(p.namespace, p.labels, None):
                _add(scores, t.topology_key, labels, -t.weight)
        if hard_weight > 0:
            for x in p.template.required_affinity:
                term = term_of(x, p.namespace)
                if term.matches(pod.namespace, pod.labels, ns_labels):
                    _add(scores, term.topology_key, labels, hard_weight)
        for sign, listed in ((1, p.template.preferred_affinity), (-1, p.template.preferred_anti_affinity)):
            for w in listed:
                term = term_of(w.term, p.namespace, w.weight)
                if term.matches(pod.namespace, pod.labels, ns_labels):
                    _add(scores, term.topology_key, labels, sign * w.weight)
    return scores or None


def node_raw_score(scores: Mapping[str, Mapping[str, int]], labels: Mapping[str, str]) -> int:
    """A node's raw InterPodAffinity score: the sums of the pairs its labels have. O(keys)."""
    return sum(by_value.get(labels[key], 0) for key, by_value in scores.items() if key in labels)


def normalize_min_max(raw: Mapping[str, int]) -> dict[str, int]:
    """InterPodAffinity's NormalizeScore: ``int64(100 × (s − min) / (max − min))`` in float64, all 0 when
    max = min. O(nodes)."""
    if not raw:
        return {}
    low, high = min(raw.values()), max(raw.values())
    spread = high - low
    if spread <= 0:
        return dict.fromkeys(raw, 0)
    return {node: int(100.0 * (float(score - low) / float(spread))) for node, score in raw.items()}

