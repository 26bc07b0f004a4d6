"""rebalance: applying the plan from scratch (evict, re-place by the profile) reaches Balanced, every step's
report is the from-scratch one, and brute force finds no shorter plan on small clusters."""

from __future__ import annotations

from itertools import permutations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whatif_clusters import Cluster, bound_copy, clusters, next_pod, scratch_report, scratch_scores, spread_view

from k8s_objects import controller, node, owner, pod
from spreadwatch.report import Health
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.snapshot import Snapshot, load_snapshot
from spreadwatch.whatif import plan_rebalance

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster.yaml"


def _replay(cluster: Cluster, profile: str, victims: tuple[str, ...]) -> tuple[list[dict[str, Any]], list[str]]:
    """Evict ``victims`` in order from scratch; each replacement goes to the first best node by name, Ready when
    its victim was."""
    prof = get_profile(profile)
    objects = list(cluster.objects)
    template = next_pod(cluster.snapshot(), cluster.ref)
    placed = []
    for i, victim in enumerate(victims):
        [gone] = [o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == victim]
        ready = [c for c in gone["status"].get("conditions", []) if c["type"] == "Ready" and c["status"] == "True"]
        objects = [o for o in objects if o is not gone]
        scores = scratch_scores(Snapshot.from_objects(objects), cluster.ref, prof)
        if not scores:
            placed.append("")
            continue
        best = max(scores.values())
        target = min(n for n, s in scores.items() if s == best)
        placed.append(target)
        since = "2026-01-01T00:00:00Z" if ready else None
        objects.append(bound_copy(template, f"replacement-{i}", target, ready_at=since))
    return objects, placed


def _balanced(cluster: Cluster, profile: str, objects: list[dict[str, Any]]) -> bool:
    return scratch_report(Snapshot.from_objects(objects), cluster.ref, get_profile(profile)).health is Health.BALANCED


def _pods_of_web(cluster: Cluster) -> list[str]:
    names = [o["metadata"]["name"] for o in cluster.objects if o["kind"] == "Pod"]
    return [n for n in names if n.startswith("web-")]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=clusters(max_nodes=4, max_pods=4), profile=st.sampled_from(sorted(PROFILES)))
def test_plan_reaches_balanced_and_no_shorter_plan_exists(cluster: Cluster, profile: str) -> None:
    plan = plan_rebalance(cluster.snapshot(), cluster.ref, get_profile(profile))
    assert "budget" not in plan.message
    victims = tuple(e.pod for e in plan.evictions)
    pods = _pods_of_web(cluster)
    if plan.found:
        objects, placed = _replay(cluster, profile, victims)
        assert [e.replacement_node for e in plan.evictions] == placed
        for i, eviction in enumerate(plan.evictions):
            partial, _ = _replay(cluster, profile, victims[: i + 1])
            want = scratch_report(Snapshot.from_objects(partial), cluster.ref, get_profile(profile))
            assert spread_view(eviction.report) == spread_view(want), f"after eviction {i + 1}"
        assert _balanced(cluster, profile, objects)
        assert plan.final.health is Health.BALANCED
        shorter = range(len(victims))
        assert len(set(victims)) == len(victims)
    else:
        assert plan.message.startswith("no plan exists")
        shorter = range(len(pods) + 1)
    # brute force: no sequence of distinct current pods shorter than the plan (any length when there is no
    # plan) makes it Balanced
    for length in shorter:
        for seq in permutations(pods, length):
            objects, _ = _replay(cluster, profile, seq)
            assert not _balanced(cluster, profile, objects), f"{seq} is a shorter plan than {victims}"


def test_plan_for_the_example_checkout_deployment() -> None:
    """checkout: 3 pods on node-b1, 1 on node-c1. Evicting two b1 pods sends the replacements to the empty
    zone eu-west-1a (node-a1, then node-a2): pods per zone 2/1/1 → zone skew 1, node skew 1: Balanced."""
    plan = plan_rebalance(load_snapshot([EXAMPLE]), "deployment/shop/checkout", get_profile("v1.28"))
    assert plan.found and plan.message == "2 eviction(s) make it Balanced"
    assert [(e.node, e.replacement_node) for e in plan.evictions] == [("node-b1", "node-a1"), ("node-b1", "node-a2")]
    assert plan.commands == [
        "kubectl delete pod checkout-6f7d5b9c4-0 -n shop",
        "kubectl delete pod checkout-6f7d5b9c4-1 -n shop",
    ]
    assert [e.report.health for e in plan.evictions] == [Health.IMBALANCED, Health.BALANCED]
    data = plan.to_dict()
    assert data["found"] is True and data["final"]["health"] == "Balanced"
    assert data["evictions"][0]["command"] == plan.commands[0]


def test_limits_say_why_there_is_no_plan() -> None:
    snap = load_snapshot([EXAMPLE])
    prof = get_profile("v1.28")
    one = plan_rebalance(snap, "deployment/shop/checkout", prof, max_evictions=1)
    assert not one.found and one.message.startswith("no plan exists: no sequence of at most 1 of evictions")
    tiny = plan_rebalance(snap, "deployment/shop/checkout", prof, max_states=1)
    assert not tiny.found and "search budget of 1 states" in tiny.message
    assert tiny.evictions == () and tiny.final == tiny.initial


def test_already_balanced_and_unfixable() -> None:
    snap = load_snapshot([EXAMPLE])
    web = plan_rebalance(snap, "deployment/shop/web", get_profile("v1.28"))
    assert web.found and web.evictions == () and web.message == "already Balanced: nothing to evict"
    # one candidate node holds both pods: every replacement lands there again
    objects: list[dict[str, Any]] = [
        node("a1", "za"),
        node("b1", "zb", unschedulable=True),
        controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=2),
    ]
    objects += [pod(f"w{i}", {"app": "web"}, "a1", owners=[owner("ReplicaSet", "web")]) for i in range(2)]
    stuck = plan_rebalance(Snapshot.from_objects(objects), "rs/default/web", get_profile("v1.28"))
    assert not stuck.found and stuck.message.startswith("no plan exists")
    assert stuck.states_explored == 2  # the two pods are interchangeable: one state per depth (1, then 2 evicted)


def test_skipped_workload_has_no_plan() -> None:
    snap = load_snapshot([EXAMPLE])
    plan = plan_rebalance(snap, "replicaset/batch/worker", get_profile("v1.28"))
    assert not plan.found and "skips this workload" in plan.message


@pytest.mark.parametrize("bad", [-1])
def test_negative_max_evictions_is_an_input_error(bad: int) -> None:
    from spreadwatch.errors import InputError

    with pytest.raises(InputError, match="--max-evictions must be >= 0"):
        plan_rebalance(load_snapshot([EXAMPLE]), "deployment/shop/checkout", get_profile("v1.28"), max_evictions=bad)
