"""One broken object never hides the others: malformed objects are logged once and skipped."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from handler_fakes import Feeder, deployment, ev, pipeline, pod_of, web_cluster, with_meta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_objects import controller, pod
from spreadwatch.config import OperatorConfig
from spreadwatch.index import SpreadIndex
from spreadwatch.runtime.informers import EventRouter
from spreadwatch.scoring import get_profile


def broken_pod(name: str) -> dict[str, Any]:
    obj = pod(name, {"app": "web"}, "node-a1", namespace="shop")
    obj["metadata"]["labels"] = ["not", "a", "map"]
    return obj


def test_malformed_pod_is_skipped_and_the_others_still_count(caplog: pytest.LogCaptureFixture) -> None:
    p = pipeline()
    with caplog.at_level(logging.WARNING, logger="spreadwatch.events"):
        p.feed(*web_cluster(pods_on=["node-a1", "node-b1"]))
        p.feed(ev("ADDED", broken_pod("bad")))
        p.feed(ev("ADDED", pod_of("web", 9, "node-c1")))  # after the broken one
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.malformed_count == 1
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    assert "Pod shop/bad" in lines[0]
    assert "metadata.labels" in lines[0]
    assert "\n" not in lines[0]


def test_a_broken_object_is_logged_once_until_it_is_valid_again(caplog: pytest.LogCaptureFixture) -> None:
    p = pipeline()
    p.feed(*web_cluster())
    with caplog.at_level(logging.INFO, logger="spreadwatch.events"):
        for _ in range(5):
            p.feed(ev("MODIFIED", broken_pod("bad")))
        p.feed(ev("MODIFIED", pod("bad", {"app": "other"}, "node-a1", namespace="shop")))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert any("valid again" in r.getMessage() for r in caplog.records)
    assert p.malformed == {}


def test_a_broken_pod_keeps_its_last_good_state() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1"]))
    bad = pod_of("web", 0, "node-a1")
    bad["spec"]["nodeName"] = 42
    p.feed(ev("MODIFIED", bad))
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 2
    assert p.malformed  # reported
    p.feed(ev("DELETED", bad))  # a DELETED event needs only the name
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 1
    assert p.malformed == {}


def test_malformed_workload_does_not_block_other_reports() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    broken = deployment("api")
    broken["spec"]["replicas"] = "three"
    p.feed(ev("ADDED", broken))
    p.settle()
    assert p.api.names() == {("shop", "deployment-web")}
    assert p.report("shop", "deployment-web")["pods"] == 3


def test_invalid_selector_gives_an_error_report_and_others_stay_correct() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    bad = controller(
        "Deployment",
        "broken",
        {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["x"]}]},
        {"app": "broken"},
        namespace="shop",
    )
    p.feed(ev("ADDED", with_meta(bad, generation=3)))
    p.settle()
    error = p.report("shop", "deployment-broken")
    assert error["health"] == "Error"
    assert error["reasons"] and error["reasons"][0].startswith("InvalidSelector")
    cond = error["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Balanced", "Unknown", "Error")
    assert "InvalidSelector" in cond["message"]
    assert error["observedGeneration"] == 3
    good = p.report("shop", "deployment-web")
    assert (good["pods"], good["health"]) == (3, "Balanced")


@pytest.mark.parametrize(
    "event",
    [
        pytest.param({}, id="empty event"),
        pytest.param({"type": "ADDED"}, id="no object"),
        pytest.param({"type": "ADDED", "object": "text"}, id="object is a string"),
        pytest.param({"type": "ADDED", "object": {"metadata": {"name": "x"}}}, id="no kind"),
        pytest.param({"type": "ADDED", "object": {"kind": "Pod"}}, id="no metadata"),
        pytest.param({"type": "ADDED", "object": {"kind": "Pod", "metadata": "m"}}, id="metadata a string"),
        pytest.param({"type": "ADDED", "object": {"kind": "ConfigMap", "metadata": {"name": "c"}}}, id="other"),
        pytest.param({"type": "DELETED", "object": {"kind": "Pod", "metadata": {}}}, id="deleted without name"),
    ],
)
def test_garbage_events_are_skipped_without_raising(event: dict[str, Any]) -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.feed(event)
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["Pod", "Node", "Service", "Namespace", "Deployment", "ReplicaSet", "StatefulSet"]),
    event_type=st.sampled_from([None, "ADDED", "MODIFIED", "DELETED"]),
    metadata=st.dictionaries(st.sampled_from(["name", "namespace", "labels", "ownerReferences", "uid"]), json_values),
    spec=json_values,
    status=json_values,
)
def test_the_route_never_raises_on_arbitrary_objects(
    kind: str, event_type: str | None, metadata: dict[str, Any], spec: Any, status: Any
) -> None:
    index = SpreadIndex(get_profile("v1.28"))
    router = EventRouter(index, OperatorConfig().scope)
    feeder = Feeder(router)
    feeder.feed(*web_cluster())
    feeder.feed(ev(event_type, {"kind": kind, "metadata": metadata, "spec": spec, "status": status}))
    index.reports()  # the index stays usable
    informer = feeder.informers[kind]
    # every event accounted for once: routed, or skipped by its informer as malformed or undecodable
    assert router.stats.events + informer.stats.malformed + informer.stats.undecodable == len(web_cluster()) + 1
