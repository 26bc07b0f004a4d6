"""The scheduler's window (scoring/window.py): numFeasibleNodesToFind, percentageOfNodesToScore from the
scheduler configuration, the node tree's order, and window-local scores against the reference scorer."""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Any

import pytest

from k8s_objects import BETA_ZONE, GA_ZONE, controller, node, pod
from spreadwatch.errors import InputError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import WorkloadKey, parse_object
from spreadwatch.scoring import get_profile, representative_pod, score_pod
from spreadwatch.scoring.schedconfig import score_percentage_from_config
from spreadwatch.scoring.window import (
    WindowModel,
    adaptive_percentage,
    nodes_to_score,
    sample_starts,
    scheduler_order,
)
from spreadwatch.snapshot import Snapshot


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        pytest.param(0, 0, 0, id="0 nodes < 100: all 0"),
        pytest.param(99, 10, 99, id="99 < 100: all 99 whatever the percentage"),
        pytest.param(100, 0, 100, id="100 adaptive 50-0=50%: 50 -> max(100,50)=100"),
        pytest.param(300, 0, 144, id="300 adaptive 50-300/125=48%: 300*48/100=144"),
        pytest.param(400, 0, 188, id="400 adaptive 50-3=47%: 188"),
        pytest.param(1000, 0, 420, id="1000 adaptive 50-8=42%: 420"),
        pytest.param(5000, 0, 500, id="5000 adaptive 50-40=10%: 500"),
        pytest.param(6000, 0, 300, id="6000 adaptive 50-48=2% -> floor 5%: 300"),
        pytest.param(20000, 0, 1000, id="20000 adaptive 50-160<5 -> 5%: 1000"),
        pytest.param(300, 100, 300, id="300 at 100%: every node"),
        pytest.param(300, 20, 100, id="300 at 20%: 60 -> max(100,60)=100"),
        pytest.param(5000, 30, 1500, id="5000 at 30%: 1500"),
        pytest.param(333, 33, 109, id="333 at 33%: 10989/100=109 (truncated)"),
    ],
)
def test_nodes_to_score(nodes: int, percentage: int, expected: int) -> None:
    assert nodes_to_score(nodes, percentage) == expected


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(124, 50, id="124/125=0: 50"),
        pytest.param(125, 49, id="125/125=1: 49"),
        pytest.param(5625, 5, id="50-45=5"),
    ],
)
def test_adaptive_percentage(nodes: int, expected: int) -> None:
    assert adaptive_percentage(nodes) == expected


def _sched_config(top: int | None = None, **profiles: int | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if top is not None:
        doc["percentageOfNodesToScore"] = top
    if profiles:
        doc["profiles"] = [
            {"schedulerName": name, **({} if pct is None else {"percentageOfNodesToScore": pct})}
            for name, pct in profiles.items()
        ]
    return doc


@pytest.mark.parametrize(
    ("doc", "name", "expected"),
    [
        pytest.param(_sched_config(), "default-scheduler", 0, id="unset: 0 (adaptive)"),
        pytest.param(_sched_config(30), "default-scheduler", 30, id="global 30"),
        pytest.param(
            _sched_config(30, **{"default-scheduler": 70}), "default-scheduler", 70, id="profile 70 over global 30"
        ),
        pytest.param(
            _sched_config(30, **{"default-scheduler": None}), "default-scheduler", 30, id="profile unset: global 30"
        ),
        pytest.param(
            _sched_config(30, **{"default-scheduler": 0}), "default-scheduler", 0, id="profile 0 over global 30"
        ),
        pytest.param(_sched_config(None, a=10, b=90), "b", 90, id="profile b of two: 90"),
        pytest.param(
            {**_sched_config(40), "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            "default-scheduler",
            40,
            id="v1beta3",
        ),
    ],
)
def test_percentage_from_config(doc: dict[str, Any], name: str, expected: int) -> None:
    assert score_percentage_from_config(doc, "f.yaml", name) == expected


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param(
            _sched_config(101), "f.yaml: percentageOfNodesToScore: must be an integer between 0 and 100", id="101"
        ),
        pytest.param(_sched_config(-1), "between 0 and 100, got -1", id="-1"),
        pytest.param(
            _sched_config(None, a="50"), "profiles[0].percentageOfNodesToScore: must be an integer", id="text"
        ),
        pytest.param(_sched_config(None, a=50), "no profile with schedulerName 'default-scheduler'", id="no profile"),
    ],
)
def test_percentage_from_config_rejects(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        score_percentage_from_config(doc, "f.yaml")


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(
            [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("c2", "c")],
            ["a1", "b1", "c1", "a2", "c2", "a3"],
            id="zones a,b,c round robin; b exhausted after 1, c after 2",
        ),
        pytest.param(
            [("z-2", "z"), ("a-1", "y"), ("z-1", "z"), ("none", None)],
            ["a-1", "none", "z-1", "z-2"],
            id="zones by first name: y(a-1), None(none), z(z-1,z-2)",
        ),
        pytest.param([], [], id="no nodes"),
    ],
)
def test_scheduler_order(nodes: list[tuple[str, str | None]], expected: list[str]) -> None:
    zoned = [(name, None if zone is None else ("", zone)) for name, zone in nodes]
    assert list(scheduler_order(zoned)) == expected


def test_sample_starts_exact_or_stratified() -> None:
    assert sample_starts(5, 8) == ((0, 1, 2, 3, 4), True)
    starts, exact = sample_starts(1000, 10, seed=3)
    assert not exact
    assert [s // 100 for s in starts] == list(range(10))  # one start in each stratum of 100
    assert sample_starts(1000, 10, seed=3) == (starts, False)  # fixed seed: the same starts


def _cluster(seed: int, profile: str) -> list[dict[str, Any]]:
    """A small random cluster: zones (beta or GA labels, some zoneless), racks (some nodes without), taints,
    cordons, and workloads whose pods sit on random nodes (some piled up); w2 has its own constraints."""
    r = random.Random(seed)
    key = GA_ZONE if profile == "v1.29" else BETA_ZONE
    n = r.randint(6, 14)
    objects = []
    for i in range(n):
        zone = r.choice([None, "z1", "z2", "z2", "z3"])
        taints = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}] if r.random() < 0.1 else None
        labels = {"kubernetes.io/hostname": f"n{i:02d}"}
        if r.random() < 0.8:
            labels["rack"] = r.choice(["r1", "r2"])
        objects.append(node(f"n{i:02d}", zone, key=key, labels=labels, taints=taints, unschedulable=r.random() < 0.1))
    for w in range(3):
        labels = {"app": f"w{w}"}
        spec: dict[str, Any] = {}
        if w == 2:  # its own constraints: nodes missing a key are ignored (v1.29), a custom key (rack)
            spec["topologySpreadConstraints"] = [
                {"maxSkew": r.randint(1, 3), "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": labels}}
                for key in (GA_ZONE, "rack", "kubernetes.io/hostname")
            ]  # fmt: skip
        objects.append(
            controller("ReplicaSet", f"w{w}", {"matchLabels": labels}, labels, namespace="a", template_spec=spec)
        )
        for p in range(r.randint(0, 12)):
            objects.append(pod(f"w{w}-{p}", labels, f"n{r.randrange(n):02d}", namespace="a"))
    return objects


def _window_names(model: WindowModel, start: int) -> list[str]:
    """The candidates the scheduler scores from node position ``start``, in its order. O(window)."""
    names = model.layout.names
    m = len(names)
    first = model.layout.first(start) if m else 0
    return [names[(first + i) % m] for i in range(model.size)]


@pytest.mark.parametrize("profile", ["v1.28", "v1.29"])
@pytest.mark.parametrize("seed", range(16))
def test_window_best_nodes_equal_the_reference_scorer_on_the_window(seed: int, profile: str) -> None:
    """For every start and window size, the model's window-local best nodes are exactly the best nodes the
    reference scorer (spreadwatch score --nodes WINDOW) finds on the window the scheduler would score."""
    prof = get_profile(profile)
    snapshot = Snapshot()
    index = SpreadIndex(prof)
    for body in _cluster(seed, profile):
        record = parse_object(body)
        assert record is not None
        snapshot.add(record)
        index.apply(record)
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    for w in range(3):
        key = WorkloadKey("a", "ReplicaSet", f"w{w}")
        model = index.window_model(key)
        if model is None:
            continue
        ctrl = snapshot.controller(key)
        assert ctrl is not None
        next_pod, _ = representative_pod(ctrl, ())
        m = len(model.layout.names)
        for size in sorted({1, 2, max(1, m // 2), max(1, m - 1)}):
            sized = dataclasses.replace(model, size=size)
            for start in range(len(nodes)):
                window = _window_names(sized, start)
                expected = score_pod(next_pod, nodes, snapshot.pods, snapshot, prof, node_names=window)
                top = max(expected.scores.values())
                want = [n for n in window if expected.scores[n] == top]
                assert sized.best_nodes(start) == want, (key, size, start, dict(expected.scores))


def _zoned_nodes(count: dict[str, int]) -> list[dict[str, Any]]:
    return [node(f"{z}{i:03d}", z, key=GA_ZONE) for z, k in count.items() for i in range(k)]


def test_whole_window_is_certain_and_odds_are_exact_when_every_start_is_averaged() -> None:
    """120 nodes in zones a/b/c; 2 pods of w on a000 and b000 (SelectorSpread). At 100 % every node is scored:
    P = 1. At the adaptive 50 % (120 → 100 scored of 120) the model averages all 120 starts exactly; the
    all-node best nodes are c's (zone c has 0 pods), and a window without b000 sums zone b to 0 too."""
    objects = _zoned_nodes({"a": 40, "b": 40, "c": 40})
    objects.append(controller("ReplicaSet", "w", {"matchLabels": {"app": "w"}}, {"app": "w"}, namespace="a"))
    objects += [pod("w-0", {"app": "w"}, "a000", namespace="a"), pod("w-1", {"app": "w"}, "b000", namespace="a")]
    index = SpreadIndex(get_profile("v1.28"))
    for body in objects:
        record = parse_object(body)
        assert record is not None
        index.apply(record)
    key = WorkloadKey("a", "ReplicaSet", "w")
    model = index.window_model(key)
    assert model is not None
    assert model.size == 100
    odds = model.odds(samples=120)
    assert odds.exact
    expected_node = sum(model.outcome(s)[0] for s in range(120)) / 120
    assert odds.best_node == pytest.approx(expected_node)
    assert 0.0 < odds.best_node < 1.0  # windows that miss b000 tie zone b with c
    whole = dataclasses.replace(model, size=120)
    assert whole.odds(samples=120).best_node == 1.0


def test_a_window_always_holding_a_dominant_candidate_is_certain_as_every_start_says() -> None:
    """PodTopologySpread: when every window holds an empty candidate that no candidate beats under any weights
    (``always_best``), both probabilities are 1 without sampling — and averaging every start gives exactly 1.
    Over random clusters and every window size; the shortcut must fire in some cases and not in others."""
    fired = declined = 0
    for seed in range(40):
        index = SpreadIndex(get_profile("v1.29"))
        for body in _cluster(seed, "v1.29"):
            record = parse_object(body)
            assert record is not None
            index.apply(record)
        for w in range(3):
            model = index.window_model(WorkloadKey("a", "ReplicaSet", f"w{w}"))
            if model is None:
                continue
            m = len(model.layout.names)
            for size in range(1, m):
                sized = dataclasses.replace(model, size=size)
                every = sized.sampled(sized.layout.all_nodes)
                assert every.exact
                if sized.always_best():
                    fired += 1
                    assert (every.best_node, every.best_zone) == (1.0, 1.0), (seed, w, size)
                    assert sized.odds(4) == (size, 1.0, 1.0, True)
                else:
                    declined += 1
    assert fired > 20 and declined > 20, (fired, declined)
