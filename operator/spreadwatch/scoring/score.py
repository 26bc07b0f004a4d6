"""Score one incoming pod against candidate nodes, the way kube-scheduler's plugin does (PreScore, Score,
NormalizeScore), directly from records. This is the reference path used by ``spreadwatch score`` and the
tests; the incremental index computes the same numbers without rescanning.

Cost: O(pods in the namespace × selector size + nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spreadwatch.errors import InputError
from spreadwatch.model import Node, Pod
from spreadwatch.scoring.candidates import filter_nodes
from spreadwatch.scoring.normalize import ScoreBreakdown, SpreadSummary, summarize
from spreadwatch.scoring.profiles import Profile
from spreadwatch.scoring.selection import ClusterLookup, SpreadSelector, build_spread_selector
from spreadwatch.scoring.topology import TopologyScores, score_topology
from spreadwatch.scoring.topology_filter import (
    REASON_POD_TOPOLOGY_SPREAD,
    FilterState,
    filter_node,
    plan_filter,
    prefilter,
)
from spreadwatch.scoring.zones import ZoneKey, zone_key

__all__ = ["SKIP_REASON_TOPOLOGY_SPREAD", "PodScores", "count_matching", "score_pod", "skip_reason"]

SKIP_REASON_TOPOLOGY_SPREAD = (
    "the pod has topologySpreadConstraints, so SelectorSpread skips it and every node scores 0"
)


@dataclass(frozen=True, slots=True)
class PodScores:
    """The result of scoring one pod: per-candidate counts, zones and final scores, in candidate order."""

    profile: Profile
    pod: Pod
    skipped: bool
    skip_reason: str
    selector: SpreadSelector | None
    candidates: tuple[Node, ...]
    excluded: Mapping[str, str]
    counts: Mapping[str, int]
    zones: Mapping[str, ZoneKey | None]
    summary: SpreadSummary
    scores: Mapping[str, int]
    topology: TopologyScores | None = None  # PodTopologySpread's state (profile v1.29)
    #: PodTopologySpread's Filter (v1.29, DoNotSchedule constraints): its PreFilter state, and the nodes it
    #: rejected (among those the other filters pass), by name with kube-scheduler's reason
    filter: FilterState | None = None
    rejected: Mapping[str, str] = field(default_factory=dict)
    rejected_nodes: tuple[Node, ...] = ()

    @property
    def selector_text(self) -> str:
        """The selector(s) pods are counted by, as text ("" when skipped before one was built)."""
        if self.topology is not None:
            return self.topology.plan.selector_text
        return str(self.selector) if self.selector is not None else ""

    def breakdown(self, node: str) -> ScoreBreakdown:
        """How ``node``'s score was made (all zeros for a skipped pod)."""
        if self.skipped:
            return ScoreBreakdown(0.0, None, 0.0, 0.0, 0)
        return self.summary.breakdown(self.counts[node], self.zones[node])


def skip_reason(pod: Pod, profile: Profile) -> str:
    """Why the profile skips ``pod`` ("" when it does not)."""
    if profile.skips_topology_spread and pod.template.topology_spread:
        return SKIP_REASON_TOPOLOGY_SPREAD
    return ""


def count_matching(
    selector: SpreadSelector, namespace: str, pods: Iterable[Pod], nodes: Iterable[str]
) -> dict[str, int]:
    """``countMatchingPods`` for every node in ``nodes``: pods of ``namespace`` bound there, not deleting,
    not terminal, matching ``selector``. O(pods × selector size)."""
    counts = dict.fromkeys(nodes, 0)
    if selector.empty:
        return counts
    for pod in pods:
        if pod.namespace == namespace and pod.node_name in counts and pod.counts and selector.matches(pod.labels):
            counts[pod.node_name] += 1
    return counts


def score_pod(
    pod: Pod,
    nodes: Sequence[Node],
    pods: Iterable[Pod],
    lookup: ClusterLookup,
    profile: Profile,
    node_names: Sequence[str] | None = None,
) -> PodScores:
    """Score ``pod`` on the candidates among ``nodes`` (filtered, or exactly ``node_names`` in that order), as
    the plugins do: constraints the API server would refuse are not checked here (``check_constraints``)."""
    if node_names is None:
        candidates, excluded = filter_nodes(nodes, pod.template)
    else:
        by_name = {n.name: n for n in nodes}
        unknown = [n for n in node_names if n not in by_name]
        if unknown:
            raise InputError(f"--nodes names nodes that are not in the cluster: {', '.join(unknown)}")
        candidates, excluded = [by_name[n] for n in node_names], {}
    names = [n.name for n in candidates]
    zones = {n.name: zone_key(n.labels, profile) for n in candidates}
    if profile.pod_topology_spread:
        return _score_topology(pod, candidates, excluded, zones, nodes, pods, lookup, profile, node_names is None)
    reason = skip_reason(pod, profile)
    if reason:
        zero = dict.fromkeys(names, 0)
        return PodScores(
            profile,
            pod,
            True,
            reason,
            None,
            tuple(candidates),
            excluded,
            zero,
            zones,
            summarize((), profile.max_score),
            zero,
        )
    selector = build_spread_selector(pod, lookup, profile)
    counts = count_matching(selector, pod.namespace, pods, names)
    summary = summarize(((zones[n], counts[n]) for n in names), profile.max_score)
    scores = {n: summary.score(counts[n], zones[n]) for n in names}
    return PodScores(profile, pod, False, "", selector, tuple(candidates), excluded, counts, zones, summary, scores)


def _score_topology(
    pod: Pod,
    candidates: Sequence[Node],
    excluded: Mapping[str, str],
    zones: Mapping[str, ZoneKey | None],
    nodes: Sequence[Node],
    pods: Iterable[Pod],
    lookup: ClusterLookup,
    profile: Profile,
    filtered: bool,
) -> PodScores:
    """PodTopologySpread's Filter (unless the candidates were given: ``filtered`` False) and scores wrapped as
    :class:`PodScores` (``counts``: the first constraint's pods)."""
    state: FilterState | None = None
    rejected: dict[str, str] = {}
    rejected_nodes: list[Node] = []
    if filtered:
        plan = plan_filter(pod, profile, lambda: build_spread_selector(pod, lookup, profile).selectors[0])
        if plan is not None:
            state = prefilter(plan, pod.template, nodes, pods, pod.namespace)
            verdicts = [(node, filter_node(state, node)) for node in candidates]
            rejected_nodes = [node for node, why in verdicts if why is not None]
            rejected = {node.name: why for node, why in verdicts if why is not None}
            candidates = [node for node, why in verdicts if why is None]
            excluded = {**excluded, **dict.fromkeys(rejected, REASON_POD_TOPOLOGY_SPREAD)}
    topo = score_topology(pod, candidates, nodes, pods, lookup, profile)
    counts = {n.name: (topo.own[n.name][0] if topo.own.get(n.name) else 0) for n in candidates}
    selector = topo.plan.selector
    return PodScores(
        profile,
        pod,
        topo.skipped,
        topo.plan.skip_reason,
        SpreadSelector(profile.mode, (selector,)) if selector is not None else None,
        tuple(candidates),
        excluded,
        counts,
        zones,
        summarize((), profile.max_score),
        dict(topo.scores),
        topo,
        state,
        rejected,
        tuple(rejected_nodes),
    )
