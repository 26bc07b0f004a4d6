"""simulate --rollout keeps the deployment controller's fences at every step and ends on the new ReplicaSet;
rebalance's deletion costs make the ReplicaSet controller delete exactly the planned pods in order."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.controllers import colocated_ranks, deletion_candidates
from spreadwatch.model import Pod
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif import plan_deletion_costs, simulate_rollout

NODES = [("a1", "za"), ("a2", "za"), ("b1", "zb"), ("b2", "zb"), ("c1", "zc")]


def deployment_cluster(replicas: int, placements: list[int], surge: int | str, unavailable: int | str,
                       ready: list[bool]) -> list[dict[str, Any]]:  # fmt: skip
    """A Deployment ``web`` whose one ReplicaSet ``web-1`` has a pod on each node index of ``placements``."""
    d = controller("Deployment", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=replicas)
    fences = {"maxSurge": surge, "maxUnavailable": unavailable}
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": fences}
    rs = controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web", "pod-template-hash": "1"}},
                    {"app": "web", "pod-template-hash": "1"}, replicas=replicas, owners=[owner("Deployment", "web")],
                    annotations={"deployment.kubernetes.io/revision": "1"})  # fmt: skip
    objects = [*(node(n, z, key=GA_ZONE) for n, z in NODES), d, rs]
    for i, where in enumerate(placements):
        objects.append(pod(f"web-1-{i}", {"app": "web", "pod-template-hash": "1"}, NODES[where][0],
                           owners=[owner("ReplicaSet", "web-1")], created="2026-01-01T00:00:00Z",
                           ready_at=f"2026-01-01T00:00:{i:02d}Z" if ready[i] else None,
                           uid=f"{i:08x}-0000-4000-8000-000000000000"))  # fmt: skip
    return objects


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replicas=st.integers(1, 6),
    surge=st.sampled_from([0, 1, 2, "25%", "50%"]),
    unavailable=st.sampled_from([0, 1, "25%"]),
    data=st.data(),
)
def test_rollout_keeps_the_fences_and_ends_on_the_new_replicaset(
    replicas: int, surge: int | str, unavailable: int | str, data: st.DataObject
) -> None:
    placements = data.draw(st.lists(st.integers(0, len(NODES) - 1), min_size=replicas, max_size=replicas))
    ready = data.draw(st.lists(st.booleans(), min_size=replicas, max_size=replicas))
    snap = Snapshot.from_objects(deployment_cluster(replicas, placements, surge, unavailable, ready))
    forecast = simulate_rollout(snap, "deploy/default/web", get_profile("v1.28"))
    assert forecast.restart and forecast.new_replica_set == "web-whatif"
    most = replicas + forecast.max_surge
    ready_old = {f"web-1-{i}" for i, r in enumerate(ready) if r}
    new_pods = 0
    available = len(ready_old)
    for step in forecast.steps:
        assert step.pods <= most  # never more than maxSurge above the replicas
        new_pods += len(step.added)
        ready_old -= {p for p, _, _ in step.deleted}
        after = new_pods + len(ready_old)  # the new pods are Ready at once
        # a scale-down never takes the available pods below replicas - maxUnavailable (nor below where they were)
        assert after >= min(replicas - forecast.max_unavailable, available)
        available = after
    assert forecast.final.pods == replicas
    end = forecast.to_dict()["end"]
    assert (end["nodeSkew"], end["zoneSkew"]) == (forecast.steps[-1].node_skew, forecast.steps[-1].zone_skew)
    assert forecast.worst_node_skew >= end["nodeSkew"] and forecast.worst_zone_skew >= end["zoneSkew"]


def test_rollout_one_at_a_time_alternates_up_and_down() -> None:
    """maxSurge 1, maxUnavailable 0, 3 Ready pods: +1 new, -1 old, three times (the rolling update's rhythm)."""
    snap = Snapshot.from_objects(deployment_cluster(3, [0, 2, 4], 1, 0, [True] * 3))
    forecast = simulate_rollout(snap, "deploy/default/web", get_profile("v1.28"))
    assert [(s.replica_set, s.replicas_before, s.replicas_after) for s in forecast.steps] == [
        ("web-whatif", 0, 1), ("web-1", 3, 2), ("web-whatif", 1, 2), ("web-1", 2, 1), ("web-whatif", 2, 3),
        ("web-1", 1, 0),
    ]  # fmt: skip
    assert [len(s.added) for s in forecast.steps] == [1, 0, 1, 0, 1, 0]
    assert forecast.final.zone_skew == 0  # 3 new pods, one per zone: placed by the profile


def test_rollout_stalls_on_pods_that_would_stay_pending() -> None:
    """Every node cordoned: each new pod is created but stays Pending (never available), so the old ReplicaSet
    goes down only as far as maxUnavailable allows and the rollout stops there, as the controller's does."""
    objects = deployment_cluster(3, [0, 2, 4], 1, 1, [True] * 3)
    for o in objects:
        if o["kind"] == "Node":
            o["spec"] = {**o.get("spec", {}), "unschedulable": True}
    forecast = simulate_rollout(Snapshot.from_objects(objects), "deploy/default/web", get_profile("v1.28"))
    assert [(s.replica_set, s.replicas_before, s.replicas_after) for s in forecast.steps] == [
        ("web-whatif", 0, 1), ("web-1", 3, 2), ("web-whatif", 1, 2),
    ]  # fmt: skip
    assert [node for s in forecast.steps for _, node, _ in s.added] == ["", ""]  # unbound: Pending
    assert forecast.final.health.value == "Unschedulable"


def _apply_costs(pods: list[Pod], costs: dict[str, int]) -> list[Pod]:
    return [msgspec.structs.replace(p, deletion_cost=costs[p.name]) for p in pods]


@pytest.mark.parametrize("placements", [[0, 0, 1, 2, 2, 3], [0, 1, 2, 3, 4], [0, 0, 0, 0, 2], [4, 4, 1, 1]])
def test_deletion_costs_make_the_controller_delete_the_planned_pods_in_order(placements: list[int]) -> None:
    n = len(placements)
    snap = Snapshot.from_objects(deployment_cluster(n, placements, 1, 0, [True] * n))
    plan = plan_deletion_costs(snap, "deploy/default/web", get_profile("v1.28"))
    assert len(plan.steps) == n and plan.first_anyway == 0
    costs = {s.pod: s.cost for s in plan.steps}
    pods = _apply_costs(snap.pods, costs)
    for step in plan.steps:
        ranks = colocated_ranks(pods, pods)
        assert [p.name for p in deletion_candidates(pods, ranks)] == [step.pod]  # the one planned, whatever the time
        pods = [p for p in pods if p.name != step.pod]
        zones = dict(step.zones_after)
        assert max(zones.values()) - min(zones.values()) <= max(1, step.zone_skew)
    commands = plan.commands()
    assert commands[0].startswith("kubectl annotate pod web-1-0 -n default controller.kubernetes.io/pod-deletion-cost=")
    assert all(c.endswith(" --overwrite") for c in commands)


def test_deletion_costs_take_from_the_fullest_zone_first() -> None:
    """za holds 3 (a1: 2, a2: 1), zb 1, zc 1: the first two go from za (a1 first: it holds more)."""
    snap = Snapshot.from_objects(deployment_cluster(5, [0, 0, 1, 2, 4], 1, 0, [True] * 5))
    plan = plan_deletion_costs(snap, "deploy/default/web", get_profile("v1.28"))
    assert [(s.node, s.zone) for s in plan.steps[:2]] == [("a1", "za"), ("a1", "za")]
    assert plan.steps[1].zones_after == (("za", 1), ("zb", 1), ("zc", 1))
