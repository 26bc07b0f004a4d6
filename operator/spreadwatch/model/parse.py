"""Parsers of API objects into records.

:func:`parse_object` turns one API object (a dict as ``kubectl get -o json`` prints it, or a kopf body) into
a record; it raises :class:`~spreadwatch.errors.ObjectError` naming the object and field when a field has
the wrong type. Label maps are interned. Cost: O(size of the object's scheduling-relevant fields).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Final

from spreadwatch.errors import ObjectError, SelectorError
from spreadwatch.model.interning import intern_labels
from spreadwatch.model.keys import WORKLOAD_KINDS
from spreadwatch.model.reader import INT32_RANGE, INT64_RANGE, FieldReader, object_ref, shown, type_name
from spreadwatch.model.records import (
    INVALID_DELETION_COST,
    NO_NEEDS,
    NO_SCALING,
    Controller,
    Image,
    Namespace,
    Node,
    NodeSelectorTerm,
    OwnerRef,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PodNeeds,
    PodTemplate,
    Record,
    Resources,
    Scaling,
    Service,
    SpreadConstraint,
    Taint,
    Toleration,
    uid_value,
)
from spreadwatch.model.sharing import Shared
from spreadwatch.model.spec_fields import (
    node_allocatable,
    node_images,
    node_selector_requirements,
    pod_affinity,
    pod_needs,
)
from spreadwatch.selectors import NOTHING, Requirement, Selector, from_label_selector, from_match_labels

__all__ = [
    "BIND_COMPLETED",
    "DELETION_COST",
    "INT32_RANGE",
    "INT64_RANGE",
    "READ_WRITE_ONCE_POD",
    "SHARED_IMAGES",
    "SHARED_NEEDS",
    "SHARED_OWNERS",
    "SHARED_RESOURCES",
    "SHARED_TAINTS",
    "SHARED_TEMPLATES",
    "annotated_cost",
    "annotation_count",
    "controller_selector",
    "deletion_cost",
    "node_selector_terms",
    "object_ref",
    "parse_object",
    "parse_pod",
    "pod_template",
    "restart_key",
    "revision_number",
    "template_needs",
]

#: the annotation the PersistentVolume controller sets once a claim's binding is complete
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
#: process-wide tables of shared records (every decoder's records of equal values are one object)
SHARED_NEEDS: Final[Shared[PodNeeds]] = Shared()
SHARED_RESOURCES: Final[Shared[Resources]] = Shared()
SHARED_IMAGES: Final[Shared[Image]] = Shared()
#: a watch-decoded pod's controller reference and template are its ReplicaSet's pods' (decoders of watch events
#: live a thousand lines: without these, ~300–900 bytes more per pod replaced)
SHARED_OWNERS: Final[Shared[OwnerRef]] = Shared()
SHARED_TEMPLATES: Final[Shared[PodTemplate]] = Shared()
SHARED_TAINTS: Final[Shared[tuple[Taint, ...]]] = Shared()

_EMPTY: Final[Mapping[str, Any]] = intern_labels({})  # the one shared empty map
_INT64_DIGITS: Final = 19


def revision_number(text: str) -> int:
    """A ``deployment.kubernetes.io/revision`` annotation as Go's ``strconv.ParseInt(text, 10, 64)`` reads an
    unsigned one: ASCII digits only (not ``²`` or other Unicode digits), at most int64; anything else is 0.
    O(len(text)), never more than 19 digits converted."""
    if not (text.isascii() and text.isdigit()):
        return 0
    digits = text.lstrip("0")
    if len(digits) > _INT64_DIGITS:
        return 0
    value = int(digits or "0")
    return value if value <= INT64_RANGE[1] else 0


#: The annotation the ReplicaSet controller ranks a scale-down by first, after readiness (lower goes first).
DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
_INT32_DIGITS: Final = 10


def deletion_cost(text: str) -> int:
    """``helper.GetDeletionCostFromPodAnnotations`` of the annotation's value: an int32 in decimal without a
    ``+`` or a leading zero (``0`` itself excepted), else :data:`~spreadwatch.model.INVALID_DELETION_COST` (which
    the controller ranks as 0). O(len(text)), never more than 10 digits converted."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or (text[0] == "0" and text != "0"):
        return INVALID_DELETION_COST
    if len(digits.lstrip("0")) > _INT32_DIGITS:
        return INVALID_DELETION_COST
    value = int(text)
    return value if INT32_RANGE[0] <= value <= INT32_RANGE[1] else INVALID_DELETION_COST


def annotated_cost(annotations: object) -> int:
    """The pod-deletion-cost of a pod's ``metadata.annotations`` as read (any JSON value): 0 without the
    annotation (or without a map), :func:`deletion_cost` of its text, INVALID_DELETION_COST for a value that is not
    a string. O(1) plus the text."""
    if not isinstance(annotations, Mapping):
        return 0
    text = annotations.get(DELETION_COST)
    if text is None:
        return 0
    return deletion_cost(text) if isinstance(text, str) else INVALID_DELETION_COST


def annotation_count(text: str | None, signed: bool = False) -> int:
    """A ReplicaSet's ``deployment.kubernetes.io/max-replicas`` (``strconv.ParseUint``, at most int32) or, with
    ``signed``, ``desired-replicas`` (``strconv.Atoi``: an optional sign) annotation; -1 when absent or not a
    number. O(len(text)), never more than 19 digits converted."""
    if not text:
        return -1
    digits = text[1:] if signed and text[0] in "+-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits.lstrip("0")) > _INT64_DIGITS:
        return -1
    value = int(text)
    if signed:
        return value if INT64_RANGE[0] <= value <= INT64_RANGE[1] else -1
    return value if value <= INT32_RANGE[1] else -1


def restart_key(regular: int, sidecar: int) -> int:
    """``compareMaxContainerRestarts``' order as one int: the highest container restartCount first, then the
    highest restartable init container's (both from 0, as the controller's ``max``). O(1)."""
    return max(0, regular) << 32 | max(0, sidecar)


def _meta(r: FieldReader, obj: Mapping[str, Any], namespaced: bool) -> tuple[str, str, str, Mapping[str, str]]:
    meta = r.mapping(obj, "metadata", "metadata")
    name = r.string(meta, "name", "metadata.name")
    if not name:
        raise r.fail("metadata.name", "is required")
    namespace = (r.string(meta, "namespace", "metadata.namespace") or "default") if namespaced else ""
    labels = intern_labels(r.string_map(meta, "labels", "metadata.labels") or _EMPTY)
    return namespace, name, r.string(meta, "uid", "metadata.uid"), labels


def _controller(r: FieldReader, meta: Mapping[str, Any]) -> OwnerRef | None:
    for i, ref in enumerate(r.items(meta, "ownerReferences", "metadata.ownerReferences")):
        path = f"metadata.ownerReferences[{i}]"
        if r.boolean(ref, "controller", path + ".controller"):
            return OwnerRef(
                api_version=r.string(ref, "apiVersion", path + ".apiVersion"),
                kind=r.string(ref, "kind", path + ".kind"),
                name=r.string(ref, "name", path + ".name"),
                uid=r.string(ref, "uid", path + ".uid"),
            )
    return None


def node_selector_terms(r: FieldReader, selector: Mapping[str, Any], path: str) -> tuple[NodeSelectorTerm, ...]:
    """A NodeSelector's ``nodeSelectorTerms`` (unvalidated: the matchers decide). O(requirements)."""
    return tuple(
        NodeSelectorTerm(
            node_selector_requirements(r, t, "matchExpressions", f"{path}.nodeSelectorTerms[{i}]"),
            node_selector_requirements(r, t, "matchFields", f"{path}.nodeSelectorTerms[{i}]"),
        )
        for i, t in enumerate(r.items(selector, "nodeSelectorTerms", path + ".nodeSelectorTerms"))
    )


def pod_template(r: FieldReader, spec: Mapping[str, Any], path: str) -> PodTemplate:
    """A pod spec's scheduling fields (:class:`PodTemplate`). Raises ObjectError. O(fields)."""
    tolerations = tuple(
        Toleration(
            key=r.string(t, "key", f"{path}.tolerations[{i}].key"),
            operator=r.string(t, "operator", f"{path}.tolerations[{i}].operator"),
            value=r.string(t, "value", f"{path}.tolerations[{i}].value"),
            effect=r.string(t, "effect", f"{path}.tolerations[{i}].effect"),
        )
        for i, t in enumerate(r.items(spec, "tolerations", f"{path}.tolerations"))
    )
    node_selector = tuple(sorted((r.string_map(spec, "nodeSelector", f"{path}.nodeSelector") or {}).items()))
    affinity = r.mapping(spec, "affinity", f"{path}.affinity")
    node_affinity = r.mapping(affinity, "nodeAffinity", f"{path}.affinity.nodeAffinity")
    required_path = f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms: tuple[NodeSelectorTerm, ...] | None = None
    if required is not None:
        required = r.mapping(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", required_path)
        terms = node_selector_terms(r, required, required_path)
    constraints = _spread_constraints(r, spec, f"{path}.topologySpreadConstraints")
    pods = pod_affinity(r, spec, path)
    return PodTemplate(
        tolerations,
        node_selector,
        terms,
        bool(constraints),
        constraints,
        pods.preferred_node,
        pods.required,
        pods.required_anti,
        pods.preferred,
        pods.preferred_anti,
        pods.error,
    )


def _spread_constraints(r: FieldReader, spec: Mapping[str, Any], path: str) -> tuple[SpreadConstraint, ...]:
    out = []
    for i, c in enumerate(r.items(spec, "topologySpreadConstraints", path)):
        p = f"{path}[{i}]"
        raw_selector = c.get("labelSelector")
        if raw_selector is not None and not isinstance(raw_selector, Mapping):
            raise r.fail(p + ".labelSelector", f"expected a mapping, got {type_name(raw_selector)}")
        error: str | None = None
        try:
            selector = from_label_selector(raw_selector)
        except SelectorError as err:
            selector, error = NOTHING, str(err)
        min_domains = c.get("minDomains")
        out.append(
            SpreadConstraint(
                max_skew=r.integer(c, "maxSkew", p + ".maxSkew", 0),
                topology_key=r.string(c, "topologyKey", p + ".topologyKey"),
                when_unsatisfiable=r.string(c, "whenUnsatisfiable", p + ".whenUnsatisfiable"),
                selector=selector,
                selector_error=error,
                match_label_keys=r.strings(c, "matchLabelKeys", p + ".matchLabelKeys"),
                min_domains=None if min_domains is None else r.integer(c, "minDomains", p + ".minDomains", 1),
                node_affinity_policy=r.string(c, "nodeAffinityPolicy", p + ".nodeAffinityPolicy"),
                node_taints_policy=r.string(c, "nodeTaintsPolicy", p + ".nodeTaintsPolicy"),
            )
        )
    return tuple(out)


_EMPTY_TEMPLATE = PodTemplate()


def _intern_template(template: PodTemplate) -> PodTemplate:
    return _EMPTY_TEMPLATE if template == _EMPTY_TEMPLATE else template


def _shared_needs(needs: PodNeeds) -> PodNeeds:
    return NO_NEEDS if needs == NO_NEEDS else SHARED_NEEDS.get(needs)


def template_needs(r: FieldReader, spec: Mapping[str, Any], path: str) -> PodNeeds:
    """A workload template's needs (its next pod's); one that cannot be read keeps why (``error``: that
    workload's report is ``Error``, the others are unaffected). Shared. O(containers)."""
    try:
        return _shared_needs(pod_needs(r, spec, path))
    except ObjectError as err:
        return SHARED_NEEDS.get(PodNeeds(error=f"{err.path}: {err.problem}"))


def parse_pod(obj: Mapping[str, Any]) -> Pod:
    """Parse a Pod object; raise ObjectError when it is not a Pod or a field has the wrong type."""
    if obj.get("kind") not in ("Pod", None):
        raise ObjectError(object_ref(obj), "kind", f"expected a Pod, got {shown(obj.get('kind'))}")
    r = FieldReader(obj)
    namespace, name, uid, labels = _meta(r, obj, namespaced=True)
    meta = r.mapping(obj, "metadata", "metadata")
    spec = r.mapping(obj, "spec", "spec")
    status = r.mapping(obj, "status", "status")
    created = r.time(meta, "creationTimestamp", "metadata.creationTimestamp")
    ready_time = _ready_time(r, status)
    return Pod(
        namespace=sys.intern(namespace),
        name=name,
        labels=labels,
        node_name=sys.intern(r.string(spec, "nodeName", "spec.nodeName")),
        phase=r.string(status, "phase", "status.phase"),
        deleting=meta.get("deletionTimestamp") is not None,
        controller=_controller(r, meta),
        template=_intern_template(pod_template(r, spec, "spec")),
        needs=_shared_needs(pod_needs(r, spec, "spec")),
        nominated=r.string(status, "nominatedNodeName", "status.nominatedNodeName"),
        uid=uid_value(uid),
        created=created,
        ready_after=None if ready_time is None else ready_time - created,
        restarts=_restarts(r, spec, status),
        deletion_cost=annotated_cost(meta.get("annotations")),
    )


def _ready_time(r: FieldReader, status: Mapping[str, Any]) -> int | None:
    """``podutil.IsPodReady``: the first ``Ready`` condition is ``True``; then its lastTransitionTime (Unix
    seconds), else None. O(conditions)."""
    for i, cond in enumerate(r.items(status, "conditions", "status.conditions")):
        path = f"status.conditions[{i}]"
        if r.string(cond, "type", path + ".type") == "Ready":
            if r.string(cond, "status", path + ".status") != "True":
                return None
            return r.time(cond, "lastTransitionTime", path + ".lastTransitionTime")
    return None


def _restarts(r: FieldReader, spec: Mapping[str, Any], status: Mapping[str, Any]) -> int:
    """``maxContainerRestarts``: the highest restartCount of the containers, then of the init containers with
    ``restartPolicy: Always`` (sidecars), as :func:`restart_key`. O(containers)."""
    regular = sidecar = 0
    for i, c in enumerate(r.items(status, "containerStatuses", "status.containerStatuses")):
        regular = max(regular, r.integer(c, "restartCount", f"status.containerStatuses[{i}].restartCount", 0))
    statuses = r.items(status, "initContainerStatuses", "status.initContainerStatuses")
    if statuses:
        sidecars = {
            r.string(c, "name", f"spec.initContainers[{i}].name")
            for i, c in enumerate(r.items(spec, "initContainers", "spec.initContainers"))
            if r.string(c, "restartPolicy", f"spec.initContainers[{i}].restartPolicy") == "Always"
        }
        for i, c in enumerate(statuses):
            path = f"status.initContainerStatuses[{i}]"
            if r.string(c, "name", path + ".name") in sidecars:
                sidecar = max(sidecar, r.integer(c, "restartCount", path + ".restartCount", 0))
    return restart_key(regular, sidecar)


def _parse_node(obj: Mapping[str, Any]) -> Node:
    r = FieldReader(obj)
    _, name, uid, labels = _meta(r, obj, namespaced=False)
    spec = r.mapping(obj, "spec", "spec")
    taints = tuple(
        Taint(
            key=r.string(t, "key", f"spec.taints[{i}].key"),
            value=r.string(t, "value", f"spec.taints[{i}].value"),
            effect=r.string(t, "effect", f"spec.taints[{i}].effect"),
        )
        for i, t in enumerate(r.items(spec, "taints", "spec.taints"))
    )
    status = r.mapping(obj, "status", "status")
    allocatable = SHARED_RESOURCES.get(node_allocatable(r, status))
    images = node_images(r, status, SHARED_IMAGES.get)
    info = r.mapping(status, "nodeInfo", "status.nodeInfo")
    kubelet = r.string(info, "kubeletVersion", "status.nodeInfo.kubeletVersion")
    unschedulable = r.boolean(spec, "unschedulable", "spec.unschedulable")
    return Node(name, labels, taints, unschedulable, uid, allocatable, images, sys.intern(kubelet) if kubelet else "")


def _parse_service(obj: Mapping[str, Any]) -> Service:
    r = FieldReader(obj)
    namespace, name, uid, _ = _meta(r, obj, namespaced=True)
    spec = r.mapping(obj, "spec", "spec")
    selector = r.string_map(spec, "selector", "spec.selector")
    return Service(namespace, name, intern_labels(selector) if selector else None, uid)


def controller_selector(
    kind: str,
    value: Any,
    template_labels: Mapping[str, str],
    requirements: dict[tuple[str, str], Requirement] | None = None,
) -> tuple[Selector, Mapping[str, str] | None, str | None]:
    """A controller's selector from its ``spec.selector`` (``value``): a ReplicationController's label map
    (none: its template's labels, as the API server defaults it), any other kind's LabelSelector. Returns
    (selector, the RC's interned map or None, error text or None); a selector the API server would reject
    gives the empty selector and its error (an Error report for this workload, not a failed load).
    ``requirements``: a cache of :func:`~spreadwatch.selectors.from_match_labels`. O(requirements)."""
    selector_map: Mapping[str, str] | None = None
    try:
        if kind == "ReplicationController":
            selector_map = intern_labels(value) if value else (template_labels or None)
            return from_match_labels(selector_map or {}, requirements), selector_map, None
        return from_label_selector(value), None, None
    except SelectorError as err:
        return NOTHING, selector_map, str(err)


def _parse_controller(obj: Mapping[str, Any], kind: str) -> Controller:
    r = FieldReader(obj)
    namespace, name, uid, labels = _meta(r, obj, namespaced=True)
    meta = r.mapping(obj, "metadata", "metadata")
    spec = r.mapping(obj, "spec", "spec")
    status = r.mapping(obj, "status", "status")
    template = r.mapping(spec, "template", "spec.template")
    template_meta = r.mapping(template, "metadata", "spec.template.metadata")
    template_labels = intern_labels(r.string_map(template_meta, "labels", "spec.template.metadata.labels") or {})
    template_spec = r.mapping(template, "spec", "spec.template.spec")
    selector_value = (
        r.string_map(spec, "selector", "spec.selector") if kind == "ReplicationController" else spec.get("selector")
    )
    selector, selector_map, selector_error = controller_selector(kind, selector_value, template_labels)
    annotations = r.string_map(meta, "annotations", "metadata.annotations") or {}
    revision_text = annotations.get("deployment.kubernetes.io/revision", "0")
    strategy = r.mapping(spec, "strategy", "spec.strategy")
    rolling = r.mapping(strategy, "rollingUpdate", "spec.strategy.rollingUpdate")
    scaling = Scaling(
        max_surge=r.int_or_string(rolling, "maxSurge", "spec.strategy.rollingUpdate.maxSurge"),
        max_unavailable=r.int_or_string(rolling, "maxUnavailable", "spec.strategy.rollingUpdate.maxUnavailable"),
        recreate=r.string(strategy, "type", "spec.strategy.type") == "Recreate",
        available=r.integer(status, "availableReplicas", "status.availableReplicas", 0),
        status_replicas=r.integer(status, "replicas", "status.replicas", 0),
        desired=annotation_count(annotations.get("deployment.kubernetes.io/desired-replicas"), signed=True),
        max_replicas=annotation_count(annotations.get("deployment.kubernetes.io/max-replicas")),
        ordinal_start=r.integer(r.mapping(spec, "ordinals", "spec.ordinals"), "start", "spec.ordinals.start", 0),
    )
    return Controller(
        kind=kind,
        api_version=r.string(obj, "apiVersion", "apiVersion"),
        namespace=namespace,
        name=name,
        uid=uid,
        labels=labels,
        selector=selector,
        selector_map=selector_map,
        selector_error=selector_error,
        template_labels=template_labels,
        template=_intern_template(pod_template(r, template_spec, "spec.template.spec")),
        controller=_controller(r, meta),
        replicas=r.integer(spec, "replicas", "spec.replicas", 1),
        revision=revision_number(revision_text),
        update_revision=r.string(status, "updateRevision", "status.updateRevision"),
        creation=r.string(meta, "creationTimestamp", "metadata.creationTimestamp"),
        generation=r.integer(meta, "generation", "metadata.generation", 0, INT64_RANGE),
        needs=template_needs(r, template_spec, "spec.template.spec"),
        claim_templates=_claim_templates(r, spec) if kind == "StatefulSet" else (),
        scaling=NO_SCALING if scaling == NO_SCALING else scaling,
    )


def _parse_pdb(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    r = FieldReader(obj)
    namespace, name, uid, _ = _meta(r, obj, namespaced=True)
    spec = r.mapping(obj, "spec", "spec")
    raw_selector = spec.get("selector")
    if raw_selector is not None and not isinstance(raw_selector, Mapping):
        raise r.fail("spec.selector", f"expected a mapping, got {type_name(raw_selector)}")
    error: str | None = None
    try:
        selector = from_label_selector(raw_selector)
    except SelectorError as err:
        selector, error = NOTHING, str(err)
    return PodDisruptionBudget(
        namespace=namespace,
        name=name,
        selector=selector,
        min_available=r.int_or_string(spec, "minAvailable", "spec.minAvailable"),
        max_unavailable=r.int_or_string(spec, "maxUnavailable", "spec.maxUnavailable"),
        selector_error=error,
        uid=uid,
    )


def _claim_templates(r: FieldReader, spec: Mapping[str, Any]) -> tuple[str, ...]:
    """A StatefulSet's ``volumeClaimTemplates`` names (its pods' claims are ``<name>-<set>-<ordinal>``)."""
    return tuple(
        r.string(r.mapping(t, "metadata", f"spec.volumeClaimTemplates[{i}].metadata"), "name",
                 f"spec.volumeClaimTemplates[{i}].metadata.name")
        for i, t in enumerate(r.items(spec, "volumeClaimTemplates", "spec.volumeClaimTemplates"))
    )  # fmt: skip


def _parse_claim(obj: Mapping[str, Any]) -> PersistentVolumeClaim:
    r = FieldReader(obj)
    namespace, name, _, _ = _meta(r, obj, namespaced=True)
    meta = r.mapping(obj, "metadata", "metadata")
    spec = r.mapping(obj, "spec", "spec")
    annotations = r.string_map(meta, "annotations", "metadata.annotations") or {}
    return PersistentVolumeClaim(
        sys.intern(namespace),
        name,
        r.string(spec, "volumeName", "spec.volumeName"),
        BIND_COMPLETED in annotations,
        r.string(spec, "storageClassName", "spec.storageClassName"),
        READ_WRITE_ONCE_POD in r.strings(spec, "accessModes", "spec.accessModes"),
    )


def _parse_volume(obj: Mapping[str, Any]) -> PersistentVolume:
    r = FieldReader(obj)
    _, name, _, labels = _meta(r, obj, namespaced=False)
    spec = r.mapping(obj, "spec", "spec")
    affinity = r.mapping(spec, "nodeAffinity", "spec.nodeAffinity")
    required = affinity.get("required")
    terms = None
    if required is not None:
        terms = node_selector_terms(r, r.mapping(affinity, "required", "spec.nodeAffinity.required"),
                                    "spec.nodeAffinity.required")  # fmt: skip
    return PersistentVolume(name, labels, terms)


def _parse_namespace(obj: Mapping[str, Any]) -> Namespace:
    r = FieldReader(obj)
    _, name, _, labels = _meta(r, obj, namespaced=False)
    return Namespace(name, labels)


def parse_object(obj: Mapping[str, Any]) -> Record | None:
    """Parse one API object into its record; None for kinds spreadwatch does not use. Raises ObjectError."""
    if not isinstance(obj, Mapping):
        raise ObjectError("object", "", f"expected a mapping, got {type_name(obj)}")
    kind = obj.get("kind")
    if kind == "Pod":
        return parse_pod(obj)
    if kind == "Node":
        return _parse_node(obj)
    if kind == "Service":
        return _parse_service(obj)
    if kind in WORKLOAD_KINDS:
        return _parse_controller(obj, kind)
    if kind == "Namespace":
        return _parse_namespace(obj)
    if kind == "PersistentVolumeClaim":
        return _parse_claim(obj)
    if kind == "PersistentVolume":
        return _parse_volume(obj)
    if kind == "PodDisruptionBudget":
        return _parse_pdb(obj)
    if not isinstance(kind, str):
        raise ObjectError(object_ref(obj), "kind", "is required and must be a string")
    return None
