"""Where kube-scheduler puts a pod: its whole profile, filter by filter and score by score (the reference path).

:func:`predict_pod` runs one scheduling cycle of kube-scheduler v1.36.4 (``schedule_one.go``) for an incoming
pod over a cluster's records, plainly, node by node — the path ``spreadwatch predict`` prints, the property
tests compare the operator's incremental prediction with, and the Go differential oracle checks against the
real framework:

1. **PreFilter**: the first plugin that rejects the pod rejects every node (VolumeBinding: a claim missing or
   not yet bound; VolumeZone: a bound volume missing); NodeAffinity's ``matchFields`` on ``metadata.name``
   leaves only the nodes named (the others excluded under NodeAffinity).
2. **Filter**, in the profile's order, the first that fails a node names it (``excluded``): NodeUnschedulable,
   TaintToleration, NodeAffinity (with ``addedAffinity``), NodePorts, NodeResourcesFit, VolumeBinding,
   VolumeZone, PodTopologySpread (its DoNotSchedule constraints: a hook, see ``partial``), InterPodAffinity.
3. **PreScore / Score / NormalizeScore** over the feasible nodes, each enabled score plugin that its PreScore
   does not skip (the framework leaves a skipped plugin out); each score times the plugin's weight; a node's
   total is their sum. The best nodes are those with the highest total (ties: the scheduler's pick).

The cache the scheduler scores from holds every bound, non-terminal pod (pods being deleted included) on
its node. ``partial`` says what the prediction cannot see (reasons as ``Code: sentence``); ``error`` why the
scheduler cannot place the pod at all. Cost: O(pods × terms + nodes × plugins).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from spreadwatch.errors import SelectorError
from spreadwatch.model import Node, PersistentVolume, PersistentVolumeClaim, Pod, Taint
from spreadwatch.scoring.candidates import has_untolerated_taint, node_affinity_matches, node_term_matches
from spreadwatch.scoring.image_locality import IMAGE_LOCALITY, ImageSpread, image_locality_score
from spreadwatch.scoring.node_affinity_score import NODE_AFFINITY, preferred_error, preferred_node_score
from spreadwatch.scoring.node_ports import NODE_PORTS, UsedPorts, add_ports, ports_conflict
from spreadwatch.scoring.pod_affinity import (
    INTER_POD_AFFINITY,
    IncomingTerms,
    PodOnNode,
    affinity_filter,
    affinity_raw_scores,
    incoming_terms,
    node_raw_score,
    normalize_min_max,
)
from spreadwatch.scoring.prediction_window import window_hit_probability
from spreadwatch.scoring.profiles import Profile
from spreadwatch.scoring.resource_fit import (
    BALANCED_ALLOCATION,
    NODE_RESOURCES_FIT,
    NodeLoad,
    balanced_allocation_score,
    balanced_skips,
    fit_failures,
    fit_score,
    node_load,
)
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.scoring.selection import ClusterLookup, build_spread_selector
from spreadwatch.scoring.taint_score import (
    TAINT_TOLERATION,
    default_normalize,
    intolerable_taints,
    prefer_no_schedule_tolerations,
)
from spreadwatch.scoring.topology import score_topology
from spreadwatch.scoring.topology_filter import FilterState, filter_node, plan_filter, prefilter
from spreadwatch.scoring.volumes import VOLUME_BINDING, VOLUME_RESTRICTIONS, VOLUME_ZONE, VolumePlan, plan_volumes
from spreadwatch.scoring.window import scheduler_order, tree_zone

__all__ = [
    "DYNAMIC_RESOURCES",
    "NODE_UNSCHEDULABLE",
    "POD_TOPOLOGY_SPREAD",
    "PROBABILITY_DIGITS",
    "ClusterView",
    "PodPrediction",
    "partial_reasons",
    "predict_pod",
]

#: digits the prediction's probability is rounded to (as the spreading report's)
PROBABILITY_DIGITS: Final = 4
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
DYNAMIC_RESOURCES: Final = "DynamicResources"
_UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_METADATA_NAME: Final = "metadata.name"


class ClusterView(ClusterLookup, Protocol):
    """What a scheduling cycle reads besides nodes and pods: Services and controllers (the spreading
    selector), Namespaces' labels, PersistentVolumeClaims and PersistentVolumes."""

    def namespace_labels_map(self) -> Mapping[str, Mapping[str, str]]: ...

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...

    def volume(self, name: str) -> PersistentVolume | None: ...


@dataclass(frozen=True, slots=True)
class PodPrediction:
    """One scheduling cycle's outcome for a pod (see the module docstring).

    ``feasible`` in node order; ``excluded`` node → the plugin that filtered it; ``scores`` node → plugin →
    weighted score (the plugins that scored); ``totals`` node → sum."""

    feasible: tuple[str, ...]
    excluded: Mapping[str, str]
    scores: Mapping[str, Mapping[str, int]]
    totals: Mapping[str, int]
    plugins: tuple[str, ...] = ()  # the score plugins that ran (not skipped), in the profile's order
    error: str = ""
    partial: tuple[str, ...] = ()
    #: the chance the scheduler's window holds a best node (scoring/prediction_window.py; None: no feasible node)
    probability: float | None = None

    @property
    def best_score(self) -> int:
        return max(self.totals.values(), default=0)

    @property
    def best_nodes(self) -> tuple[str, ...]:
        """Every feasible node with the highest total, sorted. O(nodes)."""
        if not self.totals:
            return ()
        best = self.best_score
        return tuple(sorted(n for n, t in self.totals.items() if t == best))


def _node_affinity_names(pod: Pod) -> frozenset[str] | None:
    """NodeAffinity's PreFilter result: the node names its required terms' ``metadata.name In`` fields allow
    (None: every node; each term without such a field allows every node). O(terms)."""
    terms = pod.template.required_terms
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        allowed: set[str] | None = None
        for req in term.match_fields:
            if req.key == _METADATA_NAME and req.operator == "In":
                allowed = set(req.values) if allowed is None else allowed & set(req.values)
        if allowed is None:
            return None
        names |= allowed
    return frozenset(names)


def _tolerates_unschedulable(pod: Pod) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.template.tolerations)


@dataclass(slots=True)
class _Cache:
    """The scheduler cache's view of the nodes: per node its load, host ports and pods."""

    loads: dict[str, NodeLoad] = field(default_factory=dict)
    ports: dict[str, UsedPorts] = field(default_factory=dict)
    pods: list[PodOnNode] = field(default_factory=list)


def _cache(nodes: Sequence[Node], pods: Iterable[Pod]) -> _Cache:
    by_node: dict[str, list[Pod]] = {n.name: [] for n in nodes}
    labels = {n.name: n.labels for n in nodes}
    out = _Cache()
    for pod in pods:
        on = by_node.get(pod.node_name)
        if on is not None and pod.in_node_info:
            on.append(pod)
    for node in nodes:
        on = by_node[node.name]
        out.loads[node.name] = node_load(node.allocatable, (p.needs for p in on))
        used: UsedPorts = {}
        for p in on:
            add_ports(used, p.needs.host_ports, 1)
            out.pods.append(PodOnNode(p, labels[node.name]))
        out.ports[node.name] = used
    return out


def _first_failure(
    node: Node, pod: Pod, profile: SchedulerProfile, cache: _Cache, plan: VolumePlan, rwop_used: bool,
    hard: FilterState | None, ipa_passes: Callable[[Node], bool],
) -> str:  # fmt: skip
    """The first filter plugin of the profile that rejects ``node`` ("" none; ``rwop_used``: a ReadWriteOncePod
    claim of the pod is in use; ``hard``: PodTopologySpread's PreFilter state, None when it skips).
    O(plugins)."""
    needs = pod.needs
    for plugin in profile.filters:
        if plugin == NODE_UNSCHEDULABLE:
            failed = node.unschedulable and not _tolerates_unschedulable(pod)
        elif plugin == TAINT_TOLERATION:
            failed = has_untolerated_taint(node, pod.template)
        elif plugin == NODE_AFFINITY:
            added = profile.added_required
            failed = not node_affinity_matches(node, pod.template) or (
                added is not None and not any(node_term_matches(t, node) for t in added)
            )
        elif plugin == NODE_PORTS:
            failed = bool(needs.host_ports) and ports_conflict(needs.host_ports, cache.ports[node.name])
        elif plugin == NODE_RESOURCES_FIT:
            failed = bool(fit_failures(needs, cache.loads[node.name], profile.fit))
        elif plugin == VOLUME_RESTRICTIONS:
            failed = rwop_used
        elif plugin == VOLUME_BINDING:
            failed = not plan.binding_passes(node)
        elif plugin == VOLUME_ZONE:
            failed = plan.has_claims and not plan.zone_passes(node.labels)
        elif plugin == INTER_POD_AFFINITY:
            failed = not ipa_passes(node)
        elif plugin == POD_TOPOLOGY_SPREAD:
            failed = hard is not None and filter_node(hard, node) is not None
        else:
            failed = False
        if failed:
            return plugin
    return ""


def template_error(pod: Pod) -> str:
    """Why the prediction cannot be made for a pod of this template ("" it can): requests that do not parse
    (``InvalidResources``), affinity terms the API server would refuse (``InvalidAffinity``). The workload's
    report is then Error with that one reason. O(terms)."""
    if pod.needs.error:
        return f"InvalidResources: {pod.needs.error}"
    template = pod.template
    if template.affinity_error:
        return f"InvalidAffinity: {template.affinity_error}"
    if template.preferred_node_terms is not None:
        problem = preferred_error(template.preferred_node_terms)
        if problem:
            return f"InvalidAffinity: {problem}"
    return ""


def partial_reasons(pod: Pod, profile: SchedulerProfile, plan: VolumePlan) -> tuple[str, ...]:
    """What the prediction cannot see for this pod (reasons, ``Code: sentence``). O(plugins)."""
    out = [f"UnmodelledPlugin: {name} (not an in-tree plugin spreadwatch computes)" for name in profile.unmodelled]
    if pod.needs.resource_claims:
        out.append("ResourceClaims: the pod claims DRA devices; DynamicResources' filter and score are not computed")
    out.extend(f"UnboundClaim: {name} has no volume yet (its StorageClass decides where it is provisioned)"
               for name in plan.unbound)  # fmt: skip
    return tuple(out)


def predict_pod(
    pod: Pod,
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    cluster: ClusterView,
    profile: SchedulerProfile,
    spread: Profile,
    new_claims: Sequence[str] = (),
    window: int | None = None,
    scored: Collection[str] | None = None,
) -> PodPrediction:
    """One scheduling cycle for ``pod`` (see the module docstring); ``spread`` is the PodTopologySpread
    profile (its default constraints); ``new_claims`` the claims a StatefulSet creates for the pod; ``window``
    the nodes the scheduler scores per pod (``numFeasibleNodesToFind``; None: every feasible node);
    ``scored``: score only these of the feasible nodes, as the scheduler scores its window (the others stay
    out of ``feasible`` without being excluded; None: all)."""
    error = template_error(pod)
    if error:
        return PodPrediction((), {}, {}, {}, error=error)
    cache = _cache(nodes, pods)
    plan = plan_volumes(pod.namespace, pod.needs.claims, new_claims, cluster.claim, cluster.volume)
    partial = partial_reasons(pod, profile, plan)
    excluded: dict[str, str] = {}
    rejected = plan.rejecting(profile.filters)
    rwop_used = any(p.pod.namespace == pod.namespace and not set(plan.rwop).isdisjoint(p.pod.needs.claims)
                    for p in cache.pods) if plan.rwop else False  # fmt: skip
    namespaces = cluster.namespace_labels_map()
    ns_labels = namespaces.get(pod.namespace)
    terms = incoming_terms(pod, namespaces)
    ipa = affinity_filter(pod, terms, cache.pods, ns_labels) if INTER_POD_AFFINITY in profile.filters else None
    hard: FilterState | None = None
    if POD_TOPOLOGY_SPREAD in profile.filters and spread.pod_topology_spread:
        try:
            plan_hard = plan_filter(pod, spread, lambda: build_spread_selector(pod, cluster, spread).selectors[0])
        except SelectorError as err:
            return PodPrediction((), {}, {}, {}, error=f"InvalidSelector: {err}")
        if plan_hard is not None:
            hard = prefilter(plan_hard, pod.template, nodes, pods, pod.namespace)
    allowed = _node_affinity_names(pod) if NODE_AFFINITY in profile.filters else None
    feasible: list[Node] = []
    for node in nodes:
        if rejected:
            excluded[node.name] = rejected
            continue
        if allowed is not None and node.name not in allowed:
            excluded[node.name] = NODE_AFFINITY
            continue
        plugin = _first_failure(node, pod, profile, cache, plan, rwop_used, hard,
                                lambda n: ipa is None or ipa.passes(n.labels))  # fmt: skip
        if plugin:
            excluded[node.name] = plugin
        elif scored is None or node.name in scored:
            feasible.append(node)
    names = tuple(n.name for n in feasible)
    if not feasible:
        return PodPrediction(names, excluded, {}, {}, partial=partial)
    per_plugin = _scores(pod, feasible, nodes, pods, cluster, profile, spread, cache, terms, ns_labels)
    scores: dict[str, dict[str, int]] = {n: {} for n in names}
    totals = dict.fromkeys(names, 0)
    weights = profile.weights
    for plugin, by_node in per_plugin.items():
        weight = weights[plugin]
        for n, score in by_node.items():
            scores[n][plugin] = score * weight
            totals[n] += score * weight
    done = PodPrediction(names, excluded, scores, totals, tuple(per_plugin), partial=partial)
    return dataclasses.replace(done, probability=_probability(done, nodes, window))


def _probability(p: PodPrediction, nodes: Sequence[Node], window: int | None) -> float | None:
    """:func:`~spreadwatch.scoring.prediction_window.window_hit_probability` of the prediction, rounded as
    the reports round probabilities. O(nodes)."""
    if not p.feasible:
        return None
    if window is None or window >= len(p.feasible):
        return 1.0
    order = scheduler_order((n.name, tree_zone(n.labels)) for n in nodes)
    position = {name: i for i, name in enumerate(order)}
    feasible = sorted(position[n] for n in p.feasible)
    odds = window_hit_probability(feasible, [position[n] for n in p.best_nodes], len(nodes), window)
    return None if odds is None else round(odds, PROBABILITY_DIGITS)


def _scores(
    pod: Pod,
    feasible: Sequence[Node],
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    cluster: ClusterView,
    profile: SchedulerProfile,
    spread: Profile,
    cache: _Cache,
    terms: IncomingTerms,
    ns_labels: Mapping[str, str] | None,
) -> dict[str, dict[str, int]]:
    """Each score plugin that runs (PreScore does not skip it) → node → its normalised score (0-100)."""
    out: dict[str, dict[str, int]] = {}
    needs = pod.needs
    for plugin, _ in profile.scores:
        if plugin == TAINT_TOLERATION:
            tolerations = prefer_no_schedule_tolerations(pod.template)
            raw = {n.name: intolerable_taints(n.taints, tolerations) for n in feasible}
            out[plugin] = default_normalize(raw, reverse=True)
        elif plugin == NODE_AFFINITY:
            own = pod.template.preferred_node_terms
            if own is None and not profile.added_preferred:
                continue
            raw = {n.name: preferred_node_score((*profile.added_preferred, *(own or ())), n) for n in feasible}
            out[plugin] = default_normalize(raw, reverse=False)
        elif plugin == NODE_RESOURCES_FIT:
            out[plugin] = {n.name: fit_score(needs, cache.loads[n.name], profile.fit) for n in feasible}
        elif plugin == POD_TOPOLOGY_SPREAD:
            topo = score_topology(pod, feasible, nodes, pods, cluster, spread)
            if not topo.skipped:
                out[plugin] = dict(topo.scores)
        elif plugin == INTER_POD_AFFINITY:
            topology = affinity_raw_scores(pod, terms, cache.pods, ns_labels, profile.hard_pod_affinity_weight,
                                           profile.ignore_existing_preferred)  # fmt: skip
            if topology is not None:
                out[plugin] = normalize_min_max({n.name: node_raw_score(topology, n.labels) for n in feasible})
        elif plugin == DYNAMIC_RESOURCES:
            out[plugin] = {n.name: 0 for n in feasible}
        elif plugin == BALANCED_ALLOCATION:
            if not balanced_skips(needs, profile.balanced_resources):
                out[plugin] = {n.name: balanced_allocation_score(needs, cache.loads[n.name], profile.balanced_resources)
                               for n in feasible}  # fmt: skip
        elif plugin == IMAGE_LOCALITY:
            spread_of = ImageSpread.of(nodes)
            out[plugin] = {n.name: image_locality_score(needs, {x for i in n.images for x in i.names}, spread_of)
                           for n in feasible}  # fmt: skip
    return out
