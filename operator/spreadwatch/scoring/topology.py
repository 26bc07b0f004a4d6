"""PodTopologySpread scoring (profile ``v1.29``: kube-scheduler v1.29 – v1.36): PreScore, Score, NormalizeScore.

Which constraints score (:func:`plan_spread`):

* the pod's own ``topologySpreadConstraints`` with ``whenUnsatisfiable: ScheduleAnyway`` (DoNotSchedule ones
  only filter). Each keeps its own selector, with ``matchLabelKeys`` ANDed in as ``key=<pod's value>`` for
  the keys the pod has (an absent ``labelSelector`` stays a selector of nothing). Nodes missing any of the
  constraints' topology keys are *ignored*: they score 0 and stay out of min/max;
* otherwise the default constraints (:data:`~spreadwatch.scoring.profiles.SYSTEM_DEFAULT_CONSTRAINTS`:
  hostname maxSkew 3, ``topology.kubernetes.io/zone`` maxSkew 5; or ``--scheduler-config``'s list), all
  with the pod's default selector (the v1.28 one). With ``defaultingType: System`` a node missing a key just
  gets no term for it; with ``List`` missing keys make it ignored as above.
* skipped (every node 0): no candidate node, constraints but none ScheduleAnyway (defaults are then not
  applied), no default constraints, or an empty default selector.

PreScore (:func:`prescore`): a non-hostname constraint's *domains* are the topology values of the
non-ignored candidates (a candidate missing the key under System defaults adds the value ``""``); each
domain counts the matching pods (same namespace, bound, not deleting, not terminal; an empty selector
counts none) on every node of the cluster that has the key (when keys are required), passes the
constraint's node-inclusion policies (nodeAffinityPolicy, default Honor: the pod's nodeSelector and
required node affinity; nodeTaintsPolicy, default Ignore) and whose value is a domain. The hostname
constraint counts only the node's own pods, at Score time, without inclusion policies. Weight of
constraint *i*: ``log(size_i + 2)`` (Go's ``math.Log``), size = number of domains, or of non-ignored
candidates for hostname.

Score: ``round(Σ_i count_i × weight_i + (maxSkew_i − 1))`` over the constraints whose key the node has,
summed in constraint order in float64, rounded half away from zero. NormalizeScore: with ``min``/``max``
over non-ignored candidates, ``100 × (max + min − s) // max`` (all 100 when ``max`` is 0).

minDomains does not change scores. Cost: O(candidates × constraints + nodes with matching pods ×
constraints) once the per-node counts are known; :func:`count_pods` builds those in O(pods × constraints).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from spreadwatch.errors import SelectorError
from spreadwatch.model import Node, Pod, PodTemplate, SpreadConstraint
from spreadwatch.scoring.candidates import has_untolerated_taint, node_affinity_matches
from spreadwatch.scoring.gomath import go_log, go_round
from spreadwatch.scoring.profiles import DefaultConstraints, Profile
from spreadwatch.scoring.selection import ClusterLookup, build_spread_selector
from spreadwatch.selectors import Selector, selector_from_set

__all__ = [
    "DO_NOT_SCHEDULE",
    "HOSTNAME_KEY",
    "MAX_NODE_SCORE",
    "SCHEDULE_ANYWAY",
    "SpreadPlan",
    "SpreadTerm",
    "TopologyScores",
    "TopologyState",
    "count_pods",
    "normalize",
    "plan_spread",
    "plan_with",
    "prescore",
    "resolve_terms",
    "score_topology",
]

HOSTNAME_KEY: Final = "kubernetes.io/hostname"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
MAX_NODE_SCORE: Final = 100
_HONOR: Final = "Honor"

SKIP_NO_NODES: Final = "no candidate nodes, so PodTopologySpread does not score"
SKIP_HARD_ONLY: Final = (
    "the pod's topologySpreadConstraints are all DoNotSchedule (filters only), so PodTopologySpread does not "
    "score it and no default constraints apply"
)
SKIP_NO_DEFAULTS: Final = "no default constraints are configured (defaultingType List with an empty list)"
SKIP_EMPTY_SELECTOR: Final = (
    "no Service, ReplicationController, ReplicaSet or StatefulSet selects the pod, so the default "
    "constraints have no selector and PodTopologySpread does not score it"
)


class SpreadTerm(NamedTuple):
    """One scoring constraint, resolved: its selector (with matchLabelKeys) and inclusion policies (a tuple:
    the index builds one per default constraint of every workload)."""

    topology_key: str
    max_skew: int
    selector: Selector
    honor_affinity: bool = True
    honor_taints: bool = False

    @property
    def hostname(self) -> bool:
        return self.topology_key == HOSTNAME_KEY

    def __str__(self) -> str:
        return f"{self.topology_key} maxSkew={self.max_skew} selector={self.selector or '<none>'}"


class SpreadPlan(NamedTuple):
    """The constraints that score a pod, or why none do (``skip_reason``); a tuple, like :class:`SpreadTerm`."""

    terms: tuple[SpreadTerm, ...]
    require_all: bool  # nodes missing a topology key are ignored (own constraints, List defaults)
    source: str  # "pod" or the defaults' source ("system defaults", "--scheduler-config FILE")
    skip_reason: str = ""
    selector: Selector | None = None  # the default selector (None for the pod's own constraints)

    @property
    def selector_text(self) -> str:
        """One selector string: the default selector, or the distinct constraint selectors joined by ``; ``."""
        if self.selector is not None:
            return str(self.selector)
        return "; ".join(dict.fromkeys(str(t.selector) for t in self.terms))


def _term(constraint: SpreadConstraint, pod_labels: Mapping[str, str], match_label_keys: bool) -> SpreadTerm:
    selector = constraint.selector
    if match_label_keys and constraint.match_label_keys:
        extra = {k: pod_labels[k] for k in constraint.match_label_keys if k in pod_labels}
        if extra and not selector.nothing:
            selector = selector_from_set(extra).add(*selector.requirements)
    return SpreadTerm(
        constraint.topology_key,
        constraint.max_skew,
        selector,
        (constraint.node_affinity_policy or _HONOR) == _HONOR,
        constraint.node_taints_policy == _HONOR,
    )


def resolve_terms(
    constraints: Iterable[SpreadConstraint], action: str, pod_labels: Mapping[str, str], match_label_keys: bool
) -> tuple[tuple[SpreadConstraint, SpreadTerm], ...]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, each with its resolved term (its selector with
    ``matchLabelKeys`` ANDed in as ``key=<the pod's value>``: ``filterTopologySpreadConstraints``). Raises
    SelectorError for one with an invalid labelSelector (kube-scheduler fails PreFilter/PreScore).
    O(constraints × matchLabelKeys)."""
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        if c.selector_error is not None:
            raise SelectorError(f"topologySpreadConstraints {c.topology_key}: {c.selector_error}")
        out.append((c, _term(c, pod_labels, match_label_keys)))
    return tuple(out)


def _soft_terms(
    constraints: Iterable[SpreadConstraint], pod_labels: Mapping[str, str], match_label_keys: bool
) -> tuple[SpreadTerm, ...]:
    return tuple(t for _, t in resolve_terms(constraints, SCHEDULE_ANYWAY, pod_labels, match_label_keys))


_DEFAULT_TERMS: dict[int, tuple[DefaultConstraints, tuple[SpreadTerm, ...]]] = {}


def _default_terms(defaults: DefaultConstraints) -> tuple[SpreadTerm, ...]:
    """The scoring terms of default constraints (they do not depend on the pod: no matchLabelKeys), computed
    once per ``DefaultConstraints`` object. O(constraints) the first time, then O(1)."""
    cached = _DEFAULT_TERMS.get(id(defaults))
    if cached is not None and cached[0] is defaults:
        return cached[1]
    terms = _soft_terms(defaults.constraints, {}, match_label_keys=False)
    _DEFAULT_TERMS[id(defaults)] = (defaults, terms)
    return terms


def plan_spread(pod: Pod, lookup: ClusterLookup, profile: Profile) -> SpreadPlan:
    """The scoring constraints of ``pod`` (see the module docstring). Raises SelectorError for a pod
    constraint with an invalid labelSelector (kube-scheduler fails PreScore). O(services + constraints)."""
    return plan_with(pod, profile, lambda: build_spread_selector(pod, lookup, profile).selectors[0])


_new_tuple = tuple.__new__  # NamedTuples from a tuple in C (their own __new__ is Python code): once per workload


def plan_with(pod: Pod, profile: Profile, default_selector: Callable[[], Selector]) -> SpreadPlan:
    """:func:`plan_spread` with the pod's default selector from ``default_selector`` (called only when the
    default constraints apply: the index builds it from its own structures). O(constraints) plus that call."""
    own = pod.template.spread_constraints
    if own:
        terms = _soft_terms(own, pod.labels, match_label_keys=True)
        return SpreadPlan(terms, True, "pod", "" if terms else SKIP_HARD_ONLY)
    defaults: DefaultConstraints = profile.default_constraints
    default_terms = _default_terms(defaults)
    if not default_terms:
        return SpreadPlan((), not defaults.system, defaults.source, SKIP_NO_DEFAULTS)
    selector = default_selector()
    if selector.empty:
        return SpreadPlan((), not defaults.system, defaults.source, SKIP_EMPTY_SELECTOR, selector)
    terms = tuple(
        [
            _new_tuple(SpreadTerm, (t.topology_key, t.max_skew, selector, t.honor_affinity, t.honor_taints))
            for t in default_terms
        ]
    )
    return _new_tuple(SpreadPlan, (terms, not defaults.system, defaults.source, "", selector))


def count_pods(terms: Sequence[SpreadTerm], namespace: str, pods: Iterable[Pod]) -> list[dict[str, int]]:
    """Per term, node name → matching counting pods of ``namespace`` (``countPodsMatchSelector``; an empty
    selector counts none). Sparse: only nodes with matching pods. O(pods × terms)."""
    counts: list[dict[str, int]] = [{} for _ in terms]
    live = [(i, t.selector) for i, t in enumerate(terms) if not t.selector.empty]
    for pod in pods:
        if pod.namespace != namespace or not pod.counts:
            continue
        for i, selector in live:
            if selector.matches(pod.labels):
                per_node = counts[i]
                per_node[pod.node_name] = per_node.get(pod.node_name, 0) + 1
    return counts


def _has_keys(labels: Mapping[str, str], terms: Sequence[SpreadTerm]) -> bool:
    return all(t.topology_key in labels for t in terms)


@dataclass(frozen=True, slots=True)
class TopologyState:
    """PreScore's result: ignored candidates, per-term domain pod counts, sizes and weights."""

    plan: SpreadPlan
    ignored: frozenset[str]
    domains: tuple[Mapping[str, int], ...]  # per term: topology value -> matching pods (empty for hostname)
    sizes: tuple[int, ...]
    weights: tuple[float, ...]

    def term_counts(self, node: Node, own: Sequence[int]) -> list[int | None]:
        """Per term, the count the node is charged (None: the node lacks the key, no term). O(terms)."""
        out: list[int | None] = []
        for i, term in enumerate(self.plan.terms):
            value = node.labels.get(term.topology_key)
            if value is None:
                out.append(None)
            elif term.hostname:
                out.append(own[i])
            else:
                out.append(self.domains[i][value])
        return out

    def raw_sum(self, node: Node, own: Sequence[int]) -> float:
        """Score's float sum before rounding, in constraint order (``own``: the node's matching pods per term)."""
        total = 0.0
        for i, count in enumerate(self.term_counts(node, own)):
            if count is not None:
                total += float(count) * self.weights[i] + float(self.plan.terms[i].max_skew - 1)
        return total

    def raw_score(self, node: Node, own: Sequence[int]) -> int | None:
        """Score's integer for a candidate; None for an ignored one. O(terms)."""
        if node.name in self.ignored:
            return None
        return go_round(self.raw_sum(node, own))


def prescore(
    plan: SpreadPlan,
    template: PodTemplate,
    candidates: Iterable[Node],
    counts: Sequence[Mapping[str, int]],
    node_of: Mapping[str, Node],
) -> TopologyState:
    """PreScore from the candidates and per-term sparse node → matching-pod counts over *all* nodes
    (``node_of`` resolves their names; unknown names are skipped). O(candidates × terms + busy nodes × terms)."""
    terms = plan.terms
    domains: list[dict[str, int]] = [{} for _ in terms]
    ignored: set[str] = set()
    total = 0
    for node in candidates:
        total += 1
        labels = node.labels
        if plan.require_all and not _has_keys(labels, terms):
            ignored.add(node.name)
            continue
        for i, term in enumerate(terms):
            if not term.hostname:
                domains[i].setdefault(labels.get(term.topology_key, ""), 0)
    for i, term in enumerate(terms):
        if term.hostname or not domains[i]:
            continue
        domain = domains[i]
        for name, count in counts[i].items():
            holder = node_of.get(name)
            if holder is None:
                continue
            labels = holder.labels
            if plan.require_all and not _has_keys(labels, terms):
                continue
            if term.honor_affinity and not node_affinity_matches(holder, template):
                continue
            if term.honor_taints and has_untolerated_taint(holder, template):
                continue
            value = labels.get(term.topology_key, "")
            if value in domain:
                domain[value] += count
    sizes = tuple(total - len(ignored) if t.hostname else len(domains[i]) for i, t in enumerate(terms))
    weights = tuple(go_log(float(size + 2)) for size in sizes)
    return TopologyState(plan, frozenset(ignored), tuple(domains), sizes, weights)


def normalize(raw: Mapping[str, int | None]) -> tuple[dict[str, int], int, int]:
    """NormalizeScore: ``(scores, min, max)``; None (ignored) scores 0 and stays out of min/max. O(nodes)."""
    valid = [s for s in raw.values() if s is not None]
    low = min(valid, default=0)
    high = max(valid, default=0)
    out: dict[str, int] = {}
    for name, s in raw.items():
        if s is None:
            out[name] = 0
        elif high == 0:
            out[name] = MAX_NODE_SCORE
        else:
            out[name] = MAX_NODE_SCORE * (high + low - s) // high
    return out, low, high


@dataclass(frozen=True, slots=True)
class TopologyScores:
    """One pod scored by PodTopologySpread, in candidate order (``state`` None when skipped)."""

    plan: SpreadPlan
    state: TopologyState | None
    own: Mapping[str, tuple[int, ...]]  # candidate -> its own matching pods per term
    raw: Mapping[str, int | None]
    scores: Mapping[str, int]
    min_raw: int
    max_raw: int

    @property
    def skipped(self) -> bool:
        return self.state is None


def score_topology(
    pod: Pod,
    candidates: Sequence[Node],
    all_nodes: Iterable[Node],
    pods: Iterable[Pod],
    lookup: ClusterLookup,
    profile: Profile,
) -> TopologyScores:
    """PreScore, Score and NormalizeScore of ``pod`` on ``candidates`` (scores 0–100 before the framework's
    plugin weight). O(pods × constraints + nodes + candidates × constraints)."""
    plan = plan_spread(pod, lookup, profile)
    if not candidates and not plan.skip_reason:
        plan = SpreadPlan(plan.terms, plan.require_all, plan.source, SKIP_NO_NODES, plan.selector)
    if plan.skip_reason:
        zero = dict.fromkeys((n.name for n in candidates), 0)
        return TopologyScores(plan, None, {}, dict.fromkeys(zero), zero, 0, 0)
    counts = count_pods(plan.terms, pod.namespace, pods)
    node_of = {n.name: n for n in all_nodes}
    for n in candidates:
        node_of.setdefault(n.name, n)
    state = prescore(plan, pod.template, candidates, counts, node_of)
    own = {n.name: tuple(c.get(n.name, 0) for c in counts) for n in candidates}
    raw = {n.name: state.raw_score(n, own[n.name]) for n in candidates}
    scores, low, high = normalize(raw)
    return TopologyScores(plan, state, own, raw, scores, low, high)
