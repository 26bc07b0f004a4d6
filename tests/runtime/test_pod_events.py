"""Pod watch events (event dicts, through the route the operator runs) move the reports' counts and scores."""

from __future__ import annotations

import copy

from handler_fakes import NODES, Feeder, ev, pipeline, pod_of, web_cluster, with_meta

from spreadwatch.config import OperatorConfig
from spreadwatch.index import SpreadIndex
from spreadwatch.runtime.informers.router import EventRouter
from spreadwatch.scoring import get_profile


def test_added_pods_are_counted_per_node_and_zone() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-a1", "node-b1"]))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert status["pods"] == 3
    assert {n["node"]: n["pods"] for n in status["nodes"] if n["pods"]} == {"node-a1": 2, "node-b1": 1}
    assert status["nodeSkew"] == 2
    assert status["health"] == "Imbalanced"
    assert status["candidateNodes"] == len(NODES)


def test_initial_listing_events_with_type_none_are_applied() -> None:
    p = pipeline()
    p.feed(*[ev(None, e["object"]) for e in web_cluster()])
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3


def test_deleted_pod_is_uncounted() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    p.settle()
    p.feed(ev("DELETED", pod_of("web", 0, "node-a1")))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert status["pods"] == 2
    assert "node-a1" not in {n["node"] for n in status["nodes"] if n["pods"]}


def test_modified_pod_moving_node_moves_its_count() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    p.feed(ev("MODIFIED", pod_of("web", 0, "node-b2")))
    p.settle()
    busy = {n["node"]: n["pods"] for n in p.report("shop", "deployment-web")["nodes"] if n["pods"]}
    assert busy == {"node-b1": 1, "node-b2": 1, "node-c1": 1}


def test_terminal_deleting_and_unbound_pods_do_not_count() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    p.feed(
        ev("MODIFIED", pod_of("web", 0, "node-a1", phase="Succeeded")),
        ev("MODIFIED", pod_of("web", 1, "node-b1", deleting=True)),
        ev("ADDED", pod_of("web", 7, "")),  # pending, not bound
    )
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 1


def test_pods_of_other_workloads_and_namespaces_do_not_count() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1"]))
    p.feed(
        ev("ADDED", pod_of("web", 5, "node-a2", namespace="other")),  # same labels, another namespace
        ev("ADDED", pod_of("api", 0, "node-a2")),  # same namespace, other labels
    )
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 1


def test_events_in_excluded_namespaces_are_not_indexed() -> None:
    p = pipeline(skip_namespaces=("kube-system",))
    p.feed(*web_cluster(namespace="kube-system"))
    p.settle()
    assert p.index.sizes().pods == 0
    assert p.api.names() == set()
    assert p.router.stats.ignored > 0

    only = pipeline(namespaces=("shop",))
    only.feed(*web_cluster(namespace="elsewhere"), *web_cluster(namespace="shop"))
    only.settle()
    assert only.api.names() == {("shop", "deployment-web")}


def test_a_burst_of_pod_events_for_one_workload_gives_one_status_write() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=[]))
    p.settle()
    before = len(p.api.writes("apply"))
    for i in range(200):
        p.feed(ev("ADDED", pod_of("web", i, NODES[i % len(NODES)])))
        p.clock.advance(0.001)
        p.step()  # the writer runs during the burst; the workload never goes quiet
    p.settle()
    assert len(p.api.writes("apply")) - before == 1
    assert p.report("shop", "deployment-web")["pods"] == 200


def test_the_route_never_mutates_the_event_body_and_the_informer_fills_in_a_missing_kind() -> None:
    index = SpreadIndex(get_profile("v1.28"))
    router = EventRouter(index, OperatorConfig().scope)
    body = pod_of("web", 0, "node-a1")
    del body["kind"]
    event = ev("ADDED", body)
    frozen = copy.deepcopy(event)
    Feeder(router).feed(event, kind="Pod")
    assert event == frozen
    assert index.sizes().pods == 1


def test_deleted_event_needs_only_the_name() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1"]))
    p.feed(ev("DELETED", with_meta({"kind": "Pod"}, name="web-abc-0", namespace="shop")))
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 1
