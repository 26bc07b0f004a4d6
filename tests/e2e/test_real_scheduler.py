"""spreadwatch's predictions against the real kube-scheduler binaries, one replica at a time.

A control plane of its own (hack/devcluster.py, auto ports) runs kube-scheduler v1.36.4 or v1.28.15
(hack/scheduler/build.sh, cached like the control plane) with a configuration from hack/scheduler/config and
``--vmodule=schedule_one=10``. The cluster mixes what the filters and the spreading plugins read differently:
zoned nodes, a node with the GA and the beta labels, one with only the beta zone label, one without zone, a
cordoned node, a tainted node, and a node that the workloads with a nodeSelector exclude. A Service spans a
Deployment and a ReplicationController; a StatefulSet (Parallel) has a nodeSelector; a Deployment has its own
ScheduleAnyway constraints (matchLabelKeys, node inclusion policies), with pods pinned by hand on the excluded
and the tainted node.

Each step scales one workload up by one. Just before, spreadwatch reports on a fresh dump (the prediction);
the scheduler then binds the new pod. With spreading as the only score the chosen node must be in the
report's best set, and every node the scheduler scored must be a candidate whose score derived from the
report equals the plugin's logged score ÷ its weight.

Under kube-scheduler's default profile, and once under a configuration that changes the weights and scores with
MostAllocated, the cluster exercises every plugin: pods requesting resources with init and sidecar containers,
three nodes partly filled by another namespace (one filler with a RuntimeClass's overhead), a PreferNoSchedule
taint, nodes labelled for a preferred node affinity, the workloads' image already on three nodes (node status),
preferred pod anti-affinity, required pod affinity, a StatefulSet with required anti-affinity whose claims are
bound to zonal PersistentVolumes, and a hostPort. Before each placement spreadwatch predicts on a fresh dump
(the report's ``prediction`` and the reference path, equal); then the node chosen must be one of the predicted
best nodes, the nodes the scheduler scored must be exactly the predicted feasible ones (every other node one
it filtered), and every node's plugin scores and total must equal what the scheduler logged. The share of
placements on a best node of the *spreading* report stays a measured figure, written to
build/scheduler-default-profile.json (docs/scoring.md §10; ``make bench FIGURES=scheduler-default-profile`` runs
this test to put it in docs/benchmarks.md). Clusters stay under 100 nodes: the scheduler scores every feasible
node (tests/e2e/test_scheduler_window.py has the window).

Last, a zone is lost under kube-scheduler's default profile (its nodes cordoned, its pods deleted; the
ReplicaSet controller makes the replacements): the replacements are all bound exactly when the report's
``resilience.zoneLoss.roomForReplacements`` (resource fit on the nodes outside the zone) said so.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster
from kube_helpers import (
    ControlPlane,
    create_namespace,
    create_node,
    delete_namespace,
    delete_node,
    delete_pod,
    list_pods,
    unique_name,
    wait_for,
)
from kubernetes import client
from scheduler_helpers import (
    Placement,
    SchedulerLog,
    apply_objects,
    failed_scheduling,
    place_one,
    place_or_pend,
    scheduler_plane,
    workload_report,
)

from repo_tools import REPO_ROOT
from spreadwatch.profile_args import load_profile, load_scheduler_profile
from spreadwatch.scoring import Profile
from spreadwatch.scoring.scheduler_profile import SchedulerProfile

pytestmark = pytest.mark.e2e

IMAGE = "registry.invalid/spreadwatch/pause:1.0"
SCHEDULER_CONFIGS = REPO_ROOT / "hack" / "scheduler" / "config"
# bench/scheduler_agreement.py (docs/benchmarks.md's `scheduler-default-profile` figure) names a file of its own
AGREEMENT_FILE = Path(
    os.environ.get("SPREADWATCH_AGREEMENT_FILE") or REPO_ROOT / "build" / "scheduler-default-profile.json"
)
POOL = "spreadwatch.io/pool"
#: the hard-constraint test's figures (placements, candidate sets compared, Pending forecasts)
RESULTS = REPO_ROOT / "build" / "scheduler-hard-constraints.json"
ROUNDS = int(os.environ.get("SPREADWATCH_E2E_SCHEDULER_ROUNDS", "8"))
#: the StatefulSet's claims: the zone of the PersistentVolume each ordinal's claim is bound to (None: a volume
#: without node affinity); one per node the required anti-affinity leaves it (zone-a: a1-a3, zone-b: b1 b2, ...)
DB_VOLUME_ZONES = ("zone-a", "zone-b", "zone-c", "zone-a", "zone-b", "zone-a", None, None)
#: nodes whose status lists the workloads' image, and its size (one size: the scheduler keeps the size of the first
#: node its cache meets with a name, an order spreadwatch cannot see; docs/scoring.md §13)
IMAGE_SIZES = {"b1": 600 * 2**20, "c1": 600 * 2**20, "beta": 600 * 2**20}


@dataclass
class Cluster:
    cp: ControlPlane
    api: client.ApiClient
    nodes: dict[str, str]  # role → node name
    tmp: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A control plane for the scheduler tests (no scheduler yet) and eleven nodes by role."""
    with scheduler_plane(tmp_path_factory.mktemp("schedplane")) as (cp, api):
        yield from _nodes_by_role(cp, api, tmp_path_factory)


def _nodes_by_role(cp: ControlPlane, api: client.ApiClient,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:  # fmt: skip
    general, ssd = {POOL: "general"}, {POOL: "general", "disk": "ssd"}
    specs: dict[str, dict[str, Any]] = {
        "a1": {"zone": "zone-a", "labels": general},
        "a2": {"zone": "zone-a", "labels": ssd},
        "a3": {"zone": "zone-a", "labels": general, "taints": [("spot", "true", "PreferNoSchedule")]},
        "b1": {"zone": "zone-b", "labels": general},
        "b2": {"zone": "zone-b", "labels": ssd},
        "c1": {"zone": "zone-c", "legacy_labels": True, "labels": general},
        "beta": {"zone": "zone-b", "legacy_labels": True, "modern_labels": False, "labels": general},
        "nozone": {"labels": ssd},
        "cordoned": {"zone": "zone-a", "unschedulable": True, "labels": general},
        "tainted": {"zone": "zone-c", "taints": [("dedicated", "infra", "NoSchedule")], "labels": general},
        "gpu": {"zone": "zone-b", "labels": {POOL: "gpu"}},
    }
    prefix = unique_name("rs")
    nodes = {role: create_node(api, f"{prefix}-{role}", region="r1" if "zone" in kw else None, **kw).metadata.name
             for role, kw in specs.items()}  # fmt: skip
    for role, size in IMAGE_SIZES.items():  # (no kubelet reports images: the status says what it would)
        client.CoreV1Api(api).patch_node_status(nodes[role], {"status": {"images": [
            {"names": [f"{IMAGE.rsplit(':', 1)[0]}@sha256:{hashlib.sha256(role.encode()).hexdigest()}", IMAGE],
             "sizeBytes": size}]}})  # fmt: skip
    yield Cluster(cp, api, nodes, tmp_path_factory.mktemp("dumps"))


def _template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": IMAGE}
    if "resources" in spec:
        container["resources"] = spec.pop("resources")
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    return {"metadata": {"labels": labels},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0, **spec}}  # fmt: skip


def _pod(name: str, namespace: str, labels: dict[str, str], node: str, **spec: Any) -> dict[str, Any]:
    """A pod bound by hand (spec.nodeName): no scheduler involved."""
    template = _template(labels, nodeName=node, **spec)
    return {"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
            "metadata": {"name": name, "namespace": namespace, "labels": labels}}  # fmt: skip


def _term(labels: dict[str, str], key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def _rich(rich: bool) -> dict[str, dict[str, Any]]:
    """Per workload, what the whole-profile tests add to its template (``rich``; nothing otherwise): init and
    sidecar containers, preferred node affinity, pod (anti-)affinity both ways, a hostPort."""
    if not rich:
        return {"web": {}, "web-legacy": {}, "db": {}, "own": {}}
    init = {"name": "init", "image": IMAGE, "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}
    sidecar = {"name": "proxy", "image": IMAGE, "restartPolicy": "Always",
               "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}  # fmt: skip
    ssd = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
    return {
        "web": {"initContainers": [init], "affinity": {
            "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 30, "preference": ssd}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": _term({"app": "web"}, "kubernetes.io/hostname")}]}}},
        # required affinity to web's pool (a node whose pool holds a web pod), preferred affinity to db's zone
        "web-legacy": {"initContainers": [sidecar], "affinity": {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term({"app": "web"}, POOL)],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 20, "podAffinityTerm": _term({"app": "db"}, "topology.kubernetes.io/zone")}]}}},
        "db": {"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term({"app": "db"}, "kubernetes.io/hostname")]}}},
        "own": {"ports": [{"containerPort": 8080, "hostPort": 8080}]},
    }  # fmt: skip


def _workloads(namespace: str, own_constraints: bool, resources: dict[str, Any] | None = None,
               rich: bool = False) -> list[dict[str, Any]]:  # fmt: skip
    """Every workload at 0 replicas, the Services, and the pods pinned by hand (see the module docstring;
    ``rich``: the whole-profile tests' additions, :func:`_rich`, and the StatefulSet's claims)."""
    extra = {"resources": resources} if resources else {}
    more = _rich(rich)
    meta = lambda name: {"name": name, "namespace": namespace}  # noqa: E731
    web, legacy, db = {"app": "web", "tier": "front"}, {"app": "web-legacy", "tier": "front"}, {"app": "db"}
    claims = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                                                       "resources": {"requests": {"storage": "1Gi"}}}}]  # fmt: skip
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("front"),
         "spec": {"selector": {"tier": "front"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("db"),
         "spec": {"selector": db, "clusterIP": "None", "ports": [{"port": 5432}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("web"),
         "spec": {"replicas": 0, "selector": {"matchLabels": web}, "template": _template(web, **extra, **more["web"])}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": meta("web-legacy"),
         "spec": {"replicas": 0, "selector": legacy, "template": _template(legacy, **extra, **more["web-legacy"])}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("db"),
         "spec": {"replicas": 0, "serviceName": "db", "podManagementPolicy": "Parallel",
                  "selector": {"matchLabels": db}, **({"volumeClaimTemplates": claims} if rich else {}),
                  "template": _template(db, nodeSelector={POOL: "general"}, **extra, **more["db"])}},
    ]  # fmt: skip
    if own_constraints:
        own = {"app": "own"}
        constraints = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": own}, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": own}, "matchLabelKeys": ["pod-template-hash"]},
        ]  # fmt: skip
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("own"), "spec": {
            "replicas": 0, "selector": {"matchLabels": own},
            "template": _template(own, nodeSelector={POOL: "general"}, topologySpreadConstraints=constraints,
                                  **extra, **more["own"])}})  # fmt: skip
    return objects


def _pinned(namespace: str, nodes: dict[str, str]) -> list[dict[str, Any]]:
    """Pods bound by hand (spec.nodeName) with the own-constraint Deployment's label: on the node its
    nodeSelector excludes (counted: nodeAffinityPolicy Ignore) and on the tainted node (not counted:
    nodeTaintsPolicy Honor), two on b1 (bad spread the scheduler has to work around)."""
    where = {"own-pin-gpu": nodes["gpu"], "own-pin-tainted": nodes["tainted"], "own-pin-b1-0": nodes["b1"],
             "own-pin-b1-1": nodes["b1"]}  # fmt: skip
    return [_pod(name, namespace, {"app": "own"}, node) for name, node in where.items()]


def _volumes(namespace: str) -> list[dict[str, Any]]:
    """The StatefulSet's claims (``data-db-<i>``, created before it so that it uses them) and a volume bound to
    each: in the zone of :data:`DB_VOLUME_ZONES` (node affinity and zone label, VolumeBinding and VolumeZone), or
    anywhere."""
    out: list[dict[str, Any]] = []
    for i in range(ROUNDS):
        zone = DB_VOLUME_ZONES[i] if i < len(DB_VOLUME_ZONES) else None
        claim, volume = f"data-db-{i}", f"{namespace}-db-{i}"
        spec: dict[str, Any] = {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
            "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": f"/tmp/{volume}"},
            "claimRef": {"namespace": namespace, "name": claim}}  # fmt: skip
        labels = {}
        if zone is not None:
            labels = {"topology.kubernetes.io/zone": zone}
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}  # fmt: skip
        out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume, "labels": labels},
                    "spec": spec})  # fmt: skip
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": namespace, "labels": {"app": "db"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": volume,
                             "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
    return out


def _claims_bound(api: client.ApiClient, namespace: str) -> bool:
    claims = client.CoreV1Api(api).list_namespaced_persistent_volume_claim(namespace).items
    return len(claims) == ROUNDS and all(
        c.status.phase == "Bound" and "pv.kubernetes.io/bind-completed" in (c.metadata.annotations or {})
        for c in claims
    )


def _delete_volumes(api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api)
    for volume in core.list_persistent_volume().items:
        if volume.metadata.name.startswith(f"{namespace}-db-"):
            core.delete_persistent_volume(volume.metadata.name)


STEPS = (("Deployment", "web", "app=web"), ("ReplicationController", "web-legacy", "app=web-legacy"),
         ("StatefulSet", "db", "app=db"), ("Deployment", "own", "app=own,pod-template-hash"))  # fmt: skip


def _run_placements(cluster: Cluster, version: str, config: str, profile: Profile, own: bool,
                    resources: dict[str, Any] | None = None,
                    scheduler: SchedulerProfile | None = None) -> tuple[str, list[Placement]]:  # fmt: skip
    """``scheduler``: the whole-profile tests (the workloads' additions, the claims, the prediction)."""
    namespace = create_namespace(cluster.api)
    rich = scheduler is not None
    try:
        # Everything exists before the scheduler starts: its first listing already holds the pinned pods.
        if rich:
            apply_objects(cluster.cp, _volumes(namespace))
            wait_for(lambda: _claims_bound(cluster.api, namespace), timeout=120,
                     message="the StatefulSet's claims to be bound to their volumes")  # fmt: skip
        apply_objects(cluster.cp, _workloads(namespace, own, resources, rich))
        if own:
            apply_objects(cluster.cp, _pinned(namespace, cluster.nodes))
        log = SchedulerLog(devcluster.start_scheduler(cluster.cp.dir, version, SCHEDULER_CONFIGS / config,
                                                      die_with_parent=True))  # fmt: skip
        steps = [s for s in STEPS if own or s[1] != "own"]
        placements = [place_one(cluster.cp, cluster.api, log, profile, namespace, kind, name, selector, cluster.tmp,
                                scheduler)
                      for _ in range(ROUNDS) for kind, name, selector in steps]  # fmt: skip
    finally:
        devcluster.stop_scheduler(cluster.cp.dir)
        delete_namespace(cluster.api, namespace)
        if rich:
            _delete_volumes(cluster.api, namespace)
    return namespace, placements


def _check_exact(placements: list[Placement], plugin: str, weight: int) -> None:
    """Every scored node is a candidate with the logged score ÷ weight; the chosen node is a best node."""
    for p in placements:
        assert p.report["health"] != "Error", p.report
        scores = p.logged.get(plugin)
        assert scores is not None and set(p.logged) == {plugin}, (p.pod, sorted(p.logged))
        assert len(scores) == p.report["candidateNodes"], (p.pod, sorted(scores), p.report["excludedNodes"])
        wrong = {n: (s, p.derived[n]) for n, s in scores.items() if s % weight or s // weight != p.derived[n]}
        assert not wrong, f"{p.pod}: node → (logged, spreadwatch ×{weight}): {wrong}\nreport: {p.report}"
        assert p.in_best_set, (f"{p.pod} went to {p.node} (score {p.derived[p.node]}), not to a best node "
                               f"({p.report['bestNodes']}, {p.report['bestScore']})")  # fmt: skip


def test_v129_pod_topology_spread_system_defaults(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4, PodTopologySpread (system defaults) the only score: profile v1.29 exactly."""
    _, placements = _run_placements(cluster, "v1.36", "v1.36-spread-only.yaml", load_profile("v1.29", None), True)
    assert len(placements) == 4 * ROUNDS
    _check_exact(placements, "PodTopologySpread", 2)
    # The pods landed on more than one zone and never on an excluded node.
    chosen = {p.node for p in placements}
    excluded = {cluster.nodes[r] for r in ("cordoned", "tainted")}
    assert not chosen & excluded and len(chosen) > 3, sorted(chosen)


def test_v129_pod_topology_spread_list_defaults(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4 with `List` default constraints; spreadwatch reads the same file."""
    config = SCHEDULER_CONFIGS / "v1.36-spread-only-list.yaml"
    _, placements = _run_placements(cluster, "v1.36", config.name, load_profile("v1.29", str(config)), True)
    _check_exact(placements, "PodTopologySpread", 2)
    # List constraints ignore the nodes without a GA zone label: score 0, never chosen.
    zoneless = {cluster.nodes["beta"], cluster.nodes["nozone"]}
    assert not {p.node for p in placements} & zoneless
    assert all(p.derived[n] == 0 for p in placements if p.workload != "own" for n in zoneless)


def test_v128_selector_spread(cluster: Cluster) -> None:
    """kube-scheduler v1.28.15, SelectorSpread the only score (v1beta3): profile v1.28 exactly. The pods with
    their own constraints are skipped by both: every node scores 0."""
    _, placements = _run_placements(cluster, "v1.28", "v1.28-spread-only.yaml", load_profile("v1.28", None), True)
    assert len(placements) == 4 * ROUNDS
    _check_exact(placements, "SelectorSpread", 1)
    skipped = [p for p in placements if p.workload == "own"]
    assert skipped and all(p.report["skipped"] and set(p.logged["SelectorSpread"].values()) == {0} for p in skipped)


def _fillers(api: client.ApiClient, cluster: Cluster) -> str:
    """Another namespace's pods bound by hand on a1, b1, c1 (2 CPU and 8 GiB of 4 and 16 each), and on b2 one
    with a RuntimeClass's overhead (the admission adds it to the pod): what the resource plugins see."""
    filler = create_namespace(api)
    runtime = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": filler},
               "handler": "runc", "overhead": {"podFixed": {"cpu": "500m", "memory": "1Gi"}}}  # fmt: skip
    pins = [_pod(f"filler-{i}", filler, {"app": "filler"}, cluster.nodes[role],
                 resources={"requests": {"cpu": "2", "memory": "8Gi"}})
            for i, role in enumerate(("a1", "b1", "c1"))]  # fmt: skip
    pins.append(_pod("filler-overhead", filler, {"app": "filler"}, cluster.nodes["b2"], runtimeClassName=filler,
                     resources={"requests": {"cpu": "1", "memory": "2Gi"}}))  # fmt: skip
    apply_objects(cluster.cp, [runtime, *pins])
    pod = client.CoreV1Api(api).read_namespaced_pod("filler-overhead", filler)
    assert pod.spec.overhead == {"cpu": "500m", "memory": "1Gi"}, pod.spec.overhead
    return filler


def _drop_fillers(cluster: Cluster, filler: str) -> None:
    delete_namespace(cluster.api, filler)
    cluster.cp.kubectl("delete", "runtimeclass", filler, "--ignore-not-found")


def _check_prediction(placements: list[Placement]) -> None:
    """Every placement on a predicted best node; the nodes the scheduler scored exactly the predicted feasible
    ones; every node's plugin scores and total as logged; the report's prediction (the index) as the
    reference's."""
    for p in placements:
        predicted, block = p.predicted, p.report.get("prediction")
        assert predicted is not None and block is not None, p.pod
        assert not predicted.error and not predicted.partial and not block["partial"], (p.pod, predicted, block)
        logged = p.logged_by_node()
        if len(predicted.feasible) == 1:  # (the scheduler binds a single feasible node without scoring it)
            assert not logged and p.node == predicted.feasible[0], (p.pod, p.node, predicted.feasible, logged)
            continue
        assert set(logged) == set(predicted.feasible), (
            f"{p.pod}: the scheduler scored {sorted(logged)}, spreadwatch predicted feasible "
            f"{sorted(predicted.feasible)} (filtered: {predicted.excluded})")  # fmt: skip
        wrong = {n: (scores, dict(predicted.scores[n])) for n, scores in logged.items()
                 if scores != dict(predicted.scores[n]) or sum(scores.values()) != predicted.totals[n]}  # fmt: skip
        assert not wrong, f"{p.pod}: node → (logged, predicted) plugin scores: {wrong}"
        total = predicted.totals.get(p.node)
        assert p.in_predicted_set, (f"{p.pod} went to {p.node} (total {total}), not to a predicted best node "
                                    f"({predicted.best_nodes}, {predicted.best_score})")  # fmt: skip
        assert block["bestScore"] == predicted.best_score, (p.pod, block, predicted.best_nodes)
        assert block["bestNodeCount"] == len(predicted.best_nodes), (p.pod, block)
        assert block["bestNodes"] == list(predicted.best_nodes[: len(block["bestNodes"])]), (p.pod, block)
        assert block["feasibleNodes"] == len(predicted.feasible), (p.pod, block)
        assert block["excludedNodes"] == dict(sorted(Counter(predicted.excluded.values()).items())), (p.pod, block)
        assert block["bestNodeProbability"] == 1, (p.pod, block)


def _whole_profile_run(cluster: Cluster, config: str) -> list[Placement]:
    """The whole-profile run of ``config``: fillers, the rich workloads, one replica at a time."""
    path = SCHEDULER_CONFIGS / config
    filler = _fillers(cluster.api, cluster)
    try:
        requests = {"requests": {"cpu": "250m", "memory": "512Mi"}}
        _, placements = _run_placements(cluster, "v1.36", config, load_profile("v1.29", str(path)), True, requests,
                                        load_scheduler_profile(str(path)))  # fmt: skip
    finally:
        _drop_fillers(cluster, filler)
    assert len(placements) == 4 * ROUNDS
    _check_prediction(placements)
    return placements


def test_default_profile_agreement(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4's default profile on the cluster built to exercise every plugin: every placement
    on a predicted best node, every node's total and plugin scores as logged, every other node filtered by
    the scheduler; the share of placements on a best node of the *spreading* report is measured and written
    to build/scheduler-default-profile.json."""
    placements = _whole_profile_run(cluster, "v1.36-default.yaml")
    plugins = sorted({plugin for p in placements for plugin in p.logged})
    for plugin in ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "TaintToleration",
                   "NodeAffinity", "InterPodAffinity", "PodTopologySpread"):  # fmt: skip
        assert plugin in plugins, (plugin, plugins)
    filtered = Counter(plugin for p in placements if p.predicted is not None
                       for plugin in p.predicted.excluded.values())  # fmt: skip
    for plugin in ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "InterPodAffinity", "NodePorts",
                   "VolumeBinding"):  # fmt: skip
        assert filtered[plugin] > 0, (plugin, filtered)
    in_best = sum(p.in_best_set for p in placements)
    misses = [{"pod": p.pod, "chosen": p.node, "chosenSpreadScore": p.derived.get(p.node),
               "bestNodes": p.report["bestNodes"], "bestScore": p.report["bestScore"],
               "logged": {n: {k: v[n] for k, v in sorted(p.logged.items()) if n in v}
                          for n in sorted({p.node, *p.report["bestNodes"]})}}
              for p in placements if not p.in_best_set]  # fmt: skip
    AGREEMENT_FILE.parent.mkdir(parents=True, exist_ok=True)
    AGREEMENT_FILE.write_text(json.dumps({
        "scheduler": "kube-scheduler v1.36.4, hack/scheduler/config/v1.36-default.yaml",
        "cluster": "11 nodes (4 partly filled by another namespace, one pod with a RuntimeClass overhead); pods "
                   "request 250m CPU, 512 MiB, with init and sidecar containers, pod (anti-)affinity, a "
                   "hostPort, zonal volumes",
        "placements": len(placements), "inBestSet": in_best, "share": round(in_best / len(placements), 3),
        "inPredictedSet": sum(p.in_predicted_set for p in placements), "totalsEqual": True,
        "plugins": plugins, "filtered": dict(sorted(filtered.items())), "misses": misses,
    }, indent=2) + "\n")  # fmt: skip


def test_most_allocated_and_other_weights(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4 with a KubeSchedulerConfiguration that scores with MostAllocated (CPU weighted
    twice) and changes the plugin weights; spreadwatch reads the same file: the same checks as the default
    profile's."""
    placements = _whole_profile_run(cluster, "v1.36-most-allocated.yaml")
    assert placements[0].predicted is not None
    assert any(p.logged.get("NodeResourcesFit") for p in placements)


# -- PodTopologySpread's Filter: DoNotSchedule constraints, minDomains, the replica that stays Pending ------------

HARD_ROUNDS = int(os.environ.get("SPREADWATCH_E2E_HARD_ROUNDS", "5"))
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _constraint(key: str, action: str, app: str, max_skew: int = 1, **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action,
            "labelSelector": {"matchLabels": {"app": app}}, **extra}  # fmt: skip


def _hard_workloads(namespace: str) -> list[dict[str, Any]]:
    """The issue's four hard-constraint workloads and a minDomains one, at 0 replicas (see the test)."""
    meta = lambda name: {"name": name, "namespace": namespace}  # noqa: E731

    def deployment(name: str, constraints: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
        labels = {"app": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name), "spec": {
            "replicas": 0, "selector": {"matchLabels": labels},
            "template": _template(labels, topologySpreadConstraints=constraints, **spec)}}  # fmt: skip

    tolerate = [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]
    hz2 = {"app": "hz2"}
    return [
        deployment("hz", [_constraint(ZONE, "DoNotSchedule", "hz"),
                          _constraint(HOST, "ScheduleAnyway", "hz", nodeAffinityPolicy="Ignore")]),
        deployment("hh", [_constraint(HOST, "DoNotSchedule", "hh"), _constraint(ZONE, "ScheduleAnyway", "hh")]),
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("hz2"),
         "spec": {"selector": hz2, "clusterIP": "None", "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("hz2"), "spec": {
            "replicas": 0, "serviceName": "hz2", "podManagementPolicy": "Parallel", "selector": {"matchLabels": hz2},
            "template": _template(hz2, tolerations=tolerate,
                                  topologySpreadConstraints=[_constraint(ZONE, "DoNotSchedule", "hz2", 2)])}},
        deployment("ht", [_constraint(ZONE, "DoNotSchedule", "ht", nodeAffinityPolicy="Honor",
                                      nodeTaintsPolicy="Honor"),
                          _constraint(HOST, "ScheduleAnyway", "ht", 2)], nodeSelector={POOL: "general"}),
        deployment("md", [_constraint(ZONE, "DoNotSchedule", "md", minDomains=4)]),
    ]  # fmt: skip


def _hard_pins(namespace: str, nodes: dict[str, str]) -> list[dict[str, Any]]:
    """The uneven start, pods bound by hand (label pinned=true, left out of the steps' selectors): hz 2 on a1 and
    1 on b1 (only zone-c passes: one candidate); hh 2 on a1 (a1 over maxSkew); hz2 3 on a2 (zone-a over maxSkew
    2); ht 1 on gpu (nodeSelector: uncounted), 2 on tainted (nodeTaintsPolicy Honor: uncounted), 1 on b1; md 1
    on a3 (minDomains 4 > 3 zones: each zone takes one pod, the fourth stays Pending)."""
    where = {"hz": ("a1", "a1", "b1"), "hh": ("a1", "a1"), "hz2": ("a2", "a2", "a2"),
             "ht": ("gpu", "tainted", "tainted", "b1"), "md": ("a3",)}  # fmt: skip
    return [_pod(f"{app}-pin-{i}", namespace, {"app": app, "pinned": "true"}, nodes[role])
            for app, roles in where.items() for i, role in enumerate(roles)]  # fmt: skip


HARD_STEPS = (("Deployment", "hz", "app=hz,!pinned"), ("Deployment", "hh", "app=hh,!pinned"),
              ("StatefulSet", "hz2", "app=hz2,!pinned"), ("Deployment", "ht", "app=ht,!pinned"))  # fmt: skip


def _check_filtered(p: Placement) -> None:
    """One step against the real scheduler: Pending forecast == FailedScheduling; else the scheduler scored
    exactly the report's candidates (one feasible node: it scores none), each candidate's score derived from the
    report equals the logged PodTopologySpread score ÷ 2 (all 0 when it skips: no ScheduleAnyway constraint),
    and the chosen node is a best node."""
    report = p.report
    assert report["health"] != "Error", report
    if p.failed:
        assert report["nextPodSchedulable"] is False and report["health"] == "Unschedulable", (p.failed, report)
        assert not p.node and report["candidateNodes"] == 0 and not p.candidates, report
        return
    assert report["nextPodSchedulable"] is True, (p.pod, p.node, report)
    assert p.scored == p.candidates, (p.pod, sorted(p.scored), sorted(p.candidates), report["excludedNodes"])
    assert len(p.candidates) == report["candidateNodes"]
    spread = p.logged.get("PodTopologySpread")
    if spread is None:  # PreScore skipped (only DoNotSchedule constraints), or one feasible node: nothing scored
        assert report["skipped"] or len(p.scored) == 1, (p.pod, report)
        assert set(p.derived.values()) <= ({0} if report["skipped"] else set(range(101))), p.derived
    else:
        wrong = {n: (s, p.derived[n]) for n, s in spread.items() if s % 2 or s // 2 != p.derived[n]}
        assert not wrong and set(spread) == p.scored, f"{p.pod}: node → (logged, spreadwatch ×2): {wrong}\n{report}"
    assert p.in_best_set, f"{p.pod} went to {p.node}, not to a best node ({report['bestNodes']}, {report['bestScore']})"


def test_v129_hard_constraints_and_the_pending_replica(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4, PodTopologySpread the only score, every default filter on: workloads with their own
    DoNotSchedule constraints — hard zone + soft hostname, hard hostname + soft zone, a StatefulSet with hard zone
    maxSkew 2 tolerating the taint, hard zone with nodeAffinityPolicy/nodeTaintsPolicy Honor on a nodeSelector
    subset — from an uneven start, one replica at a time; then minDomains 4 over 3 zones until the scheduler
    leaves a pod Pending. Every step: the report's candidates are the nodes the scheduler scored, its scores the
    logged ones ÷ 2, the pod on a best node, and a Pending forecast exactly when the scheduler reports
    FailedScheduling."""
    namespace = create_namespace(cluster.api)
    profile = load_profile("v1.29", None)
    try:
        apply_objects(cluster.cp, [*_hard_workloads(namespace), *_hard_pins(namespace, cluster.nodes)])
        log = SchedulerLog(devcluster.start_scheduler(cluster.cp.dir, "v1.36", SCHEDULER_CONFIGS /
                                                      "v1.36-spread-only.yaml", die_with_parent=True))  # fmt: skip

        def step(kind: str, name: str, selector: str) -> Placement:
            return place_or_pend(cluster.cp, cluster.api, log, profile, namespace, kind, name, selector, cluster.tmp)

        placements = [step(*s) for _ in range(HARD_ROUNDS) for s in HARD_STEPS]
        minimum = [step("Deployment", "md", "app=md,!pinned") for _ in range(3)]  # zones b and c, then Pending
    finally:
        devcluster.stop_scheduler(cluster.cp.dir)
        delete_namespace(cluster.api, namespace)
    for p in [*placements, *minimum]:
        _check_filtered(p)
    assert not any(p.failed for p in placements), [p.failed for p in placements]
    assert [bool(p.failed) for p in minimum] == [False, False, True], [(p.node, p.failed) for p in minimum]
    # What the filter did, by construction (docs/scoring.md §12): hz's first replica had one candidate (zone-c's c1)
    first = placements[0]
    assert first.report["candidateNodes"] == 1 and first.node == cluster.nodes["c1"], first.report
    rejected = {n for p in placements for n in cluster.nodes.values() if n not in p.candidates}
    assert {cluster.nodes["beta"], cluster.nodes["nozone"]} <= rejected  # no GA zone label: missing key
    assert any(p.report.get("filteredNodes") for p in placements)
    hz2 = [p for p in placements if p.workload == "hz2"]
    assert any(cluster.nodes["tainted"] in p.candidates for p in hz2), [sorted(p.candidates) for p in hz2]
    zones = {cluster.nodes[r]: z for r, z in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("b2", "b"),
                                              ("gpu", "b"), ("c1", "c"), ("tainted", "c"))}  # fmt: skip
    assert {zones.get(p.node) for p in minimum[:2]} == {"b", "c"}, [p.node for p in minimum]
    (pending,) = [p for p in minimum if p.failed]
    assert pending.report["unschedulablePlugin"] == "PodTopologySpread", pending.report
    assert "didn't match pod topology spread constraints" in pending.failed, pending.failed
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "scheduler": "kube-scheduler v1.36.4, hack/scheduler/config/v1.36-spread-only.yaml",
        "placements": sum(1 for p in [*placements, *minimum] if p.node),
        "pending": sum(1 for p in minimum if p.failed),
        "candidateSetsEqual": sum(1 for p in [*placements, *minimum] if p.node and p.scored == p.candidates),
        "scoresCompared": sum(len(p.derived) for p in [*placements, *minimum]),
        "singleFeasibleNode": sum(1 for p in [*placements, *minimum] if p.node and len(p.scored) == 1),
    }, indent=2) + "\n")  # fmt: skip


#: the room test's scenarios: node role → zone (each node 1 CPU, tainted and in a pool of the scenario's own)
ROOM_NODES = {
    "short": {"x1": "zone-x", "x2": "zone-x", "y1": "zone-y"},
    "room": {"x1": "zone-x", "x2": "zone-x", "y1": "zone-y", "y2": "zone-y"},
}
ROOM_TAINT = ("spreadwatch.io/room", "only", "NoSchedule")


def _room_spec(pool: str) -> dict[str, Any]:
    return {"resources": {"requests": {"cpu": "400m"}}, "nodeSelector": {POOL: pool},
            "tolerations": [{"key": ROOM_TAINT[0], "operator": "Exists", "effect": ROOM_TAINT[2]}]}  # fmt: skip


def _ready(api: client.ApiClient, namespace: str, name: str) -> None:
    """Write the status a kubelet would: Running and Ready (no kubelet behind these nodes)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": kind, "status": "True", "lastTransitionTime": now}
                  for kind in ("PodScheduled", "Ready", "ContainersReady")]  # fmt: skip
    client.CoreV1Api(api).patch_namespaced_pod_status(
        name, namespace, {"status": {"phase": "Running", "startTime": now, "conditions": conditions}})


def _room_scenario(cluster: Cluster, prefix: str, scenario: str) -> tuple[str, dict[str, str]]:
    """The scenario's nodes, a ReplicaSet of 3 replicas requesting 400m CPU that adopts 3 Ready pods bound by
    hand to x1, x2 and y1: its namespace and its nodes by role."""
    namespace = create_namespace(cluster.api)
    pool = f"{prefix}-{scenario}"
    nodes = {role: create_node(cluster.api, f"{pool}-{role}", zone=zone, region="r1", labels={POOL: pool},
                               taints=[ROOM_TAINT], cpu="1", memory="4Gi").metadata.name
             for role, zone in ROOM_NODES[scenario].items()}  # fmt: skip
    labels = {"app": "room"}
    apply_objects(cluster.cp, [_pod(f"room-{i}", namespace, labels, nodes[role], **_room_spec(pool))
                               for i, role in enumerate(("x1", "x2", "y1"))])  # fmt: skip
    for i in range(3):
        _ready(cluster.api, namespace, f"room-{i}")
    apply_objects(cluster.cp, [{
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "room", "namespace": namespace},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": _template(labels, **_room_spec(pool))},
    }])  # fmt: skip

    def adopted() -> bool:
        pods = list_pods(cluster.api, namespace, labels)
        return len(pods) == 3 and all(any(r.controller for r in p.metadata.owner_references or ()) for p in pods)

    wait_for(adopted, timeout=60, message=f"the ReplicaSet in {namespace} to adopt its 3 pods (and create none)")
    return namespace, nodes


def test_room_for_replacements_is_where_the_scheduler_places_them(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4 under its default profile and kube-controller-manager's ReplicaSet controller: 3
    Ready replicas requesting 400m CPU on 1-CPU nodes, two in zone-x, one in zone-y. ``short``: zone-y has only
    that node (600m free: room for one copy); ``room``: an empty node more there (two copies). The report (the
    whole-profile prediction on) names zone-x the worst zone and says whether its 2 replacements have room
    outside it; then zone-x is lost (its nodes cordoned, their pods deleted): every replacement the controller
    makes is bound by the scheduler exactly when the report said so, else one stays Pending (FailedScheduling,
    Insufficient cpu)."""
    path = SCHEDULER_CONFIGS / "v1.36-default.yaml"
    profile, scheduler = load_profile("v1.29", str(path)), load_scheduler_profile(str(path))
    prefix = unique_name("room")
    made: list[tuple[str, dict[str, str]]] = []
    try:
        made = [_room_scenario(cluster, prefix, scenario) for scenario in ROOM_NODES]
        losses = []
        for namespace, _ in made:
            report, _, _ = workload_report(cluster.cp, profile, namespace, "ReplicaSet", "room", cluster.tmp, scheduler)
            losses.append(report["resilience"]["zoneLoss"])
        assert [(z["worst"], z["readyAfter"]) for z in losses] == [("zone-x", 1)] * 2, losses
        assert [z["roomForReplacements"] for z in losses] == [False, True], losses  # (what the scenarios were made for)
        devcluster.start_scheduler(cluster.cp.dir, "v1.36", path, die_with_parent=True)
        core = client.CoreV1Api(cluster.api)
        for namespace, nodes in made:
            for role in ("x1", "x2"):
                core.patch_node(nodes[role], {"spec": {"unschedulable": True}})
            for name in ("room-0", "room-1"):
                delete_pod(cluster.api, namespace, name)

        def settled(namespace: str) -> tuple[int, list[str]] | None:
            fresh = [p for p in list_pods(cluster.api, namespace, {"app": "room"})
                     if p.metadata.name not in ("room-0", "room-1", "room-2")]  # fmt: skip
            waiting = [p.metadata.name for p in fresh if not p.spec.node_name]
            failed = [failed_scheduling(cluster.api, namespace, name) for name in waiting]
            if len(fresh) != 2 or not all(failed):
                return None
            return sum(1 for p in fresh if p.spec.node_name), failed

        for (namespace, _), zone_loss in zip(made, losses, strict=True):
            bound, failed = wait_for(lambda ns=namespace: settled(ns), timeout=120,
                                     message=f"the replacements in {namespace} bound or refused")  # fmt: skip
            assert (bound == 2) is zone_loss["roomForReplacements"], (namespace, bound, failed, zone_loss)
            assert all("Insufficient cpu" in f for f in failed), failed
    finally:
        devcluster.stop_scheduler(cluster.cp.dir)
        for namespace, nodes in made:
            delete_namespace(cluster.api, namespace)
            for node in nodes.values():
                delete_node(cluster.api, node)
