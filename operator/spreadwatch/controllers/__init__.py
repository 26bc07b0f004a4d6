"""kube-controller-manager's arithmetic that decides a workload's safety (pure): which pod a scale-down deletes
(:mod:`~spreadwatch.controllers.ranking` for ReplicaSets and ReplicationControllers,
:mod:`~spreadwatch.controllers.statefulset`), how a Deployment scales and rolls out
(:mod:`~spreadwatch.controllers.deployment`) and a PodDisruptionBudget's status
(:mod:`~spreadwatch.controllers.disruption`), each as the v1.36 controller computes it and proven on its
upstream tables (``tests/controllers/``). Imports nothing from kopf, kubernetes or prometheus_client.
"""

from __future__ import annotations

from spreadwatch.controllers.deployment import (
    DEFAULT_FENCEPOST,
    ReplicaSetSize,
    cleanup_unhealthy,
    creation_order,
    fenceposts,
    new_replicas,
    old_scale_downs,
    reconcile_new,
    resolve_fenceposts,
    scale_down_old,
    scale_shares,
)
from spreadwatch.controllers.disruption import (
    BudgetError,
    BudgetStatus,
    budget_status,
    controller_scale,
    scaled_value,
)
from spreadwatch.controllers.ranking import colocated_ranks, deletion_candidates, less, time_bucket
from spreadwatch.controllers.statefulset import next_condemned, ordinal

__all__ = [
    "DEFAULT_FENCEPOST",
    "BudgetError",
    "BudgetStatus",
    "ReplicaSetSize",
    "budget_status",
    "cleanup_unhealthy",
    "colocated_ranks",
    "controller_scale",
    "creation_order",
    "deletion_candidates",
    "fenceposts",
    "less",
    "new_replicas",
    "next_condemned",
    "old_scale_downs",
    "ordinal",
    "reconcile_new",
    "resolve_fenceposts",
    "scale_down_old",
    "scale_shares",
    "scaled_value",
    "time_bucket",
]
