"""The safety forecasts against the real kube-controller-manager (never against spreadwatch's own output).

* **Scale-down**: the real ReplicaSet, ReplicationController, Deployment and StatefulSet controllers scale
  their workload down one replica at a time (pods doubled up on nodes, Ready at different times, two in the
  same second, with and without pod-deletion-cost, one with restarts); before each step the live
  ``spreadwatch analyze`` gives ``status.scaleDown.candidates``: the pod the controller then deletes is one of
  them.
* **PodDisruptionBudgets**: integer and percentage minAvailable and maxUnavailable on each controller kind;
  once the disruption controller has synced (its currentHealthy is the Ready pods the test made), the report's
  ``resilience.pdb`` equals its status: expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed.
* **Zone outage**: a zone's nodes cordoned and its pods deleted; the Ready replicas counted afterwards equal
  ``zoneLoss.readyAfter``, and whether the disruption controller's budget holds equals ``pdbSatisfied``; a
  second zone lost next breaks the budget exactly when ``tolerated`` says one zone is all it takes.

Nodes have no kubelet: the tests bind pods and write their status (Ready and its time, restarts), as the
scheduler and the kubelet would; a deleted pod keeps its deletionTimestamp until the test removes it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from kube_helpers import (
    DEFAULT_IMAGE,
    ControlPlane,
    bind_pod,
    create_deployment,
    create_node,
    create_replicaset,
    create_replication_controller,
    create_statefulset,
    delete_node,
    delete_pod,
    list_pods,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client

from spreadwatch.cli import main as spreadwatch

pytestmark = pytest.mark.e2e

Zones = dict[str, list[str]]  # zone -> its node names
_CREATE: dict[str, Callable[..., Any]] = {
    "ReplicaSet": create_replicaset,
    "ReplicationController": create_replication_controller,
    "Deployment": create_deployment,
    "StatefulSet": create_statefulset,
}


@pytest.fixture
def zones(kube_api: client.ApiClient) -> Iterator[Zones]:
    """Six nodes, two in each of zones a, b, c (no kubelet), deleted afterwards (the pod GC then removes the
    pods left on them)."""
    prefix = unique_name("safety")
    out: Zones = {}
    for z in "abc":
        zone = f"{prefix}-{z}"
        out[zone] = [create_node(kube_api, f"{zone}{i}", zone=zone, region="r1").metadata.name for i in (1, 2)]
    yield out
    for names in out.values():
        for name in names:
            delete_node(kube_api, name)


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_pod(api: client.ApiClient, namespace: str, name: str, ready_at: datetime | None, restarts: int = 0) -> None:
    """Write the status a kubelet would: Running, Ready since ``ready_at`` (None: not Ready), restarts."""
    now = _stamp(datetime.now(UTC))
    since = _stamp(ready_at) if ready_at is not None else now
    ready = "True" if ready_at is not None else "False"
    status = {
        "phase": "Running",
        "startTime": now,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": ready, "lastTransitionTime": since},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": since},
        ],
        "containerStatuses": [{"name": "c0", "ready": ready_at is not None, "restartCount": restarts,
                               "image": DEFAULT_IMAGE, "imageID": "", "started": True,
                               "state": {"running": {"startedAt": now}}}],
    }  # fmt: skip
    client.CoreV1Api(api).patch_namespaced_pod_status(name, namespace, {"status": status})


def reports(cp: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    """The live ``spreadwatch analyze`` of the namespace, by workload name."""
    out, err = io.StringIO(), io.StringIO()
    code = spreadwatch(["analyze", "--kubeconfig", cp.kubeconfig, "-n", namespace, "-o", "json"], out, err)
    assert code == 0, err.getvalue()
    return {r["workload"]["name"]: r for r in json.loads(out.getvalue())["reports"]}


def live(api: client.ApiClient, namespace: str, app: str) -> list[client.V1Pod]:
    """The workload's pods that are not being deleted."""
    return [p for p in list_pods(api, namespace, {"app": app}) if p.metadata.deletion_timestamp is None]


def _status(api: client.ApiClient, kind: str, namespace: str, name: str) -> Any:
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    read = {
        "ReplicaSet": apps.read_namespaced_replica_set_status,
        "ReplicationController": core.read_namespaced_replication_controller_status,
        "Deployment": apps.read_namespaced_deployment_status,
        "StatefulSet": apps.read_namespaced_stateful_set_status,
    }[kind]
    return read(name, namespace).status


def _scale(api: client.ApiClient, kind: str, namespace: str, name: str, replicas: int) -> None:
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    patch = {
        "ReplicaSet": apps.patch_namespaced_replica_set,
        "ReplicationController": core.patch_namespaced_replication_controller,
        "Deployment": apps.patch_namespaced_deployment,
        "StatefulSet": apps.patch_namespaced_stateful_set,
    }[kind]
    patch(name, namespace, {"spec": {"replicas": replicas}})


def settled(api: client.ApiClient, kind: str, namespace: str, name: str, ready: int, replicas: int) -> None:
    """Wait until the controller's status counts ``replicas`` pods, ``ready`` of them Ready: its informer has
    seen every pod change made so far."""

    def done() -> bool:
        status = _status(api, kind, namespace, name)
        return (status.ready_replicas or 0) == ready and (status.replicas or 0) == replicas

    wait_for(done, timeout=120, message=f"{kind} {name}: {replicas} replicas, {ready} Ready, in its status")


def start_workload(api: client.ApiClient, namespace: str, kind: str, name: str, nodes: list[str],
                   ready_at: list[datetime | None], costs: dict[int, str] | None = None,
                   restarts: dict[int, int] | None = None) -> list[str]:  # fmt: skip
    """Create the workload, bind its pods in name order to ``nodes``, annotate their deletion costs and write
    their status; returns the pod names in binding order."""
    _CREATE[kind](api, namespace, name, replicas=len(nodes))
    pods = sorted(wait_for_pods(api, namespace, {"app": name}, len(nodes)), key=lambda p: p.metadata.name)
    core = client.CoreV1Api(api)
    names = [p.metadata.name for p in pods]
    for i, (pod, node) in enumerate(zip(names, nodes, strict=True)):
        if costs and i in costs:
            core.patch_namespaced_pod(pod, namespace, {"metadata": {"annotations": {
                "controller.kubernetes.io/pod-deletion-cost": costs[i]}}})  # fmt: skip
        bind_pod(api, namespace, pod, node)
        run_pod(api, namespace, pod, ready_at[i], (restarts or {}).get(i, 0))
    settled(api, kind, namespace, name, sum(t is not None for t in ready_at), len(nodes))
    return names


@pytest.mark.parametrize("kind", ["ReplicaSet", "ReplicationController", "Deployment", "StatefulSet"])
def test_every_pod_the_controller_deletes_was_a_forecast_candidate(
    control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str, zones: Zones, kind: str
) -> None:
    a, b, c = zones.values()
    nodes = [a[0], a[0], a[0], b[0], b[0], c[0]]  # doubled up: three on a1, two on b1
    now = datetime.now(UTC)
    ages = [300, 200, 120, 120, 40, 10]  # seconds Ready; two in the same second
    ready_at: list[datetime | None] = [now - timedelta(seconds=s) for s in ages]
    name = f"w-{kind.lower()}"
    ranked = kind != "StatefulSet"
    start_workload(kube_api, namespace, kind, name, nodes, ready_at,
                   costs={0: "100", 4: "-5"} if ranked else None, restarts={2: 3})  # fmt: skip
    seen: list[tuple[str, list[str]]] = []
    for replicas in range(len(nodes) - 1, 0, -1):
        forecast = reports(control_plane, namespace)[name]["scaleDown"]
        candidates = [c["pod"] for c in forecast["candidates"]]
        before = {p.metadata.name for p in live(kube_api, namespace, name)}
        _scale(kube_api, kind, namespace, name, replicas)

        def deleted(before: set[str] = before) -> set[str] | None:
            return before - {p.metadata.name for p in live(kube_api, namespace, name)} or None

        gone = wait_for(deleted, timeout=120, message=f"{kind} {name}: a pod deleted for {replicas} replicas")
        assert len(gone) == 1, gone
        victim = next(iter(gone))
        seen.append((victim, candidates))
        assert victim in candidates, f"step to {replicas}: {victim} deleted, forecast {candidates} ({seen})"
        delete_pod(kube_api, namespace, victim)  # (no kubelet finishes it)
        settled(kube_api, kind, namespace, name, replicas, replicas)
    if ranked:  # cost -5 goes first whatever else, cost 100 last among the Ready ones
        assert seen[0][1] == [seen[0][0]]
    else:  # highest ordinal first
        assert [v for v, _ in seen] == [f"{name}-{i}" for i in range(5, 0, -1)]


FENCES: dict[str, dict[str, int | str]] = {
    "min-int": {"minAvailable": 2},
    "min-pct": {"minAvailable": "50%"},
    "max-int": {"maxUnavailable": 1},
    "max-pct": {"maxUnavailable": "34%"},
}


def test_pdb_numbers_equal_the_disruption_controllers_status(
    control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str, zones: Zones
) -> None:
    """Every controller kind × every kind of budget: 3 replicas, 2 Ready."""
    a, b, c = zones.values()
    policy = client.PolicyV1Api(kube_api)
    now = datetime.now(UTC)
    names = []
    short = {"ReplicaSet": "rs", "ReplicationController": "rc", "Deployment": "deploy", "StatefulSet": "sts"}
    for kind in _CREATE:
        for fence, spec in FENCES.items():
            name = f"{short[kind]}-{fence}"
            names.append(name)
            policy.create_namespaced_pod_disruption_budget(namespace, {
                "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
                "spec": {"selector": {"matchLabels": {"app": name}}, **spec}})  # fmt: skip
            ready: list[datetime | None] = [now, now - timedelta(seconds=30), None]
            start_workload(kube_api, namespace, kind, name, [a[0], b[0], c[0]], ready)

    def synced() -> dict[str, Any] | None:
        out = {}
        for name in names:
            pdb = policy.read_namespaced_pod_disruption_budget(name, namespace)
            s = pdb.status
            if s is None or s.observed_generation != pdb.metadata.generation or s.current_healthy != 2:
                return None
            out[name] = s
        return out

    statuses = wait_for(synced, timeout=180, message="the disruption controller's statuses: 2 healthy each")
    got = reports(control_plane, namespace)
    for name in names:
        s = statuses[name]
        ours = got[name]["resilience"]["pdb"]
        theirs = {"name": name, "expectedPods": s.expected_pods, "currentHealthy": s.current_healthy,
                  "desiredHealthy": s.desired_healthy, "disruptionsAllowed": s.disruptions_allowed,
                  "count": 1}  # fmt: skip
        assert ours == theirs, name


def _ready_count(api: client.ApiClient, namespace: str, app: str) -> int:
    def ready(p: client.V1Pod) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or ())

    return sum(1 for p in live(api, namespace, app) if ready(p))


def _lose_zone(api: client.ApiClient, namespace: str, app: str, nodes: list[str]) -> None:
    """Cordon the zone's nodes and delete the workload's pods on them (its controller makes replacements, which
    stay Pending: no scheduler here)."""
    core = client.CoreV1Api(api)
    for node in nodes:
        core.patch_node(node, {"spec": {"unschedulable": True}})
    for pod in live(api, namespace, app):
        if pod.spec.node_name in nodes:
            delete_pod(api, namespace, pod.metadata.name)


def test_a_lost_zone_leaves_the_forecast_survivors(
    control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str, zones: Zones
) -> None:
    (za, a), (_, b), (_, c) = zones.items()
    name = "zonal"
    now = datetime.now(UTC)
    policy = client.PolicyV1Api(kube_api)
    policy.create_namespaced_pod_disruption_budget(namespace, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}}, "minAvailable": 2}})  # fmt: skip
    # zone a holds 3, b 2, c 1, all Ready
    start_workload(kube_api, namespace, "Deployment", name, [a[0], a[0], a[1], b[0], b[1], c[0]],
                   [now - timedelta(seconds=10 * i) for i in range(6)])  # fmt: skip

    def budget_synced(healthy: int) -> client.V1PodDisruptionBudgetStatus | None:
        pdb = policy.read_namespaced_pod_disruption_budget(name, namespace)
        s = pdb.status
        ok = s is not None and s.observed_generation == pdb.metadata.generation and s.current_healthy == healthy
        return s if ok else None

    wait_for(lambda: budget_synced(6), timeout=120, message="the budget: 6 healthy")
    resilience = reports(control_plane, namespace)[name]["resilience"]
    zone_loss = resilience["zoneLoss"]
    assert zone_loss["worst"] == za and zone_loss["desired"] == 6  # (the most pods: 3)
    _lose_zone(kube_api, namespace, name, a)
    survivors = wait_for(lambda: _ready_count(kube_api, namespace, name) if len(live(kube_api, namespace, name)) == 6
                         else None, timeout=120, message="the replacements")  # fmt: skip
    assert survivors == zone_loss["readyAfter"]
    status = wait_for(lambda: budget_synced(survivors), timeout=120, message=f"the budget: {survivors} healthy")
    assert (status.current_healthy >= status.desired_healthy) is zone_loss["pdbSatisfied"]
    outside = [n for n in (*b, *c) if not client.CoreV1Api(kube_api).read_node(n).spec.unschedulable]
    assert bool(outside) is zone_loss["roomForReplacements"]
    # one zone is what the budget tolerates: the next worst (b, 2 Ready) breaks it
    assert zone_loss["tolerated"] == 1
    _lose_zone(kube_api, namespace, name, b)
    left = wait_for(lambda: survivors - 2 if _ready_count(kube_api, namespace, name) == survivors - 2 else None,
                    timeout=120, message="zone b's pods gone")  # fmt: skip
    status = wait_for(lambda: budget_synced(left), timeout=120, message=f"the budget: {left} healthy")
    assert status.current_healthy < status.desired_healthy
