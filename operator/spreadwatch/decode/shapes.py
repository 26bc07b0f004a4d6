"""The JSON shapes the typed decoder reads: msgspec Structs declaring only the fields spreadwatch uses.

One shape per kind (a pod's items hold only a pod's fields, ...): the fewer fields a Struct declares, the
less msgspec builds. Attribute names are the JSON keys; ``T | None = None`` (the reference parser treats
null as absent), or in the frozen pod and workload shapes an empty default (a null there: the reference parser
reads the object), except a page item's ``kind`` and a workload's ``apiVersion``, ``UNSET`` when absent (a
list page's items name neither; one that does is told from one that does not), and a pod's phase, one of
the known phases. Every other field of an API object is skipped by msgspec in C. Decoding is O(bytes).

* API list pages hold items without ``kind``: :data:`PAGES` gives each kind's page shape (``PodPage``, ...).
* A file's List holds items of any kind, each naming it: :class:`Document` decodes all of it in one pass,
  its items a tagged union on ``kind`` of the ``*Item`` subclasses (:data:`ITEM_KINDS`); an item of any
  other kind makes msgspec reject the document (the reader then goes item by item).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, Union

import msgspec

from spreadwatch.model import INT32_RANGE, INT64_RANGE, WORKLOAD_KINDS

__all__ = [
    "ABSENT",
    "ITEM_KINDS",
    "NO_CONTROLLER_SPEC",
    "NO_POD_META",
    "NO_POD_SPEC",
    "NO_POD_STATUS",
    "NO_POD_TEMPLATE",
    "NO_TEMPLATE_META",
    "NO_WORKLOAD_META",
    "NO_WORKLOAD_SPEC",
    "NO_WORKLOAD_STATUS",
    "OBJECTS",
    "PAGES",
    "Affinity",
    "ClaimMeta",
    "ClaimObject",
    "ClaimSpec",
    "ClaimTemplate",
    "ClaimTemplateMeta",
    "ContainerFields",
    "ContainerStatus",
    "ControllerFields",
    "ControllerObject",
    "ControllerSpec",
    "Document",
    "Item",
    "LabelSelector",
    "ListMeta",
    "NamespaceFields",
    "NamespaceMeta",
    "NamespaceObject",
    "NodeAffinity",
    "NodeFields",
    "NodeImage",
    "NodeInfo",
    "NodeMeta",
    "NodeObject",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "Ordinals",
    "OwnerReference",
    "Page",
    "PageHead",
    "PersistentVolumeClaimFields",
    "PersistentVolumeFields",
    "PersistentVolumeObject",
    "Phase",
    "PodCondition",
    "PodDisruptionBudgetFields",
    "PodDisruptionBudgetObject",
    "PodDisruptionBudgetSpec",
    "PodFields",
    "PodMeta",
    "PodObject",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "RawList",
    "RollingUpdate",
    "ServiceFields",
    "ServiceMeta",
    "ServiceObject",
    "ServiceSpec",
    "Strategy",
    "Taint",
    "TemplateMeta",
    "Toleration",
    "TopologySpreadConstraint",
    "VolumeFields",
    "VolumeSpec",
    "WorkloadFields",
    "WorkloadMeta",
    "WorkloadObject",
    "WorkloadSpec",
    "WorkloadStatus",
]

# Integers as the API declares them: a value out of range makes msgspec reject the object (the reference
# parser then names the field), so no integer beyond 64 bits reaches a record or the output.
_Int32 = Annotated[int, msgspec.Meta(ge=INT32_RANGE[0], le=INT32_RANGE[1])]
_Int64 = Annotated[int, msgspec.Meta(ge=INT64_RANGE[0], le=INT64_RANGE[1])]

ABSENT: Final = msgspec.Raw()  # default of Raw fields: empty, i.e. false


# Sub-objects that repeat across many objects (labels, ownerReferences, a pod's scheduling fields) are
# kept as ``msgspec.Raw`` (a slice of the input): they key the converter's caches, so pods of one
# ReplicaSet decode their labels, controller and template once; only a cache miss decodes them typed.
# Every Struct is ``gc=False``: decoded values never form cycles, so the cyclic GC need not track them
# (cheaper to allocate: pages → records about 10 % less CPU than with tracked Structs, measured in one process).


class OwnerReference(msgspec.Struct, gc=False):
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None


class Toleration(msgspec.Struct, gc=False):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


class Taint(msgspec.Struct, gc=False):
    key: str | None = None
    value: str | None = None
    effect: str | None = None


class NodeSelectorRequirement(msgspec.Struct, gc=False):
    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class NodeSelectorTerm(msgspec.Struct, gc=False):
    matchExpressions: list[NodeSelectorRequirement] | None = None
    matchFields: list[NodeSelectorRequirement] | None = None


class NodeSelector(msgspec.Struct, gc=False):
    nodeSelectorTerms: list[NodeSelectorTerm] | None = None


class NodeAffinity(msgspec.Struct, gc=False):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None = None


class Affinity(msgspec.Struct, gc=False):
    nodeAffinity: NodeAffinity | None = None


class TopologySpreadConstraint(msgspec.Struct, gc=False):
    """One ``topologySpreadConstraints`` entry (PodTopologySpread, profile v1.29)."""

    maxSkew: _Int32 | None = None
    topologyKey: str | None = None
    whenUnsatisfiable: str | None = None
    labelSelector: msgspec.Raw = ABSENT  # a LabelSelector, parsed by spreadwatch.selectors
    matchLabelKeys: list[str] | None = None
    minDomains: _Int32 | None = None
    nodeAffinityPolicy: str | None = None
    nodeTaintsPolicy: str | None = None


class LabelSelector(msgspec.Struct, frozen=True, gc=False):
    """A workload's ``spec.selector`` (a ``metav1.LabelSelector``): its ``matchLabels`` bytes key the
    converter's label cache (a Deployment's are its own labels' bytes)."""

    matchLabels: msgspec.Raw = ABSENT  # dict[str, str] | None
    matchExpressions: msgspec.Raw = ABSENT  # list[LabelSelectorRequirement] | None


# --- Pod --------------------------------------------------------------------------------------------------
# The hot shapes (a pod's, a workload's) are ``frozen`` so that one shared instance is the default of an
# absent sub-object, and their strings default to "" rather than None: the converter reads them without
# ``or`` chains. A JSON ``null`` there is rejected by msgspec and read by the reference parser instead (which
# treats it as absent): the same record, by the slow path.


class PodMeta(msgspec.Struct, frozen=True, gc=False):
    name: str = ""
    namespace: str = ""
    labels: msgspec.Raw = ABSENT  # dict[str, str] | None
    ownerReferences: msgspec.Raw = ABSENT  # list[OwnerReference] | None
    deletionTimestamp: str | None = None
    uid: str = ""
    creationTimestamp: str = ""
    annotations: msgspec.Raw = ABSENT  # dict[str, str] | None: only pod-deletion-cost is read


class ContainerFields(msgspec.Struct, frozen=True, gc=False):
    """One container (or init container) as the whole scheduler profile reads it: its image, its
    ``resources`` and ``ports`` (raw: read by ``Converter`` on a cache miss) and restart policy (sidecars).
    Everything else (env, mounts naming a pod's own token volume, probes) is skipped in C, so the containers
    of one template's pods compare equal."""

    image: str = ""
    resources: msgspec.Raw = ABSENT  # ResourceRequirements | None
    ports: msgspec.Raw = ABSENT  # list[ContainerPort] | None
    restartPolicy: str = ""
    name: str = ""  # (a sidecar's restarts rank a scale-down: its status is found by name)


class VolumeFields(msgspec.Struct, frozen=True, gc=False):
    """One pod volume: only a claim (``persistentVolumeClaim``) or an image volume is read."""

    persistentVolumeClaim: msgspec.Raw = ABSENT
    image: msgspec.Raw = ABSENT


class PodSpec(msgspec.Struct, frozen=True, gc=False):
    """A pod's spec (also a workload's ``spec.template.spec``); the four scheduling fields are decoded by
    ``Converter`` on a cache miss, and so are the containers' requests, ports and images, the overhead, the
    pod-level resources, the claims and DRA resource claims (``PodNeeds``)."""

    nodeName: str = ""
    tolerations: msgspec.Raw = ABSENT  # list[Toleration] | None
    nodeSelector: msgspec.Raw = ABSENT  # dict[str, str] | None
    affinity: msgspec.Raw = ABSENT  # Affinity | None
    topologySpreadConstraints: msgspec.Raw = ABSENT  # list[TopologySpreadConstraint] | None
    containers: tuple[ContainerFields, ...] = ()
    initContainers: tuple[ContainerFields, ...] = ()
    overhead: msgspec.Raw = ABSENT  # ResourceList | None
    resources: msgspec.Raw = ABSENT  # pod-level ResourceRequirements | None
    volumes: tuple[VolumeFields, ...] = ()
    resourceClaims: msgspec.Raw = ABSENT  # list[PodResourceClaim] | None


#: The phases of ``PodPhase`` (and "", no phase): decoded as these (shared) strings; any other string is
#: rejected by msgspec and the pod read by the reference parser, which keeps it as it is.
Phase = Literal["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]


class PodCondition(msgspec.Struct, frozen=True, gc=False):
    type: str = ""
    status: str = ""
    lastTransitionTime: str = ""


class ContainerStatus(msgspec.Struct, frozen=True, gc=False):
    """A container's (or init container's) status: its name and restartCount only."""

    name: str = ""
    restartCount: _Int32 = 0


class PodStatus(msgspec.Struct, frozen=True, gc=False):
    phase: Phase = ""
    nominatedNodeName: str = ""
    conditions: tuple[PodCondition, ...] = ()
    containerStatuses: tuple[ContainerStatus, ...] = ()
    initContainerStatuses: tuple[ContainerStatus, ...] = ()


NO_POD_META: Final = PodMeta()
NO_POD_SPEC: Final = PodSpec()
NO_POD_STATUS: Final = PodStatus()


class PodFields(msgspec.Struct, gc=False):
    """A pod's fields read."""

    metadata: PodMeta = NO_POD_META
    spec: PodSpec = NO_POD_SPEC
    status: PodStatus = NO_POD_STATUS


# --- Node, Service, Namespace -----------------------------------------------------------------------------


class NodeMeta(msgspec.Struct, gc=False):
    name: str | None = None
    uid: str | None = None
    labels: msgspec.Raw = ABSENT


class NodeSpec(msgspec.Struct, gc=False):
    taints: list[Taint] | None = None
    unschedulable: bool | None = None


class NodeImage(msgspec.Struct, gc=False):
    names: list[str] | None = None
    sizeBytes: Annotated[int, msgspec.Meta(ge=0, le=INT64_RANGE[1])] | None = None


class NodeInfo(msgspec.Struct, gc=False):
    kubeletVersion: str | None = None


class NodeStatus(msgspec.Struct, gc=False):
    allocatable: msgspec.Raw = ABSENT  # ResourceList (quantities): read by ``Converter``
    images: list[NodeImage] | None = None
    nodeInfo: NodeInfo | None = None


class NodeFields(msgspec.Struct, gc=False):
    metadata: NodeMeta | None = None
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class ServiceMeta(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None


class ServiceSpec(msgspec.Struct, gc=False):
    selector: msgspec.Raw = ABSENT  # dict[str, str] | None


class ServiceFields(msgspec.Struct, gc=False):
    metadata: ServiceMeta | None = None
    spec: ServiceSpec | None = None


class NamespaceMeta(msgspec.Struct, gc=False):
    name: str | None = None
    labels: msgspec.Raw = ABSENT


class NamespaceFields(msgspec.Struct, gc=False):
    metadata: NamespaceMeta | None = None


# --- workloads (ReplicationController, ReplicaSet, StatefulSet, Deployment) ------------------------------


class WorkloadMeta(msgspec.Struct, frozen=True, gc=False):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: msgspec.Raw = ABSENT
    annotations: dict[str, str] | None = None  # revision, desired-replicas, max-replicas
    ownerReferences: msgspec.Raw = ABSENT
    creationTimestamp: str = ""
    generation: _Int64 = 0


class TemplateMeta(msgspec.Struct, frozen=True, gc=False):
    labels: msgspec.Raw = ABSENT  # dict[str, str] | None


NO_TEMPLATE_META: Final = TemplateMeta()


class PodTemplateSpec(msgspec.Struct, frozen=True, gc=False):
    metadata: TemplateMeta = NO_TEMPLATE_META
    spec: PodSpec = NO_POD_SPEC


NO_WORKLOAD_META: Final = WorkloadMeta()
NO_POD_TEMPLATE: Final = PodTemplateSpec()


class ClaimTemplateMeta(msgspec.Struct, frozen=True, gc=False):
    name: str = ""


class ClaimTemplate(msgspec.Struct, frozen=True, gc=False):
    """One StatefulSet ``volumeClaimTemplates`` entry: only its name is read."""

    metadata: ClaimTemplateMeta = ClaimTemplateMeta()


class RollingUpdate(msgspec.Struct, frozen=True, gc=False):
    maxSurge: _Int32 | str | None = None
    maxUnavailable: _Int32 | str | None = None


class Strategy(msgspec.Struct, frozen=True, gc=False):
    """A Deployment's ``spec.strategy``."""

    type: str = ""
    rollingUpdate: RollingUpdate | None = None


class Ordinals(msgspec.Struct, frozen=True, gc=False):
    start: _Int32 = 0


class WorkloadSpec(msgspec.Struct, frozen=True, gc=False):
    """A ReplicaSet's, StatefulSet's or Deployment's spec: its ``selector`` a LabelSelector, typed in the one
    pass (None: absent)."""

    selector: LabelSelector | None = None
    replicas: _Int32 | None = None
    template: PodTemplateSpec = NO_POD_TEMPLATE
    volumeClaimTemplates: tuple[ClaimTemplate, ...] = ()
    strategy: Strategy | None = None  # Deployment
    ordinals: Ordinals | None = None  # StatefulSet


class ControllerSpec(msgspec.Struct, frozen=True, gc=False):
    """A ReplicationController's spec: its ``selector`` a label map (its bytes key the label cache)."""

    selector: msgspec.Raw = ABSENT  # dict[str, str] | None
    replicas: _Int32 | None = None
    template: PodTemplateSpec = NO_POD_TEMPLATE


class WorkloadStatus(msgspec.Struct, frozen=True, gc=False):
    updateRevision: str = ""  # StatefulSet
    replicas: _Int32 = 0
    availableReplicas: _Int32 = 0


NO_WORKLOAD_SPEC: Final = WorkloadSpec()
NO_CONTROLLER_SPEC: Final = ControllerSpec()
NO_WORKLOAD_STATUS: Final = WorkloadStatus()


class WorkloadFields(msgspec.Struct, gc=False):
    apiVersion: str | msgspec.UnsetType | None = msgspec.UNSET  # absent from a list page's items
    metadata: WorkloadMeta = NO_WORKLOAD_META
    spec: WorkloadSpec = NO_WORKLOAD_SPEC
    status: WorkloadStatus = NO_WORKLOAD_STATUS


class ControllerFields(msgspec.Struct, gc=False):
    """A ReplicationController's fields read."""

    apiVersion: str | msgspec.UnsetType | None = msgspec.UNSET
    metadata: WorkloadMeta = NO_WORKLOAD_META
    spec: ControllerSpec = NO_CONTROLLER_SPEC
    status: WorkloadStatus = NO_WORKLOAD_STATUS


# --- PersistentVolumeClaim, PersistentVolume ------------------------------------------------------------


class ClaimMeta(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    annotations: dict[str, str] | None = None


class ClaimSpec(msgspec.Struct, gc=False):
    volumeName: str | None = None
    storageClassName: str | None = None
    accessModes: list[str] | None = None


class PersistentVolumeClaimFields(msgspec.Struct, gc=False):
    """A PersistentVolumeClaim's fields read."""

    metadata: ClaimMeta | None = None
    spec: ClaimSpec | None = None


class VolumeSpec(msgspec.Struct, gc=False):
    nodeAffinity: msgspec.Raw = ABSENT  # VolumeNodeAffinity: read by ``Converter``


class PersistentVolumeFields(msgspec.Struct, gc=False):
    """A PersistentVolume's fields read (its labels and required node affinity)."""

    metadata: NodeMeta | None = None
    spec: VolumeSpec | None = None


# --- PodDisruptionBudget ----------------------------------------------------------------------------------


class PodDisruptionBudgetSpec(msgspec.Struct, gc=False):
    selector: msgspec.Raw = ABSENT  # a LabelSelector, parsed by spreadwatch.selectors (absent: selects nothing)
    minAvailable: _Int32 | str | None = None
    maxUnavailable: _Int32 | str | None = None


class PodDisruptionBudgetFields(msgspec.Struct, gc=False):
    metadata: ServiceMeta | None = None  # name, namespace, uid
    spec: PodDisruptionBudgetSpec | None = None


# --- documents and pages ----------------------------------------------------------------------------------

class PodObject(PodFields, gc=False):
    """A pod as an API list page holds it; ``kind`` (absent from the API server's pages) only to notice an
    item naming a kind (then read by the reference parser)."""

    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class NodeObject(NodeFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class ServiceObject(ServiceFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class NamespaceObject(NamespaceFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class WorkloadObject(WorkloadFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class ControllerObject(ControllerFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class ClaimObject(PersistentVolumeClaimFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class PersistentVolumeObject(PersistentVolumeFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


class PodDisruptionBudgetObject(PodDisruptionBudgetFields, gc=False):
    kind: str | msgspec.UnsetType | None = msgspec.UNSET


_FIELDS: Final[dict[str, type[msgspec.Struct]]] = {
    "Pod": PodFields,
    "Node": NodeFields,
    "Service": ServiceFields,
    "Namespace": NamespaceFields,
    **dict.fromkeys(WORKLOAD_KINDS, WorkloadFields),
    "ReplicationController": ControllerFields,
    "PersistentVolumeClaim": PersistentVolumeClaimFields,
    "PersistentVolume": PersistentVolumeFields,
    "PodDisruptionBudget": PodDisruptionBudgetFields,
}
OBJECTS: Final[dict[str, type[msgspec.Struct]]] = {
    "Pod": PodObject,
    "Node": NodeObject,
    "Service": ServiceObject,
    "Namespace": NamespaceObject,
    **dict.fromkeys(WORKLOAD_KINDS, WorkloadObject),
    "ReplicationController": ControllerObject,
    "PersistentVolumeClaim": ClaimObject,
    "PersistentVolume": PersistentVolumeObject,
    "PodDisruptionBudget": PodDisruptionBudgetObject,
}


class ListMeta(msgspec.Struct, gc=False):
    continue_: str | None = msgspec.field(default=None, name="continue")


def _page(kind: str, shape: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """``{"metadata": ListMeta, "items": [shape]}``: one page of an API server list of ``kind``."""
    return msgspec.defstruct(
        f"{kind}Page", [("metadata", ListMeta | None, None), ("items", list[shape] | None, None)], gc=False  # type: ignore[valid-type]
    )


#: The page shape of each kind read: its items typed in the one pass over the page.
PAGES: Final[dict[str, type[msgspec.Struct]]] = {kind: _page(kind, shape) for kind, shape in OBJECTS.items()}


def _tagged(kind: str, shape: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """``shape`` as a member of the tagged union on ``kind`` (the tag is read, not stored)."""
    return msgspec.defstruct(f"{kind}Item", [], bases=(shape,), tag_field="kind", tag=kind, gc=False)


#: The kind of each member of :class:`Document`'s tagged union.
ITEM_KINDS: Final[dict[type[msgspec.Struct], str]] = {_tagged(k, s): k for k, s in _FIELDS.items()}


#: A file's List item: the tagged union of the ``*Item`` shapes (the tag ``kind`` picks the member).
Item: Final = Union[tuple(ITEM_KINDS)]  # noqa: UP007


class Document(msgspec.Struct, gc=False):
    """A whole ``kind: List`` file typed in one pass: rejected (ValidationError) when any item is of a kind
    not read, names no kind, or has a wrongly typed field."""

    kind: str | None = None
    items: list[Item] | msgspec.UnsetType | None = msgspec.UNSET  # type: ignore[valid-type]


class Page(msgspec.Struct, gc=False):
    """One page of an API server list (``GET /api/v1/pods?limit=500``), items left undecoded."""

    metadata: ListMeta | None = None
    items: list[msgspec.Raw] | None = None


class PageHead(msgspec.Struct, gc=False):
    """A list page's metadata, its items skipped."""

    metadata: ListMeta | None = None


class RawList(msgspec.Struct, gc=False):
    """A ``kind: List`` (or ``PodList``, ...) whose items are left undecoded (slices of the input)."""

    kind: str | None = None
    items: list[msgspec.Raw] | msgspec.UnsetType | None = msgspec.UNSET
