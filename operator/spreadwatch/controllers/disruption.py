"""A PodDisruptionBudget's status as the disruption controller computes it (pure).

``pkg/controller/disruption`` ``trySync``, for the pods the budget's selector selects in its namespace:

* ``currentHealthy``: selected pods that are Ready and not being deleted (``countHealthyPods``; pods an eviction
  has just disrupted, ``status.disruptedPods``, are not modelled: they leave within 2 minutes anyway);
* ``maxUnavailable`` (int or percentage): ``expectedPods`` is the sum of the scales of the selected pods'
  controllers (``getExpectedScale``: a pod of a Deployment's ReplicaSet counts the Deployment's replicas, each
  controller once), ``desiredHealthy = max(0, expectedPods - maxUnavailable)``, the percentage of
  ``expectedPods`` rounded up;
* ``minAvailable`` integer: ``expectedPods`` is the number of selected pods (all of them, terminal ones too) and
  ``desiredHealthy`` the integer; a percentage: ``expectedPods`` from the scales, ``desiredHealthy`` the
  percentage of it rounded up;
* ``disruptionsAllowed = currentHealthy - desiredHealthy``, 0 when that or ``expectedPods`` is ≤ 0.

The controller fails to sync (:class:`BudgetError`; it then sets ``disruptionsAllowed`` to 0) when a value does
not parse, or a selected pod's controller cannot be found; pods without a controller are left out of the scale
(``unmanagedPods``). Both ``minAvailable`` and ``maxUnavailable`` set (which the API server refuses) is an
error here too. O(distinct controllers) per budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import NamedTuple

from spreadwatch.errors import SpreadwatchError
from spreadwatch.model import WORKLOAD_KINDS, Controller, OwnerRef, PodDisruptionBudget

__all__ = ["BudgetError", "BudgetStatus", "budget_status", "controller_scale", "scaled_value"]

#: the namespace's controllers: (kind, name) -> the record, or None
Lookup = Callable[[str, str], Controller | None]

_RS_GROUPS = ("apps", "extensions")


class BudgetError(SpreadwatchError):
    """The disruption controller cannot compute the budget's status (it reports disruptionsAllowed 0)."""


class BudgetStatus(NamedTuple):
    """``status.expectedPods``, ``currentHealthy``, ``desiredHealthy`` and ``disruptionsAllowed``."""

    expected_pods: int
    current_healthy: int
    desired_healthy: int
    disruptions_allowed: int


def scaled_value(value: int | str, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as it is; ``"N%"`` (``strconv.Atoi`` of N) as N % of
    ``total``, rounded up or down in float64 as Go does. ValueError for any other string. O(len(value))."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError(f"invalid value {value!r}: a string must be a percentage")
    digits = value[:-1]
    body = digits[1:] if digits[:1] in ("+", "-") else digits
    if not (body.isascii() and body.isdigit()) or len(body.lstrip("0")) > 19:
        raise ValueError(f"invalid value {value!r}: not an integer percentage")
    scaled = float(int(digits)) * float(total) / 100
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _owned(ref: OwnerRef, kind: str, groups: tuple[str, ...], lookup: Lookup) -> Controller | None:
    """``verifyGroupKind`` and the lister's Get with the uid check. O(1)."""
    if ref.kind != kind or _group(ref.api_version) not in groups:
        return None
    found = lookup(kind, ref.name)
    return found if found is not None and found.uid == ref.uid else None


def controller_scale(ref: OwnerRef, lookup: Lookup) -> tuple[str, int] | None:
    """``getExpectedScale``'s finders in their order, for a pod's controller: (the scaled controller's uid, its
    replicas) — a ReplicationController; a Deployment through its ReplicaSet; a ReplicaSet without a Deployment;
    a StatefulSet; last the scale subresource of the controller itself (so a ReplicaSet whose Deployment is
    gone counts its own replicas). None: not found (the controller's "found no controllers" error). O(1)."""
    rc = _owned(ref, "ReplicationController", ("",), lookup)
    if rc is not None:
        return rc.uid, rc.replicas
    rs = _owned(ref, "ReplicaSet", _RS_GROUPS, lookup)
    if rs is not None:
        owner = rs.controller
        if owner is not None and owner.kind == "Deployment" and _group(owner.api_version) in _RS_GROUPS:
            deployment = _owned(owner, "Deployment", _RS_GROUPS, lookup)
            if deployment is not None:
                return deployment.uid, deployment.replicas
        return rs.uid, rs.replicas
    sts = _owned(ref, "StatefulSet", ("apps",), lookup)
    if sts is not None:
        return sts.uid, sts.replicas
    found = lookup(ref.kind, ref.name) if ref.kind in WORKLOAD_KINDS else None  # (the scale subresource)
    return (found.uid, found.replicas) if found is not None and found.uid == ref.uid else None


def _expected_scale(owners: Iterable[OwnerRef | None], lookup: Lookup) -> int:
    """The sum of the selected pods' controllers' scales, each controller once; pods without one are left out.
    Raises BudgetError naming the first controller (by kind and name) not found. O(distinct owners log)."""
    scales: dict[str, int] = {}
    for ref in sorted((r for r in owners if r is not None), key=lambda r: (r.kind, r.name, r.uid)):
        found = controller_scale(ref, lookup)
        if found is None:
            if ref.kind not in WORKLOAD_KINDS:
                raise BudgetError(f"a selected pod's controller is a {ref.kind}, whose scale spreadwatch does not read")
            raise BudgetError(f"found no controllers for a pod of {ref.kind} {ref.name}")
        scales[found[0]] = found[1]
    return sum(scales.values())


def budget_status(
    pdb: PodDisruptionBudget, pods: int, healthy: int, owners: Iterable[OwnerRef | None], lookup: Lookup
) -> BudgetStatus:
    """The status the disruption controller writes for ``pdb``: it selects ``pods`` pods, ``healthy`` of them
    Ready and not being deleted, whose controllers are ``owners`` (None: a pod without one). Raises BudgetError
    when the controller cannot sync it. O(distinct owners)."""
    if pdb.selector_error:
        raise BudgetError(pdb.selector_error)
    if pdb.min_available is not None and pdb.max_unavailable is not None:
        raise BudgetError("both minAvailable and maxUnavailable are set (the API server refuses that)")
    try:
        if pdb.max_unavailable is not None:
            expected = _expected_scale(owners, lookup)
            desired = max(0, expected - scaled_value(pdb.max_unavailable, expected, True))
        elif isinstance(pdb.min_available, int):
            expected, desired = pods, pdb.min_available
        elif pdb.min_available is not None:
            expected = _expected_scale(owners, lookup)
            desired = scaled_value(pdb.min_available, expected, True)
        else:
            expected = desired = 0
    except ValueError as err:
        raise BudgetError(str(err)) from None
    allowed = healthy - desired
    return BudgetStatus(expected, healthy, desired, allowed if expected > 0 and allowed > 0 else 0)
