"""The deployment controller's arithmetic (pure): fenceposts, proportional scaling, rolling-update steps.

``pkg/controller/deployment``: ``util.ResolveFenceposts`` (maxSurge rounded up, maxUnavailable rounded down,
both 0 → maxUnavailable 1), ``util.MaxSurge`` / ``util.MaxUnavailable``; ``sync.go`` ``scale`` (a replica count
change: the one active ReplicaSet takes it, or it is shared in proportion to the ReplicaSets' sizes, largest
first, the leftover to the first); ``rolling.go`` (scale the new ReplicaSet up within maxSurge, then the old
ones down, oldest first, as far as maxUnavailable allows). A Deployment's fenceposts as written are in
:class:`~spreadwatch.model.Scaling` (absent: the API's default, 25%). O(ReplicaSets) each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from spreadwatch.controllers.disruption import scaled_value
from spreadwatch.model import Controller
from spreadwatch.timestamps import unix_seconds

__all__ = [
    "DEFAULT_FENCEPOST",
    "ReplicaSetSize",
    "cleanup_unhealthy",
    "creation_order",
    "fenceposts",
    "new_replicas",
    "old_scale_downs",
    "reconcile_new",
    "resolve_fenceposts",
    "scale_down_old",
    "scale_shares",
]

#: ``SetDefaults_Deployment``: maxSurge and maxUnavailable of a RollingUpdate strategy without them.
DEFAULT_FENCEPOST: Final = "25%"


class ReplicaSetSize(NamedTuple):
    """A ReplicaSet of a Deployment as the controller sees it during a sync: spec.replicas and the available
    pods."""

    rs: Controller
    replicas: int
    available: int


def resolve_fenceposts(max_surge: int | str | None, max_unavailable: int | str | None, desired: int) -> tuple[int, int]:
    """``util.ResolveFenceposts``: maxSurge of ``desired`` rounded up, maxUnavailable rounded down (None: 0);
    both 0 makes maxUnavailable 1. ValueError when a value does not parse. O(1)."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def fenceposts(deployment: Controller) -> tuple[int, int]:
    """(``MaxSurge``, ``MaxUnavailable``) of a Deployment: 0, 0 for ``Recreate``; else :func:`resolve_fenceposts`
    of its values as the API server defaults them (absent: 25%), maxUnavailable capped at the replicas (0 with
    0 replicas). ValueError when a value does not parse (the API server refuses it). O(1)."""
    scaling, desired = deployment.scaling, deployment.replicas
    if scaling.recreate:
        return 0, 0
    surge, unavailable = resolve_fenceposts(
        DEFAULT_FENCEPOST if scaling.max_surge is None else scaling.max_surge,
        DEFAULT_FENCEPOST if scaling.max_unavailable is None else scaling.max_unavailable,
        desired,
    )
    return surge, 0 if desired == 0 else min(unavailable, desired)


def creation_order(rs: Controller) -> tuple[int, str]:
    """``ReplicaSetsByCreationTimestamp``'s key: creation time, then name. O(1)."""
    try:
        created = unix_seconds(rs.creation)
    except ValueError:
        created = 0
    return created, rs.name


def _max_replicas_before(rs: Controller, deployment: Controller) -> int:
    """``getReplicaSetFraction``'s denominator: the ReplicaSet's max-replicas annotation, else the Deployment's
    ``status.replicas``. O(1)."""
    annotated = rs.scaling.max_replicas
    return annotated if annotated > 0 else deployment.scaling.status_replicas


def _proportion(rs: ReplicaSetSize, deployment: Controller, surge: int, to_add: int, added: int) -> int:
    """``GetReplicaSetProportion``. O(1)."""
    if rs.replicas == 0 or to_add in (0, added):
        return 0
    if deployment.replicas == 0:
        fraction = -rs.replicas
    else:
        before = _max_replicas_before(rs.rs, deployment)
        if before == 0:
            fraction = 0
        else:
            new_size = float(rs.replicas * (deployment.replicas + surge)) / float(before)
            fraction = _round_half_away(new_size) - rs.replicas
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _round_half_away(value: float) -> int:
    """``integer.RoundToInt32``: ``int32(math.Round(x))``. O(1)."""
    whole = int(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return whole


def scale_shares(
    deployment: Controller, new_rs: ReplicaSetSize | None, old: Sequence[ReplicaSetSize]
) -> dict[str, int]:
    """``sync.go`` ``scale``: each ReplicaSet's replicas after a change of the Deployment's ``spec.replicas`` (to
    ``deployment.replicas``), by name (only those that change or are considered). O(ReplicaSets log)."""
    active = [rs for rs in (*old, *([new_rs] if new_rs is not None else [])) if rs.replicas > 0]
    if len(active) <= 1:  # FindActiveOrLatest: the active one, else the newest
        target = active[0] if active else (new_rs or max(old, key=lambda r: creation_order(r.rs), default=None))
        return {} if target is None else {target.rs.name: deployment.replicas}
    if (  # IsSaturated: the new ReplicaSet has it all; the old ones go to 0
        new_rs is not None
        and new_rs.replicas == deployment.replicas
        and new_rs.rs.scaling.desired == deployment.replicas
        and new_rs.available == deployment.replicas
    ):
        return {rs.rs.name: 0 for rs in old if rs.replicas > 0}
    if deployment.scaling.recreate:
        return {}
    surge, _ = fenceposts(deployment)
    allowed = deployment.replicas + surge if deployment.replicas > 0 else 0
    to_add = allowed - sum(rs.replicas for rs in active)
    if to_add > 0:  # ReplicaSetsBySizeNewer
        active.sort(key=lambda r: (-r.replicas, _negated(creation_order(r.rs))))
    elif to_add < 0:  # ReplicaSetsBySizeOlder
        active.sort(key=lambda r: (-r.replicas, creation_order(r.rs)))
    sizes: dict[str, int] = {}
    added = 0
    for rs in active:
        share = _proportion(rs, deployment, surge, to_add, added) if to_add else 0
        sizes[rs.rs.name] = rs.replicas + share
        added += share
    if to_add and active:
        first = active[0].rs.name
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes


def _negated(key: tuple[int, str]) -> tuple[int, tuple[int, ...]]:
    """A creation-order key sorted newest first (the name descending too). O(len(name))."""
    return -key[0], tuple(-ord(c) for c in key[1])


def new_replicas(deployment: Controller, total: int, new_size: int) -> int:
    """``NewRSNewReplicas``: the new ReplicaSet's target given ``total`` replicas over every ReplicaSet — within
    maxSurge and never above the Deployment's for a RollingUpdate, the Deployment's for a Recreate. O(1)."""
    if deployment.scaling.recreate:
        return deployment.replicas
    surge, _ = fenceposts(deployment)
    most = deployment.replicas + surge
    if total >= most:
        return new_size
    return new_size + min(most - total, deployment.replicas - new_size)


def reconcile_new(deployment: Controller, total: int, new_size: int) -> int:
    """``reconcileNewReplicaSet``: the new ReplicaSet's replicas after it (down to the Deployment's when above,
    else :func:`new_replicas`). O(1)."""
    if new_size >= deployment.replicas:
        return deployment.replicas
    return new_replicas(deployment, total, new_size)


def cleanup_unhealthy(old: Sequence[ReplicaSetSize], most: int) -> tuple[dict[str, int], int]:
    """``cleanupUnhealthyReplicas``: the old ReplicaSets (oldest first) lose their unavailable replicas, at most
    ``most`` in all; (replicas by name, how many went). O(ReplicaSets log)."""
    sizes = {rs.rs.name: rs.replicas for rs in old}
    cleaned = 0
    for rs in sorted(old, key=lambda r: creation_order(r.rs)):
        if cleaned >= most:
            break
        if rs.replicas in (0, rs.available):
            continue
        cut = min(most - cleaned, rs.replicas - rs.available)
        sizes[rs.rs.name] -= cut
        cleaned += cut
    return sizes, cleaned


def scale_down_old(deployment: Controller, available: int, old: Sequence[ReplicaSetSize]) -> dict[str, int]:
    """``scaleDownOldReplicaSetsForRollingUpdate``: with ``available`` pods over every ReplicaSet, the old ones
    (oldest first) lose what is above ``replicas - maxUnavailable``; replicas by name. O(ReplicaSets log)."""
    _, unavailable = fenceposts(deployment)
    min_available = deployment.replicas - unavailable
    sizes = {rs.rs.name: rs.replicas for rs in old}
    if available <= min_available:
        return sizes
    left = available - min_available
    for rs in sorted(old, key=lambda r: creation_order(r.rs)):
        if left <= 0:
            break
        if sizes[rs.rs.name] == 0:
            continue
        cut = min(sizes[rs.rs.name], left)
        sizes[rs.rs.name] -= cut
        left -= cut
    return sizes


def old_scale_downs(deployment: Controller, new_rs: ReplicaSetSize, old: Sequence[ReplicaSetSize]) -> dict[str, int]:
    """``reconcileOldReplicaSets``: the old ReplicaSets' replicas after one step, by name, those that change —
    first their unavailable pods (:func:`cleanup_unhealthy`), then available ones (:func:`scale_down_old`), as
    far as maxUnavailable allows, counting the new ReplicaSet's unavailable pods. O(ReplicaSets log)."""
    active = [rs for rs in old if rs.replicas > 0]
    if not active:
        return {}
    _, unavailable = fenceposts(deployment)
    min_available = deployment.replicas - unavailable
    total = new_rs.replicas + sum(rs.replicas for rs in old)
    most = total - min_available - (new_rs.replicas - new_rs.available)
    if most <= 0:
        return {}
    cleaned, _ = cleanup_unhealthy(active, most)
    after = [ReplicaSetSize(rs.rs, cleaned[rs.rs.name], rs.available) for rs in active]
    available = new_rs.available + sum(rs.available for rs in old)  # (status: the cleanup removed none of these)
    sizes = scale_down_old(deployment, available, after)
    return {name: size for name, size in sizes.items() if size != _size_of(old, name)}


def _size_of(sets: Sequence[ReplicaSetSize], name: str) -> int:
    return next(rs.replicas for rs in sets if rs.rs.name == name)

