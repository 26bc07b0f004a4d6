"""Workloads and the pod their controller would create next.

A workload is a Deployment, a StatefulSet, a ReplicaSet not controlled by a Deployment, or a
ReplicationController. Its representative next pod carries what the controller would stamp on it:

* Deployment: the newest ReplicaSet it controls (highest ``deployment.kubernetes.io/revision``, then
  newest), its template labels (with ``pod-template-hash``) and a controller ownerReference to that
  ReplicaSet. Without a ReplicaSet in the snapshot, a ReplicaSet with the Deployment's selector stands in.
* StatefulSet: template labels plus ``controller-revision-hash`` (status.updateRevision, when known) and
  ``statefulset.kubernetes.io/pod-name`` of the next ordinal; owner the StatefulSet.
* ReplicaSet / ReplicationController: template labels; owner the workload.

The pod's namespace is the workload's and its scheduling fields are the template's. Cost: O(ReplicaSets
in the namespace) for a Deployment, O(1) otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spreadwatch.model import Controller, OwnerRef, Pod, WorkloadKey, intern_labels

__all__ = ["WorkloadRef", "is_workload", "newest_replicaset", "next_claims", "representative_pod"]

_API_VERSIONS = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "ReplicaSet": "apps/v1",
    "ReplicationController": "v1",
}


@dataclass(frozen=True, slots=True, order=True)
class WorkloadRef:
    """A workload as a report names it: its :class:`~spreadwatch.model.WorkloadKey` fields plus uid and
    apiVersion."""

    namespace: str
    kind: str
    name: str
    uid: str = ""
    api_version: str = ""

    @classmethod
    def of(cls, ctrl: Controller) -> WorkloadRef:
        return cls(ctrl.namespace, ctrl.kind, ctrl.name, ctrl.uid, _API_VERSIONS.get(ctrl.kind, ctrl.api_version))

    @property
    def key(self) -> WorkloadKey:
        """The workload's identity (namespace, kind, name). O(1)."""
        return WorkloadKey(self.namespace, self.kind, self.name)


def is_workload(ctrl: Controller) -> bool:
    """False for a ReplicaSet controlled by a Deployment (its Deployment is the workload)."""
    return not (ctrl.kind == "ReplicaSet" and ctrl.controller is not None and ctrl.controller.kind == "Deployment")


def _owned_by(rs: Controller, deployment: Controller) -> bool:
    owner = rs.controller
    if owner is None or owner.kind != "Deployment" or owner.name != deployment.name:
        return False
    return not (owner.uid and deployment.uid and owner.uid != deployment.uid)


def newest_replicaset(deployment: Controller, replicasets: Iterable[Controller]) -> Controller | None:
    """The ReplicaSet a Deployment currently rolls out: highest revision, then newest creation."""
    owned = [rs for rs in replicasets if _owned_by(rs, deployment)]
    if len(owned) < 2:  # none, or the one ReplicaSet (the usual case)
        return owned[0] if owned else None
    return max(owned, key=lambda rs: (rs.revision, rs.creation, rs.name))


def representative_pod(workload: Controller, replicasets: Iterable[Controller] = ()) -> tuple[Pod, Controller | None]:
    """The next pod ``workload``'s controller would create, and the ReplicaSet behind a Deployment.

    For a Deployment without a ReplicaSet the returned ReplicaSet is a stand-in (not in the cluster) that
    the caller should make findable by name so the ownerReference resolves.
    """
    labels: Mapping[str, str] = workload.template_labels  # copied only where labels are added (StatefulSet)
    rs: Controller | None = None
    if workload.kind == "Deployment":
        rs = newest_replicaset(workload, replicasets)
        if rs is None:
            rs = Controller(
                kind="ReplicaSet",
                api_version="apps/v1",
                namespace=workload.namespace,
                name=f"{workload.name}-<next>",
                uid="",
                labels=workload.template_labels,
                selector=workload.selector,
                selector_map=None,
                selector_error=workload.selector_error,
                template_labels=workload.template_labels,
                template=workload.template,
                controller=OwnerRef("apps/v1", "Deployment", workload.name, workload.uid),
                needs=workload.needs,
            )
        else:
            labels = rs.template_labels
        owner = OwnerRef("apps/v1", "ReplicaSet", rs.name, rs.uid)
        template = rs.template
        needs = rs.needs
    else:
        if workload.kind == "StatefulSet":
            stamped = dict(labels)
            if workload.update_revision:
                stamped["controller-revision-hash"] = workload.update_revision
            stamped["statefulset.kubernetes.io/pod-name"] = f"{workload.name}-{workload.replicas}"
            labels = stamped
        owner = OwnerRef(_API_VERSIONS[workload.kind], workload.kind, workload.name, workload.uid)
        template = workload.template
        needs = workload.needs
    pod = Pod(
        namespace=workload.namespace,
        name=f"{workload.name}-<next>",
        labels=intern_labels(labels),
        controller=owner,
        template=template,
        needs=needs,
    )
    return pod, rs


def next_claims(workload: Controller) -> tuple[str, ...]:
    """The claims a StatefulSet's controller creates for its next pod (``<template>-<set>-<ordinal>``, the
    ordinal ``spec.replicas``); none for the other kinds. O(claim templates)."""
    if workload.kind != "StatefulSet":
        return ()
    return tuple(f"{t}-{workload.name}-{workload.replicas}" for t in workload.claim_templates)
