"""Zone and node loss against a brute force over every set of zones and nodes of random clusters (the room for
the replacements with and without the resource model); the facts a scale-down is judged by against
``build_report``'s own."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping

import pytest

from spreadwatch.controllers import BudgetStatus
from spreadwatch.report import CandidateLayout, HealthThresholds, ReportInput, ReportOptions, build_report, judge
from spreadwatch.report.forecast import Budget, RoomCounts, SpreadState, resilience_of, spread_facts
from spreadwatch.scoring import ZoneKey, get_profile
from spreadwatch.scoring.next_pod import WorkloadRef

Cluster = tuple[dict[str, ZoneKey | None], dict[str, int], Budget | None, CandidateLayout, frozenset[str]]


def random_cluster(seed: int) -> Cluster:
    rng = random.Random(seed)
    zones: list[ZoneKey | None] = [("r", f"z{i}") for i in range(rng.randrange(1, 5))]
    if rng.random() < 0.3:
        zones.append(None)
    nodes = {f"n{i}": rng.choice(zones) for i in range(rng.randrange(1, 8))}
    ready_on = {n: c for n in nodes if (c := rng.choice([0, 0, 1, 1, 2, 3]))}
    budget = None
    if rng.random() < 0.7:
        # the budget selects the workload's pods and maybe others; it may already be broken
        healthy_on = {n: c + rng.choice([0, 0, 1]) for n, c in ready_on.items()}
        current = sum(healthy_on.values()) + rng.choice([0, 0, 1])  # (+1: a healthy pod on no node's count)
        desired = rng.randrange(0, current + 2)
        status = BudgetStatus(current + 1, current, desired, max(0, current - desired))
        budget = Budget("pdb", status, healthy_on, 1)
    candidates = frozenset(n for n in nodes if rng.random() < 0.8)
    by_zone: dict[ZoneKey | None, list[str]] = {}
    for n in sorted(candidates):
        by_zone.setdefault(nodes[n], []).append(n)
    return nodes, ready_on, budget, CandidateLayout(by_zone, {}), candidates


def _room(copies: dict[str, int] | None, layout: CandidateLayout) -> RoomCounts | None:
    """The room counts of per-node copies: summed per zone of the layout, read per candidate node."""
    if copies is None:
        return None
    candidates = {n for names in layout.by_zone.values() for n in names}
    by_zone = {z: sum(copies[n] for n in names) for z, names in layout.by_zone.items()}
    return RoomCounts(by_zone, lambda n: copies[n] if n in candidates else 0)


def holds(ready_on: Mapping[str, int], budget: Budget | None, lost: set[str]) -> bool:
    if budget is None:
        return sum(c for n, c in ready_on.items() if n not in lost) >= 1
    healthy = budget.status.current_healthy - sum(c for n, c in budget.healthy_on.items() if n in lost)
    return healthy >= budget.status.desired_healthy


def brute(units: dict[str, set[str]], ready_on: dict[str, int], budget: Budget | None) -> tuple[int, str, int]:
    """(tolerated, worst, ready after the worst) by trying every set of the units holding pods."""
    holding = sorted(u for u, nodes in units.items()
                     if any(ready_on.get(n) or (budget and budget.healthy_on.get(n)) for n in nodes))  # fmt: skip
    tolerated = 0
    if holds(ready_on, budget, set()):
        for k in range(1, len(holding) + 1):
            if all(holds(ready_on, budget, set().union(*(units[u] for u in combo)))
                   for combo in itertools.combinations(holding, k)):  # fmt: skip
                tolerated = k
            else:
                break

    def after(u: str) -> tuple[int, int, str]:
        ready = sum(c for n, c in ready_on.items() if n not in units[u])
        if budget is None:
            return ready, ready, u
        healthy = budget.status.current_healthy - sum(c for n, c in budget.healthy_on.items() if n in units[u])
        return healthy, ready, u

    if not holding:
        return tolerated, "", sum(ready_on.values())
    worst = min(holding, key=after)
    return tolerated, worst, after(worst)[1]


@pytest.mark.parametrize("seed", range(300))
def test_loss_equals_brute_force(seed: int) -> None:
    """Odd seeds with the resource model: each node takes a random number of copies of the next pod."""
    nodes, ready_on, budget, layout, candidates = random_cluster(seed)
    rng = random.Random(-seed)
    copies = {n: rng.choice([0, 0, 1, 2, 5]) for n in nodes} if seed % 2 else None
    resilience = resilience_of(ready_on, 5, nodes, layout, candidates, budget, _room(copies, layout))
    zone_units: dict[str, set[str]] = {}
    for n, z in nodes.items():
        if z is not None:
            zone_units.setdefault(z[1], set()).add(n)
    node_units = {n: {n} for n in nodes}
    for loss, units in ((resilience.zone_loss, zone_units), (resilience.node_loss, node_units)):
        if loss is None:
            assert units is zone_units and not layout.zones and not any(ready_on.get(n) for n in nodes if nodes[n])
            continue
        tolerated, worst, ready_after = brute(units, ready_on, budget)
        assert (loss.tolerated, loss.worst, loss.ready_after) == (tolerated, worst, ready_after)
        lost = units.get(worst, set())
        if budget is not None:
            assert loss.pdb_satisfied == holds(ready_on, budget, lost)
        outside = candidates - lost
        replacements = sum(ready_on.get(n, 0) for n in lost)
        if copies is None:
            assert loss.room_for_replacements == (bool(outside) or not replacements)
        else:
            assert loss.room_for_replacements == (sum(copies[n] for n in outside) >= replacements)


#: zone a: a1 (2 Ready), a2 (1 Ready); zone b: b1 (1 Ready), b2; every node a candidate
_ROOM_NODES: dict[str, ZoneKey | None] = {"a1": ("r", "a"), "a2": ("r", "a"), "b1": ("r", "b"), "b2": ("r", "b")}
_ROOM_READY = {"a1": 2, "a2": 1, "b1": 1}
_ROOM_LAYOUT = CandidateLayout({("r", "a"): ["a1", "a2"], ("r", "b"): ["b1", "b2"]}, {})


@pytest.mark.parametrize(
    ("copies", "zone_room", "node_room"),
    [
        pytest.param(None, True, True, id="no resource model: candidate nodes b1, b2 outside zone a -> room"),
        pytest.param({"a1": 0, "a2": 0, "b1": 1, "b2": 1}, False, True,
                     id="zone a loses 3: b1 1 + b2 1 = 2 < 3 -> no room; node a1 loses 2: a2 0 + b1 1 + b2 1 = 2"),
        pytest.param({"a1": 0, "a2": 0, "b1": 1, "b2": 2}, True, True, id="zone a loses 3: b1 1 + b2 2 = 3 -> room"),
        pytest.param({"a1": 9, "a2": 9, "b1": 0, "b2": 0}, False, True,
                     id="zone a loses 3: full b1, b2 = 0 (a1, a2 lost with it) -> no room; node a1: a2 9 -> room"),
        pytest.param({"a1": 9, "a2": 0, "b1": 0, "b2": 1}, False, False,
                     id="node a1 loses 2: a2 0 + b1 0 + b2 1 = 1 < 2 -> no room"),
    ],
)  # fmt: skip
def test_room_for_replacements_counts_the_copies_the_nodes_outside_take(
    copies: dict[str, int] | None, zone_room: bool, node_room: bool
) -> None:
    candidates = frozenset(_ROOM_NODES)
    resilience = resilience_of(_ROOM_READY, 4, _ROOM_NODES, _ROOM_LAYOUT, candidates, None, _room(copies, _ROOM_LAYOUT))
    assert resilience.zone_loss is not None
    assert (resilience.zone_loss.worst, resilience.zone_loss.ready_after) == ("a", 1)
    assert resilience.zone_loss.room_for_replacements is zone_room
    assert (resilience.node_loss.worst, resilience.node_loss.ready_after) == ("a1", 2)
    assert resilience.node_loss.room_for_replacements is node_room


@pytest.mark.parametrize("seed", range(200))
def test_spread_facts_are_build_reports(seed: int) -> None:
    """The verdict a scale-down is judged by: build_report's facts from the same busy nodes."""
    nodes, ready_on, _, layout, candidates = random_cluster(seed)
    busy = {n: c for n, c in ready_on.items() if n in candidates}
    ref = WorkloadRef("ns", "Deployment", "web")
    options = ReportOptions()
    report = build_report(ReportInput(ref, get_profile("v1.28"), "app=web", 3, layout, busy, nodes, options), "")
    facts = spread_facts(busy, layout, nodes)
    assert (facts.node_skew, facts.zone_skew) == (report.node_skew, report.zone_skew)
    health, reasons = judge(facts, HealthThresholds())
    assert (health, tuple(reasons)) == (report.health, report.reasons)


@pytest.mark.parametrize("seed", range(200))
def test_the_verdict_after_a_scale_down_is_build_reports_of_the_cluster_without_the_pod(seed: int) -> None:
    """scale_down_of's facts for one pod fewer on a node are spread_facts (build_report's) of the counts then."""
    nodes, ready_on, _, layout, candidates = random_cluster(seed)
    busy = {n: c for n, c in ready_on.items() if n in candidates}
    spread = SpreadState(busy, layout, nodes)
    for node in ["", *busy]:
        after = dict(busy)
        if node:
            after[node] -= 1
            if not after[node]:
                del after[node]
        want = spread_facts(after, layout, nodes)
        got = spread.facts_without(node)
        assert (got.pods, got.candidate_nodes, got.nodes_with_pods, got.zones_with_pods, got.candidate_zones,
                got.node_skew, got.zone_skew) == (want.pods, want.candidate_nodes, want.nodes_with_pods,
                                                  want.zones_with_pods, want.candidate_zones, want.node_skew,
                                                  want.zone_skew)  # fmt: skip
        assert judge(got, HealthThresholds())[0] == judge(want, HealthThresholds())[0]
