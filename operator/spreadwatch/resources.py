"""The Kubernetes resources spreadwatch reads and writes, as data (pure: no client, no I/O).

* :class:`ApiResource` — group, version, plural, kind and scope of one resource; its ``apiVersion`` and the
  REST path of its collection;
* :data:`CLUSTER_RESOURCES` — what a snapshot holds and what the operator lists and watches (read-only), in
  the order a snapshot is best loaded (nodes and namespaces first);
* :data:`SPREAD_REPORTS` — the SpreadReport custom resource spreadwatch writes (``crds/``).

:mod:`spreadwatch.kube` sends the requests; the operator's router and informers only need this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CLUSTER_RESOURCES", "SPREAD_REPORTS", "ApiResource"]


@dataclass(frozen=True, slots=True)
class ApiResource:
    """One API resource: ``group`` ("" for the core group), ``version``, ``plural``, ``kind``, and whether
    its objects live in namespaces. O(1) everything."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def full_name(self) -> str:
        """``plural.group`` (``spreadreports.spreadwatch.io``: a CustomResourceDefinition's name), or the plural
        alone for the core group."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def api_version(self) -> str:
        """``group/version``, or ``version`` alone for the core group (``v1``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None) -> str:
        """The collection's REST path; of one namespace when ``namespace`` is given and the kind is namespaced,
        else across all namespaces (``/api/v1/pods``, ``/apis/apps/v1/namespaces/shop/deployments``)."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace and self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


#: What the scorers read, in the order a snapshot is best loaded (nodes and namespaces first). The claims and
#: volumes are what the prediction's VolumeBinding and VolumeZone read.
CLUSTER_RESOURCES: Final = (
    ApiResource("", "v1", "nodes", "Node", namespaced=False),
    ApiResource("", "v1", "namespaces", "Namespace", namespaced=False),
    ApiResource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False),
    ApiResource("", "v1", "services", "Service"),
    ApiResource("", "v1", "replicationcontrollers", "ReplicationController"),
    ApiResource("apps", "v1", "replicasets", "ReplicaSet"),
    ApiResource("apps", "v1", "statefulsets", "StatefulSet"),
    ApiResource("apps", "v1", "deployments", "Deployment"),
    ApiResource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"),
    ApiResource("", "v1", "pods", "Pod"),
)

#: The SpreadReport custom resource (``crds/spreadreports.spreadwatch.io.yaml``).
SPREAD_REPORTS: Final = ApiResource("spreadwatch.io", "v1alpha1", "spreadreports", "SpreadReport")
