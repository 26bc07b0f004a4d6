"""The comparison part alone (index/comparing.py): a :class:`ProfileComparison` over node zones and a candidate
set made here, without a :class:`~spreadwatch.index.SpreadIndex`: which profile is its sibling, the sibling's
report of a workload as the report's ``comparison``, placements checked against it, and the overlap of two
reports' best nodes."""

from __future__ import annotations

import pytest
from part_records import web_workload, zoned_nodes

from spreadwatch.index.comparing import ProfileComparison, kept
from spreadwatch.index.state import CandidateSet, IndexRecords, Workload
from spreadwatch.report import ReportInput, ReportOptions, SpreadReport, build_report
from spreadwatch.scoring import get_profile

V129, V128 = get_profile("v1.29"), get_profile("v1.28")


class _Index:
    """What a :class:`ProfileComparison` is given: the index's zones and a workload's candidate set."""

    def __init__(self) -> None:
        self.nodes, self.zones, layout = zoned_nodes((("a1", "a"), ("a2", "a"), ("b1", "b")), V129)
        # one pod, on a1
        self.web, self.candidates = web_workload(layout, 2, selector_text="app=web", counts={"a1": 1}, counting=True)
        records = IndexRecords(V129, ReportOptions(), self.nodes, self.zones, {}, {})
        self.part = ProfileComparison(records, V128, lambda w: self.candidates)
        for n in self.nodes.values():
            self.part.node_applied(n)

    def report(self) -> SpreadReport:
        """The workload's report as SelectorSpread v1.28 scores it (the sibling's own arithmetic, as a stand-in
        for this profile's report)."""
        w = self.web
        fields = ReportInput(
            w.ref, V128, w.selector_text, 2, self.candidates.layout, w.counts, self.zones, ReportOptions()
        )
        return build_report(fields, "", self.candidates.names)


def _unasked(w: Workload) -> CandidateSet:
    raise AssertionError("choosing the sibling asks for no candidate set")


@pytest.mark.parametrize(
    ("profile", "compare", "sibling"),
    [
        pytest.param("v1.29", "v1.28", True, id="v1.29-default-constraints+v1.28=sibling"),
        pytest.param("v1.28", "v1.29", False, id="v1.28+v1.29=shadow"),
        pytest.param("v1.29", "v1.18", False, id="v1.29+v1.18=other-selector-shadow"),
    ],
)
def test_the_sibling_is_a_profile_scored_from_the_same_counts(profile: str, compare: str, sibling: bool) -> None:
    records = IndexRecords(get_profile(profile), ReportOptions(), {}, {}, {}, {})
    part = ProfileComparison(records, get_profile(compare), _unasked)
    assert (part.sibling is not None) == sibling


def test_the_comparison_is_the_siblings_best_nodes() -> None:
    index = _Index()
    report = index.part.with_sibling(index.web, index.report())
    # zone a holds the pod: b1 scores 100 (node and zone empty), a2 100 x 1/3 + 0 x 2/3 = 33, a1 0
    assert report.comparison == ("v1.28", 100, ("b1",), 1, True)


def test_placements_are_checked_against_the_siblings_report() -> None:
    index = _Index()
    index.part.check(index.web, "b1", True)
    index.part.check(index.web, "a2", True)
    index.part.check(index.web, "a1", True)
    assert index.part.sibling_placements == {"best_node": 1, "best_zone": 0, "other": 2}


def test_overlap_and_kept() -> None:
    index = _Index()
    report = index.report()
    layout = index.candidates.layout
    zones = index.zones
    assert index.part.overlap(report, layout, zones, report, layout, zones)
    # b1, the one best node, rejected by the other report (its Filter): no best node in both
    assert not index.part.overlap(report, layout, zones, report, layout, zones, theirs_has=lambda n: n != "b1")
    assert kept(index.web) is None  # no DoNotSchedule constraint: the report keeps every candidate
