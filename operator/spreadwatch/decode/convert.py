"""Decoded objects (:mod:`~spreadwatch.decode.shapes`) into records: :class:`Converter`.

What repeats across the objects of one document or listing (label maps, controller references, pod
templates) is cached by its raw bytes: O(1) per repeated sub-object, O(kept fields) per object otherwise; a
workload's ``matchLabels`` are looked up by their bytes in the same label cache, and its validated
requirements are shared (:func:`~spreadwatch.selectors.from_match_labels`). What a cache misses is interned
(:mod:`spreadwatch.model.interning`: label maps, controller references, templates, taints), so records from
different converters — a listing's, and the watch's, one per thousand lines — share them too.
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
from spreadwatch.errors import SelectorError
from spreadwatch.model import (
    WORKLOAD_KINDS,
    Record,
    controller_selector,
    intern_frozen,
    intern_labels,
    revision_number,
)
from spreadwatch.model import records as rec
from spreadwatch.selectors import NOTHING, Requirement, Selector, from_label_selector, from_match_labels

__all__ = ["Converter", "Fallback"]


class Fallback(Exception):
    """Raised by a converter when only the reference parser can decide (it then also words the error)."""


_EMPTY_TEMPLATE: Final = rec.PodTemplate()
_NO_LABELS: Final = intern_labels({})
_POD_SPEC: Final = shapes.NO_POD_SPEC
_NODE_META: Final = shapes.NodeMeta()
_NODE_SPEC: Final = shapes.NodeSpec()
_SERVICE_META: Final = shapes.ServiceMeta()
_SERVICE_SPEC: Final = shapes.ServiceSpec()
_NAMESPACE_META: Final = shapes.NamespaceMeta()
_REVISION: Final = "deployment.kubernetes.io/revision"


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
_tolerations: Final = _typed(list[shapes.Toleration])
_affinity: Final = _typed(shapes.Affinity)
_spread_constraints: Final = _typed(list[shapes.TopologySpreadConstraint])
_any_decoder: Final = msgspec.json.Decoder()
_labels_decoder: Final = msgspec.json.Decoder(dict[str, str] | None)


def _requirements(reqs: list[shapes.NodeSelectorRequirement] | None) -> tuple[rec.NodeSelectorRequirement, ...]:
    return tuple(
        rec.NodeSelectorRequirement(r.key or "", r.operator or "", tuple(r.values) if r.values else ())
        for r in reqs or ()
    )


def _constraint(c: shapes.TopologySpreadConstraint) -> rec.SpreadConstraint:
    """The record of one spread constraint; an invalid selector is kept as its error (as the reference parser
    does), a labelSelector that is not a mapping falls back to the reference parser's error. O(selector)."""
    raw_selector = _any_decoder.decode(c.labelSelector) if c.labelSelector else None
    if raw_selector is not None and not isinstance(raw_selector, Mapping):
        raise Fallback
    error: str | None = None
    try:
        selector = from_label_selector(raw_selector)
    except SelectorError as err:
        selector, error = NOTHING, str(err)
    return rec.SpreadConstraint(
        max_skew=0 if c.maxSkew is None else c.maxSkew,
        topology_key=c.topologyKey or "",
        when_unsatisfiable=c.whenUnsatisfiable or "",
        selector=selector,
        selector_error=error,
        match_label_keys=tuple(c.matchLabelKeys or ()),
        min_domains=c.minDomains,
        node_affinity_policy=c.nodeAffinityPolicy or "",
        node_taints_policy=c.nodeTaintsPolicy or "",
    )


def _new_template(spec: shapes.PodSpec) -> rec.PodTemplate:
    """The template of a pod spec's scheduling fields, decoded typed. O(fields)."""
    tolerations = tuple(
        rec.Toleration(t.key or "", t.operator or "", t.value or "", t.effect or "")
        for t in _tolerations(spec.tolerations) or ()
    )
    node_selector = tuple(sorted((_string_map(spec.nodeSelector) or {}).items()))
    terms: tuple[rec.NodeSelectorTerm, ...] | None = None
    affinity = _affinity(spec.affinity)
    if affinity is not None and affinity.nodeAffinity is not None:
        required = affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
        if required is not None:
            terms = tuple(
                rec.NodeSelectorTerm(_requirements(t.matchExpressions), _requirements(t.matchFields))
                for t in required.nodeSelectorTerms or ()
            )
    constraints = tuple(_constraint(c) for c in _spread_constraints(spec.topologySpreadConstraints) or ())
    template = rec.PodTemplate(tolerations, node_selector, terms, bool(constraints), constraints)
    return _EMPTY_TEMPLATE if template == _EMPTY_TEMPLATE else template


class Converter:
    """Turns decoded objects into records; caches what repeats by its raw bytes, for one document/listing.

    Memory: the raw bytes of the distinct label maps, controller references and templates of the document
    (the values are interned, shared with the records anyway); dropped with the converter.
    """

    __slots__ = ("_labels", "_owners", "_requirements", "_templates", "_tolerations")

    def __init__(self) -> None:
        self._labels: dict[bytes, Mapping[str, str]] = {}
        self._requirements: dict[tuple[str, str], Requirement] = {}  # workloads' matchLabels terms
        self._owners: dict[bytes, tuple[rec.OwnerRef | None]] = {}
        self._templates: dict[tuple[bytes, bytes, bytes, bytes], rec.PodTemplate] = {}
        self._tolerations: dict[bytes, rec.PodTemplate] = {}  # templates of pods with tolerations only

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
        """``metav1.GetControllerOf`` of the ownerReferences, interned; O(1) for bytes seen before."""
        if not raw:
            return None
        key = bytes(raw)
        cached = self._owners.get(key)  # (owner,): None is a valid cached answer
        if cached is not None:
            return cached[0]
        owner = None
        for ref in _owner_references(raw) or ():
            if ref.controller:
                owner = intern_frozen(rec.OwnerRef(ref.apiVersion or "", ref.kind or "", ref.name or "", ref.uid or ""))
                break
        self._owners[key] = (owner,)
        return owner

    def template(self, spec: shapes.PodSpec) -> rec.PodTemplate:
        """The pod's scheduling fields; equal templates are one object (interned). O(1) for bytes seen
        before."""
        tolerations = spec.tolerations
        if not (spec.nodeSelector or spec.affinity or spec.topologySpreadConstraints):
            if not tolerations:
                return _EMPTY_TEMPLATE  # no scheduling fields at all
            key = bytes(tolerations)  # the usual pod: the default tolerations only
            template = self._tolerations.get(key)
            if template is None:
                template = self._tolerations[key] = intern_frozen(_new_template(spec))
            return template
        key4 = (
            bytes(tolerations),
            bytes(spec.nodeSelector),
            bytes(spec.affinity),
            bytes(spec.topologySpreadConstraints),
        )
        template = self._templates.get(key4)
        if template is None:
            template = self._templates[key4] = intern_frozen(_new_template(spec))
        return template

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
        label_cache, decode_labels = self._labels, _labels_decoder.decode
        controller_of, template_of = self.controller, self.template
        out: list[Record | None] = []
        append = out.append
        redo: list[int] = []
        last_labels: Any = None
        last_owners: Any = None
        last_spec = _POD_SPEC  # (before the first pod: no scheduling fields, the empty template)
        labels: Mapping[str, str] = _NO_LABELS
        owner: rec.OwnerRef | None = None
        template = _EMPTY_TEMPLATE
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
                    obj.status.phase,
                    meta.deletionTimestamp is not None,
                    owner,
                    template,
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
        taints = intern_frozen(tuple(rec.Taint(t.key or "", t.value or "", t.effect or "") for t in spec.taints or ()))
        labels = self.labels(meta.labels)
        return rec.Node(sys.intern(meta.name), labels, taints, bool(spec.unschedulable), meta.uid or "")

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
        )


_WORKLOADS: Final = frozenset(WORKLOAD_KINDS)
