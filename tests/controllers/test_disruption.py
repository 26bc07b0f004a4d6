"""A PodDisruptionBudget's status as the disruption controller computes it: upstream's tables.

pkg/controller/disruption/disruption_test.go (v1.36.4), each ``VerifyPdbStatus(disruptionsAllowed,
currentHealthy, desiredHealthy, expectedPods)`` and ``VerifyDisruptionAllowed`` of its tests as a row: the pods
(Ready or not, their controller), the controllers and the budget; ``budget_status`` must give the same four
numbers, or fail to sync where the controller does (it then reports disruptionsAllowed 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from k8s_objects import budget, controller, owner, pod
from spreadwatch.controllers import BudgetError, BudgetStatus, budget_status, scaled_value
from spreadwatch.model import Controller, Pod, PodDisruptionBudget, parse_object

FOO = {"matchLabels": {"foo": "bar"}}


def _pdb(**fence: int | str) -> PodDisruptionBudget:
    record = parse_object(budget("pdb", FOO, **fence))  # type: ignore[arg-type]
    assert isinstance(record, PodDisruptionBudget)
    return record


def _ctrl(kind: str, name: str, replicas: int, owners: list[dict[str, object]] | None = None) -> Controller:
    record = parse_object(controller(kind, name, FOO if kind != "ReplicationController" else {"foo": "bar"},
                                     replicas=replicas, owners=owners))  # fmt: skip
    assert isinstance(record, Controller)
    return record


def _pods(count: int, ready: int, kind: str | None = None, name: str = "") -> list[Pod]:
    out = []
    for i in range(count):
        body = pod(f"{name or 'naked'}-{i}", {"foo": "bar"}, "node", owners=[owner(kind, name)] if kind else None,
                   ready_at="2026-01-01T00:00:00Z" if i < ready else None)  # fmt: skip
        record = parse_object(body)
        assert isinstance(record, Pod)
        out.append(record)
    return out


def status(pdb: PodDisruptionBudget, pods: Sequence[Pod], controllers: Sequence[Controller]) -> BudgetStatus:
    by_key = {(c.kind, c.name): c for c in controllers}
    healthy = sum(1 for p in pods if p.ready and not p.deleting)
    return budget_status(pdb, len(pods), healthy, [p.controller for p in pods],
                         lambda kind, name: by_key.get((kind, name)))  # fmt: skip


RS7, RS5, RS3, RS10 = (_ctrl("ReplicaSet", "rs", n) for n in (7, 5, 3, 10))
RC3 = _ctrl("ReplicationController", "rc", 3)
SS3 = _ctrl("StatefulSet", "ss", 3)
DEPLOYMENT = _ctrl("Deployment", "d", 11)
RS_OF_D = _ctrl("ReplicaSet", "rs-of-d", 4, owners=[owner("Deployment", "d")])

# (budget, pods, controllers, (disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods))
ROWS = [
    pytest.param(_pdb(min_available=3), _pods(0, 0), [], (0, 0, 3, 0), id="TestUnavailable-no-pods"),
    pytest.param(_pdb(min_available=3), _pods(3, 3), [], (0, 3, 3, 3), id="TestUnavailable-3-of-3"),
    pytest.param(_pdb(min_available=3), _pods(4, 4), [], (1, 4, 3, 4), id="TestUnavailable-4-healthy"),
    pytest.param(_pdb(min_available=3), _pods(4, 3), [], (0, 3, 3, 4), id="TestUnavailable-one-unready"),
    pytest.param(_pdb(max_unavailable=1), _pods(0, 0), [], (0, 0, 0, 0), id="TestIntegerMaxUnavailable-no-pods"),
    pytest.param(_pdb(max_unavailable=1), _pods(1, 1), [], (0, 1, 0, 0), id="TestIntegerMaxUnavailable-naked"),
    pytest.param(_pdb(max_unavailable=2), _pods(1, 1, "ReplicaSet", "rs"), [RS7], (0, 1, 5, 7),
                 id="TestIntegerMaxUnavailableWithScaling-7"),
    pytest.param(_pdb(max_unavailable=2), _pods(1, 1, "ReplicaSet", "rs"), [RS5], (0, 1, 3, 5),
                 id="TestIntegerMaxUnavailableWithScaling-5"),
    pytest.param(_pdb(max_unavailable="30%"), _pods(1, 1, "ReplicaSet", "rs"), [RS7], (0, 1, 4, 7),
                 id="TestPercentageMaxUnavailableWithScaling-7-(30%-of-7-up-is-3)"),
    pytest.param(_pdb(max_unavailable="30%"), _pods(1, 1, "ReplicaSet", "rs"), [RS3], (0, 1, 2, 3),
                 id="TestPercentageMaxUnavailableWithScaling-3"),
    pytest.param(_pdb(min_available="28%"), _pods(1, 1), [], (0, 1, 0, 0), id="TestNakedPod-unmanaged-left-out"),
    pytest.param(_pdb(min_available="20%"), _pods(1, 1, "ReplicaSet", "rs"), [RS10], (0, 1, 2, 10),
                 id="TestReplicaSet"),
    pytest.param(_pdb(min_available="34%"), _pods(2, 2, "ReplicationController", "rc"), [RC3], (0, 2, 2, 3),
                 id="TestReplicationController-2-pods-(34%-of-3-up-is-2)"),
    pytest.param(_pdb(min_available="34%"), _pods(3, 3, "ReplicationController", "rc"), [RC3], (1, 3, 2, 3),
                 id="TestReplicationController-3-pods"),
    pytest.param(_pdb(min_available="34%"), [*_pods(3, 3, "ReplicationController", "rc"), *_pods(1, 1)], [RC3],
                 (2, 4, 2, 3), id="TestReplicationController-rogue-pod"),
    pytest.param(_pdb(min_available="34%"), _pods(3, 3, "StatefulSet", "ss"), [SS3], (1, 3, 2, 3),
                 id="TestStatefulSetController"),
    pytest.param(_pdb(min_available="28%"), _pods(11, 5, "ReplicationController", "rc"),
                 [_ctrl("ReplicationController", "rc", 11)], (1, 5, 4, 11), id="TestTwoControllers-rc"),
    *[pytest.param(_pdb(min_available="28%"),
                   [*_pods(11, 5, "ReplicationController", "rc"), *_pods(11, ready, "ReplicaSet", "rs")],
                   [_ctrl("ReplicationController", "rc", 11), _ctrl("ReplicaSet", "rs", 11)], expected,
                   id=f"TestTwoControllers-rc-and-rs-{ready}-ready-(28%-of-22-up-is-7)")
      for ready, expected in ((4, (2, 9, 7, 22)), (3, (1, 8, 7, 22)), (2, (0, 7, 7, 22)), (1, (0, 6, 7, 22)))],
    pytest.param(_pdb(min_available="1%"), _pods(2, 2, "ReplicationController", "rc"),
                 [_ctrl("ReplicationController", "rc", 1)], (1, 2, 1, 1), id="TestMultipleControllers"),
    pytest.param(_pdb(max_unavailable=1), _pods(3, 3, "ReplicaSet", "rs-of-d"), [RS_OF_D, DEPLOYMENT],
                 (0, 3, 10, 11), id="TestDeploymentFinderFunction-the-Deployment's-scale"),
    pytest.param(_pdb(max_unavailable=1), _pods(3, 3, "ReplicaSet", "rs-of-d"), [RS_OF_D], (0, 3, 3, 4),
                 id="Deployment-gone-the-ReplicaSet's-scale-subresource"),
]  # fmt: skip


@pytest.mark.parametrize(("pdb", "pods", "controllers", "expected"), ROWS)
def test_upstream_status(pdb: PodDisruptionBudget, pods: list[Pod], controllers: list[Controller],
                         expected: tuple[int, int, int, int]) -> None:  # fmt: skip
    assert status(pdb, pods, controllers) == BudgetStatus(expected[3], expected[1], expected[2], expected[0])


@pytest.mark.parametrize(("pdb", "pods", "controllers", "problem"), [
    pytest.param(_pdb(min_available="28%"), _pods(1, 1, "ReplicaSet", "gone"), [], "found no controllers",
                 id="TestUnsupportedControllerPod-controller-not-found"),
    pytest.param(_pdb(min_available="x%"), _pods(1, 1), [], "not an integer percentage", id="unparsable-percentage"),
    pytest.param(_pdb(max_unavailable="3"), _pods(1, 1), [], "must be a percentage", id="string-without-%"),
    pytest.param(_pdb(min_available=1, max_unavailable=1), _pods(1, 1), [], "both", id="both-set"),
])  # fmt: skip
def test_sync_failures(pdb: PodDisruptionBudget, pods: list[Pod], controllers: list[Controller], problem: str) -> None:
    with pytest.raises(BudgetError, match=problem):
        status(pdb, pods, controllers)


def test_integer_min_available_needs_no_controller() -> None:
    """An integer minAvailable counts the selected pods: a pod whose controller is unknown does not fail it."""
    assert status(_pdb(min_available=1), _pods(2, 2, "ReplicaSet", "gone"), []) == BudgetStatus(2, 2, 1, 1)


def test_an_invalid_selector_fails_the_sync() -> None:
    record = parse_object(budget("pdb", {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, min_available=1))
    assert isinstance(record, PodDisruptionBudget)
    with pytest.raises(BudgetError, match="not a valid label selector operator"):
        status(record, [], [])


@pytest.mark.parametrize(("value", "total", "up", "expected"), [
    (2, 10, True, 2), ("25%", 10, True, 3), ("25%", 10, False, 2), ("34%", 3, True, 2), ("0%", 5, True, 0),
    ("100%", 7, False, 7), ("+50%", 3, True, 2), ("1%", 0, True, 0),
], ids=str)  # fmt: skip
def test_scaled_value_is_getscaledvaluefromintorpercent(value: int | str, total: int, up: bool, expected: int) -> None:
    assert scaled_value(value, total, up) == expected
