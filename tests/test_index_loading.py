"""The first listing in bulk (index/loading.py): whatever arrives while the index loads — list pages, watch
events, deletions, workloads added a namespace at a time — the reports are those of the event path and of a
fresh load of the same objects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Controller, Node, Pod, Record, WorkloadKey, parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile
from test_index import _replay, budget_event, controller_event, delete_event, node_event, pod_event, service_event

#: a stream as test_index's (PodDisruptionBudgets too: the safety's owned pods and budget counts of pods filed in
#: bulk), with the end of one namespace's loading ("finish": one namespace's workloads added) anywhere in it
loading_st = st.lists(
    st.one_of(
        node_event(),
        pod_event(),
        pod_event(),
        pod_event(),
        service_event(),
        controller_event(),
        controller_event(),
        budget_event(),
        delete_event(),
        st.just(("finish", {})),
        st.just(("read", {})),
    ),
    min_size=5,
    max_size=80,
)


def _options(prediction: bool) -> ReportOptions:
    return ReportOptions(top_n=2, scheduler=default_scheduler_profile() if prediction else None)


def _index(profile_name: str, prediction: bool, compare: str | None) -> SpreadIndex:
    """An empty index; ``compare``: the compared profile (v1.28 beside v1.29: the sibling; else a shadow)."""
    return SpreadIndex(get_profile(profile_name), _options(prediction), get_profile(compare) if compare else None)


def _by_events(
    events: list[tuple[str, dict[str, Any]]], profile_name: str, prediction: bool, compare: str | None
) -> SpreadIndex:
    """The stream through the event path only (``apply``, ``remove``)."""
    index = _index(profile_name, prediction, compare)
    for action, body in events:
        if action == "apply":
            record = parse_object(body)
            assert record is not None
            index.apply(record)
        elif action == "read":
            index.reports()
        elif action == "delete":
            index.remove(body["kind"], body["namespace"], body["name"])
    return index


def _loaded(
    events: list[tuple[str, dict[str, Any]]], profile_name: str, prediction: bool = False, compare: str | None = None
) -> SpreadIndex:
    """The stream into a loading index: runs of applies of one kind as list pages (``apply_listed``), the rest
    as they come; then loading is finished."""
    index = _index(profile_name, prediction, compare)
    index.start_loading()
    page: list[Record] = []

    def flush() -> None:
        if page:
            index.apply_listed(list(page))
            page.clear()

    for action, body in events:
        if action == "apply":
            record = parse_object(body)
            assert record is not None
            if page and type(page[-1]) is not type(record):
                flush()
            page.append(record)
            continue
        flush()
        if action == "finish":
            index.finish_loading(1)
        elif action == "read":
            index.reports()
        else:
            index.remove(body["kind"], body["namespace"], body["name"])
    flush()
    while not index.finish_loading(1):
        pass
    return index


@pytest.mark.parametrize(
    ("profile_name", "prediction", "compare"),
    [*((p, False, None) for p in PROFILES), ("v1.29", True, "v1.28"), ("v1.28", False, "v1.29")],
    ids=[*PROFILES, "v1.29-prediction-compared-v1.28", "v1.28-compared-v1.29-shadow"],
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=loading_st)
def test_a_bulk_first_listing_equals_the_event_path_and_a_fresh_load(
    profile_name: str, prediction: bool, compare: str | None, events: list[tuple[str, dict[str, Any]]]
) -> None:
    if prediction:  # (room for a few pods a node: the prediction's NodeResourcesFit then depends on the counts)
        events = [(a, {**b, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "3"}}})
                  if b.get("kind") == "Node" and a == "apply" else (a, b) for a, b in events]  # fmt: skip
    index = _loaded(events, profile_name, prediction, compare)
    by_events = _by_events(events, profile_name, prediction, compare)
    _, snapshot = _replay([e for e in events if e[0] != "finish"], get_profile(profile_name))
    fresh = _index(profile_name, prediction, compare)
    fresh.load(snapshot)
    assert index.reports() == by_events.reports() == fresh.reports()
    for key in index.workload_keys():
        assert index.counts_of(key) == by_events.counts_of(key)


def test_workloads_wait_for_the_end_of_loading_and_pods_listed_meanwhile_count() -> None:
    index = SpreadIndex(get_profile("v1.28"))
    index.start_loading()
    index.apply_listed([parse_object(controller("StatefulSet", "web", {"matchLabels": {"app": "web"}},
                                                {"app": "web"}, namespace="a", replicas=3))])  # fmt: skip
    pods = [parse_object(pod(f"web-{i}", {"app": "web"}, f"n{i % 2}", namespace="a",
                             owners=[owner("StatefulSet", "web")])) for i in range(3)]  # fmt: skip
    index.apply_listed(pods)
    index.apply(parse_object(pod("web-3", {"app": "web"}, "n1", namespace="a")))  # a watch event meanwhile
    index.remove("Pod", "a", "web-0")
    key = WorkloadKey("a", "StatefulSet", "web")
    assert index.workload_keys() == [] and index.take_dirty() == (set(), set())  # deferred: nothing to write yet
    assert index.finish_loading()
    assert index.workload_keys() == [key]
    assert index.counts_of(key) == {"n1": 2, "n0": 1}
    assert index.take_dirty() == ({key}, set())
    index.apply(parse_object(controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}, {"app": "db"},
                                        namespace="a")))  # fmt: skip
    assert WorkloadKey("a", "StatefulSet", "db") in index.workload_keys()  # after loading: the event path


def _sts(name: str, namespace: str, **kw: Any) -> Record:
    record = parse_object(controller("StatefulSet", name, {"matchLabels": {"app": name}}, {"app": name},
                                     namespace=namespace, **kw))  # fmt: skip
    assert record is not None
    return record


def _pod(name: str, app: str, node: str, namespace: str) -> Record:
    record = parse_object(pod(name, {"app": app}, node, namespace=namespace))
    assert record is not None
    return record


def test_a_namespace_whose_workloads_were_added_takes_the_event_path_while_others_still_load() -> None:
    index = SpreadIndex(get_profile("v1.28"))
    index.start_loading()
    index.apply_listed([_sts("web", "a"), _sts("web", "b")])
    assert not index.finish_loading(1)  # one namespace's workloads added, the other's still deferred
    (done,) = index.workload_keys()
    other = "b" if done.namespace == "a" else "a"
    index.apply_listed([_pod("web-1", "web", "n1", done.namespace), _pod("web-1", "web", "n1", other)])
    assert index.counts_of(done) == {"n1": 1}  # counted at once: its workload exists
    assert index.finish_loading(1)
    assert index.counts_of(WorkloadKey(other, "StatefulSet", "web")) == {"n1": 1}


def test_a_deferred_workload_deleted_or_taken_over_while_loading_is_not_added() -> None:
    index = SpreadIndex(get_profile("v1.28"))
    index.start_loading()
    rs = controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a")
    index.apply_listed([_sts("gone", "a"), parse_object(rs)])
    index.remove("StatefulSet", "a", "gone")
    adopted = controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a",
                         owners=[owner("Deployment", "web")])  # fmt: skip
    index.apply(parse_object(adopted))  # a watch event: its Deployment took it over
    assert index.finish_loading()
    assert index.workload_keys() == []
    assert [c.name for c in index.controllers_in("ReplicaSet", "a")] == ["web-1"]


def test_pods_filed_in_bulk_count_in_the_predictions_node_loads() -> None:
    # Nodes with room for 2 pods; 2 pods listed on n0 while the index loads: the prediction must find n0 full
    # (NodeResourcesFit), as the event path does.
    def nodes() -> list[Record]:
        out = []
        for i in range(3):
            body = node(f"n{i}", "z1", key=GA_ZONE, labels={"kubernetes.io/hostname": f"n{i}"})
            body["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "2"}}
            out.append(parse_object(body))
        return [r for r in out if r is not None]

    pods = [parse_object(pod(f"web-{i}", {"app": "web"}, "n0" if i < 2 else "n1", namespace="a")) for i in range(3)]
    web = parse_object(controller("StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"},
                                  namespace="a", replicas=3))  # fmt: skip
    records = [r for r in (*nodes(), *pods, web) if r is not None]
    by_events = SpreadIndex(get_profile("v1.29"), _options(True))
    for record in records:
        by_events.apply(record)
    loaded = SpreadIndex(get_profile("v1.29"), _options(True))
    loaded.start_loading()
    for kind in (Node, Pod, Controller):
        loaded.apply_listed([r for r in records if isinstance(r, kind)])
    assert loaded.finish_loading()
    [expected], [report] = by_events.reports(), loaded.reports()
    assert report.prediction is not None and dict(report.prediction.excluded_nodes) == {"NodeResourcesFit": 1}
    assert report == expected


def test_a_pod_twice_in_one_page_is_counted_once_in_the_predictions_node_loads() -> None:
    # One list page holding a pod twice (web-0 moved from n0 to n1), nodes with room for 2 pods: both stay
    # feasible for the prediction, as on the event path; filing both states in bulk would count web-0 twice on
    # n1 (the later state's event-path move, then the load's addition of both) and find n1 full.
    def record(body: dict[str, Any]) -> Record:
        parsed = parse_object(body)
        assert parsed is not None
        return parsed

    nodes = []
    for i in range(2):
        body = node(f"n{i}", "z1", key=GA_ZONE, labels={"kubernetes.io/hostname": f"n{i}"})
        body["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "2"}}
        nodes.append(record(body))
    pods = [record(pod("web-0", {"app": "web"}, n, namespace="a")) for n in ("n0", "n1")]
    web = record(controller("StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"},
                            namespace="a", replicas=2))  # fmt: skip
    by_events = SpreadIndex(get_profile("v1.29"), _options(True))
    for r in (*nodes, *pods, web):
        by_events.apply(r)
    loaded = SpreadIndex(get_profile("v1.29"), _options(True))
    loaded.start_loading()
    for page in (nodes, pods, [web]):
        loaded.apply_listed(page)
    assert loaded.finish_loading()
    [expected], [report] = by_events.reports(), loaded.reports()
    assert report.prediction is not None and report.prediction.feasible_nodes == 2
    assert report == expected
