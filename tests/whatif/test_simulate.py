"""simulate: every step's scores are the from-scratch scores with the earlier simulated pods bound (all
profiles, property test), the tie set and choice rules, scale-downs step by step, seeded runs, and upstream's
expectation that an empty 300-node, 3-zone cluster ends with zone skew 0 after 3, 12 and 27 replicas."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whatif_clusters import Cluster, bound_copy, clusters, next_pod, scratch_report, scratch_scores, spread_view

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.errors import InputError, WorkloadNotFoundError
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif import PlacementStep, ScaleDownStep, simulate_add, simulate_runs, simulate_scale_down

ALL_PROFILES = sorted(PROFILES)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cluster=clusters(),
    profile=st.sampled_from(ALL_PROFILES),
    count=st.integers(1, 5),
    seed=st.none() | st.integers(0, 2**16),
    top_n=st.integers(1, 4),
)
def test_every_step_scores_like_a_cluster_with_the_earlier_pods_bound(
    cluster: Cluster, profile: str, count: int, seed: int | None, top_n: int
) -> None:
    prof = get_profile(profile)
    snap = cluster.snapshot()
    if not scratch_scores(snap, cluster.ref, prof):  # every node cordoned: a new pod would stay Pending
        pending = simulate_add(snap, cluster.ref, prof, count, ReportOptions(top_n=top_n), seed)
        assert pending.steps == (pending.pending,) and pending.pending is not None and pending.pending.step == 1
        assert pending.pending.reason.startswith("0/") and pending.pending.plugin == "NodeUnschedulable"
        return
    sim = simulate_add(snap, cluster.ref, prof, count, ReportOptions(top_n=top_n), seed)
    template = next_pod(snap, cluster.ref)
    bound: list[dict[str, Any]] = []
    for step in sim.steps:
        assert isinstance(step, PlacementStep)
        expected = scratch_scores(cluster.snapshot(bound), cluster.ref, prof)
        assert dict(step.scores) == expected, f"step {step.step}"
        best = max(expected.values())
        ties = sorted(n for n, s in expected.items() if s == best)
        assert (step.best_score, step.best_node_count) == (best, len(ties))
        assert list(step.best_nodes) == ties[:top_n]
        assert step.node in ties
        if seed is None:
            assert step.node == ties[0]  # the documented default: first best node by name
        bound.append(bound_copy(template, f"sim-{step.step}", step.node))
    final = scratch_report(cluster.snapshot(bound), cluster.ref, prof, ReportOptions(top_n=top_n, max_nodes=100))
    got = spread_view(sim.final)
    want = spread_view(final)
    assert got.pop("replicas") == want.pop("replicas") + count
    assert got == want


@pytest.mark.parametrize("profile", ALL_PROFILES)
@pytest.mark.parametrize("layout", ["round-robin", "blocks"])
def test_empty_300_node_3_zone_cluster_ends_with_zone_skew_0(profile: str, layout: str) -> None:
    """upstream TestDefaultPodTopologySpreadScoring's expectation: 3, 12, 27 replicas → 1, 4, 9 per zone.

    The nodes are labelled as kubelets label them today (and as upstream's test does): hostname, the GA zone
    label (the only one PodTopologySpread's system defaults read) and the beta one (SelectorSpread's)."""
    zones = ["z1", "z2", "z3"]

    def labelled(name: str, zone: str) -> dict[str, Any]:
        return node(name, zone, labels={"kubernetes.io/hostname": name, GA_ZONE: zone})

    objects: list[dict[str, Any]] = [
        labelled(f"node-{i:03d}", zones[i % 3] if layout == "round-robin" else zones[i // 100]) for i in range(300)
    ]
    objects.append(controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=0))
    sim = simulate_add(Snapshot.from_objects(objects), "rs/default/web", get_profile(profile), 27)
    per_zone: Counter[str] = Counter()
    for step in sim.steps:
        per_zone[step.zone] += 1
        if step.step in (3, 12, 27):  # 3 → 1+1+1, 12 → 4+4+4, 27 → 9+9+9
            assert sorted(per_zone.values()) == [step.step // 3] * 3, f"after {step.step}: {per_zone}"
    assert sim.final.zone_skew == 0
    assert sim.final.node_skew == 1  # 27 pods on 27 different nodes, 273 empty ones
    assert len({s.node for s in sim.steps}) == 27


def _three_nodes() -> list[dict[str, Any]]:
    return [node("a1", "za"), node("a2", "za"), node("b1", "zb")]


def test_default_choice_is_the_first_best_node_by_name_and_seeds_choose_among_ties() -> None:
    objects = [*_three_nodes(), controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"})]
    snap = Snapshot.from_objects(objects)
    prof = get_profile("v1.28")
    first = simulate_add(snap, "rs/default/web", prof, 1).steps[0]
    # empty cluster: every node scores 100 (node 100*1/3 + zone 100*2/3), a1 < a2 < b1
    assert isinstance(first, PlacementStep)
    assert (first.best_score, first.best_node_count, first.best_nodes, first.node) == (100, 3, ("a1", "a2", "b1"), "a1")
    chosen = {simulate_add(snap, "rs/default/web", prof, 1, seed=s).steps[0].node for s in range(40)}
    assert chosen == {"a1", "a2", "b1"}  # uniformly random: 40 seeds hit all three ties
    again = [simulate_add(snap, "rs/default/web", prof, 3, seed=7).steps for _ in range(2)]
    assert [s.node for s in again[0]] == [s.node for s in again[1]]  # a seed is reproducible


def test_steps_follow_the_formula() -> None:
    """Pod 1 → a1 (all 100). Pod 2: a1 0*1/3+0*2/3=0, a2 100*1/3+0=33, b1 100*1/3+100*2/3=100 → b1.
    Pod 3: maxNode 1, maxZone 1: a2 = int(100/3 + 0) = 33, a1 = b1 = 0 → a2."""
    objects = [*_three_nodes(), controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"})]
    sim = simulate_add(Snapshot.from_objects(objects), "rs/default/web", get_profile("v1.28"), 3)
    got = [(s.best_score, s.node, s.zone) for s in sim.steps if isinstance(s, PlacementStep)]
    assert got == [(100, "a1", "za"), (100, "b1", "zb"), (33, "a2", "za")]
    assert sim.to_dict()["steps"][1] == {
        "step": 2,
        "bestScore": 100,
        "bestNodes": ["b1"],
        "bestNodeCount": 1,
        "node": "b1",
        "zone": "zb",
    }
    assert sim.final.replicas == 4 and sim.final.pods == 3


def _rs_pod(name: str, where: str, phase: str = "Running", **kw: Any) -> dict[str, Any]:
    return pod(name, {"app": "web"}, where, phase=phase, owners=[owner("ReplicaSet", "web")], **kw)


def _deployment_objects(pods: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A Deployment ``web`` with one ReplicaSet and Ready pods (name, node), ready a second apart."""
    objects: list[dict[str, Any]] = [
        *_three_nodes(),
        controller("Deployment", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=len(pods)),
        controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=len(pods),
                   owners=[owner("Deployment", "web")]),
    ]  # fmt: skip
    for i, (name, where) in enumerate(pods):
        objects.append(pod(name, {"app": "web"}, where, owners=[owner("ReplicaSet", "web-1")],
                           ready_at=f"2026-01-01T00:00:{10 + i:02d}Z", created="2026-01-01T00:00:00Z",
                           uid=f"{i:08x}-0000-4000-8000-000000000000"))  # fmt: skip
    return objects


def test_scale_down_step_by_step_takes_the_doubled_up_pods_first() -> None:
    """b1 holds 3, a1 holds 2 (a Deployment: colocated pods rank): b1's pods go while they rank higher; the ranks
    are taken again at every step (3,3,3 then 2,2 against a1's 2,2)."""
    objects = _deployment_objects([("w0", "b1"), ("w1", "b1"), ("w2", "b1"), ("w3", "a1"), ("w4", "a1")])
    sim = simulate_scale_down(Snapshot.from_objects(objects), "deploy/default/web", get_profile("v1.28"), 3)
    steps = [s for s in sim.steps if isinstance(s, ScaleDownStep)]
    # ready 10..14 s: within a bucket the lower UID goes first, and a later ready time may split a bucket, so
    # any b1 pod may go first; the first by name is taken
    assert [(s.pod, s.node, s.rank, s.replica_set) for s in steps][:1] == [("w0", "b1", 3, "web-1")]
    assert set(steps[0].candidates) == {"w0", "w1", "w2"}
    # b1 holds 2 = a1's 2: all rank 2; ready 11..14 s, UIDs rising with the age: each is the lowest UID of the
    # pods at least as young as itself, so each goes first once a bucket boundary falls just older than it
    assert set(steps[1].candidates) == {"w1", "w2", "w3", "w4"}
    assert (sim.final.pods, sim.final.replicas) == (2, 2)
    with pytest.raises(InputError, match="cannot scale down by 6, it has 5 replicas"):
        simulate_scale_down(Snapshot.from_objects(objects), "deploy/default/web", get_profile("v1.28"), 6)


def test_a_bare_replicaset_ranks_no_pod_by_its_node() -> None:
    """A ReplicaSet without a controller has no related pods (getReplicaSetsWithSameController): rank 0 for all,
    so the doubled-up pods are not preferred: the youngest Ready or the lowest UID go."""
    objects: list[dict[str, Any]] = [
        *_three_nodes(),
        controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=3),
        _rs_pod("w0", "b1", ready_at="2026-01-01T00:00:10Z", uid="00000003-0000-4000-8000-000000000000"),
        _rs_pod("w1", "b1", ready_at="2026-01-01T00:00:10Z", uid="00000002-0000-4000-8000-000000000000"),
        _rs_pod("w2", "a1", ready_at="2026-01-01T00:00:50Z", uid="00000001-0000-4000-8000-000000000000"),
    ]
    sim = simulate_scale_down(Snapshot.from_objects(objects), "rs/default/web", get_profile("v1.28"), 1)
    step = sim.steps[0]
    assert isinstance(step, ScaleDownStep)
    assert (step.pod, step.rank, step.candidates) == ("w2", 0, ("w2",))  # youngest and lowest UID


def test_statefulset_scales_down_from_the_highest_ordinal() -> None:
    objects: list[dict[str, Any]] = [
        *_three_nodes(),
        controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}, {"app": "db"}, replicas=4),
        *[pod(f"db-{i}", {"app": "db"}, "a1" if i else "b1", owners=[owner("StatefulSet", "db")])
          for i in (0, 2, 3, 1)],
    ]
    sim = simulate_scale_down(Snapshot.from_objects(objects), "sts/default/db", get_profile("v1.28"), 3)
    assert [s.pod for s in sim.steps if isinstance(s, ScaleDownStep)] == ["db-3", "db-2", "db-1"]


def test_runs_summarise_the_final_spread_over_seeds() -> None:
    objects = [*_three_nodes(), controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"})]
    snap = Snapshot.from_objects(objects)
    prof = get_profile("v1.28")
    runs = simulate_runs(snap, "rs/default/web", prof, 2, 30, seed=5)
    assert sum(runs.node_skew.values()) == sum(runs.zone_skew.values()) == sum(runs.health.values()) == 30
    # each run is the seeded single simulation
    expected = Counter(simulate_add(snap, "rs/default/web", prof, 2, seed=s).final.zone_skew for s in range(5, 35))
    assert dict(runs.zone_skew) == dict(expected)
    assert runs.to_dict()["seeds"] == [5, 34]


def test_bad_requests_are_input_errors() -> None:
    objects: list[dict[str, Any]] = [
        *_three_nodes(),
        controller("Deployment", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}),
        controller(
            "ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}, {"app": "web"}, owners=[owner("Deployment", "web")]
        ),
        controller("ReplicaSet", "bad", {"matchExpressions": [{"key": "a", "operator": "Within"}]}, {"app": "x"}),
    ]
    snap = Snapshot.from_objects(objects)
    prof = get_profile("v1.28")
    with pytest.raises(InputError, match="ReplicaSet of Deployment web; use deployment/"):
        simulate_add(snap, "rs/default/web-1", prof, 1)
    with pytest.raises(InputError, match="cannot be simulated: InvalidSelector"):
        simulate_add(snap, "rs/default/bad", prof, 1)
    with pytest.raises(WorkloadNotFoundError):
        simulate_add(snap, "rs/default/nope", prof, 1)
    with pytest.raises(InputError, match="at least 1"):
        simulate_add(snap, "deploy/default/web", prof, 0)
    with pytest.raises(InputError, match="--runs must be at least 1"):
        simulate_runs(snap, "deploy/default/web", prof, 1, 0)
    cordoned = Snapshot.from_objects(
        [node("a1", "za", unschedulable=True), controller("ReplicaSet", "x", {"matchLabels": {"a": "x"}}, {"a": "x"})]
    )
    pending = simulate_add(cordoned, "rs/default/x", prof, 2)  # the first replica would already stay Pending
    assert pending.pending is not None and pending.steps == (pending.pending,)
    assert pending.pending.reason == "0/1 nodes are available: 1 node(s) were unschedulable."


def test_random_module_state_is_not_used() -> None:
    """Seeded runs use their own generator: the global random state does not change the result."""
    objects = [*_three_nodes(), controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"})]
    snap = Snapshot.from_objects(objects)
    random.seed(1)
    a = [s.node for s in simulate_add(snap, "rs/default/web", get_profile("v1.28"), 3, seed=3).steps]
    random.seed(2)
    b = [s.node for s in simulate_add(snap, "rs/default/web", get_profile("v1.28"), 3, seed=3).steps]
    assert a == b


def test_scale_down_removes_a_pending_pod_first_and_ignores_finished_ones() -> None:
    objects: list[dict[str, Any]] = [
        *_three_nodes(),
        controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=2),
        _rs_pod("w0", "b1"),
        _rs_pod("w1", "", phase="Pending"),  # not scheduled yet: the controller deletes it first
        _rs_pod("w2", "a1", phase="Failed"),  # finished: not active, never a victim
    ]
    sim = simulate_scale_down(Snapshot.from_objects(objects), "rs/default/web", get_profile("v1.28"), 1)
    assert [(s.pod, s.node) for s in sim.steps if isinstance(s, ScaleDownStep)] == [("w1", "")]
    assert sim.final.pods == 1  # w0 still counts; the pending pod never did
    with pytest.raises(InputError, match="cannot scale down by 3, it has 2 replicas"):
        simulate_scale_down(Snapshot.from_objects(objects), "rs/default/web", get_profile("v1.28"), 3)
