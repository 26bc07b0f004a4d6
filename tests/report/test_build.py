"""Report construction from sparse state: node listing, top-N, derivability, size, health."""

from __future__ import annotations

import json
import random

import pytest

from spreadwatch.report import CandidateLayout, Health, HealthThresholds, ReportInput, ReportOptions, build_report
from spreadwatch.scoring import WorkloadRef, get_profile, summarize

REF = WorkloadRef("default", "Deployment", "web", "uid-1", "apps/v1")
V128 = get_profile("v1.28")
ZA, ZB = ("r", "a"), ("r", "b")


def _report(by_zone, counts, zones, options=None, skip=""):  # type: ignore[no-untyped-def]
    layout = CandidateLayout(by_zone, {"Unschedulable": 2})
    options = options or ReportOptions(top_n=2)
    return build_report(ReportInput(REF, V128, "app=web", 3, layout, counts, zones, options), skip)


def test_busy_nodes_plus_top_n_and_zone_fields() -> None:
    # a: a1=2 a2=0 a3=0 (zone 2); b: b1=1 b2=0 (zone 1); max node 2, max zone 2
    # a2: node 100, zone 0 -> 33; b2: node 100, zone 50 -> 33.33+33.33 = 66; b1: node 50, zone 50 -> 50
    report = _report({ZA: ["a1", "a2", "a3"], ZB: ["b1", "b2"]}, {"a1": 2, "b1": 1}, {"a1": ZA, "b1": ZB})
    assert [(n.node, n.pods, n.score) for n in report.nodes] == [("b2", 0, 66), ("b1", 1, 50), ("a1", 2, 0)]
    assert [(z.zone, z.pods, z.candidate_nodes, z.zone_score, z.empty_node_score) for z in report.zones] == [
        ("a", 2, 3, 0, 33),
        ("b", 1, 2, 50, 66),
    ]
    assert (report.best_score, report.worst_score, report.best_nodes, report.best_node_count) == (66, 0, ("b2",), 1)
    assert (report.pods, report.candidate_nodes, report.node_skew, report.zone_skew) == (3, 5, 2, 1)
    assert report.excluded_nodes == {"Unschedulable": 2}
    assert report.health is Health.IMBALANCED and report.reasons == ("NodeSkew: 2 > 1",)


def test_every_candidate_score_is_derivable() -> None:
    report = _report({ZA: ["a1", "a2", "a3"], ZB: ["b1", "b2"], None: ["x"]}, {"a1": 2}, {"a1": ZA})
    derived = {n: report.score_of(n, z) for n, z in [("a1", ZA), ("a2", ZA), ("a3", ZA), ("b1", ZB), ("x", None)]}
    # max node 2 (a1), zones a=2 b=0: a2 = 100/3 + 0 = 33; b1 = 100/3 + 2/3*100 = 100; x zoneless: 100
    assert derived == {"a1": 0, "a2": 33, "a3": 33, "b1": 100, "x": 100}


def test_skipped_report_scores_zero() -> None:
    report = _report({ZA: ["a1", "a2"]}, {"a1": 1}, {"a1": ZA}, skip="has topologySpreadConstraints")
    assert report.health is Health.SKIPPED and report.skipped
    assert {n.score for n in report.nodes} == {0}
    assert report.zones[0].empty_node_score == 0 and report.best_score == 0


@pytest.mark.parametrize(
    ("counts", "health", "reason"),
    [
        pytest.param({"a1": 3}, Health.SINGLE_POINT_OF_FAILURE, "AllPodsOnOneNode: 3 pods on a1", id="one node"),
        pytest.param({"a1": 1, "a2": 1}, Health.SINGLE_POINT_OF_FAILURE, "AllPodsInOneZone", id="one zone"),
        pytest.param({"a1": 1, "b1": 1}, Health.BALANCED, None, id="spread"),
        pytest.param({"a1": 1}, Health.BALANCED, None, id="one pod is not a SPOF"),
        pytest.param({"a1": 2, "a2": 1, "b1": 1}, Health.IMBALANCED, "NodeSkew: 2 > 1", id="skew"),
    ],
)
def test_health(counts: dict[str, int], health: Health, reason: str | None) -> None:
    zones = {n: (ZA if n.startswith("a") else ZB) for n in counts}
    report = _report({ZA: ["a1", "a2"], ZB: ["b1", "b2"]}, counts, zones)
    assert report.health is health
    if reason:
        assert any(r.startswith(reason) for r in report.reasons)


def test_thresholds_are_configurable() -> None:
    options = ReportOptions(top_n=1, thresholds=HealthThresholds(max_node_skew=5, max_zone_skew=5, min_replicas=9))
    report = _report({ZA: ["a1", "a2"], ZB: ["b1"]}, {"a1": 4}, {"a1": ZA}, options)
    assert report.health is Health.BALANCED


def test_no_candidates_is_unschedulable() -> None:
    report = _report({}, {}, {})
    assert report.health is Health.UNSCHEDULABLE
    assert report.reasons[0].startswith("NextPodUnschedulable")


def test_report_for_5000_node_cluster_stays_under_100_kib() -> None:
    """5,000 candidate nodes in 3 zones, a workload with pods on every one of them: the listing is capped."""
    names = {
        z: [f"ip-10-0-{z[1]}-{i:04d}.eu-west-1.compute.internal" for i in range(1667)] for z in (ZA, ZB, ("r", "c"))
    }
    counts = {n: 1 + i % 3 for z in names for i, n in enumerate(names[z])}
    zones = {n: z for z in names for n in names[z]}
    report = _report(names, counts, zones, ReportOptions())
    size = len(json.dumps(report.to_dict()))
    assert size < 100 * 1024, size
    assert report.nodes_omitted == len(counts) - 500
    assert report.pods == sum(counts.values())


def test_reports_on_a_shared_layout_equal_reports_on_fresh_ones() -> None:
    # The layout memoises the zone-level part of a report per zone counts: a report built on a layout that
    # has served many others (hits, misses, busy nodes among each zone's first nodes, a zone with every node
    # busy, skipped workloads, other top_n) equals the one built on a new layout.
    rng = random.Random(13)
    by_zone = {ZA: ["a1", "a2", "a3", "a4"], ZB: ["b1", "b2"], None: ["x1", "x2"]}
    zones = {n: z for z, names in by_zone.items() for n in names}
    shared = CandidateLayout(by_zone, {})
    for i in range(400):
        busy = rng.sample(sorted(zones), rng.randint(0, len(zones)))
        counts = {n: rng.randint(1, 3) for n in busy}
        options = ReportOptions(top_n=rng.choice([0, 1, 2, 3, 5]), max_nodes=rng.choice([1, 3, 500]))
        skip = "has topologySpreadConstraints" if i % 7 == 0 else ""
        built = [
            build_report(ReportInput(REF, V128, "app=web", 3, layout, counts, zones, options), skip)
            for layout in (shared, CandidateLayout(by_zone, {}))
        ]
        assert built[0] == built[1], (counts, options, skip)
    assert shared.zone_memo  # the memo was used


def test_scores_equal_the_reference_summary_with_uniform_counts_and_non_candidates() -> None:
    # Most workloads have the same count on every busy node (the memo's per-zone busy scores) and counts
    # may name non-candidate nodes or hold zeros (ignored): every candidate's derived score, the best score
    # and the best node count equal SpreadSummary's, on a layout shared by all the reports.
    rng = random.Random(29)
    by_zone = {ZA: ["a1", "a2", "a3", "a4"], ZB: ["b1", "b2", "b3"], None: ["x1", "x2"]}
    zones: dict[str, tuple[str, str] | None] = {n: z for z, names in by_zone.items() for n in names}
    shared = CandidateLayout(by_zone, {})
    for _ in range(300):
        top = rng.choice([1, 2, 5])
        busy = rng.sample(sorted(zones), rng.randint(0, len(zones)))
        counts = {n: top if rng.random() < 0.8 else rng.randint(0, top) for n in busy}
        if rng.random() < 0.3:
            counts["gone"] = 4  # not a candidate
        options = ReportOptions(top_n=rng.choice([1, 2, 3]), max_nodes=rng.choice([1, 500]))
        inp = ReportInput(REF, V128, "app=web", 3, shared, counts, {**zones, "gone": ZA}, options)
        report = build_report(inp, "", frozenset(zones))
        summary = summarize(((zones[n], counts.get(n, 0)) for n in zones), V128.max_score)
        expected = {n: summary.score(counts.get(n, 0), zones[n]) for n in zones}
        derived = {n: report.score_of(n, zones[n]) for n in zones}
        if report.nodes_omitted == 0:
            assert derived == expected, counts
        best = max(expected.values())
        assert (report.best_score, report.worst_score) == (best, min(expected.values())), counts
        assert report.best_node_count == sum(s == best for s in expected.values()), counts
        assert report.pods == sum(c for n, c in counts.items() if n in zones)
