"""Pure SelectorSpread scoring: profiles, zones, candidate filtering, selectors and the normalize step.

Imports nothing from kopf, kubernetes or prometheus_client (enforced by import-linter).
"""

from __future__ import annotations

from spreadwatch.scoring.candidates import exclusion_reason, filter_nodes
from spreadwatch.scoring.next_pod import WorkloadRef, is_workload, newest_replicaset, representative_pod
from spreadwatch.scoring.normalize import ZONE_WEIGHTING, ScoreBreakdown, SpreadSummary, summarize
from spreadwatch.scoring.profiles import DEFAULT_PROFILE, PROFILES, Profile, SelectorMode, get_profile
from spreadwatch.scoring.score import PodScores, count_matching, score_pod, skip_reason
from spreadwatch.scoring.selection import ClusterLookup, SpreadSelector, build_spread_selector
from spreadwatch.scoring.zones import ZoneKey, zone_key

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "ZONE_WEIGHTING",
    "ClusterLookup",
    "PodScores",
    "Profile",
    "ScoreBreakdown",
    "SelectorMode",
    "SpreadSelector",
    "SpreadSummary",
    "WorkloadRef",
    "ZoneKey",
    "build_spread_selector",
    "count_matching",
    "exclusion_reason",
    "filter_nodes",
    "get_profile",
    "is_workload",
    "newest_replicaset",
    "representative_pod",
    "score_pod",
    "skip_reason",
    "summarize",
    "zone_key",
]
