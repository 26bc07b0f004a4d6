"""What-if analysis: where the next replicas land and what scale-downs and rollouts do (``simulate``), the fewest
evictions that fix a bad spread and the deletion costs that keep zones even (``rebalance``), and a cluster
``summary``.

Everything works on a :class:`~spreadwatch.snapshot.Snapshot` (a dump or a live listing) through the same
:class:`~spreadwatch.index.SpreadIndex` the operator keeps, so every registered profile (``PROFILES``) is
simulated by the code that scores it — a new profile needs no change here. Read-only: nothing is written to
any cluster. See ``docs/whatif.md``.
"""

from __future__ import annotations

from spreadwatch.whatif.costs import COST_STEP, CostPlan, CostStep, plan_deletion_costs
from spreadwatch.whatif.rebalance import Eviction, RebalancePlan, plan_rebalance
from spreadwatch.whatif.rollout import RolloutForecast, RolloutStep, simulate_rollout
from spreadwatch.whatif.scaledown import ScaleDownStep, simulate_scale_down
from spreadwatch.whatif.simulate import (
    PendingStep,
    PlacementStep,
    RunsSummary,
    Simulation,
    WhatIf,
    candidate_scores,
    simulate_add,
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

__all__ = [
    "BASELINE_PROFILE",
    "COMPARED_PROFILE",
    "COST_STEP",
    "HEALTH_ORDER",
    "ClusterSummary",
    "CostPlan",
    "CostStep",
    "Eviction",
    "PendingStep",
    "PlacementStep",
    "ProfileChange",
    "RebalancePlan",
    "RolloutForecast",
    "RolloutStep",
    "RunsSummary",
    "ScaleDownStep",
    "Simulation",
    "WhatIf",
    "ZoneSummary",
    "candidate_scores",
    "plan_deletion_costs",
    "plan_rebalance",
    "simulate_add",
    "simulate_rollout",
    "simulate_runs",
    "simulate_scale_down",
    "summarize_cluster",
    "worst_key",
]
