"""Hand-written cases for corners random generation rarely reaches.

Each case is ``{"name", "cluster", "incoming": [pod], "candidates": [...] | None,
"expect": {...} | None}``.  ``expect`` holds values worked out by hand from the
v1.28 source (``skipped``, ``candidates`` and/or ``scores``); the oracle
self-check asserts them, the differential test compares Python with the oracle
on every case.
"""

from __future__ import annotations

import itertools
from typing import Any

from gen import LEGACY_REGION, LEGACY_ZONE, REGION, UNSCHEDULABLE_TAINT, ZONE

Obj = dict[str, Any]
_uids = itertools.count(1)


def _next_uid() -> str:
    return f"00000000-0000-4000-8000-{next(_uids):012x}"


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    n: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": _next_uid(), "labels": all_labels}}
    if spec:
        n["spec"] = spec
    return n


def pod(
    name: str,
    node_name: str | None = None,
    labels: dict[str, str] | None = None,
    ns: str = "default",
    phase: str | None = None,
    deleting: bool = False,
    **spec: Any,
) -> Obj:
    p: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": _next_uid()},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}], **spec},
        "status": {"phase": phase or ("Running" if node_name else "Pending")},
    }
    if labels is not None:
        p["metadata"]["labels"] = labels
    if node_name:
        p["spec"]["nodeName"] = node_name
    if deleting:
        p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return p


def pods_on(
    node_name: str, count: int, labels: dict[str, str], prefix: str | None = None, ns: str = "default"
) -> list[Obj]:
    prefix = prefix or f"{node_name}-p"
    return [pod(f"{prefix}{i}", node_name, labels, ns=ns) for i in range(count)]


def service(name: str, selector: dict[str, str] | None, ns: str = "default") -> Obj:
    spec: Obj = {"ports": [{"port": 80}]}
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "uid": _next_uid()},
        "spec": spec,
    }


def rc(name: str, selector: dict[str, str] | None, ns: str = "default") -> Obj:
    spec: Obj = {"replicas": 1}
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name, "namespace": ns, "uid": _next_uid()},
        "spec": spec,
    }


def apps(kind: str, name: str, selector: Obj | None, ns: str = "default") -> Obj:
    spec: Obj = {"replicas": 1}
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns, "uid": _next_uid()},
        "spec": spec,
    }


def owned(p: Obj, kind: str, name: str, api: str, controller: bool | None = True) -> Obj:
    ref: Obj = {"apiVersion": api, "kind": kind, "name": name, "uid": _next_uid()}
    if controller is not None:
        ref["controller"] = controller
    p["metadata"].setdefault("ownerReferences", []).append(ref)
    return p


def cluster(
    nodes: list[Obj],
    pods: list[Obj] = (),
    services: list[Obj] = (),
    rcs: list[Obj] = (),
    rss: list[Obj] = (),
    sss: list[Obj] = (),
) -> Obj:
    return {
        "nodes": list(nodes),
        "pods": list(pods),
        "services": list(services),
        "replicationControllers": list(rcs),
        "replicaSets": list(rss),
        "statefulSets": list(sss),
    }


WEB = {"app": "web"}
DB = {"app": "db"}


def _cases() -> list[Obj]:
    cases: list[Obj] = []

    def add(name: str, cl: Obj, incoming: Obj, given: list[str] | None = None, **expect: Any) -> None:
        """``given``: explicit candidates (None: filter); ``expect``: skipped/candidates/scores."""
        assert set(expect) <= {"skipped", "candidates", "scores"}, expect
        cases.append(
            {"name": name, "cluster": cl, "incoming": [incoming], "candidates": given, "expect": expect or None}
        )

    two = [node("n1"), node("n2")]
    add(
        "two-nodes-no-zone",
        cluster(two, pods_on("n1", 1, WEB) + pods_on("n2", 2, WEB), [service("web", WEB)]),
        pod("in", labels=WEB),
        scores={"n1": 50, "n2": 0},
        candidates=["n1", "n2"],
    )

    add(
        "explicit-candidates-keep-given-order",
        cluster([*two, node("n3")], pods_on("n1", 1, WEB) + pods_on("n2", 2, WEB), [service("web", WEB)]),
        pod("in", labels=WEB),
        ["n3", "n2", "n1"],
        scores={"n3": 100, "n2": 0, "n1": 50},
        candidates=["n3", "n2", "n1"],
    )

    add(
        "no-selector-everything-100",
        cluster(two, pods_on("n1", 3, WEB)),
        pod("in", labels=WEB),
        scores={"n1": 100, "n2": 100},
    )

    add(
        "single-candidate-with-matches-scores-0",
        cluster([node("n1")], pods_on("n1", 2, WEB), [service("web", WEB)]),
        pod("in", labels=WEB),
        scores={"n1": 0},
    )

    # 100 * ((50-21)/50) = 57.99999999999999 -> 57 (integer arithmetic would give 58).
    add(
        "float-order-node-only",
        cluster(two, pods_on("n1", 50, WEB) + pods_on("n2", 21, WEB), [service("web", WEB)]),
        pod("in", labels=WEB),
        scores={"n1": 0, "n2": 57},
    )

    # Node counts a=5, b=6, c=6, d=3; zones z1={a}, z2={b,c,d}: max node 6, max zone 15.
    # a: 100*(1/6)*(1/3) + (2/3)*100*(10/15) = 49.999999999999993 -> 49 (exact: 50).
    add(
        "float-truncation-zone-blend",
        cluster(
            [node("a", {ZONE: "z1"}), node("b", {ZONE: "z2"}), node("c", {ZONE: "z2"}), node("d", {ZONE: "z2"})],
            pods_on("a", 5, WEB) + pods_on("b", 6, WEB) + pods_on("c", 6, WEB) + pods_on("d", 3, WEB),
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"a": 49, "b": 0, "c": 0, "d": 16},
    )

    # Zone counts only include candidate nodes; a zoneless candidate keeps its node-only score.
    add(
        "zoneless-node-among-zoned",
        cluster(
            [node("a", {ZONE: "z1"}), node("b", {ZONE: "z2"}), node("c")],
            pods_on("a", 2, WEB) + pods_on("c", 1, WEB),
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"a": 0, "b": 100, "c": 50},
    )

    # The legacy zone label wins when present, even with an empty value: a and b are
    # then zoneless (legacy zone "" and no region), c and d are in zone z2.
    add(
        "legacy-zone-label-wins-even-empty",
        cluster(
            [
                node("a", {LEGACY_ZONE: "", ZONE: "z1"}),
                node("b", {LEGACY_ZONE: "", ZONE: "z1"}),
                node("c", {LEGACY_ZONE: "z2", ZONE: "z1"}),
                node("d", {LEGACY_ZONE: "z2"}),
            ],
            pods_on("a", 2, WEB) + pods_on("c", 1, WEB),
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"a": 0, "b": 100, "c": 16, "d": 33},
    )

    # Region alone makes a zone key ("r1:\x00:"); same zone name in two regions = two zones.
    add(
        "region-only-and-same-zone-name-other-region",
        cluster(
            [
                node("a", {REGION: "r1"}),
                node("b", {LEGACY_REGION: "r1"}),
                node("c", {REGION: "r1", ZONE: "z1"}),
                node("d", {REGION: "r2", ZONE: "z1"}),
            ],
            pods_on("a", 1, WEB) + pods_on("c", 1, WEB),
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"a": 0, "b": 33, "c": 0, "d": 100},
    )

    add(
        "deleting-terminal-unscheduled-and-ghost-pods-do-not-count",
        cluster(
            two,
            [
                pod("d", "n1", WEB, deleting=True),
                pod("s", "n1", WEB, phase="Succeeded"),
                pod("f", "n1", WEB, phase="Failed"),
                pod("u", None, WEB),
                pod("g", "gone", WEB),
                pod("ok", "n2", WEB),
            ],
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"n1": 100, "n2": 0},
    )

    add(
        "other-namespace-pods-and-services-ignored",
        cluster(
            two,
            pods_on("n1", 2, WEB, ns="other") + pods_on("n2", 1, WEB),
            [service("web", WEB, ns="other"), service("web2", WEB)],
        ),
        pod("in", labels=WEB),
        scores={"n1": 100, "n2": 0},
    )

    add(
        "service-without-selector-and-empty-selector-match-nothing",
        cluster(two, pods_on("n1", 2, WEB)),
        pod("in", labels=WEB),
        scores={"n1": 100, "n2": 100},
    )
    cases[-1]["cluster"]["services"] = [service("none", None), service("empty", {})]

    # The RC is found by the owner reference, its selector need not match the pod,
    # and on a key conflict it overrides the services' value (labels.Merge).
    add(
        "rc-selector-overrides-service-selector",
        cluster(two, pods_on("n1", 1, WEB) + pods_on("n2", 2, DB), [service("web", WEB)], rcs=[rc("rc", DB)]),
        owned(pod("in", labels=WEB), "ReplicationController", "rc", "v1"),
        scores={"n1": 100, "n2": 0},
    )

    # ReplicaSet requirements are ANDed with the service's: app=web AND app=db matches nothing.
    add(
        "rs-selector-conflicting-with-service-matches-nothing",
        cluster(
            two,
            pods_on("n1", 1, WEB) + pods_on("n2", 2, DB),
            [service("web", WEB)],
            rss=[apps("ReplicaSet", "rs", {"matchLabels": DB})],
        ),
        owned(pod("in", labels=WEB), "ReplicaSet", "rs", "apps/v1"),
        scores={"n1": 100, "n2": 100},
    )

    # Only a DoesNotExist requirement: the selector is not empty and matches unlabelled pods.
    add(
        "statefulset-doesnotexist-only",
        cluster(
            two,
            pods_on("n1", 2, {}) + pods_on("n2", 1, {"tier": "x"}),
            sss=[apps("StatefulSet", "ss", {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]})],
        ),
        owned(pod("in", labels={}), "StatefulSet", "ss", "apps/v1"),
        scores={"n1": 0, "n2": 100},
    )

    for sel_name, sel in (("nil", None), ("empty", {})):
        add(
            f"rs-{sel_name}-selector-adds-nothing",
            cluster(
                two,
                pods_on("n1", 1, WEB) + pods_on("n2", 2, WEB),
                [service("web", WEB)],
                rss=[apps("ReplicaSet", "rs", sel)],
            ),
            owned(pod("in", labels=WEB), "ReplicaSet", "rs", "apps/v1"),
            scores={"n1": 50, "n2": 0},
        )

    for api in ("extensions/v1beta1", "apps/v1beta2", "v1"):
        add(
            f"rs-owner-with-apiVersion-{api.replace('/', '-')}-ignored",
            cluster(
                two, pods_on("n1", 1, DB) + pods_on("n2", 2, DB), rss=[apps("ReplicaSet", "rs", {"matchLabels": DB})]
            ),
            owned(pod("in", labels=DB), "ReplicaSet", "rs", api),
            scores={"n1": 100, "n2": 100},
        )

    add(
        "non-controller-owner-ignored",
        cluster(two, pods_on("n1", 1, DB) + pods_on("n2", 2, DB), rss=[apps("ReplicaSet", "rs", {"matchLabels": DB})]),
        owned(pod("in", labels=DB), "ReplicaSet", "rs", "apps/v1", controller=False),
        scores={"n1": 100, "n2": 100},
    )

    p = owned(pod("in", labels=DB), "ReplicaSet", "other", "apps/v1", controller=None)
    add(
        "controller-owner-after-non-controller-one",
        cluster(
            two,
            pods_on("n1", 1, DB) + pods_on("n2", 2, DB),
            rss=[apps("ReplicaSet", "rs", {"matchLabels": DB}), apps("ReplicaSet", "other", {"matchLabels": WEB})],
        ),
        owned(p, "ReplicaSet", "rs", "apps/v1"),
        scores={"n1": 50, "n2": 0},
    )

    add(
        "owner-in-other-namespace-not-found",
        cluster(
            two,
            pods_on("n1", 1, DB) + pods_on("n2", 2, DB),
            rss=[apps("ReplicaSet", "rs", {"matchLabels": DB}, ns="other")],
        ),
        owned(pod("in", labels=DB), "ReplicaSet", "rs", "apps/v1"),
        scores={"n1": 100, "n2": 100},
    )

    add(
        "topology-spread-constraints-skip",
        cluster(two, pods_on("n1", 1, WEB), [service("web", WEB)]),
        pod(
            "in",
            labels=WEB,
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": WEB},
                }
            ],
        ),
        skipped=True,
        scores={"n1": 0, "n2": 0},
    )

    # --- filtering (candidates: null) -----------------------------------------
    add(
        "filter-unschedulable-and-taints",
        cluster(
            [
                node("n1"),
                node("n2", unschedulable=True),
                node("n3", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
                node("n4", taints=[{"key": "spot", "effect": "PreferNoSchedule"}]),
                node("n5", taints=[{"key": "gpu", "effect": "NoExecute"}]),
            ],
            pods_on("n1", 1, WEB),
            [service("web", WEB)],
        ),
        pod("in", labels=WEB),
        candidates=["n1", "n4"],
        scores={"n1": 0, "n4": 100},
    )

    add(
        "filter-tolerations",
        cluster(
            [
                node("n1", unschedulable=True, taints=[{"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]),
                node("n2", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
                node("n3", taints=[{"key": "gpu", "value": "false", "effect": "NoSchedule"}]),
            ]
        ),
        pod(
            "in",
            labels=WEB,
            tolerations=[{"key": UNSCHEDULABLE_TAINT, "operator": "Exists"}, {"key": "gpu", "value": "true"}],
        ),
        candidates=["n1", "n2"],
    )

    add(
        "filter-node-selector-and-gt",
        cluster(
            [
                node("n1", {"disk": "ssd", "cpus": "8"}),
                node("n2", {"disk": "ssd", "cpus": "many"}),
                node("n3", {"disk": "hdd", "cpus": "16"}),
            ]
        ),
        pod(
            "in",
            labels=WEB,
            nodeSelector={"disk": "ssd"},
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "cpus", "operator": "Gt", "values": ["4"]}]}
                        ]
                    }
                }
            },
        ),
        candidates=["n1"],
    )

    add(
        "filter-matchfields-conflict",
        cluster(two),
        pod(
            "in",
            labels=WEB,
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                                    {"key": "metadata.name", "operator": "In", "values": ["n2"]},
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        candidates=[],
    )

    add(
        "filter-empty-affinity-term-matches-nothing",
        cluster(two),
        pod(
            "in",
            labels=WEB,
            affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}},
        ),
        candidates=[],
    )

    add(
        "filter-matchfields-or-terms",
        cluster([node("n1"), node("n2"), node("n3")], pods_on("n2", 1, WEB), [service("web", WEB)]),
        pod(
            "in",
            labels=WEB,
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]},
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]},
                        ]
                    }
                }
            },
        ),
        candidates=["n2", "n3"],
        scores={"n2": 0, "n3": 100},
    )
    return cases


EDGE_CASES: list[Obj] = _cases()
