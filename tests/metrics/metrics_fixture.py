"""A small cluster for the metrics tests, built with tests/k8s_objects.py, with its reports worked out.

Nodes (zone labels are the legacy ``failure-domain.beta.kubernetes.io/*`` ones, region ``r1``)::

    node-a1  z-a        node-b1  z-b        node-x   no zone
    node-a2  z-a        node-b2  z-b, tainted NoSchedule (excluded: UntoleratedTaint)

Workloads (profile v1.28, scores 0-100; candidates a1, a2, b1, x unless said):

* ``shop/StatefulSet/db`` — 3 replicas: db-0, db-1 on node-a1, db-2 on node-b1 → Imbalanced (node skew 2)
* ``shop/ReplicationController/cache`` — 2 replicas, both pods on node-a2 → SinglePointOfFailure
* ``shop/StatefulSet/spread`` — topologySpreadConstraints → Skipped
* ``shop/ReplicaSet/bad`` — invalid selector operator → Error
* ``other/StatefulSet/solo`` — 1 replica on node-b1 → Balanced
"""

from __future__ import annotations

from typing import Any

from k8s_objects import BETA_REGION, controller, node, owner, pod, service
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, WorkloadKey, parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile
from spreadwatch.snapshot import Snapshot

TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
DB = WorkloadKey("shop", "StatefulSet", "db")
CACHE = WorkloadKey("shop", "ReplicationController", "cache")
SPREAD = WorkloadKey("shop", "StatefulSet", "spread")
BAD = WorkloadKey("shop", "ReplicaSet", "bad")
SOLO = WorkloadKey("other", "StatefulSet", "solo")


def _owned(kind: str, name: str, pod_name: str, node_name: str, namespace: str = "shop") -> dict[str, Any]:
    return pod(pod_name, {"app": name}, node_name, namespace=namespace, owners=[owner(kind, name)])


def objects() -> list[dict[str, Any]]:
    region = {BETA_REGION: "r1"}
    return [
        node("node-a1", "z-a", labels=region),
        node("node-a2", "z-a", labels=region),
        node("node-b1", "z-b", labels=region),
        node("node-b2", "z-b", labels=region, taints=TAINT),
        node("node-x"),
        controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}, {"app": "db"}, namespace="shop", replicas=3),
        service("db", {"app": "db"}, namespace="shop"),
        _owned("StatefulSet", "db", "db-0", "node-a1"),
        _owned("StatefulSet", "db", "db-1", "node-a1"),
        _owned("StatefulSet", "db", "db-2", "node-b1"),
        controller("ReplicationController", "cache", {"app": "cache"}, {"app": "cache"}, namespace="shop", replicas=2),
        _owned("ReplicationController", "cache", "cache-1", "node-a2"),
        _owned("ReplicationController", "cache", "cache-2", "node-a2"),
        controller(
            "StatefulSet",
            "spread",
            {"matchLabels": {"app": "spread"}},
            {"app": "spread"},
            namespace="shop",
            template_spec={
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
        ),
        controller(
            "ReplicaSet",
            "bad",
            {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["bad"]}]},
            {"app": "bad"},
            namespace="shop",
        ),
        controller("StatefulSet", "solo", {"matchLabels": {"app": "solo"}}, {"app": "solo"}, namespace="other"),
        _owned("StatefulSet", "solo", "solo-0", "node-b1", namespace="other"),
    ]


def index(profile: str = "v1.28", compare: str | None = None, prediction: bool = False) -> SpreadIndex:
    """The fixture's index (``prediction``: with the whole default scheduler profile's prediction)."""
    options = ReportOptions(scheduler=default_scheduler_profile()) if prediction else None
    idx = SpreadIndex(get_profile(profile), options, compare=get_profile(compare) if compare else None)
    objs = objects()
    if prediction:  # (room for pods on every node: the prediction's NodeResourcesFit; the GA zone label v1.29 reads)
        for obj in objs:
            if obj["kind"] == "Node":
                obj["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
                labels = obj["metadata"]["labels"]
                for beta, ga in (("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"),
                                 (BETA_REGION, "topology.kubernetes.io/region")):  # fmt: skip
                    if beta in labels:
                        labels[ga] = labels[beta]
    idx.load(Snapshot.from_objects(objs))
    return idx


def with_placement(idx: SpreadIndex) -> SpreadIndex:
    """``idx`` after one checked binding (the operator past its first list): db-3 bound to node-a2, one of
    db's best nodes (a2 and x hold no db pod)."""
    record = parse_object(_owned("StatefulSet", "db", "db-3", "node-a2"))
    assert isinstance(record, Pod)
    idx.check_placement(record, lambda: "2026-01-02T03:04:05Z")
    idx.apply(record)
    return idx
