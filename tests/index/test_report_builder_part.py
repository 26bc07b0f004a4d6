"""Report building alone (index/building.py): a :class:`ReportBuilder` over nodes, zones, counts and a
candidate set made here, without a :class:`~spreadwatch.index.SpreadIndex`: a SelectorSpread v1.28 report
from the sparse counts, the scheduler's window over it, and the node order kept until a node changes."""

from __future__ import annotations

from part_records import parsed, web_workload, zoned_nodes

from k8s_objects import GA_ZONE, node
from spreadwatch.index.building import ReportBuilder
from spreadwatch.index.hard_filter import HardFilter
from spreadwatch.index.state import IndexRecords
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile

V128 = get_profile("v1.28")


class _Index:
    """What a :class:`ReportBuilder` is given; web's pods: two on n1, one on n2 (zone a), none on n3 (b)."""

    def __init__(self) -> None:
        self.nodes, self.zones, layout = zoned_nodes((("n1", "a"), ("n2", "a"), ("n3", "b")), V128)
        self.web, self.candidates = web_workload(
            layout, 3, counts={"n1": 2, "n2": 1}, counting=True, selector_text="app=web"
        )
        records = IndexRecords(V128, ReportOptions(), self.nodes, self.zones, {}, {})
        self.part = ReportBuilder(
            records,
            lambda w: self.candidates,
            HardFilter(records, lambda w, key: None),
            lambda w: [],
            lambda w, groups, scores: None,
        )


def test_a_selector_spread_report_from_the_counts() -> None:
    index = _Index()
    report = index.part.build(index.web)
    # node scores 100 x (2 - count) / 2: n1 0, n2 50, n3 100; zone scores: a (3 pods) 0, b 100;
    # 1/3 node + 2/3 zone: n1 0, n2 16, n3 100
    assert (report.best_score, report.best_nodes) == (100, ("n3",))
    assert report.candidate_nodes == 3
    # three nodes: the scheduler scores every one (so the report's best node is the window's)
    assert (index.part.window_size(), report.nodes_scored, report.best_node_probability) == (3, 3, 1.0)
    model = index.part.window_model(index.web)
    assert model.odds(16).best_node == 1.0


def test_the_node_order_is_kept_until_a_node_changes() -> None:
    index = _Index()
    order = index.part.node_order()
    assert sorted(order) == ["n1", "n2", "n3"]
    assert index.part.node_order() is order
    index.nodes["n4"] = parsed(node("n4", "b", key=GA_ZONE))
    assert index.part.node_order() is order  # (not told yet)
    index.part.node_changed()
    assert sorted(index.part.node_order()) == ["n1", "n2", "n3", "n4"]
