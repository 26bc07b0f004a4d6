"""The seed algorithm, naively: for each workload, for each candidate node, count that node's matching pods.

This is what running kube-scheduler's SelectorSpread plugin once per workload amounts to (PreScore builds
the selector; Score walks the candidate node's pods, ``countMatchingPods``; NormalizeScore weights nodes and
zones), written with spreadwatch's own pieces: :func:`representative_pod`, :func:`build_spread_selector`
(selector matching), :func:`filter_nodes` (candidate filter), :func:`zone_key` and :func:`summarize`.
Pods are grouped by node once (the scheduler's NodeInfo), so the cost is
O(workloads × (nodes + candidate nodes × pods per node)) = O(workloads × bound pods).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from spreadwatch.model import Controller, Pod, WorkloadKey
from spreadwatch.scoring import (
    Profile,
    build_spread_selector,
    filter_nodes,
    is_workload,
    representative_pod,
    skip_reason,
    summarize,
    zone_key,
)
from spreadwatch.snapshot import Snapshot

__all__ = ["NaiveScorer", "workloads_of"]


def workloads_of(snapshot: Snapshot) -> list[Controller]:
    """The snapshot's workloads (not the ReplicaSets a Deployment controls), sorted like the index's."""
    return sorted((c for c in snapshot.controllers if is_workload(c)), key=lambda c: c.key)


class NaiveScorer:
    """Per-workload scoring straight from the snapshot, no incremental state."""

    def __init__(self, snapshot: Snapshot, profile: Profile) -> None:
        self.snapshot = snapshot
        self.profile = profile
        # NodeInfo: the pods bound to each node (as the scheduler cache holds them).
        self.pods_by_node: dict[str, list[Pod]] = {}
        for pod in snapshot.pods:
            if pod.node_name:
                self.pods_by_node.setdefault(pod.node_name, []).append(pod)

    def scores(self, ctrl: Controller) -> dict[str, int] | None:
        """Candidate node → final score for the workload's next pod; None when its selector is invalid."""
        snap, profile = self.snapshot, self.profile
        if ctrl.selector_error:
            return None
        replicasets = snap.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, rs = representative_pod(ctrl, replicasets)
        if rs is not None and rs.selector_error:
            return None
        candidates, _ = filter_nodes(snap.nodes, pod.template)
        names = [n.name for n in candidates]
        if skip_reason(pod, profile):
            return dict.fromkeys(names, 0)
        selector = build_spread_selector(pod, snap, profile)
        namespace = pod.namespace
        counts: dict[str, int] = {}
        for name in names:
            count = 0
            if not selector.empty:
                for p in self.pods_by_node.get(name, ()):
                    if p.namespace == namespace and p.counts and selector.matches(p.labels):
                        count += 1
            counts[name] = count
        zones = {n.name: zone_key(n.labels, profile) for n in candidates}
        summary = summarize(((zones[n], counts[n]) for n in names), profile.max_score)
        return {n: summary.score(counts[n], zones[n]) for n in names}

    def score_all(self, workloads: Iterable[Controller]) -> dict[WorkloadKey, Mapping[str, int] | None]:
        return {c.key: self.scores(c) for c in workloads}


def run_naive(snapshot: Snapshot, profile: Profile, workloads: Sequence[Controller]) -> int:
    """Score ``workloads`` (including the NodeInfo build); returns how many were scored."""
    scorer = NaiveScorer(snapshot, profile)
    return len(scorer.score_all(workloads))
