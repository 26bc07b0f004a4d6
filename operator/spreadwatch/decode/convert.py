"""Decoded objects (:mod:`~spreadwatch.decode.shapes`) into records: :class:`Converter`.

What repeats across the objects of one document or listing (label maps, controller references, pod
templates) is cached by its raw bytes: O(1) per repeated sub-object, O(kept fields) per object otherwise; a
workload's ``matchLabels`` are looked up by their bytes in the same label cache, and its validated
requirements are shared (:func:`~spreadwatch.selectors.from_match_labels`). What a cache misses is shared
process-wide (label maps: :mod:`spreadwatch.model.interning`; controller references, templates, taints, needs:
:class:`~spreadwatch.model.sharing.Shared` tables), so records from different converters — a listing's, and the
watch's, one per thousand lines — share them too.
Objects are converted in bulk (:meth:`Converter.convert`, one loop over a page or a chunk of a List): pods,
nearly all of a cluster's objects, inline, remembering the previous pod's raw sub-objects (the pods of one
ReplicaSet come one after the other in a listing: a repeat costs one byte comparison, no cache look-up).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from spreadwatch.decode import shapes
from spreadwatch.errors import ObjectError, SelectorError
from spreadwatch.model import (
    BIND_COMPLETED,
    DELETION_COST,
    NO_SCALING,
    READ_WRITE_ONCE_POD,
    SHARED_IMAGES,
    SHARED_NEEDS,
    SHARED_OWNERS,
    SHARED_RESOURCES,
    SHARED_TAINTS,
    SHARED_TEMPLATES,
    WORKLOAD_KINDS,
    Record,
    annotated_cost,
    annotation_count,
    controller_selector,
    intern_labels,
    node_selector_terms,
    pod_template,
    restart_key,
    revision_number,
    template_needs,
    uid_value,
)
from spreadwatch.model import records as rec
from spreadwatch.model.reader import FieldReader
from spreadwatch.model.spec_fields import node_allocatable, normalized_image, pod_needs
from spreadwatch.selectors import NOTHING, Requirement, Selector, from_label_selector, from_match_labels
from spreadwatch.timestamps import unix_seconds

__all__ = ["Converter", "Fallback"]


class Fallback(Exception):
    """Raised by a converter when only the reference parser can decide (it then also words the error)."""


_EMPTY_TEMPLATE: Final = rec.PodTemplate()
_NO_LABELS: Final = intern_labels({})
_POD_SPEC: Final = shapes.NO_POD_SPEC
_NODE_META: Final = shapes.NodeMeta()
_NODE_SPEC: Final = shapes.NodeSpec()
_NODE_STATUS: Final = shapes.NodeStatus()
_CLAIM_META: Final = shapes.ClaimMeta()
_CLAIM_SPEC: Final = shapes.ClaimSpec()
_VOLUME_SPEC: Final = shapes.VolumeSpec()
_SERVICE_META: Final = shapes.ServiceMeta()
_SERVICE_SPEC: Final = shapes.ServiceSpec()
_NAMESPACE_META: Final = shapes.NamespaceMeta()
_PDB_SPEC: Final = shapes.PodDisruptionBudgetSpec()
_REVISION: Final = "deployment.kubernetes.io/revision"
_DESIRED: Final = "deployment.kubernetes.io/desired-replicas"
_MAX_REPLICAS: Final = "deployment.kubernetes.io/max-replicas"
_COST_KEY: Final = DELETION_COST.encode()
_NO_STRATEGY: Final = shapes.Strategy()
_NO_ROLLING: Final = shapes.RollingUpdate()
_NO_ORDINALS: Final = shapes.Ordinals()


def _typed(type_: Any) -> Callable[[msgspec.Raw], Any]:
    """A decoder of a Raw into ``type_ | None`` (absent: None) that raises Fallback on a wrong type."""
    decode = msgspec.json.Decoder(type_ | None).decode

    def run(raw: msgspec.Raw) -> Any:
        if not raw:
            return None
        try:
            return decode(raw)
        except msgspec.ValidationError:
            raise Fallback from None

    return run


_string_map: Final = _typed(dict[str, str])
_owner_references: Final = _typed(list[shapes.OwnerReference])
_any_decoder: Final = msgspec.json.Decoder()
_labels_decoder: Final = msgspec.json.Decoder(dict[str, str] | None)
_NO_READER: Final = FieldReader({})  # (the reference readers' errors become Fallback here: never shown)


def _value(raw: msgspec.Raw) -> Any:
    """A raw sub-object as Python values (absent: None), for the reference readers. O(bytes)."""
    return _any_decoder.decode(raw) if raw else None


def _present(out: dict[str, Any], key: str, raw: msgspec.Raw) -> None:
    """``out[key]`` = the raw's value when the field was present (absent fields stay absent)."""
    if raw:
        out[key] = _any_decoder.decode(raw)


def _reference(read: Callable[[], Any]) -> Any:
    """``read()``, a reference reader over decoded values: its ObjectError becomes Fallback (the reference
    parser then reads the whole object and words the error)."""
    try:
        return read()
    except ObjectError:
        raise Fallback from None


def _new_template(spec: shapes.PodSpec) -> rec.PodTemplate:
    """The template of a pod spec's scheduling fields, by the reference reader. O(fields)."""
    fields: dict[str, Any] = {}
    _present(fields, "tolerations", spec.tolerations)
    _present(fields, "nodeSelector", spec.nodeSelector)
    _present(fields, "affinity", spec.affinity)
    _present(fields, "topologySpreadConstraints", spec.topologySpreadConstraints)
    template = _reference(lambda: pod_template(_NO_READER, fields, "spec"))
    return _EMPTY_TEMPLATE if template == _EMPTY_TEMPLATE else template


def _container(c: shapes.ContainerFields) -> dict[str, Any]:
    out: dict[str, Any] = {"image": c.image, "restartPolicy": c.restartPolicy}
    _present(out, "resources", c.resources)
    _present(out, "ports", c.ports)
    return out


def _volume(v: shapes.VolumeFields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _present(out, "persistentVolumeClaim", v.persistentVolumeClaim)
    _present(out, "image", v.image)
    return out


def _needs_fields(spec: shapes.PodSpec) -> dict[str, Any]:
    """The fields of a pod spec that :func:`~spreadwatch.model.spec_fields.pod_needs` reads, as values."""
    fields: dict[str, Any] = {}
    if spec.containers:
        fields["containers"] = [_container(c) for c in spec.containers]
    if spec.initContainers:
        fields["initContainers"] = [_container(c) for c in spec.initContainers]
    if spec.volumes:
        fields["volumes"] = [_volume(v) for v in spec.volumes]
    _present(fields, "overhead", spec.overhead)
    _present(fields, "resources", spec.resources)
    _present(fields, "resourceClaims", spec.resourceClaims)
    return fields


def _container_key(c: shapes.ContainerFields) -> tuple[object, ...]:
    return (c.image, bytes(c.resources), bytes(c.ports), c.restartPolicy)


def _needs_key(spec: shapes.PodSpec) -> tuple[object, ...]:
    """What a pod spec's needs depend on, hashable (raw bytes): the cache key of :meth:`Converter.needs`."""
    return (
        tuple(map(_container_key, spec.containers)),
        tuple(map(_container_key, spec.initContainers)),
        tuple((bytes(v.persistentVolumeClaim), bytes(v.image)) for v in spec.volumes),
        bytes(spec.overhead),
        bytes(spec.resources),
        bytes(spec.resourceClaims),
    )


def _shape_key(spec: shapes.PodSpec) -> tuple[object, ...]:
    """What a pod spec's needs depend on but its images (a spec without volumes): the key of the needs computed
    once per request shape (most workloads share a few shapes, each with its own image)."""
    return (
        tuple([(bytes(c.resources), bytes(c.ports), c.restartPolicy) for c in spec.containers]),
        tuple([(bytes(c.resources), bytes(c.ports), c.restartPolicy) for c in spec.initContainers]),
        bytes(spec.overhead),
        bytes(spec.resources),
        bytes(spec.resourceClaims),
    )


def _images(spec: shapes.PodSpec) -> tuple[str, ...]:
    """The images of a spec without volumes as ``pod_needs`` lists them (init containers first). O(containers)."""
    return tuple([normalized_image(c.image) for c in (*spec.initContainers, *spec.containers)])


def _same_needs(a: shapes.PodSpec, b: shapes.PodSpec) -> bool:
    """Whether two pod specs have the same needs fields (equal Structs compare in C). O(containers)."""
    return (
        a.containers == b.containers
        and a.initContainers == b.initContainers
        and a.volumes == b.volumes
        and a.overhead == b.overhead
        and a.resources == b.resources
        and a.resourceClaims == b.resourceClaims
    )


class Converter:
    """Turns decoded objects into records; caches what repeats by its raw bytes, for one document/listing.

    Memory: the raw bytes of the distinct label maps, controller references and templates of the document
    (the values are shared process-wide, held by the records anyway); dropped with the converter.
    """

    __slots__ = (
        "_allocatable",
        "_labels",
        "_needs",
        "_owners",
        "_requirements",
        "_scalings",
        "_shapes",
        "_templates",
        "_times",
        "_tolerations",
    )

    def __init__(self) -> None:
        self._times: dict[str, int] = {}  # RFC 3339 text -> Unix seconds (pods created in one second: one int)
        self._scalings: dict[rec.Scaling, rec.Scaling] = {}  # equal Scaling records: one object
        self._labels: dict[bytes, Mapping[str, str]] = {}
        self._requirements: dict[tuple[str, str], Requirement] = {}  # workloads' matchLabels terms
        self._owners: dict[bytes, tuple[rec.OwnerRef | None]] = {}
        self._templates: dict[tuple[bytes, bytes, bytes, bytes], rec.PodTemplate] = {}
        self._tolerations: dict[bytes, rec.PodTemplate] = {}  # templates of pods with tolerations only
        self._needs: dict[tuple[object, ...], rec.PodNeeds] = {}
        self._shapes: dict[tuple[object, ...], rec.PodNeeds] = {}
        self._allocatable: dict[bytes, rec.Resources] = {}

    def labels(self, raw: msgspec.Raw) -> Mapping[str, str]:
        """The interned label map; O(1) for bytes seen before, else O(labels)."""
        if not raw:
            return _NO_LABELS
        key = bytes(raw)
        labels = self._labels.get(key)
        if labels is None:
            labels = self._labels[key] = intern_labels(_string_map(raw) or {})
        return labels

    def controller(self, raw: msgspec.Raw) -> rec.OwnerRef | None:
        """``metav1.GetControllerOf`` of the ownerReferences, shared; O(1) for bytes seen before."""
        if not raw:
            return None
        key = bytes(raw)
        cached = self._owners.get(key)  # (owner,): None is a valid cached answer
        if cached is not None:
            return cached[0]
        owner = None
        for ref in _owner_references(raw) or ():
            if ref.controller:
                found = rec.OwnerRef(ref.apiVersion or "", ref.kind or "", ref.name or "", ref.uid or "")
                owner = SHARED_OWNERS.get(found)
                break
        self._owners[key] = (owner,)
        return owner

    def time(self, text: str) -> int:
        """:func:`~spreadwatch.timestamps.unix_seconds`, one int per distinct text. Raises Fallback when it is
        not RFC 3339 (the reference parser names the field)."""
        found = self._times.get(text)
        if found is None:
            try:
                found = self._times[text] = unix_seconds(text)
            except ValueError:
                raise Fallback from None
        return found

    def ranking(
        self, meta: shapes.PodMeta, spec: shapes.PodSpec, status: shapes.PodStatus
    ) -> tuple[int, int | None, int, int]:
        """A pod's creation time, Ready delay (None: not Ready), restart key and pod-deletion-cost, as
        :class:`~spreadwatch.model.Pod` keeps them. O(conditions + container statuses)."""
        times = self._times
        text = meta.creationTimestamp
        created = times.get(text)
        if created is None:
            created = self.time(text)
        ready_after: int | None = None
        for cond in status.conditions:
            if cond.type == "Ready":
                if cond.status == "True":
                    text = cond.lastTransitionTime
                    at = times.get(text)
                    ready_after = (self.time(text) if at is None else at) - created
                break
        restarts = 0
        statuses = status.containerStatuses
        if statuses or status.initContainerStatuses:
            regular = sidecar = 0
            for c in statuses:
                regular = max(regular, c.restartCount)
            if status.initContainerStatuses:
                always = {c.name for c in spec.initContainers if c.restartPolicy == "Always"}
                sidecar = max((c.restartCount for c in status.initContainerStatuses if c.name in always), default=0)
            if regular or sidecar:
                restarts = restart_key(regular, sidecar)
        raw = meta.annotations
        cost = annotated_cost(_any_decoder.decode(raw)) if raw and _COST_KEY in bytes(raw) else 0
        return created, ready_after, restarts, cost

    def scaling(
        self, obj: shapes.WorkloadFields | shapes.ControllerFields, annotations: Mapping[str, str] | None
    ) -> rec.Scaling:
        """What the controllers scale and roll out by (:class:`~spreadwatch.model.Scaling`); equal ones shared.
        O(1)."""
        spec, status = obj.spec, obj.status
        strategy = getattr(spec, "strategy", None) or _NO_STRATEGY
        rolling = strategy.rollingUpdate or _NO_ROLLING
        ordinals = getattr(spec, "ordinals", None) or _NO_ORDINALS
        scaling = rec.Scaling(
            rolling.maxSurge,
            rolling.maxUnavailable,
            strategy.type == "Recreate",
            status.availableReplicas,
            status.replicas,
            annotation_count(annotations.get(_DESIRED), signed=True) if annotations else -1,
            annotation_count(annotations.get(_MAX_REPLICAS)) if annotations else -1,
            ordinals.start,
        )
        if scaling == NO_SCALING:
            return NO_SCALING
        return self._scalings.setdefault(scaling, scaling)

    def template(self, spec: shapes.PodSpec) -> rec.PodTemplate:
        """The pod's scheduling fields; equal templates are one object (shared). O(1) for bytes seen before."""
        tolerations = spec.tolerations
        if not (spec.nodeSelector or spec.affinity or spec.topologySpreadConstraints):
            if not tolerations:
                return _EMPTY_TEMPLATE  # no scheduling fields at all
            key = bytes(tolerations)  # the usual pod: the default tolerations only
            template = self._tolerations.get(key)
            if template is None:
                template = self._tolerations[key] = SHARED_TEMPLATES.get(_new_template(spec))
            return template
        key4 = (
            bytes(tolerations),
            bytes(spec.nodeSelector),
            bytes(spec.affinity),
            bytes(spec.topologySpreadConstraints),
        )
        template = self._templates.get(key4)
        if template is None:
            template = self._templates[key4] = SHARED_TEMPLATES.get(_new_template(spec))
        return template

    def needs(self, spec: shapes.PodSpec) -> rec.PodNeeds:
        """A pod's needs (requests, ports, images, claims), shared; O(1) for needs fields seen before (by
        their bytes), else O(containers). Raises Fallback (a field only the reference parser can word)."""
        if not (spec.containers or spec.initContainers or spec.volumes or spec.overhead or spec.resources
                or spec.resourceClaims):  # fmt: skip
            return rec.NO_NEEDS
        key = _needs_key(spec)
        needs = self._needs.get(key)
        if needs is None:
            found = self._shaped(spec, template=False)
            needs = self._needs[key] = rec.NO_NEEDS if found == rec.NO_NEEDS else SHARED_NEEDS.get(found)
        return needs

    def template_needs(self, spec: shapes.PodSpec) -> rec.PodNeeds:
        """A workload template's needs (its ``error`` when they cannot be read: that workload's report is
        Error), shared. O(1) for a request shape seen before, else O(containers)."""
        return SHARED_NEEDS.get(self._shaped(spec, template=True))

    def _shaped(self, spec: shapes.PodSpec, template: bool) -> rec.PodNeeds:
        """``pod_needs`` of a spec, its requests computed once per request shape (:func:`_shape_key`) and the
        images set per spec (a spec with volumes: computed whole). Raises Fallback (a pod's unreadable field)."""
        path = "spec.template.spec" if template else "spec"
        if spec.volumes:
            fields = _needs_fields(spec)
            if template:
                return template_needs(_NO_READER, fields, path)
            found: rec.PodNeeds = _reference(lambda: pod_needs(_NO_READER, fields, path))
            return found
        shape = (template, _shape_key(spec))
        base = self._shapes.get(shape)
        if base is None:
            fields = _needs_fields(spec)
            if template:
                base = template_needs(_NO_READER, fields, path)
            else:
                base = _reference(lambda: pod_needs(_NO_READER, fields, path))
            self._shapes[shape] = base
        images = _images(spec)
        return base if base.images == images or base.error else msgspec.structs.replace(base, images=images)

    def convert(
        self, items: Sequence[Any], kinds: Mapping[type, str], api_version: str = ""
    ) -> tuple[list[Record | None], list[int]]:
        """The records of ``items`` (decoded objects: the :mod:`~spreadwatch.decode.shapes` of their kind,
        ``kinds`` giving the kind of each shape) and the positions of those only the reference parser can
        decide (their entries are None). ``api_version``: that of workloads without one.

        One loop; for pods (nearly all objects) inline, and a raw sub-object equal to the previous pod's
        (the pods of one ReplicaSet come one after the other) costs one byte comparison, no look-up.
        O(kept fields) per item.
        """
        pod_shape: Any = next((shape for shape, kind in kinds.items() if kind == "Pod"), None)
        pod, other, intern = rec.Pod, self._other, sys.intern  # (namespaces and node names: one str each)
        ranking = self.ranking
        label_cache, decode_labels = self._labels, _labels_decoder.decode
        controller_of, template_of, needs_of = self.controller, self.template, self.needs
        out: list[Record | None] = []
        append = out.append
        redo: list[int] = []
        last_labels: Any = None
        last_owners: Any = None
        last_spec = last_needs = _POD_SPEC  # (before the first pod: no scheduling fields, the empty template)
        labels: Mapping[str, str] = _NO_LABELS
        owner: rec.OwnerRef | None = None
        template = _EMPTY_TEMPLATE
        needs = rec.NO_NEEDS
        for obj in items:
            try:
                if type(obj) is not pod_shape:
                    append(other(obj, kinds[type(obj)], api_version))
                    continue
                meta = obj.metadata
                spec = obj.spec
                name = meta.name
                if not name:
                    raise Fallback
                raw = meta.labels
                if raw != last_labels:
                    if not raw:
                        labels = _NO_LABELS
                    else:
                        key = bytes(raw)
                        found = label_cache.get(key)
                        if found is None:
                            try:
                                found = label_cache[key] = intern_labels(decode_labels(raw) or _NO_LABELS)
                            except msgspec.ValidationError:
                                raise Fallback from None
                        labels = found
                    last_labels = raw
                raw = meta.ownerReferences
                if raw != last_owners:
                    owner = controller_of(raw)
                    last_owners = raw
                if (  # (absent fields are the one ABSENT object: ``is`` settles them without a comparison)
                    spec.tolerations != last_spec.tolerations
                    or (spec.nodeSelector is not last_spec.nodeSelector and spec.nodeSelector != last_spec.nodeSelector)
                    or (spec.affinity is not last_spec.affinity and spec.affinity != last_spec.affinity)
                    or (
                        spec.topologySpreadConstraints is not last_spec.topologySpreadConstraints
                        and spec.topologySpreadConstraints != last_spec.topologySpreadConstraints
                    )
                ):
                    template = template_of(spec)
                    last_spec = spec
                if spec is not last_needs and not _same_needs(spec, last_needs):
                    needs = needs_of(spec)
                    last_needs = spec
                status = obj.status
                created, ready_after, restarts, cost = ranking(meta, spec, status)
            except Fallback:
                redo.append(len(out))
                append(None)
                continue
            append(
                pod(
                    intern(meta.namespace or "default"),
                    name,
                    labels,
                    intern(spec.nodeName),
                    status.phase,
                    meta.deletionTimestamp is not None,
                    owner,
                    template,
                    needs,
                    status.nominatedNodeName,
                    uid_value(meta.uid),
                    created,
                    ready_after,
                    restarts,
                    cost,
                )
            )
        return out, redo

    def _other(self, obj: Any, kind: str, api_version: str) -> Record | None:
        """The record of a decoded object of a kind other than Pod; None for a kind not read. Raises
        Fallback."""
        if kind in _WORKLOADS:
            return self._workload(obj, kind, api_version)
        if kind == "Node":
            return self._node(obj)
        if kind == "Service":
            return self._service(obj)
        if kind == "Namespace":
            return self._namespace(obj)
        if kind == "PersistentVolumeClaim":
            return self._claim(obj)
        if kind == "PersistentVolume":
            return self._volume(obj)
        if kind == "PodDisruptionBudget":
            return self._pdb(obj)
        return None

    def _selector(
        self, raw: shapes.LabelSelector | None, template_labels: Mapping[str, str]
    ) -> tuple[Selector, str | None]:
        """``controller_selector`` of a ReplicaSet's, StatefulSet's or Deployment's ``spec.selector`` (typed
        in the decoder's pass). One of matchLabels only (nearly every one) has its map looked up by its bytes
        (a Deployment's are its labels') and its requirements cached; anything else is read by
        ``controller_selector``. O(labels)."""
        if raw is None:
            return NOTHING, None
        match = raw.matchLabels
        if not raw.matchExpressions:
            try:
                labels = (self._labels.get(bytes(match)) or _string_map(match)) if match else None
                return from_match_labels(labels or _NO_LABELS, self._requirements), None
            except (Fallback, SelectorError):
                pass  # (a wrongly typed or invalid map: worded as ever below)
        value: dict[str, Any] = {}
        if match:
            value["matchLabels"] = _any_decoder.decode(match)
        if raw.matchExpressions:
            value["matchExpressions"] = _any_decoder.decode(raw.matchExpressions)
        selector, _, error = controller_selector("ReplicaSet", value, template_labels)
        return selector, error

    def _node(self, obj: shapes.NodeFields) -> rec.Node:
        meta = obj.metadata or _NODE_META
        spec = obj.spec or _NODE_SPEC
        if not meta.name:
            raise Fallback
        taints = SHARED_TAINTS.get(
            tuple([rec.Taint(t.key or "", t.value or "", t.effect or "") for t in spec.taints or ()])
        )
        labels = self.labels(meta.labels)
        status = obj.status or _NODE_STATUS
        allocatable = rec.NO_RESOURCES
        if status.allocatable:
            key = bytes(status.allocatable)
            found = self._allocatable.get(key)
            if found is None:
                fields = {"allocatable": _any_decoder.decode(status.allocatable)}
                found = self._allocatable[key] = SHARED_RESOURCES.get(
                    _reference(lambda: node_allocatable(_NO_READER, fields))
                )
            allocatable = found
        images = tuple(
            SHARED_IMAGES.get(rec.Image(tuple(i.names or ()), i.sizeBytes or 0)) for i in status.images or ()
        )
        info = status.nodeInfo
        kubelet = sys.intern(info.kubeletVersion) if info is not None and info.kubeletVersion else ""
        name, unschedulable = sys.intern(meta.name), bool(spec.unschedulable)
        return rec.Node(name, labels, taints, unschedulable, meta.uid or "", allocatable, images, kubelet)

    def _claim(self, obj: shapes.PersistentVolumeClaimFields) -> rec.PersistentVolumeClaim:
        meta = obj.metadata or _CLAIM_META
        spec = obj.spec or _CLAIM_SPEC
        if not meta.name:
            raise Fallback
        return rec.PersistentVolumeClaim(
            sys.intern(meta.namespace or "default"),
            meta.name,
            spec.volumeName or "",
            BIND_COMPLETED in (meta.annotations or ()),
            spec.storageClassName or "",
            READ_WRITE_ONCE_POD in (spec.accessModes or ()),
        )

    def _volume(self, obj: shapes.PersistentVolumeFields) -> rec.PersistentVolume:
        meta = obj.metadata or _NODE_META
        spec = obj.spec or _VOLUME_SPEC
        if not meta.name:
            raise Fallback
        terms = None
        if spec.nodeAffinity:
            affinity = _any_decoder.decode(spec.nodeAffinity)
            if affinity is not None:
                if not isinstance(affinity, Mapping):
                    raise Fallback
                required = affinity.get("required")
                if required is not None:
                    if not isinstance(required, Mapping):
                        raise Fallback
                    path = "spec.nodeAffinity.required"
                    terms = _reference(lambda: node_selector_terms(_NO_READER, required, path))
        return rec.PersistentVolume(meta.name, self.labels(meta.labels), terms)

    def _service(self, obj: shapes.ServiceFields) -> rec.Service:
        meta = obj.metadata or _SERVICE_META
        if not meta.name:
            raise Fallback
        selector = self.labels((obj.spec or _SERVICE_SPEC).selector)  # often a workload's labels: cached
        return rec.Service(meta.namespace or "default", meta.name, selector or None, meta.uid or "")

    def _namespace(self, obj: shapes.NamespaceFields) -> rec.Namespace:
        meta = obj.metadata or _NAMESPACE_META
        if not meta.name:
            raise Fallback
        return rec.Namespace(meta.name, self.labels(meta.labels))

    def _pdb(self, obj: shapes.PodDisruptionBudgetFields) -> rec.PodDisruptionBudget:
        meta = obj.metadata or _SERVICE_META
        spec = obj.spec or _PDB_SPEC
        if not meta.name:
            raise Fallback
        raw = _any_decoder.decode(spec.selector) if spec.selector else None
        if raw is not None and not isinstance(raw, Mapping):
            raise Fallback
        error: str | None = None
        try:
            selector = from_label_selector(raw)
        except SelectorError as err:
            selector, error = NOTHING, str(err)
        return rec.PodDisruptionBudget(
            meta.namespace or "default",
            meta.name,
            selector,
            spec.minAvailable,
            spec.maxUnavailable,
            error,
            meta.uid or "",
        )

    def _workload(
        self, obj: shapes.WorkloadFields | shapes.ControllerFields, kind: str, api_version: str
    ) -> rec.Controller:
        meta = obj.metadata
        spec = obj.spec
        name = meta.name
        if not name:
            raise Fallback
        template = spec.template
        template_labels = self.labels(template.metadata.labels)
        selector_map: Mapping[str, str] | None = None
        if isinstance(spec, shapes.ControllerSpec):  # (its map, interned: controller_selector keeps it)
            selector, selector_map, selector_error = controller_selector(
                kind, self.labels(spec.selector), template_labels, self._requirements
            )
        else:
            selector, selector_error = self._selector(spec.selector, template_labels)
        annotations = meta.annotations
        revision_text = annotations.get(_REVISION, "0") if annotations else "0"
        pod_spec = template.spec
        needs = rec.NO_NEEDS
        if pod_spec is not _POD_SPEC:
            needs = self.template_needs(pod_spec)
        claim_templates: tuple[str, ...] = ()
        if kind == "StatefulSet" and isinstance(spec, shapes.WorkloadSpec):
            claim_templates = tuple(t.metadata.name for t in spec.volumeClaimTemplates)
        return rec.Controller(
            kind,
            api_version if obj.apiVersion is msgspec.UNSET else (obj.apiVersion or ""),
            meta.namespace or "default",
            name,
            meta.uid,
            self.labels(meta.labels),
            selector,
            selector_map,
            selector_error,
            template_labels,
            _EMPTY_TEMPLATE if pod_spec is _POD_SPEC else self.template(pod_spec),
            self.controller(meta.ownerReferences),
            1 if spec.replicas is None else spec.replicas,
            revision_number(revision_text),
            obj.status.updateRevision,
            meta.creationTimestamp,
            meta.generation,
            needs,
            claim_templates,
            self.scaling(obj, annotations),
        )


_WORKLOADS: Final = frozenset(WORKLOAD_KINDS)
