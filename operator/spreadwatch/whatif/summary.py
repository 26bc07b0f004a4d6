"""``spreadwatch summary``: the cluster at a glance.

* workloads per health state, and the worst N (SinglePointOfFailure, then Imbalanced, then Error, by zone
  skew, node skew and pods);
* per zone: nodes, candidate nodes for an unconstrained pod (not cordoned, no NoSchedule/NoExecute taint)
  and counting pods (bound, not terminal, not deleting);
* per registered profile other than the baseline ``v1.28``: the share of workloads whose *best node set*
  (every candidate node with the best score) differs from the baseline's — the ``v1.28`` → ``v1.29``
  line is the one to read when the PodTopologySpread profile is registered; without it the summary says so.

Cost: one index load per registered profile, O(objects + workloads × candidate nodes) each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from spreadwatch.analysis import analyze_index
from spreadwatch.model import PodTemplate
from spreadwatch.report import Health, ReportOptions, SpreadReport
from spreadwatch.scoring import PROFILES, Profile, exclusion_reason, get_profile, zone_key
from spreadwatch.selectors import Selector
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif.simulate import candidate_scores

__all__ = [
    "BASELINE_PROFILE",
    "COMPARED_PROFILE",
    "HEALTH_ORDER",
    "ClusterSummary",
    "ProfileChange",
    "ZoneSummary",
    "summarize_cluster",
    "worst_key",
]

BASELINE_PROFILE: Final = "v1.28"
COMPARED_PROFILE: Final = "v1.29"
HEALTH_ORDER: Final = (Health.SINGLE_POINT_OF_FAILURE, Health.IMBALANCED, Health.ERROR, Health.SKIPPED, Health.BALANCED)
_RANK = {h: i for i, h in enumerate(HEALTH_ORDER)}


def worst_key(report: SpreadReport) -> tuple[int, int, int, int, str, str, str]:
    """Sort key putting the worst spread first."""
    w = report.workload
    return (_RANK[report.health], -report.zone_skew, -report.node_skew, -report.pods, w.namespace, w.kind, w.name)


@dataclass(frozen=True, slots=True)
class ZoneSummary:
    zone: str  # "" for nodes without a zone
    region: str
    nodes: int
    candidate_nodes: int
    pods: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "region": self.region,
            "nodes": self.nodes,
            "candidateNodes": self.candidate_nodes,
            "pods": self.pods,
        }


@dataclass(frozen=True, slots=True)
class ProfileChange:
    """How many workloads' best node set differs between ``baseline`` and ``profile``."""

    profile: str
    baseline: str
    workloads: int  # workloads scored (not Error) under both
    changed: int

    @property
    def share(self) -> float:
        return self.changed / self.workloads if self.workloads else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "baseline": self.baseline,
            "workloads": self.workloads,
            "changed": self.changed,
            "share": round(self.share, 4),
        }


@dataclass(frozen=True, slots=True)
class ClusterSummary:
    profile: str
    workloads: int
    health: Mapping[str, int]
    worst: tuple[SpreadReport, ...]
    zones: tuple[ZoneSummary, ...]
    changes: tuple[ProfileChange, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "workloads": self.workloads,
            "health": dict(self.health),
            "worst": [r.to_dict() for r in self.worst],
            "zones": [z.to_dict() for z in self.zones],
            "bestNodeSetChanges": [c.to_dict() for c in self.changes],
            "notes": list(self.notes),
        }


def _zones(snapshot: Snapshot, profile: Profile, namespaces: Sequence[str]) -> tuple[ZoneSummary, ...]:
    wanted = set(namespaces)
    free = PodTemplate()
    zone_of = {}
    nodes: Counter[tuple[str, str]] = Counter()
    candidates: Counter[tuple[str, str]] = Counter()
    for node in snapshot.nodes:
        key = zone_key(node.labels, profile) or ("", "")
        zone_of[node.name] = key
        nodes[key] += 1
        if exclusion_reason(node, free) is None:
            candidates[key] += 1
    pods: Counter[tuple[str, str]] = Counter()
    for pod in snapshot.pods:
        if pod.counts and pod.node_name in zone_of and (not wanted or pod.namespace in wanted):
            pods[zone_of[pod.node_name]] += 1
    return tuple(ZoneSummary(z, r, nodes[(r, z)], candidates[(r, z)], pods[(r, z)]) for r, z in sorted(nodes))


def _best_sets(
    snapshot: Snapshot,
    profile: Profile,
    options: ReportOptions,
    namespaces: Sequence[str],
    selector: Selector | None,
) -> dict[tuple[str, str, str], frozenset[str]]:
    """Each scored workload's set of best candidate nodes under ``profile``. O(workloads × candidates)."""
    index, reports = analyze_index(snapshot, profile, options, namespaces, selector)
    out = {}
    for report in reports:
        if report.health is Health.ERROR:
            continue
        scores = candidate_scores(index, report)
        best = max(scores.values(), default=0)
        w = report.workload
        out[(w.namespace, w.kind, w.name)] = frozenset(n for n, s in scores.items() if s == best)
    return out


def summarize_cluster(
    snapshot: Snapshot,
    profile: Profile,
    options: ReportOptions | None = None,
    namespaces: Sequence[str] = (),
    selector: Selector | None = None,
    worst: int = 5,
) -> ClusterSummary:
    """The summary of the workloads in ``namespaces`` (all when empty) matching ``selector``."""
    opts = options or ReportOptions()
    _, reports = analyze_index(snapshot, profile, opts, namespaces, selector)
    health = Counter(r.health.value for r in reports)
    ranked = sorted((r for r in reports if r.health is not Health.BALANCED), key=worst_key)
    notes: list[str] = []
    changes: list[ProfileChange] = []
    if BASELINE_PROFILE in PROFILES:
        # every report listed in full: best node sets are read back from the reports
        full = ReportOptions(opts.top_n, max(opts.max_nodes, len(snapshot.nodes)), opts.thresholds)
        base = _best_sets(snapshot, get_profile(BASELINE_PROFILE), full, namespaces, selector)
        for name, other in PROFILES.items():
            if name == BASELINE_PROFILE:
                continue
            sets = _best_sets(snapshot, other, full, namespaces, selector)
            common = base.keys() & sets.keys()
            changes.append(ProfileChange(name, BASELINE_PROFILE, len(common), sum(base[k] != sets[k] for k in common)))
    if COMPARED_PROFILE not in PROFILES:
        notes.append(
            f"profile {COMPARED_PROFILE} (PodTopologySpread) is not registered in this build: "
            f"no {BASELINE_PROFILE} -> {COMPARED_PROFILE} comparison"
        )
    return ClusterSummary(
        profile=profile.name,
        workloads=len(reports),
        health={h.value: health.get(h.value, 0) for h in HEALTH_ORDER},
        worst=tuple(ranked[: max(0, worst)]),
        zones=_zones(snapshot, profile, namespaces),
        changes=tuple(changes),
        notes=tuple(notes),
    )
