"""The deployment controller's arithmetic: upstream's tables (v1.36.4).

deployment_util_test.go ``TestResolveFenceposts``, ``TestNewRSNewReplicas``; rolling_test.go
``TestDeploymentController_reconcileNewReplicaSet``, ``_reconcileOldReplicaSets``, ``_cleanupUnhealthyReplicas``,
``_scaleDownOldReplicaSetsForRollingUpdate``; sync_test.go ``TestScale`` (proportional scaling; its "failed rs
update" row tests an API failure, not arithmetic, and is left out). Their ``newDeployment`` has maxSurge and
maxUnavailable 0 unless given; their ``rs`` no available replicas unless set.
"""

from __future__ import annotations

import pytest

from spreadwatch.controllers import (
    ReplicaSetSize,
    cleanup_unhealthy,
    new_replicas,
    old_scale_downs,
    reconcile_new,
    resolve_fenceposts,
    scale_down_old,
    scale_shares,
)
from spreadwatch.model import Controller, PodTemplate, Scaling
from spreadwatch.selectors import EVERYTHING

NEW, OLD, OLDER = "2016-05-20T02:00:00Z", "2016-05-20T01:00:00Z", "2016-05-20T00:00:00Z"
_TEMPLATE = PodTemplate()


def deployment(replicas: int, surge: int | str = 0, unavailable: int | str = 0, recreate: bool = False) -> Controller:
    return Controller("Deployment", "apps/v1", "default", "foo", "uid-foo", {}, EVERYTHING, None, None, {},
                      _TEMPLATE, replicas=replicas,
                      scaling=Scaling(max_surge=surge, max_unavailable=unavailable, recreate=recreate))  # fmt: skip


def rs(
    name: str, replicas: int, created: str = "", available: int = 0, desired: int = -1, most: int = -1
) -> Controller:
    return Controller("ReplicaSet", "apps/v1", "default", name, f"uid-{name}", {}, EVERYTHING, None, None, {},
                      _TEMPLATE, replicas=replicas, creation=created,
                      scaling=Scaling(available=available, desired=desired, max_replicas=most))  # fmt: skip


def size(record: Controller) -> ReplicaSetSize:
    return ReplicaSetSize(record, record.replicas, record.scaling.available)




@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    ("0%", "0%", 0, (0, 1)), ("39%", "39%", 10, (4, 3)), (None, "39%", 10, (0, 3)), ("39%", None, 10, (4, 0)),
    (None, None, 10, (0, 1)),
], ids=str)  # fmt: skip
def test_resolve_fenceposts(
    surge: str | None, unavailable: str | None, desired: int, expected: tuple[int, int]
) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize(("surge", "unavailable"), [("oops", "39%"), ("55%", "urg")])
def test_resolve_fenceposts_errors(surge: str, unavailable: str) -> None:
    with pytest.raises(ValueError, match="invalid value"):
        resolve_fenceposts(surge, unavailable, 10)


@pytest.mark.parametrize(("replicas", "new", "surge", "recreate", "expected"), [
    pytest.param(1, 5, 1, False, 5, id="can-not-scale-up-to-newRSReplicas"),
    pytest.param(6, 2, 10, False, 6, id="scale-up-to-depReplicas"),
    pytest.param(3, 1, 1, True, 3, id="recreate-to-depReplicas"),
])  # fmt: skip
def test_new_rs_new_replicas(replicas: int, new: int, surge: int, recreate: bool, expected: int) -> None:
    # allRSs holds only rs5 (5 replicas), as upstream's table passes it
    assert new_replicas(deployment(replicas, surge, 1, recreate), 5, new) == expected


@pytest.mark.parametrize(("replicas", "surge", "old", "new", "expected"), [
    (10, 0, 10, 0, 0), (10, 2, 10, 0, 2), (10, 2, 5, 0, 7), (10, 2, 10, 2, 2), (10, 2, 2, 11, 10),
], ids=str)  # fmt: skip
def test_reconcile_new_replica_set(replicas: int, surge: int, old: int, new: int, expected: int) -> None:
    """(the rows without a scale expect the new ReplicaSet's replicas unchanged)"""
    assert reconcile_new(deployment(replicas, surge, 0), old + new, new) == expected


@pytest.mark.parametrize(("unavailable", "old", "new", "ready_old", "ready_new", "expected"), [
    pytest.param(0, 10, 0, 10, 0, {"foo-old": 9}, id="maxUnavailable-0-resolves-to-1"),
    pytest.param(2, 10, 0, 10, 0, {"foo-old": 8}, id="2-of-10-ready"),
    pytest.param(2, 10, 0, 8, 0, {"foo-old": 8}, id="unhealthy-cleaned-up"),
    pytest.param(2, 10, 0, 9, 0, {"foo-old": 8}, id="1-unhealthy-and-1-ready"),
    pytest.param(2, 8, 2, 8, 0, {}, id="new-rs-unavailable-pods-hold-it"),
])  # fmt: skip
def test_reconcile_old_replica_sets(unavailable: int, old: int, new: int, ready_old: int, ready_new: int,
                                    expected: dict[str, int]) -> None:  # fmt: skip
    d = deployment(10, 0, unavailable)
    assert old_scale_downs(d, size(rs("foo-new", new, available=ready_new)),
                           [size(rs("foo-old", old, available=ready_old))]) == expected  # fmt: skip


@pytest.mark.parametrize(("ready", "most", "cleaned"), [(8, 1, 1), (8, 3, 2), (8, 0, 0), (10, 3, 0)])
def test_cleanup_unhealthy_replicas(ready: int, most: int, cleaned: int) -> None:
    assert cleanup_unhealthy([size(rs("foo-v2", 10, available=ready))], most)[1] == cleaned


@pytest.mark.parametrize(("unavailable", "ready", "old", "expected"), [
    (0, 10, 10, 9), (2, 10, 10, 8), (2, 8, 10, 10), (2, 10, 0, 0), (2, 1, 10, 10),
], ids=str)  # fmt: skip
def test_scale_down_old_replica_sets_for_rolling_update(unavailable: int, ready: int, old: int, expected: int) -> None:
    old_rs = rs("foo-v2", old, available=ready)
    assert scale_down_old(deployment(10, 0, unavailable), ready, [size(old_rs)]) == {"foo-v2": expected}


def _annotated(record: Controller, old_replicas: int, old_surge: int) -> Controller:
    """SetReplicasAnnotations(rs, desired, desired + MaxSurge(oldDeployment)), as TestScale does."""
    return rs(record.name, record.replicas, record.creation, record.scaling.available, old_replicas,
              old_replicas + old_surge)  # fmt: skip


@pytest.mark.parametrize(("new_size", "old_size", "surge", "new", "old", "expected_new", "expected_old"), [
    pytest.param(12, 10, 0, ("foo-v1", 10, NEW), [], 12, [], id="normal-10-to-12"),
    pytest.param(5, 10, 0, ("foo-v1", 10, NEW), [], 5, [], id="normal-10-to-5"),
    pytest.param(10, 5, 0, ("foo-v2", 2, NEW), [("foo-v1", 3, OLD)], 4, [6], id="proportional-5-to-10"),
    pytest.param(3, 5, 0, ("foo-v2", 2, NEW), [("foo-v1", 3, OLD)], 1, [2], id="proportional-5-to-3"),
    pytest.param(4, 9, 0, ("foo-v2", 8, NEW), [("foo-v1", 1, OLD)], 4, [0], id="proportional-9-to-4"),
    pytest.param(10, 7, 0, ("foo-v3", 2, NEW), [("foo-v2", 3, OLD), ("foo-v1", 2, OLDER)], 3, [4, 3],
                 id="proportional-7-to-10"),
    pytest.param(8, 13, 0, ("foo-v3", 2, NEW), [("foo-v2", 8, OLD), ("foo-v1", 3, OLDER)], 1, [5, 2],
                 id="proportional-13-to-8"),
    pytest.param(4, 3, 0, ("foo-v3", 1, NEW), [("foo-v2", 1, OLD), ("foo-v1", 1, OLDER)], 2, [1, 1],
                 id="leftover-3-to-4"),
    pytest.param(2, 3, 0, ("foo-v3", 1, NEW), [("foo-v2", 1, OLD), ("foo-v1", 1, OLDER)], 1, [1, 0],
                 id="leftover-3-to-2"),
    pytest.param(5, 4, 0, None, [("foo-v2", 2, OLD), ("foo-v1", 2, OLDER)], None, [3, 2], id="no-new-rs-4-to-5"),
    pytest.param(0, 6, 0, ("foo-v3", 3, NEW), [("foo-v2", 2, OLD), ("foo-v1", 1, OLDER)], 0, [0, 0],
                 id="proportional-6-to-0"),
    pytest.param(6, 6, 0, ("foo-v3", 0, NEW), [("foo-v2", 0, OLD), ("foo-v1", 0, OLDER)], 6, [0, 0],
                 id="proportional-0-to-6"),
    pytest.param(20, 10, 2, ("foo-v2", 6, NEW), [("foo-v1", 6, OLD)], 11, [11], id="surge-pods-10-to-20"),
])  # fmt: skip
def test_scale(new_size: int, old_size: int, surge: int, new: tuple[str, int, str] | None,
               old: list[tuple[str, int, str]], expected_new: int | None, expected_old: list[int]) -> None:  # fmt: skip
    new_rs = _annotated(rs(*new), old_size, surge) if new is not None else None
    olds = [_annotated(rs(*o), old_size, surge) for o in old]
    sizes = scale_shares(deployment(new_size, surge), size(new_rs) if new_rs else None, [size(o) for o in olds])
    if new_rs is not None:
        assert sizes.get(new_rs.name, new_rs.replicas) == expected_new
    assert [sizes.get(o.name, o.replicas) for o in olds] == expected_old


def test_scale_changing_both_surge_and_size() -> None:
    """TestScale "change both surge and size": 10 (surge 3) -> 50 (surge 6), 5 + 8 -> 22 + 34."""
    new_rs = _annotated(rs("foo-v2", 5, NEW), 10, 3)
    old_rs = _annotated(rs("foo-v1", 8, OLD), 10, 3)
    assert scale_shares(deployment(50, 6), size(new_rs), [size(old_rs)]) == {"foo-v2": 22, "foo-v1": 34}


def test_scale_a_saturated_but_broken_new_replica_set_leaves_the_old_pods() -> None:
    new_rs = _annotated(rs("foo-v2", 2, NEW, available=0), 2, 1)
    old_rs = _annotated(rs("foo-v1", 1, OLD), 2, 1)
    sizes = scale_shares(deployment(2, 1, 1), size(new_rs), [size(old_rs)])
    assert (sizes.get("foo-v2", 2), sizes.get("foo-v1", 1)) == (2, 1)
