"""What-if analysis: where the next replicas land (``simulate``), the fewest evictions that fix a bad spread
(``rebalance``), and a cluster ``summary``.

Everything works on a :class:`~spreadwatch.snapshot.Snapshot` (a dump or a live listing) through the same
:class:`~spreadwatch.index.SpreadIndex` the operator keeps, so every registered profile (``PROFILES``) is
simulated by the code that scores it — a new profile needs no change here. Read-only: nothing is written to
any cluster. See ``docs/whatif.md``.
"""

from __future__ import annotations

from spreadwatch.whatif.rebalance import Eviction, RebalancePlan, plan_rebalance
from spreadwatch.whatif.simulate import (
    PendingStep,
    PlacementStep,
    RemovalStep,
    RunsSummary,
    Simulation,
    WhatIf,
    candidate_scores,
    simulate_add,
    simulate_remove,
    simulate_runs,
)
from spreadwatch.whatif.summary import (
    BASELINE_PROFILE,
    COMPARED_PROFILE,
    HEALTH_ORDER,
    ClusterSummary,
    ProfileChange,
    ZoneSummary,
    summarize_cluster,
    worst_key,
)
from spreadwatch.whatif.victims import rank_victims

__all__ = [
    "BASELINE_PROFILE",
    "COMPARED_PROFILE",
    "HEALTH_ORDER",
    "ClusterSummary",
    "Eviction",
    "PendingStep",
    "PlacementStep",
    "ProfileChange",
    "RebalancePlan",
    "RemovalStep",
    "RunsSummary",
    "Simulation",
    "WhatIf",
    "ZoneSummary",
    "candidate_scores",
    "plan_rebalance",
    "rank_victims",
    "simulate_add",
    "simulate_remove",
    "simulate_runs",
    "summarize_cluster",
    "worst_key",
]
