"""Typed decoding of JSON bytes straight into the slim records of :mod:`spreadwatch.model` (msgspec).

``kubectl get -o json`` dumps and the API server's list pages are decoded by msgspec into small Structs that
declare only the fields spreadwatch reads; every other field (container specs, status conditions, managed
fields, ...) is skipped by the decoder in C, never materialised as Python objects. A file's List items are
kept as ``msgspec.Raw`` slices of the input and decoded one at a time (:func:`decode_items`), so a big dump's
Structs are never all alive at once; an API list page (500 items) is decoded in one pass, its items typed
(:func:`decode_page`), and read again item by item only when msgspec rejects it. Each item's Structs become
a record (:class:`Converter`) and are dropped.

**Exactness.** msgspec is only trusted when it succeeds. An item it rejects (a wrongly typed field, a
missing name, anything unusual) comes out as :class:`Unparsed` (orjson's dict of it), for
:func:`spreadwatch.model.parse_object`, the reference parser, which either accepts it (msgspec is stricter in
a few harmless places) or raises the same one-line :class:`~spreadwatch.errors.ObjectError` naming the
object and field as ever. So a broken object costs one slow re-read and never hides the others.

**Adding a field** (e.g. for PodTopologySpread): add one line to the Struct whose JSON object holds it —
the attribute named exactly as the JSON key (``nodeName``; ``msgspec.field(name=...)`` when the key is a
Python keyword), typed ``T | None = None`` (a JSON ``null`` reads as absent, as in the reference parser) —
and pass it on in the matching :class:`Converter` method (``pod``, ``node``, ``workload``, ...). A nested
object is one more Struct. The pod's scheduling fields (``tolerations``, ``nodeSelector``, ``affinity``,
``topologySpreadConstraints``) are ``msgspec.Raw``: their bytes key a cache, and only a miss decodes them
typed in ``Converter._new_template``. The reference parser in ``model/parse.py`` needs the same field (it is the
error path), and ``tests/test_decode.py`` checks that both agree on every field, for any value.

Costs: O(bytes) in C for the skipped fields plus O(kept fields) in Python per item, and O(1) per repeated
sub-object (cache hit); memory: the input bytes (a memory-mapped file's decoded pages can be released as
:func:`decode_json` reports progress) plus the records, and one item's Structs at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple

import msgspec
import orjson

from spreadwatch.errors import SelectorError
from spreadwatch.model import (
    WORKLOAD_KINDS,
    Controller,
    Namespace,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    PodTemplate,
    Record,
    Service,
    SpreadConstraint,
    Taint,
    Toleration,
    intern_labels,
)
from spreadwatch.selectors import NOTHING, Selector, from_label_selector

__all__ = ["Converter", "DecodeError", "Decoded", "Unparsed", "decode_items", "decode_json", "decode_page"]


_ABSENT: Final = msgspec.Raw()  # default of Raw fields: empty, i.e. false


class DecodeError(ValueError):
    """The bytes are not well-formed JSON (the message is msgspec's, with the byte offset)."""


# --- the JSON shapes, only the fields read ------------------------------------------------------------------
# Attribute names are the JSON keys; ``T | None = None`` everywhere, as the reference parser treats null as
# absent. Sub-objects that repeat across many objects (labels, ownerReferences, a pod's scheduling fields) are
# kept as ``msgspec.Raw`` (a slice of the input): their bytes key a per-document cache, so pods of one
# ReplicaSet decode their labels, controller and template once; only a cache miss decodes them typed.
# Every Struct is ``gc=False``: decoded values never form cycles, so the cyclic GC need not track them
# (cheaper to allocate: pages → records about 10 % less CPU than with tracked Structs, measured in one process).


class _OwnerReference(msgspec.Struct, gc=False):
    apiVersion: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None


class _ObjectMeta(msgspec.Struct, gc=False):
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    labels: msgspec.Raw = _ABSENT  # dict[str, str] | None
    annotations: msgspec.Raw = _ABSENT  # dict[str, str] | None; read for workloads only
    ownerReferences: msgspec.Raw = _ABSENT  # list[_OwnerReference] | None
    deletionTimestamp: str | None = None
    creationTimestamp: str | None = None
    generation: int | None = None


class _Toleration(msgspec.Struct, gc=False):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


class _Taint(msgspec.Struct, gc=False):
    key: str | None = None
    value: str | None = None
    effect: str | None = None


class _NodeSelectorRequirement(msgspec.Struct, gc=False):
    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class _NodeSelectorTerm(msgspec.Struct, gc=False):
    matchExpressions: list[_NodeSelectorRequirement] | None = None
    matchFields: list[_NodeSelectorRequirement] | None = None


class _NodeSelector(msgspec.Struct, gc=False):
    nodeSelectorTerms: list[_NodeSelectorTerm] | None = None


class _NodeAffinity(msgspec.Struct, gc=False):
    requiredDuringSchedulingIgnoredDuringExecution: _NodeSelector | None = None


class _Affinity(msgspec.Struct, gc=False):
    nodeAffinity: _NodeAffinity | None = None


class _TopologySpreadConstraint(msgspec.Struct, gc=False):
    """One ``topologySpreadConstraints`` entry (PodTopologySpread, profile v1.29)."""

    maxSkew: int | None = None
    topologyKey: str | None = None
    whenUnsatisfiable: str | None = None
    labelSelector: msgspec.Raw = _ABSENT  # a LabelSelector, parsed by spreadwatch.selectors
    matchLabelKeys: list[str] | None = None
    minDomains: int | None = None
    nodeAffinityPolicy: str | None = None
    nodeTaintsPolicy: str | None = None


class _TemplateMeta(msgspec.Struct, gc=False):
    labels: msgspec.Raw = _ABSENT  # dict[str, str] | None


class _PodTemplateSpec(msgspec.Struct, gc=False):
    metadata: _TemplateMeta | None = None
    spec: _Spec | None = None


class _Spec(msgspec.Struct, gc=False):
    """The ``spec`` of every kind read, in one Struct (the decoder does not know the kind in advance)."""

    # Pod (also a workload's spec.template.spec); the four scheduling fields are decoded by Converter.template
    nodeName: str | None = None
    tolerations: msgspec.Raw = _ABSENT  # list[_Toleration] | None
    nodeSelector: msgspec.Raw = _ABSENT  # dict[str, str] | None
    affinity: msgspec.Raw = _ABSENT  # _Affinity | None
    topologySpreadConstraints: msgspec.Raw = _ABSENT  # list[_TopologySpreadConstraint] | None
    # Node
    taints: list[_Taint] | None = None
    unschedulable: bool | None = None
    # Service, ReplicationController (a map) and the other workloads (a LabelSelector)
    selector: msgspec.Raw = _ABSENT
    # workloads
    replicas: int | None = None
    template: _PodTemplateSpec | None = None


class _Status(msgspec.Struct, gc=False):
    phase: str | None = None  # Pod
    updateRevision: str | None = None  # StatefulSet


class _Object(msgspec.Struct, gc=False):
    kind: str | None = None
    apiVersion: str | None = None
    metadata: _ObjectMeta | None = None
    spec: _Spec | None = None
    status: _Status | None = None


class _ListMeta(msgspec.Struct, gc=False):
    continue_: str | None = msgspec.field(default=None, name="continue")


class _Page(msgspec.Struct, gc=False):
    """One page of an API server list (``GET /api/v1/pods?limit=500``), items left undecoded."""

    metadata: _ListMeta | None = None
    items: list[msgspec.Raw] | None = None


class _TypedPage(msgspec.Struct, gc=False):
    """The same page with its items decoded in the one pass (the usual case: every item well typed)."""

    metadata: _ListMeta | None = None
    items: list[_Object] | None = None


class _RawList(msgspec.Struct, gc=False):
    """A ``kind: List`` (or ``PodList``, ...) whose items are left undecoded (slices of the input)."""

    kind: str | None = None
    items: list[msgspec.Raw] | msgspec.UnsetType | None = msgspec.UNSET


# --- Structs → records -------------------------------------------------------------------------------------


class _Fallback(Exception):
    """Raised by a converter when only the reference parser can decide (it then also words the error)."""


_EMPTY_META: Final = _ObjectMeta()
_EMPTY_SPEC: Final = _Spec()
_EMPTY_STATUS: Final = _Status()
_EMPTY_TEMPLATE: Final = PodTemplate()
_NO_LABELS: Final = intern_labels({})


def _typed(type_: Any) -> Callable[[msgspec.Raw], Any]:
    """A decoder of a Raw into ``type_ | None`` (absent: None) that raises _Fallback on a wrong type."""
    decode = msgspec.json.Decoder(type_ | None).decode

    def run(raw: msgspec.Raw) -> Any:
        if not raw:
            return None
        try:
            return decode(raw)
        except msgspec.ValidationError:
            raise _Fallback from None

    return run


_string_map: Final = _typed(dict[str, str])
_owner_references: Final = _typed(list[_OwnerReference])
_tolerations: Final = _typed(list[_Toleration])
_affinity: Final = _typed(_Affinity)
_spread_constraints: Final = _typed(list[_TopologySpreadConstraint])
_any_decoder: Final = msgspec.json.Decoder()


def _name(meta: _ObjectMeta) -> str:
    if not meta.name:
        raise _Fallback
    return meta.name


def _requirements(reqs: list[_NodeSelectorRequirement] | None) -> tuple[NodeSelectorRequirement, ...]:
    return tuple(
        NodeSelectorRequirement(r.key or "", r.operator or "", tuple(r.values) if r.values else ()) for r in reqs or ()
    )


def _constraint(c: _TopologySpreadConstraint) -> SpreadConstraint:
    """The record of one spread constraint; an invalid selector is kept as its error (as the reference parser
    does), a labelSelector that is not a mapping falls back to the reference parser's error. O(selector)."""
    raw_selector = _any_decoder.decode(c.labelSelector) if c.labelSelector else None
    if raw_selector is not None and not isinstance(raw_selector, Mapping):
        raise _Fallback
    error: str | None = None
    try:
        selector = from_label_selector(raw_selector)
    except SelectorError as err:
        selector, error = NOTHING, str(err)
    return SpreadConstraint(
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
        self._owners: dict[bytes, tuple[OwnerRef | None]] = {}
        self._templates: dict[tuple[bytes, bytes, bytes, bytes], PodTemplate] = {}

    def labels(self, raw: msgspec.Raw) -> Mapping[str, str]:
        """The interned label map; O(1) for bytes seen before, else O(labels)."""
        if not raw:
            return _NO_LABELS
        key = bytes(raw)
        labels = self._labels.get(key)
        if labels is None:
            labels = self._labels[key] = intern_labels(_string_map(raw) or {})
        return labels

    def controller(self, raw: msgspec.Raw) -> OwnerRef | None:
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
                owner = OwnerRef(ref.apiVersion or "", ref.kind or "", ref.name or "", ref.uid or "")
                break
        self._owners[key] = (owner,)
        return owner

    def template(self, spec: _Spec) -> PodTemplate:
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
    def _new_template(spec: _Spec) -> PodTemplate:
        tolerations = tuple(
            Toleration(t.key or "", t.operator or "", t.value or "", t.effect or "")
            for t in _tolerations(spec.tolerations) or ()
        )
        node_selector = tuple(sorted((_string_map(spec.nodeSelector) or {}).items()))
        terms: tuple[NodeSelectorTerm, ...] | None = None
        affinity = _affinity(spec.affinity)
        if affinity is not None and affinity.nodeAffinity is not None:
            required = affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
            if required is not None:
                terms = tuple(
                    NodeSelectorTerm(_requirements(t.matchExpressions), _requirements(t.matchFields))
                    for t in required.nodeSelectorTerms or ()
                )
        constraints = tuple(_constraint(c) for c in _spread_constraints(spec.topologySpreadConstraints) or ())
        template = PodTemplate(tolerations, node_selector, terms, bool(constraints), constraints)
        return _EMPTY_TEMPLATE if template == _EMPTY_TEMPLATE else template

    def pod(self, obj: _Object) -> Pod:
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        return Pod(
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

    def node(self, obj: _Object) -> Node:
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        taints = tuple(Taint(t.key or "", t.value or "", t.effect or "") for t in spec.taints or ())
        return Node(_name(meta), self.labels(meta.labels), taints, bool(spec.unschedulable), meta.uid or "")

    def service(self, obj: _Object) -> Service:
        meta = obj.metadata or _EMPTY_META
        selector = _string_map((obj.spec or _EMPTY_SPEC).selector)
        namespace = meta.namespace or "default"
        return Service(namespace, _name(meta), intern_labels(selector) if selector else None, meta.uid or "")

    def workload(self, obj: _Object) -> Controller:
        kind = obj.kind or ""
        meta = obj.metadata or _EMPTY_META
        spec = obj.spec or _EMPTY_SPEC
        template = spec.template
        template_meta = template.metadata if template is not None else None
        template_labels = self.labels(template_meta.labels) if template_meta is not None else _NO_LABELS
        selector_map = None
        selector_error = None
        selector: Selector
        if kind == "ReplicationController":
            raw = _string_map(spec.selector)
            # An RC without a selector defaults to its template's labels (API defaulting).
            selector_map = intern_labels(raw) if raw else (template_labels or None)
            try:  # a value the API server would reject: an Error report for this RC, not a failed load
                selector = from_label_selector({"matchLabels": dict(selector_map)} if selector_map else {})
            except SelectorError as err:
                selector, selector_error = NOTHING, str(err)
        else:
            try:
                selector = from_label_selector(_any_decoder.decode(spec.selector) if spec.selector else None)
            except SelectorError as err:
                selector, selector_error = NOTHING, str(err)
        annotations = _string_map(meta.annotations) or {}
        revision_text = annotations.get("deployment.kubernetes.io/revision", "0")
        pod_spec = template.spec if template is not None else None
        return Controller(
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

    def namespace(self, obj: _Object) -> Namespace:
        meta = obj.metadata or _EMPTY_META
        return Namespace(_name(meta), self.labels(meta.labels))

    def direct(self, kind: str) -> Callable[[_Object], Record] | None:
        """The converter of ``kind`` when it reads neither ``kind`` nor ``apiVersion`` (Pod, Node, Service,
        Namespace), else None."""
        direct: dict[str, Callable[[_Object], Record]] = {
            "Pod": self.pod,
            "Node": self.node,
            "Service": self.service,
            "Namespace": self.namespace,
        }
        return direct.get(kind)

    def record(self, obj: _Object) -> Record | None:
        """The record of a decoded object; None for kinds spreadwatch does not use. Raises _Fallback."""
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
            raise _Fallback
        return None


_WORKLOADS: Final = frozenset(WORKLOAD_KINDS)


# --- decoding ----------------------------------------------------------------------------------------------

_PROGRESS_EVERY: Final = 16 << 20  # bytes decoded between two progress calls (mapped pages released)
_object_decoder: Final = msgspec.json.Decoder(_Object)
_list_decoder: Final = msgspec.json.Decoder(_RawList)
_docs_decoder: Final = msgspec.json.Decoder(list[msgspec.Raw])
_page_decoder: Final = msgspec.json.Decoder(_Page)
_typed_page_decoder: Final = msgspec.json.Decoder(_TypedPage)


def _is_list(kind: str | None) -> bool:
    return kind is not None and kind.endswith("List")


class Unparsed(NamedTuple):
    """An item the typed path does not take, as orjson reads it: for the reference parser (which words the
    error, or accepts what msgspec was stricter about)."""

    value: Any


Decoded = Record | Unparsed | None  # None: a kind spreadwatch does not use


def _unparsed(item: msgspec.Raw, kind: str, api_version: str) -> Unparsed:
    try:
        doc = orjson.loads(memoryview(item))
    except orjson.JSONDecodeError as err:
        raise DecodeError(str(err)) from None
    if kind and isinstance(doc, dict):
        doc.setdefault("kind", kind)
        doc.setdefault("apiVersion", api_version)
    return Unparsed(doc)


def decode_items(
    items: Iterable[msgspec.Raw], kind: str = "", api_version: str = "", converter: Converter | None = None
) -> Iterator[Decoded]:
    """The record of each raw item of a List, in order; :class:`Unparsed` for what the typed path leaves.

    ``kind``/``api_version`` fill in what the API server's typed lists omit on their items. ``converter``
    shares its caches across calls (the pages of one listing). O(total bytes) in C + O(kept fields) per
    item in Python; one item's Structs alive at a time.
    """
    decode = _object_decoder.decode
    conv = converter or Converter()
    for raw in items:
        try:
            obj = decode(raw)
            if kind:
                if obj.kind is None:
                    obj.kind = kind
                if obj.apiVersion is None:
                    obj.apiVersion = api_version
            record = conv.record(obj)
        except (msgspec.ValidationError, _Fallback):
            yield _unparsed(raw, kind, api_version)
            continue
        except msgspec.DecodeError as err:
            raise DecodeError(str(err)) from None
        yield record


def _counted(items: list[msgspec.Raw], progress: Callable[[int], None]) -> Iterator[msgspec.Raw]:
    """The items, calling ``progress(n)`` every few MiB with a lower bound of the input bytes consumed."""
    done = 0
    mark = _PROGRESS_EVERY
    for raw in items:
        yield raw
        done += len(raw)
        if done >= mark:
            progress(done)
            mark = done + _PROGRESS_EVERY


def decode_json(data: bytes | memoryview, progress: Callable[[int], None] | None = None) -> Iterator[Decoded]:
    """What :func:`decode_items` yields, for every object of a JSON document (an object, a ``*List`` or an
    array of them), in order. Raises DecodeError for malformed JSON. Costs: see the module docstring.

    ``progress(n)``, when given, is called every few MiB of a List: the first ``n`` bytes of ``data`` are
    no longer needed (a lower bound), so a memory-mapped input can release them.
    """
    try:
        docs = _docs_decoder.decode(data) if bytes(data[:64]).lstrip()[:1] == b"[" else [msgspec.Raw(data)]
    except msgspec.DecodeError as err:
        raise DecodeError(str(err)) from None
    converter = Converter()
    for doc in docs:
        try:
            head = _list_decoder.decode(doc)
        except msgspec.ValidationError:
            yield _unparsed(doc, "", "")
            continue
        except msgspec.DecodeError as err:
            raise DecodeError(str(err)) from None
        if _is_list(head.kind) and head.items is not msgspec.UNSET:
            items = head.items or []
            yield from decode_items(_counted(items, progress) if progress else items, converter=converter)
        else:
            yield from decode_items([doc], converter=converter)


def decode_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Iterator[Decoded], str]:
    """One page of an API server list: its items (as :func:`decode_items`) and its ``continue`` token.

    The page is decoded in one pass into typed items; only a page msgspec rejects (a wrongly typed field in
    some item) is decoded again item by item, so the broken items come out as :class:`Unparsed` and the
    others as records. O(page bytes) in C + O(kept fields) per item; the page's Structs live until its last
    item is yielded.
    """
    try:
        page = _typed_page_decoder.decode(data)
    except msgspec.ValidationError:
        return _raw_page(data, kind, api_version, converter)
    except msgspec.DecodeError as err:
        raise DecodeError(str(err)) from None
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    return _page_records(page.items or [], data, kind, api_version, converter), token


def _raw_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Iterator[Decoded], str]:
    """:func:`decode_page` item by item (each item's own decode, so one broken item is one Unparsed)."""
    try:
        page = _page_decoder.decode(data)
    except msgspec.ValidationError as err:
        raise DecodeError(f"not a list: {err}") from None
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    return decode_items(page.items or (), kind, api_version, converter), token


def _page_records(
    objects: list[_Object], data: bytes, kind: str, api_version: str, converter: Converter
) -> Iterator[Decoded]:
    """Records of a page's typed items; an item only the reference parser can decide is re-read from
    ``data`` (the page's items as raw slices, decoded once, on the first such item)."""
    record = converter.record
    # Items of a typed list carry no kind: those of the kinds whose converter reads neither kind nor
    # apiVersion go straight to it (most items are pods), the others get both filled in first.
    direct = converter.direct(kind)
    raw_items: list[msgspec.Raw] | None = None
    for i, obj in enumerate(objects):
        try:
            decoded: Decoded
            if direct is not None and obj.kind is None:
                decoded = direct(obj)
            else:
                if kind:
                    if obj.kind is None:
                        obj.kind = kind
                    if obj.apiVersion is None:
                        obj.apiVersion = api_version
                decoded = record(obj)
        except _Fallback:
            if raw_items is None:
                raw_items = _page_decoder.decode(data).items or []
            decoded = _unparsed(raw_items[i], kind, api_version)
        yield decoded
