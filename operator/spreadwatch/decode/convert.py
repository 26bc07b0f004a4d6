"""Decoded objects (:mod:`~spreadwatch.decode.shapes`) into records: :class:`Converter`.

What repeats across the objects of one document or listing (label maps, controller references, pod
templates) is cached by its raw bytes: O(1) per repeated sub-object, O(kept fields) per object otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from spreadwatch.decode import shapes
from spreadwatch.errors import SelectorError
from spreadwatch.model import WORKLOAD_KINDS, Record, controller_selector, intern_labels
from spreadwatch.model import records as rec
from spreadwatch.selectors import NOTHING, from_label_selector

__all__ = ["Converter", "Fallback"]


class Fallback(Exception):
    """Raised by a converter when only the reference parser can decide (it then also words the error)."""


_EMPTY_META: Final = shapes.ObjectMeta()
_EMPTY_SPEC: Final = shapes.Spec()
_EMPTY_STATUS: Final = shapes.Status()
_EMPTY_TEMPLATE: Final = rec.PodTemplate()
_NO_LABELS: Final = intern_labels({})


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


def _name(meta: shapes.ObjectMeta) -> str:
    if not meta.name:
        raise Fallback
    return meta.name


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


class Converter:
    """Turns decoded objects into records; caches what repeats by its raw bytes, for one document/listing.

    Memory: the distinct label maps, controller references and templates of the document (shared with the
    records anyway); dropped with the converter.
    """

    __slots__ = ("_labels", "_owners", "_templates")

    def __init__(self) -> None:
        self._labels: dict[bytes, Mapping[str, str]] = {}
        self._owners: dict[bytes, tuple[rec.OwnerRef | None]] = {}
        self._templates: dict[tuple[bytes, bytes, bytes, bytes], rec.PodTemplate] = {}

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
        """``metav1.GetControllerOf`` of the ownerReferences; O(1) for bytes seen before."""
        if not raw:
            return None
        key = bytes(raw)
        cached = self._owners.get(key)  # (owner,): None is a valid cached answer
        if cached is not None:
            return cached[0]
        owner = None
        for ref in _owner_references(raw) or ():
            if ref.controller:
                owner = rec.OwnerRef(ref.apiVersion or "", ref.kind or "", ref.name or "", ref.uid or "")
                break
        self._owners[key] = (owner,)
        return owner

    def template(self, spec: shapes.Spec) -> rec.PodTemplate:
        """The pod's scheduling fields; equal templates are one object. O(1) for bytes seen before."""
        if not (spec.tolerations or spec.nodeSelector or spec.affinity or spec.topologySpreadConstraints):
            return _EMPTY_TEMPLATE  # the usual pod: no scheduling fields at all
        key = (
            bytes(spec.tolerations),
            bytes(spec.nodeSelector),
            bytes(spec.affinity),
            bytes(spec.topologySpreadConstraints),
        )
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = self._new_template(spec)
        return template

    @staticmethod
    def _new_template(spec: shapes.Spec) -> rec.PodTemplate:
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

    def pod(self, obj: shapes.Object) -> rec.Pod:
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        return rec.Pod(
            meta.namespace or "default",
            _name(meta),
            self.labels(meta.labels),
            spec.nodeName or "",
            (obj.status or _EMPTY_STATUS).phase or "",
            meta.deletionTimestamp is not None,
            self.controller(meta.ownerReferences),
            self.template(spec),
            meta.uid or "",
        )

    def node(self, obj: shapes.Object) -> rec.Node:
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        taints = tuple(rec.Taint(t.key or "", t.value or "", t.effect or "") for t in spec.taints or ())
        return rec.Node(_name(meta), self.labels(meta.labels), taints, bool(spec.unschedulable), meta.uid or "")

    def service(self, obj: shapes.Object) -> rec.Service:
        meta = obj.metadata or _EMPTY_META
        selector = _string_map((obj.spec or _EMPTY_SPEC).selector)
        namespace = meta.namespace or "default"
        return rec.Service(namespace, _name(meta), intern_labels(selector) if selector else None, meta.uid or "")

    def workload(self, obj: shapes.Object) -> rec.Controller:
        kind = obj.kind or ""
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        template = spec.template
        template_meta = template.metadata if template is not None else None
        template_labels = self.labels(template_meta.labels) if template_meta is not None else _NO_LABELS
        if kind == "ReplicationController":
            selector_value: Any = _string_map(spec.selector)
        else:
            selector_value = _any_decoder.decode(spec.selector) if spec.selector else None
        selector, selector_map, selector_error = controller_selector(kind, selector_value, template_labels)
        annotations = _string_map(meta.annotations) or {}
        revision_text = annotations.get("deployment.kubernetes.io/revision", "0")
        pod_spec = template.spec if template is not None else None
        return rec.Controller(
            kind=kind,
            api_version=obj.apiVersion or "",
            namespace=meta.namespace or "default",
            name=_name(meta),
            uid=meta.uid or "",
            labels=self.labels(meta.labels),
            selector=selector,
            selector_map=selector_map,
            selector_error=selector_error,
            template_labels=template_labels,
            template=self.template(pod_spec) if pod_spec is not None else _EMPTY_TEMPLATE,
            controller=self.controller(meta.ownerReferences),
            replicas=1 if spec.replicas is None else spec.replicas,
            revision=int(revision_text) if revision_text.isdigit() else 0,
            update_revision=(obj.status or _EMPTY_STATUS).updateRevision or "",
            creation=meta.creationTimestamp or "",
            generation=meta.generation or 0,
        )

    def namespace(self, obj: shapes.Object) -> rec.Namespace:
        meta = obj.metadata or _EMPTY_META
        return rec.Namespace(_name(meta), self.labels(meta.labels))

    def direct(self, kind: str) -> Callable[[shapes.Object], Record] | None:
        """The converter of ``kind`` when it reads neither ``kind`` nor ``apiVersion`` (Pod, Node, Service,
        Namespace), else None."""
        direct: dict[str, Callable[[shapes.Object], Record]] = {
            "Pod": self.pod,
            "Node": self.node,
            "Service": self.service,
            "Namespace": self.namespace,
        }
        return direct.get(kind)

    def record(self, obj: shapes.Object) -> Record | None:
        """The record of a decoded object; None for kinds spreadwatch does not use. Raises Fallback."""
        kind = obj.kind
        if kind == "Pod":
            return self.pod(obj)
        if kind in _WORKLOADS:
            return self.workload(obj)
        if kind == "Node":
            return self.node(obj)
        if kind == "Service":
            return self.service(obj)
        if kind == "Namespace":
            return self.namespace(obj)
        if kind is None or kind.endswith("List"):
            raise Fallback
        return None


_WORKLOADS: Final = frozenset(WORKLOAD_KINDS)
