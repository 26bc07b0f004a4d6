"""Workload, Service, Node and Namespace events: which reports exist, their owner, generation and scope."""

from __future__ import annotations

from handler_fakes import (
    deployment,
    ev,
    namespace_obj,
    pipeline,
    pod_of,
    web_cluster,
    with_meta,
)

from k8s_objects import GA_ZONE, controller, node, pod, service
from spreadwatch.model import WorkloadKey


def test_one_report_per_workload_named_kind_name() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    sts = controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}, {"app": "db"}, namespace="shop")
    rc = controller("ReplicationController", "legacy", {"app": "legacy"}, {"app": "legacy"}, namespace="shop")
    bare = controller("ReplicaSet", "worker", {"matchLabels": {"app": "worker"}}, {"app": "worker"}, namespace="shop")
    p.feed(ev("ADDED", sts), ev("ADDED", rc), ev("ADDED", bare))
    p.feed(ev("ADDED", pod("db-0", {"app": "db"}, "node-a1", namespace="shop")))
    p.settle()
    # the Deployment's ReplicaSet is not a workload of its own
    assert p.api.names() == {
        ("shop", "deployment-web"),
        ("shop", "statefulset-db"),
        ("shop", "replicationcontroller-legacy"),
        ("shop", "replicaset-worker"),
    }
    status = p.report("shop", "statefulset-db")
    assert status["workload"] == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "namespace": "shop",
        "name": "db",
        "uid": "uid-db",
    }
    assert status["pods"] == 1
    spec = p.api.objects[("shop", "deployment-web")]["spec"]
    assert spec["workloadRef"]["kind"] == "Deployment"
    assert spec["workloadRef"]["uid"] == "uid-web"


def test_deleting_the_workload_deletes_its_report() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    assert ("shop", "deployment-web") in p.api.names()
    p.feed(ev("DELETED", deployment("web")))
    p.settle()
    assert p.api.names() == set()
    assert [c.name for c in p.api.writes("delete")] == ["deployment-web"]


def test_recreated_workload_gets_its_report_pointed_at_the_new_uid() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    p.feed(ev("DELETED", deployment("web")), ev("ADDED", deployment("web", uid="uid-web-2")))
    p.settle()
    assert p.api.objects[("shop", "deployment-web")]["spec"]["workloadRef"]["uid"] == "uid-web-2"
    assert p.report("shop", "deployment-web")["workload"]["uid"] == "uid-web-2"

    # A uid change seen without a DELETED event (e.g. missed during a watch gap): one apply repoints it.
    writes = len(p.api.writes())
    p.feed(ev("MODIFIED", deployment("web", uid="uid-web-3")))
    p.settle()
    assert [c.verb for c in p.api.writes()[writes:]] == ["apply"]
    obj = p.api.objects[("shop", "deployment-web")]
    assert obj["spec"]["workloadRef"]["uid"] == "uid-web-3"
    assert obj["metadata"]["ownerReferences"] == [{"uid": "uid-web-3"}]
    assert p.writer.store.get(WorkloadKey("shop", "Deployment", "web")).owner_uid == "uid-web-3"  # type: ignore[union-attr]


def test_observed_generation_follows_the_workload() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    assert p.report("shop", "deployment-web")["observedGeneration"] == 1
    p.feed(ev("MODIFIED", deployment("web", generation=7)))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert status["observedGeneration"] == 7
    assert status["conditions"][0]["observedGeneration"] == 7


def test_replicas_change_updates_the_report() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    p.feed(ev("MODIFIED", deployment("web", replicas=5, generation=2)))
    p.settle()
    assert p.report("shop", "deployment-web")["replicas"] == 5


def test_service_selector_changes_the_spreading_selector() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    assert p.report("shop", "deployment-web")["selector"] == "app=web,app=web,pod-template-hash=abc"
    p.feed(ev("MODIFIED", service("web", {"app": "web", "tier": "fe"}, namespace="shop")))
    p.settle()
    # the service no longer selects the web pods: it stops contributing to the selector
    assert p.report("shop", "deployment-web")["selector"] == "app=web,pod-template-hash=abc"
    p.feed(ev("DELETED", service("web", None, namespace="shop")))
    p.settle()
    assert p.report("shop", "deployment-web")["selector"] == "app=web,pod-template-hash=abc"


def test_node_events_change_candidates_and_zones() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    assert p.report("shop", "deployment-web")["zoneCount"] == 3
    p.feed(ev("ADDED", node("node-d1", "zone-d", key=GA_ZONE)))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert (status["candidateNodes"], status["zoneCount"]) == (7, 4)
    tainted = node("node-d1", "zone-d", key=GA_ZONE, taints=[{"key": "x", "value": "y", "effect": "NoSchedule"}])
    p.feed(ev("MODIFIED", tainted))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert status["excludedNodes"] == {"UntoleratedTaint": 1}
    p.feed(ev("DELETED", node("node-d1")))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert (status["candidateNodes"], status["excludedNodes"]) == (6, {})


def test_workload_opt_out_label_deletes_and_restores_the_report() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    p.feed(ev("MODIFIED", deployment("web", labels={"app": "web", "spreadwatch.io/ignore": "true"})))
    p.settle()
    assert p.api.names() == set()
    assert p.writer.stats.skipped_excluded >= 1
    p.feed(ev("MODIFIED", deployment("web", labels={"app": "web", "spreadwatch.io/ignore": "false"})))
    p.settle()
    assert p.api.names() == {("shop", "deployment-web")}


def test_namespace_opt_out_label_deletes_and_restores_its_reports() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.feed(*web_cluster(namespace="other"))
    p.settle()
    p.feed(ev("MODIFIED", namespace_obj("shop", {"spreadwatch.io/ignore": "true"})))
    p.settle()
    assert p.api.names() == {("other", "deployment-web")}
    p.feed(ev("MODIFIED", namespace_obj("shop", {})))
    p.settle()
    assert p.api.names() == {("other", "deployment-web"), ("shop", "deployment-web")}


def test_custom_and_disabled_opt_out_label() -> None:
    from spreadwatch.config import parse_label_requirement

    p = pipeline(opt_out=parse_label_requirement("team/skip"))  # any value
    p.feed(*web_cluster())
    p.feed(ev("MODIFIED", deployment("web", labels={"team/skip": ""})))
    p.settle()
    assert p.api.names() == set()

    off = pipeline(opt_out=None)
    off.feed(*web_cluster())
    off.feed(ev("MODIFIED", deployment("web", labels={"spreadwatch.io/ignore": "true"})))
    off.settle()
    assert off.api.names() == {("shop", "deployment-web")}


def test_pods_arriving_before_their_workload_are_counted() -> None:
    p = pipeline()
    events = web_cluster()
    pods = [e for e in events if e["object"]["kind"] == "Pod"]
    rest = [e for e in events if e["object"]["kind"] != "Pod"]
    p.feed(*pods, *rest)
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3


def test_new_replicaset_rollout_counts_only_the_new_template() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-a2"]))
    p.settle()
    from handler_fakes import replicaset_of

    new_rs = with_meta(replicaset_of("web", hash_="def"), annotations={"deployment.kubernetes.io/revision": "2"})
    p.feed(ev("ADDED", new_rs), ev("ADDED", pod_of("web", 0, "node-c1", hash_="def")))
    p.settle()
    status = p.report("shop", "deployment-web")
    assert "pod-template-hash=def" in status["selector"]
    assert status["pods"] == 1
