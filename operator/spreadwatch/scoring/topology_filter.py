"""PodTopologySpread's Filter (profile ``v1.29``: kube-scheduler v1.29 – v1.36): ``DoNotSchedule`` constraints.

Which constraints filter (:func:`plan_filter`, ``getConstraints``): the pod's own ``DoNotSchedule`` constraints,
each with its own selector and ``matchLabelKeys`` (as for scoring); for a pod without constraints, the
``DoNotSchedule`` default constraints (``--scheduler-config`` ``List`` defaults; the system defaults have none)
with the pod's default selector, none when that selector is empty. No constraint: PreFilter skips and every
node passes.

PreFilter (:func:`prefilter`, ``calPreFilterState``): a constraint's *domains* are the values of its key on
the nodes of the whole cluster — candidates or not, cordoned and tainted ones included — that carry **every**
hard constraint's key and pass that constraint's node inclusion policies (``nodeAffinityPolicy``, default
Honor: the pod's nodeSelector and required node affinity; ``nodeTaintsPolicy``, default Ignore). Each domain
counts the matching pods on those nodes (same namespace, bound, not being deleted, not terminal; an empty
selector counts none). The *global minimum* is the smallest domain count, or 0 when the constraint has fewer
domains than ``minDomains`` (default 1).

Filter (:func:`filter_node`): a node missing any hard constraint's key is rejected
(UnschedulableAndUnresolvable, "missing required label"); otherwise, constraint by constraint,
``count(the node's domain) + selfMatch − minimum`` must not exceed ``maxSkew`` (selfMatch: 1 when the
constraint's selector matches the pod's own labels; a value that is no domain counts 0).

Because ``maxSkew ≥ 1`` and the minimum is 0 whenever a domain has no pod, a domain without matching pods
always passes: only domains with pods are ever rejected. The incremental index relies on it: from the
domains of each constraint (:class:`DomainTable`, once per node change) and the sparse per-node pod counts,
:func:`sparse_prefilter` builds the same state in O(nodes with matching pods × constraints).

:func:`check_constraints` refuses what the API server's validation would (one clear reason, a
:class:`~spreadwatch.errors.ConstraintError`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from spreadwatch.errors import ConstraintError
from spreadwatch.model import Node, Pod, PodTemplate, SpreadConstraint
from spreadwatch.scoring.candidates import has_untolerated_taint, node_affinity_matches
from spreadwatch.scoring.profiles import DefaultConstraints, Profile
from spreadwatch.scoring.topology import DO_NOT_SCHEDULE, HOSTNAME_KEY, SCHEDULE_ANYWAY, resolve_terms
from spreadwatch.selectors import Selector

__all__ = [
    "DO_NOT_SCHEDULE",
    "MISSING_LABEL",
    "NOT_MATCH",
    "REASON_POD_TOPOLOGY_SPREAD",
    "Compliance",
    "DomainTable",
    "FilterPlan",
    "FilterState",
    "HardTerm",
    "TermState",
    "check_constraints",
    "compliance",
    "domain_table",
    "filter_node",
    "plan_filter",
    "prefilter",
    "rejected_values",
    "sparse_prefilter",
    "term_state",
]

#: the ``excludedNodes`` reason of a node this Filter rejects
REASON_POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
#: kube-scheduler's reasons (ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch)
NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL: Final = NOT_MATCH + " (missing required label)"
_HONOR: Final = "Honor"
_POLICIES: Final = ("", "Honor", "Ignore")
_ACTIONS: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)


class HardTerm(NamedTuple):
    """One DoNotSchedule constraint, resolved (selector with matchLabelKeys, API defaults applied)."""

    topology_key: str
    max_skew: int
    selector: Selector
    min_domains: int  # 1 when unset
    honor_affinity: bool  # nodeAffinityPolicy Honor (the default)
    honor_taints: bool  # nodeTaintsPolicy Honor (default Ignore)
    self_match: int  # 1 when the selector matches the incoming pod's labels, else 0

    def __str__(self) -> str:
        return f"{self.topology_key} maxSkew={self.max_skew} minDomains={self.min_domains}"


class FilterPlan(NamedTuple):
    """The constraints that filter a pod: its own DoNotSchedule ones, or the defaults' (``source``)."""

    terms: tuple[HardTerm, ...]
    source: str  # "pod" or the defaults' source

    @property
    def keys(self) -> tuple[str, ...]:
        """The distinct topology keys, in constraint order (a node must carry all of them). O(terms)."""
        return tuple(dict.fromkeys(t.topology_key for t in self.terms))


def check_constraints(constraints: Sequence[SpreadConstraint]) -> None:
    """Raise ConstraintError for the first constraint the API server's validation refuses
    (``ValidateTopologySpreadConstraints``): maxSkew < 1, an unknown whenUnsatisfiable, minDomains < 1 or
    set on a ScheduleAnyway constraint, an unknown nodeAffinityPolicy/nodeTaintsPolicy, an empty topologyKey.
    O(constraints)."""
    for i, c in enumerate(constraints):
        where = f"topologySpreadConstraints[{i}] ({c.topology_key or 'no topologyKey'})"
        if not c.topology_key:
            raise ConstraintError(f"{where}: topologyKey is required")
        if c.max_skew < 1:
            raise ConstraintError(f"{where}: maxSkew must be greater than 0, got {c.max_skew}")
        if c.when_unsatisfiable not in _ACTIONS:
            raise ConstraintError(
                f"{where}: whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway, got {c.when_unsatisfiable!r}"
            )
        if c.min_domains is not None:
            if c.when_unsatisfiable != DO_NOT_SCHEDULE:
                raise ConstraintError(f"{where}: minDomains can only be set with whenUnsatisfiable DoNotSchedule")
            if c.min_domains < 1:
                raise ConstraintError(f"{where}: minDomains must be greater than 0, got {c.min_domains}")
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy not in _POLICIES:
                raise ConstraintError(f"{where}: {name} must be Honor or Ignore, got {policy!r}")


_HARD_DEFAULTS: dict[int, tuple[DefaultConstraints, bool]] = {}


def _hard_defaults(defaults: DefaultConstraints) -> bool:
    """Whether default constraints hold a DoNotSchedule one, found once per ``DefaultConstraints`` object (the
    index asks for every workload without constraints of its own). O(constraints) the first time, then O(1)."""
    cached = _HARD_DEFAULTS.get(id(defaults))
    if cached is None or cached[0] is not defaults:
        cached = _HARD_DEFAULTS[id(defaults)] = (
            defaults,
            any(c.when_unsatisfiable == DO_NOT_SCHEDULE for c in defaults.constraints),
        )
    return cached[1]


def plan_filter(pod: Pod, profile: Profile, default_selector: Callable[[], Selector]) -> FilterPlan | None:
    """The pod's hard constraints (see the module docstring), or None when PreFilter skips. Raises
    SelectorError for a DoNotSchedule constraint with an invalid labelSelector. ``default_selector`` is called
    only when DoNotSchedule default constraints apply. O(constraints)."""
    own = pod.template.spread_constraints
    if own:
        resolved = resolve_terms(own, DO_NOT_SCHEDULE, pod.labels, match_label_keys=True)
        source = "pod"
    else:
        defaults = profile.default_constraints
        if not _hard_defaults(defaults):
            return None
        selector = default_selector()
        if selector.empty:
            return None
        resolved = tuple(
            (c, t._replace(selector=selector))
            for c, t in resolve_terms(defaults.constraints, DO_NOT_SCHEDULE, {}, match_label_keys=False)
        )
        source = defaults.source
    if not resolved:
        return None
    labels = pod.labels
    terms = tuple(
        HardTerm(
            t.topology_key,
            t.max_skew,
            t.selector,
            c.min_domains if c.min_domains is not None else 1,
            t.honor_affinity,
            t.honor_taints,
            1 if t.selector.matches(labels) else 0,
        )
        for c, t in resolved
    )
    return FilterPlan(terms, source)


class TermState(NamedTuple):
    """PreFilter's result for one constraint: its domains' pod counts and the minimum the skew subtracts."""

    counts: Mapping[str, int]  # domain value -> matching pods (a domain without pods may be left out)
    domains: int  # eligible domains
    minimum: int  # the global minimum (0 when fewer domains than minDomains)
    highest: int  # the most pods of a domain (0 without domains)

    def count(self, value: str) -> int:
        """The matching pods of a domain (0 for a value that is no domain, as Go's map lookup gives). O(1)."""
        return self.counts.get(value, 0)


def term_state(term: HardTerm, counts: Mapping[str, int], domains: int) -> TermState:
    """A :class:`TermState` from the domain counts (``counts`` holds every domain with pods, and perhaps some
    without) and the number of domains: ``minMatchNum``. O(len(counts))."""
    # 0 with fewer domains than minDomains, or when a domain without an entry holds no pod
    minimum = 0 if domains < term.min_domains or len(counts) < domains else min(counts.values(), default=0)
    return TermState(counts, domains, minimum, max(counts.values(), default=0))


class FilterState(NamedTuple):
    """PreFilter's state (``preFilterState``): the plan and, per constraint, its :class:`TermState`."""

    plan: FilterPlan
    terms: tuple[TermState, ...]

    def skew(self, i: int, value: str) -> int:
        """``count + selfMatch − minimum`` of constraint ``i`` for a node in domain ``value``. O(1)."""
        state = self.terms[i]
        return state.count(value) + self.plan.terms[i].self_match - state.minimum


def _eligible(node: Node, keys: Sequence[str], term: HardTerm, template: PodTemplate) -> bool:
    """Whether the node's pods count for ``term``: it has every hard key and passes the term's node inclusion
    policies (``matchNodeInclusionPolicies``). O(keys + affinity terms + taints)."""
    labels = node.labels
    if not all(k in labels for k in keys):
        return False
    if term.honor_affinity and not node_affinity_matches(node, template):
        return False
    return not (term.honor_taints and has_untolerated_taint(node, template))


def prefilter(
    plan: FilterPlan, template: PodTemplate, nodes: Iterable[Node], pods: Iterable[Pod], namespace: str
) -> FilterState:
    """PreFilter over every node of the cluster and its pods (the reference path). O(nodes × constraints +
    pods × constraints)."""
    keys = plan.keys
    node_list = list(nodes)
    values: list[dict[str, str]] = []  # per term: eligible node -> its domain
    for term in plan.terms:
        values.append({n.name: n.labels[term.topology_key] for n in node_list if _eligible(n, keys, term, template)})
    per_node: list[dict[str, int]] = [{} for _ in plan.terms]
    for pod in pods:
        if pod.namespace != namespace or not pod.counts:
            continue
        for i, term in enumerate(plan.terms):
            if not term.selector.empty and term.selector.matches(pod.labels):
                per_node[i][pod.node_name] = per_node[i].get(pod.node_name, 0) + 1
    states = []
    for i, term in enumerate(plan.terms):
        counts = dict.fromkeys(values[i].values(), 0)
        for name, count in per_node[i].items():
            value = values[i].get(name)
            if value is not None:
                counts[value] += count
        states.append(term_state(term, counts, len(counts)))
    return FilterState(plan, tuple(states))


def filter_node(state: FilterState, node: Node) -> str | None:
    """Filter: None when the node passes, else kube-scheduler's reason (:data:`MISSING_LABEL`,
    :data:`NOT_MATCH`). O(constraints)."""
    labels = node.labels
    for i, term in enumerate(state.plan.terms):
        value = labels.get(term.topology_key)
        if value is None:
            return MISSING_LABEL
        if state.skew(i, value) > term.max_skew:
            return NOT_MATCH
    return None


def rejected_values(state: FilterState) -> tuple[frozenset[str], ...]:
    """Per constraint, the domains whose nodes the Filter rejects on that constraint (only domains with pods
    can be: see the module docstring). O(domains with pods)."""
    out = []
    for i, term in enumerate(state.plan.terms):
        t = state.terms[i]
        limit = term.max_skew + t.minimum - term.self_match  # a domain with more pods than this is rejected
        out.append(frozenset(v for v, c in t.counts.items() if c > limit))
    return tuple(out)


class DomainTable(NamedTuple):
    """One constraint's eligible nodes and their domains, for :func:`sparse_prefilter` (what depends only on
    the nodes and the pod's scheduling constraints: the index keeps it until a node changes)."""

    value_of: Mapping[str, str]  # eligible node -> its domain
    domains: int  # distinct domains
    shared: Mapping[str, tuple[str, ...]]  # domain -> its eligible nodes, for domains held by several nodes


def domain_table(plan: FilterPlan, i: int, template: PodTemplate, nodes: Iterable[Node]) -> DomainTable:
    """The :class:`DomainTable` of constraint ``i``. O(nodes × (keys + inclusion policy checks))."""
    term, keys = plan.terms[i], plan.keys
    value_of: dict[str, str] = {}
    holders: dict[str, list[str]] = {}
    for node in nodes:
        if _eligible(node, keys, term, template):
            value = node.labels[term.topology_key]
            value_of[node.name] = value
            found = holders.get(value)
            if found is None:
                holders[value] = [node.name]
            else:
                found.append(node.name)
    shared = (
        {v: tuple(names) for v, names in holders.items() if len(names) > 1} if term.topology_key == HOSTNAME_KEY else {}
    )
    return DomainTable(value_of, len(holders), shared)


def sparse_prefilter(
    plan: FilterPlan, tables: Sequence[DomainTable], counts: Sequence[Mapping[str, int]]
) -> FilterState:
    """PreFilter from each constraint's :class:`DomainTable` and its sparse node -> matching-pod counts (only
    nodes with pods). O(nodes with matching pods × constraints)."""
    states = []
    for i, term in enumerate(plan.terms):
        value_of = tables[i].value_of
        domain: dict[str, int] = {}
        for name, count in counts[i].items():
            value = value_of.get(name)
            if value is not None and count:
                domain[value] = domain.get(value, 0) + count
        states.append(term_state(term, domain, tables[i].domains))
    return FilterState(plan, tuple(states))


class Compliance(NamedTuple):
    """Whether the workload's pods keep one of its DoNotSchedule constraints now: the current skew (the most
    pods of a domain − the global minimum) against maxSkew, and the eligible domains against minDomains."""

    topology_key: str
    max_skew: int
    min_domains: int
    skew: int
    eligible_domains: int
    satisfied: bool  # skew <= maxSkew


def compliance(state: FilterState) -> tuple[Compliance, ...]:
    """Per constraint, its :class:`Compliance`. O(constraints)."""
    out = []
    for term, t in zip(state.plan.terms, state.terms, strict=True):
        skew = t.highest - t.minimum
        out.append(
            Compliance(term.topology_key, term.max_skew, term.min_domains, skew, t.domains, skew <= term.max_skew)
        )
    return tuple(out)
