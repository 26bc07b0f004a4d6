"""The first listing in bulk (index/loading.py): whatever arrives while the index loads — list pages, watch
events, deletions, workloads added a namespace at a time — the reports are those of the event path and of a
fresh load of the same objects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_objects import controller, owner, pod
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Record, WorkloadKey, parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, get_profile
from test_index import _replay, controller_event, delete_event, node_event, pod_event, service_event

#: a stream as test_index's, with the end of one namespace's loading ("finish": one namespace's workloads
#: added) anywhere in it
loading_st = st.lists(
    st.one_of(
        node_event(),
        pod_event(),
        pod_event(),
        pod_event(),
        service_event(),
        controller_event(),
        controller_event(),
        delete_event(),
        st.just(("finish", {})),
        st.just(("read", {})),
    ),
    min_size=5,
    max_size=80,
)


def _loaded(events: list[tuple[str, dict[str, Any]]], profile_name: str) -> SpreadIndex:
    """The stream into a loading index: runs of applies of one kind as list pages (``apply_listed``), the rest
    as they come; then loading is finished."""
    index = SpreadIndex(get_profile(profile_name), ReportOptions(top_n=2))
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


@pytest.mark.parametrize("profile_name", list(PROFILES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=loading_st)
def test_a_bulk_first_listing_equals_the_event_path_and_a_fresh_load(
    profile_name: str, events: list[tuple[str, dict[str, Any]]]
) -> None:
    index = _loaded(events, profile_name)
    by_events, snapshot = _replay([e for e in events if e[0] != "finish"], get_profile(profile_name))
    fresh = SpreadIndex(get_profile(profile_name), ReportOptions(top_n=2))
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
