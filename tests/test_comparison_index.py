"""Each report's ``comparison`` equals the one two independent indexes give, after any event stream.

The oracle: one plain ``SpreadIndex`` per profile loaded from the final state, the compared profile's best score,
best nodes and count taken from its report, and the overlap from the two best sets written out node by node
(tests/comparison_oracle.py). Checked for the default pair — v1.29 scoring, v1.28 compared, which the index
scores from its own counts (``index.sibling``) — and for v1.28 compared with v1.29, which a shadow index scores.
Nodes carry the GA zone label, the beta one, both or none, so the two profiles' zones differ.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comparison_oracle import expected_comparison
from k8s_objects import BETA_ZONE, GA_ZONE, controller, node
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import Snapshot
from test_index import NODES, busy_pod_event, controller_event, delete_event, feed, pod_event, service_event


@st.composite
def zoned_node_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A node with the GA zone label, the beta one (a different zone, sometimes), both, or none."""
    name = draw(st.sampled_from(NODES))
    labels: dict[str, str] = {"kubernetes.io/hostname": name}
    ga = draw(st.sampled_from([None, "z1", "z2"]))
    beta = draw(st.sampled_from([None, "z1", "z3"]))
    if ga:
        labels[GA_ZONE] = ga
    if beta:
        labels[BETA_ZONE] = beta
    taints = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}] if draw(st.integers(0, 4)) == 0 else None
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    return "apply", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec}


events_st = st.lists(
    st.one_of(
        zoned_node_event(),
        zoned_node_event(),
        pod_event(),
        busy_pod_event(),
        busy_pod_event(),
        service_event(),
        controller_event(),
        controller_event(soft_spread=True),
        delete_event(),
        st.just(("read", {})),  # every report built mid-stream: a cached comparison must follow the events
    ),
    min_size=5,
    max_size=60,
)


@pytest.mark.parametrize(
    ("profile", "compared", "sibling"),
    [
        pytest.param("v1.29", "v1.28", True, id="v1.29 compared with v1.28: from the index's own counts"),
        pytest.param("v1.28", "v1.29", False, id="v1.28 compared with v1.29: a shadow index"),
    ],
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=events_st)
def test_comparison_equals_two_independent_indexes(
    profile: str, compared: str, sibling: bool, events: list[tuple[str, dict[str, Any]]]
) -> None:
    options = ReportOptions(top_n=2)
    index = SpreadIndex(get_profile(profile), options, get_profile(compared))
    assert (index.sibling is not None, index.shadow is None) == (sibling, sibling)
    snapshot = feed(events, index)
    mine, theirs = SpreadIndex(get_profile(profile), options), SpreadIndex(get_profile(compared), options)
    mine.load(snapshot)
    theirs.load(snapshot)
    reports = index.reports()
    assert [r.workload.key for r in reports] == [r.workload.key for r in mine.reports()]
    for report in reports:
        key = report.workload.key
        own, other = mine.report_for(key), theirs.report_for(key)
        assert own is not None and other is not None
        assert report.to_dict() | {"comparison": None} == own.to_dict() | {"comparison": None}
        expected = expected_comparison(own, mine.candidate_layout(key), other, theirs.candidate_layout(key))
        assert report.comparison is not None and report.to_dict()["comparison"] == expected, key


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=events_st)
def test_the_compared_profiles_placements_are_counted_as_its_own_index_counts_them(
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    """Placements checked against v1.28's reports, scored from v1.29's counts, equal those a v1.28 index
    checks itself."""
    index = SpreadIndex(get_profile("v1.29"), ReportOptions(top_n=2), get_profile("v1.28"))
    alone = SpreadIndex(get_profile("v1.28"), ReportOptions(top_n=2))
    for action, body in events:
        if action != "apply":
            continue
        record = parse_object(body)
        assert record is not None
        for idx in (index, alone):
            if body["kind"] == "Pod":
                idx.check_placement(record, lambda: "2026-01-01T00:00:00Z")  # type: ignore[arg-type]
            idx.apply(record)
    assert index.placement_counts()["v1.28"] == alone.placement_counts()["v1.28"]
    assert set(index.placement_counts()) == {"v1.29", "v1.28"}


def test_a_workload_the_filter_leaves_no_candidate_overlaps_nothing() -> None:
    """v1.29: a DoNotSchedule constraint on a key no node carries rejects every node (Unschedulable, no best
    node); v1.28 skips the pod (all its candidates score 0, all best): the best sets share nothing."""
    objects = [node(n, z, key=GA_ZONE, labels={"kubernetes.io/hostname": n}) for n, z in (("a1", "za"), ("b1", "zb"))]
    hard = {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}  # fmt: skip
    objects.append(controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a",
                              template_spec={"topologySpreadConstraints": [hard]}))  # fmt: skip
    index = SpreadIndex(get_profile("v1.29"), ReportOptions(), get_profile("v1.28"))
    snapshot = Snapshot.from_objects(objects)
    index.load(snapshot)
    (report,) = index.reports()
    assert report.health.value == "Unschedulable" and report.comparison is not None
    mine, theirs = SpreadIndex(get_profile("v1.29")), SpreadIndex(get_profile("v1.28"))
    mine.load(snapshot)
    theirs.load(snapshot)
    key = report.workload.key
    own, other = mine.report_for(key), theirs.report_for(key)
    assert own is not None and other is not None and other.skipped
    expected = expected_comparison(own, mine.candidate_layout(key), other, theirs.candidate_layout(key))
    assert report.to_dict()["comparison"] == expected and expected["bestNodesOverlap"] is False
