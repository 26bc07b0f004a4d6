"""A placement checked against the report held just before it: best_node, best_zone or other (a table)."""

from __future__ import annotations

import pytest

from spreadwatch.report import (
    Health,
    NodeEntry,
    Outcome,
    SpreadReport,
    ZoneEntry,
    best_zones,
    classify_placement,
)
from spreadwatch.scoring import WorkloadRef

REF = WorkloadRef("default", "Deployment", "web", "uid-1", "apps/v1")


def _report(nodes: list[NodeEntry], zones: list[ZoneEntry], best: int, zoneless_empty: int = 80) -> SpreadReport:
    return SpreadReport(
        workload=REF,
        profile="v1.28",
        selector="app=web",
        skipped=False,
        skip_reason="",
        replicas=4,
        pods=sum(n.pods for n in nodes),
        candidate_nodes=sum(z.candidate_nodes for z in zones) + 1,
        excluded_nodes={},
        nodes=tuple(nodes),
        nodes_omitted=0,
        zones=tuple(zones),
        empty_node_score=zoneless_empty,
        best_score=best,
        worst_score=0,
        best_nodes=(),
        best_node_count=0,
        node_skew=0,
        zone_skew=0,
        health=Health.IMBALANCED,
        reasons=(),
    )


#: zone z-a: a1 (2 pods, 0) listed, a2 empty (33); z-b: b1 (1 pod, 60) and b2 (empty, 100) listed, b3 empty
#: (100); z-c: its only candidate c1 listed (1 pod, 50), empty score 66; a zoneless candidate x scores 80.
REPORT = _report(
    [
        NodeEntry("b2", "z-b", "r", 0, 100),
        NodeEntry("b1", "z-b", "r", 1, 60),
        NodeEntry("c1", "z-c", "r", 1, 50),
        NodeEntry("a1", "z-a", "r", 2, 0),
    ],
    [ZoneEntry("z-a", "r", 2, 2, 0, 33), ZoneEntry("z-b", "r", 1, 3, 0, 100), ZoneEntry("z-c", "r", 1, 1, 0, 66)],
    best=100,
)
#: z-a: a1 listed (1 pod, 60) and one unlisted empty node scoring 100 = best; z-b: its only candidate b1 listed
#: (1 pod, 60) though its empty score would be 100 (no empty candidate there: not a best zone).
ONLY_EMPTY = _report(
    [NodeEntry("a1", "z-a", "r", 1, 60), NodeEntry("b1", "z-b", "r", 1, 60)],
    [ZoneEntry("z-a", "r", 1, 2, 0, 100), ZoneEntry("z-b", "r", 1, 1, 0, 100)],
    best=100,
)


@pytest.mark.parametrize(
    ("report", "node", "zone", "candidate", "outcome"),
    [
        pytest.param(REPORT, "b2", ("r", "z-b"), True, Outcome.BEST_NODE, id="b2-listed-100==best-100"),
        pytest.param(REPORT, "b3", ("r", "z-b"), True, Outcome.BEST_NODE, id="b3-unlisted-z-b-empty-100==best-100"),
        pytest.param(REPORT, "b1", ("r", "z-b"), True, Outcome.BEST_ZONE, id="b1-listed-60<100-z-b-has-b2-at-100"),
        pytest.param(REPORT, "a2", ("r", "z-a"), True, Outcome.OTHER, id="a2-unlisted-z-a-empty-33<100-no-best-in-z-a"),
        pytest.param(REPORT, "a1", ("r", "z-a"), True, Outcome.OTHER, id="a1-listed-0<100-no-best-in-z-a"),
        pytest.param(REPORT, "c1", ("r", "z-c"), True, Outcome.OTHER, id="c1-listed-50<100-z-c-empty-66<100"),
        pytest.param(REPORT, "x", None, True, Outcome.OTHER, id="x-zoneless-empty-80<100-no-zone"),
        pytest.param(REPORT, "b2", ("r", "z-b"), False, Outcome.OTHER, id="not-a-candidate-whatever-its-score"),
        pytest.param(REPORT, "q1", ("r", "z-q"), True, Outcome.OTHER, id="q1-zone-z-q-unknown-to-the-report"),
        pytest.param(ONLY_EMPTY, "a1", ("r", "z-a"), True, Outcome.BEST_ZONE, id="a1-60<100-z-a-2-candidates>1-listed"),
        pytest.param(ONLY_EMPTY, "a2", ("r", "z-a"), True, Outcome.BEST_NODE, id="a2-unlisted-z-a-empty-100==best"),
        pytest.param(ONLY_EMPTY, "b1", ("r", "z-b"), True, Outcome.OTHER, id="b1-60<100-z-b-1-candidate==1-listed"),
    ],
)
def test_classify_placement(
    report: SpreadReport, node: str, zone: tuple[str, str] | None, candidate: bool, outcome: Outcome
) -> None:
    assert classify_placement(report, node, zone, candidate) is outcome


@pytest.mark.parametrize(
    ("report", "zones"),
    [
        pytest.param(REPORT, {("r", "z-b")}, id="z-b-listed-b2-100-and-empty-100;z-a-33;z-c-full"),
        pytest.param(ONLY_EMPTY, {("r", "z-a")}, id="z-a-empty-100-with-1-unlisted;z-b-empty-100-none-unlisted"),
    ],
)
def test_best_zones(report: SpreadReport, zones: set[tuple[str, str]]) -> None:
    assert best_zones(report) == zones
