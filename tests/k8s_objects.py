"""Builders of Kubernetes API objects (plain dicts, as `kubectl get -o json` prints them) for tests."""

from __future__ import annotations

from typing import Any

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"


def node(
    name: str,
    zone: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    key: str = BETA_ZONE,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    all_labels = dict(labels or {})
    if zone is not None:
        all_labels[key] = zone
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all_labels}, "spec": spec}


def owner(kind: str, name: str, api_version: str | None = None) -> dict[str, Any]:
    api = api_version or ("v1" if kind == "ReplicationController" else "apps/v1")
    return {"apiVersion": api, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": True}


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    *,
    namespace: str = "default",
    owners: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    deleting: bool = False,
    spec: dict[str, Any] | None = None,
    ready_at: str | None = None,
    created: str | None = None,
    uid: str | None = None,
    restarts: int | None = None,
    deletion_cost: str | None = None,
) -> dict[str, Any]:
    """A pod; ``ready_at``: its Ready condition True since then (else none), ``restarts`` one container's
    restartCount, ``deletion_cost`` the pod-deletion-cost annotation."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owners:
        meta["ownerReferences"] = owners
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if created is not None:
        meta["creationTimestamp"] = created
    if uid is not None:
        meta["uid"] = uid
    if deletion_cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": deletion_cost}
    body_spec = dict(spec or {})
    if node_name:
        body_spec["nodeName"] = node_name
    status: dict[str, Any] = {"phase": phase}
    if ready_at is not None:
        status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]
    if restarts is not None:
        status["containerStatuses"] = [{"name": "c0", "restartCount": restarts}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body_spec, "status": status}


def budget(
    name: str,
    selector: Any,
    *,
    namespace: str = "default",
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
) -> dict[str, Any]:
    """A policy/v1 PodDisruptionBudget (``selector``: a LabelSelector, None for none)."""
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["selector"] = selector
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta, "spec": spec}


def service(name: str, selector: dict[str, str] | None, namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {} if selector is None else {"selector": selector}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def controller(
    kind: str,
    name: str,
    selector: Any,
    template_labels: dict[str, str] | None = None,
    *,
    namespace: str = "default",
    replicas: int = 1,
    owners: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    template_spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    api = "v1" if kind == "ReplicationController" else "apps/v1"
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if owners:
        meta["ownerReferences"] = owners
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"replicas": replicas}
    if selector is not None:
        spec["selector"] = selector
    spec["template"] = {"metadata": {"labels": dict(template_labels or {})}, "spec": dict(template_spec or {})}
    obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}
    if status:
        obj["status"] = status
    return obj
