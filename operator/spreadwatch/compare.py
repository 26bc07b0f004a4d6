"""``spreadwatch compare --from v1.28 --to v1.29``: what a scheduler upgrade changes in each workload's spread.

Both profiles score every workload's next pod on the same snapshot (one :class:`SpreadIndex` per profile);
per workload the comparison lists each profile's best nodes, whether the two best sets overlap, and the
candidate nodes whose rank moved most (dense rank by score, 1 = best), each with the causes spreadwatch
can name: the node has only the beta zone label, no zone label, beta and GA zone labels that disagree, or
no hostname label; and, for the workload, how the target profile spreads it (which constraints and their
maxSkew, or why it is skipped). Cost: O(workloads × candidate nodes) after the two indexes are loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spreadwatch.index import SpreadIndex
from spreadwatch.jsonform import json_form
from spreadwatch.model import Node
from spreadwatch.report import Health, ReportOptions, SpreadReport
from spreadwatch.scoring import Profile, zone_key
from spreadwatch.scoring.zones import BETA_ZONE, GA_ZONE
from spreadwatch.snapshot import Snapshot

__all__ = ["NodeMove", "WorkloadComparison", "compare_snapshot", "node_causes"]

HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class NodeMove:
    """One candidate node's score and rank under both profiles."""

    node: str
    from_score: int
    to_score: int
    from_rank: int
    to_rank: int
    causes: tuple[str, ...]


_NODE_MOVE_FORM = json_form(NodeMove, convert={"causes": list})


@dataclass(frozen=True, slots=True)
class WorkloadComparison:
    """One workload under two profiles."""

    namespace: str
    kind: str
    name: str
    from_best: tuple[str, ...]
    to_best: tuple[str, ...]
    from_best_score: int
    to_best_score: int
    overlap: bool
    moved: tuple[NodeMove, ...]
    spreading: str  # how the target profile spreads the workload

    @property
    def changed(self) -> bool:
        return set(self.from_best) != set(self.to_best)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": {"namespace": self.namespace, "kind": self.kind, "name": self.name},
            "from": {"bestScore": self.from_best_score, "bestNodes": list(self.from_best)},
            "to": {"bestScore": self.to_best_score, "bestNodes": list(self.to_best)},
            "bestNodesChanged": self.changed,
            "bestNodesOverlap": self.overlap,
            "moved": [_NODE_MOVE_FORM(m) for m in self.moved],
            "spreading": self.spreading,
        }


def node_causes(node: Node) -> tuple[str, ...]:
    """What about a node's labels the two generations read differently. O(1)."""
    labels = node.labels
    causes = []
    beta, ga = labels.get(BETA_ZONE), labels.get(GA_ZONE)
    if beta is not None and ga is None:
        causes.append("beta-only zone label (PodTopologySpread: zoneless)")
    elif beta is None and ga is None:
        causes.append("no zone label")
    elif beta is not None and ga is not None and beta != ga:
        causes.append(f"beta zone {beta!r} differs from GA zone {ga!r}")
    if HOSTNAME not in labels:
        causes.append("no kubernetes.io/hostname label")
    return tuple(causes)


def _ranks(scores: Mapping[str, int]) -> dict[str, int]:
    """Dense rank by score, best = 1."""
    order = {s: i + 1 for i, s in enumerate(sorted(set(scores.values()), reverse=True))}
    return {n: order[s] for n, s in scores.items()}


def _scores(report: SpreadReport, nodes: Sequence[Node], profile: Profile) -> dict[str, int]:
    """Every candidate node's score; none under an Error report (an invalid selector or spread constraint:
    the profile scores nothing, so no node is best and none moves)."""
    if report.health == Health.ERROR:
        return {}
    return {n.name: report.score_of(n.name, zone_key(n.labels, profile)) for n in nodes}


def _spreading(index: SpreadIndex, report: SpreadReport) -> str:
    if report.skipped:
        return f"skipped: {report.skip_reason}"
    profile = index.profile
    if not profile.pod_topology_spread:
        return "SelectorSpread: node 1/3, zone 2/3"
    explained = index.spread_plan(report.workload.key)
    return explained or "PodTopologySpread"


def compare_snapshot(
    snapshot: Snapshot,
    source: Profile,
    target: Profile,
    namespaces: Sequence[str] = (),
    moved: int = 3,
) -> list[WorkloadComparison]:
    """Compare every workload of ``snapshot`` (only ``namespaces`` when given) under two profiles."""
    before, after = SpreadIndex(source, ReportOptions()), SpreadIndex(target, ReportOptions())
    before.load(snapshot)
    after.load(snapshot)
    by_name = {n.name: n for n in snapshot.nodes}
    wanted = set(namespaces)
    out = []
    for key in before.workload_keys():
        if wanted and key.namespace not in wanted:
            continue
        old, new = before.report_for(key), after.report_for(key)
        layout, other = before.candidate_layout(key), after.candidate_layout(key)
        if old is None or new is None or layout is None:
            continue
        candidates = [by_name[n] for names in layout.by_zone.values() for n in names]
        # each profile scores its own candidates (v1.29's PodTopologySpread Filter may leave fewer)
        theirs = candidates if other is None else [by_name[n] for names in other.by_zone.values() for n in names]
        old_scores, new_scores = _scores(old, candidates, source), _scores(new, theirs, target)
        old_rank, new_rank = _ranks(old_scores), _ranks(new_scores)
        moves = sorted(
            (
                NodeMove(
                    n.name, old_scores[n.name], new_scores[n.name], old_rank[n.name], new_rank[n.name], node_causes(n)
                )
                for n in candidates
                if n.name in old_rank and n.name in new_rank and old_rank[n.name] != new_rank[n.name]
            ),
            key=lambda m: (-abs(m.to_rank - m.from_rank), m.node),
        )
        old_best = tuple(sorted(n for n, s in old_scores.items() if s == old.best_score))
        new_best = tuple(sorted(n for n, s in new_scores.items() if s == new.best_score))
        out.append(
            WorkloadComparison(
                key.namespace,
                key.kind,
                key.name,
                old_best,
                new_best,
                old.best_score,
                new.best_score,
                bool(set(old_best) & set(new_best)),
                tuple(moves[:moved]),
                _spreading(after, new),
            )
        )
    return out
