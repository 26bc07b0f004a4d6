"""The JSON shapes the typed decoder reads: msgspec Structs declaring only the fields spreadwatch uses.

Attribute names are the JSON keys; ``T | None = None`` everywhere, as the reference parser treats null as
absent. Every other field of an API object is skipped by msgspec in C. Decoding is O(bytes).
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = [
    "ABSENT",
    "Affinity",
    "ListMeta",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Object",
    "ObjectMeta",
    "OwnerReference",
    "Page",
    "PodTemplateSpec",
    "RawList",
    "Spec",
    "Status",
    "Taint",
    "TemplateMeta",
    "Toleration",
    "TopologySpreadConstraint",
    "TypedPage",
]

ABSENT: Final = msgspec.Raw()  # default of Raw fields: empty, i.e. false


# Sub-objects that repeat across many objects (labels, ownerReferences, a pod's scheduling fields) are
# kept as ``msgspec.Raw`` (a slice of the input): their bytes key a per-document cache, so pods of one
# ReplicaSet decode their labels, controller and template once; only a cache miss decodes them typed.
# Every Struct is ``gc=False``: decoded values never form cycles, so the cyclic GC need not track them
# (cheaper to allocate: pages → records about 10 % less CPU than with tracked Structs, measured in one process).


class OwnerReference(msgspec.Struct, gc=False):
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None


class ObjectMeta(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: msgspec.Raw = ABSENT  # dict[str, str] | None
    annotations: msgspec.Raw = ABSENT  # dict[str, str] | None; read for workloads only
    ownerReferences: msgspec.Raw = ABSENT  # list[OwnerReference] | None
    deletionTimestamp: str | None = None
    creationTimestamp: str | None = None
    generation: int | None = None


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

    maxSkew: int | None = None
    topologyKey: str | None = None
    whenUnsatisfiable: str | None = None
    labelSelector: msgspec.Raw = ABSENT  # a LabelSelector, parsed by spreadwatch.selectors
    matchLabelKeys: list[str] | None = None
    minDomains: int | None = None
    nodeAffinityPolicy: str | None = None
    nodeTaintsPolicy: str | None = None


class TemplateMeta(msgspec.Struct, gc=False):
    labels: msgspec.Raw = ABSENT  # dict[str, str] | None


class PodTemplateSpec(msgspec.Struct, gc=False):
    metadata: TemplateMeta | None = None
    spec: Spec | None = None


class Spec(msgspec.Struct, gc=False):
    """The ``spec`` of every kind read, in one Struct (the decoder does not know the kind in advance)."""

    # Pod (also a workload's spec.template.spec); the four scheduling fields are decoded by Converter.template
    nodeName: str | None = None
    tolerations: msgspec.Raw = ABSENT  # list[Toleration] | None
    nodeSelector: msgspec.Raw = ABSENT  # dict[str, str] | None
    affinity: msgspec.Raw = ABSENT  # Affinity | None
    topologySpreadConstraints: msgspec.Raw = ABSENT  # list[TopologySpreadConstraint] | None
    # Node
    taints: list[Taint] | None = None
    unschedulable: bool | None = None
    # Service, ReplicationController (a map) and the other workloads (a LabelSelector)
    selector: msgspec.Raw = ABSENT
    # workloads
    replicas: int | None = None
    template: PodTemplateSpec | None = None


class Status(msgspec.Struct, gc=False):
    phase: str | None = None  # Pod
    updateRevision: str | None = None  # StatefulSet


class Object(msgspec.Struct, gc=False):
    kind: str | None = None
    apiVersion: str | None = None
    metadata: ObjectMeta | None = None
    spec: Spec | None = None
    status: Status | None = None


class ListMeta(msgspec.Struct, gc=False):
    continue_: str | None = msgspec.field(default=None, name="continue")


class Page(msgspec.Struct, gc=False):
    """One page of an API server list (``GET /api/v1/pods?limit=500``), items left undecoded."""

    metadata: ListMeta | None = None
    items: list[msgspec.Raw] | None = None


class TypedPage(msgspec.Struct, gc=False):
    """The same page with its items decoded in the one pass (the usual case: every item well typed)."""

    metadata: ListMeta | None = None
    items: list[Object] | None = None


class RawList(msgspec.Struct, gc=False):
    """A ``kind: List`` (or ``PodList``, ...) whose items are left undecoded (slices of the input)."""

    kind: str | None = None
    items: list[msgspec.Raw] | msgspec.UnsetType | None = msgspec.UNSET
