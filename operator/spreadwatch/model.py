"""Slim, typed records of the Kubernetes objects SelectorSpread needs, and their parsers.

Only the fields the scheduler reads are kept (labels, namespace, nodeName, phase, deletionTimestamp,
controller ownerReference, node taints/unschedulable, the pod template's scheduling fields, selectors),
never whole API objects: a 150,000-pod cluster fits in a few hundred MiB. Label maps are interned, so pods
of one ReplicaSet share a single dict.

:func:`parse_object` turns one API object (a dict as ``kubectl get -o json`` prints it, or a kopf body) into
a record; it raises :class:`~spreadwatch.errors.ObjectError` naming the object and field when a field has
the wrong type. Cost: O(size of the object's scheduling-relevant fields).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from spreadwatch.errors import ObjectError, SelectorError
from spreadwatch.selectors import NOTHING, Selector, from_label_selector

__all__ = [
    "WORKLOAD_KINDS",
    "Controller",
    "Namespace",
    "Node",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "OwnerRef",
    "Pod",
    "PodTemplate",
    "Record",
    "Service",
    "SpreadConstraint",
    "Taint",
    "Toleration",
    "WorkloadKey",
    "intern_labels",
    "interned_label_maps",
    "label_key",
    "object_ref",
    "parse_object",
    "parse_pod",
]

#: Workload kinds spreadwatch reports on, in report order.
WORKLOAD_KINDS: Final = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")

TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})


class WorkloadKey(NamedTuple):
    """The identity of a workload (or any controller): namespace, kind, name. Sorts by namespace, then kind,
    then name; ``str`` gives its one text form, ``namespace/Kind/name`` (logs, messages). O(1)."""

    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"


class _Labels(dict[str, str]):
    """An interned label map: a plain dict that remembers its hashable key and can be weakly referenced."""

    __slots__ = ("__weakref__", "key")

    key: frozenset[tuple[str, str]]


_EMPTY = _Labels()
_EMPTY.key = frozenset()
#: Interned label maps by content. Weak: an entry goes away with the last record using it, so label sets of
#: old rollouts (pod-template-hash) do not pile up in a long-running operator.
_LABELS_CACHE: weakref.WeakValueDictionary[frozenset[tuple[str, str]], _Labels] = weakref.WeakValueDictionary()


def label_key(labels: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """A hashable key of a label map: O(1) for an interned map, else O(len)."""
    if type(labels) is _Labels:
        return labels.key
    return frozenset(labels.items())


def intern_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Return a shared dict equal to ``labels``: equal label maps are stored once. O(len(labels))."""
    if not labels:
        return _EMPTY
    if type(labels) is _Labels:
        return labels
    key = frozenset(labels.items())
    shared = _LABELS_CACHE.get(key)
    if shared is None:
        shared = _Labels({sys.intern(k): sys.intern(v) for k, v in labels.items()})
        shared.key = key
        _LABELS_CACHE[key] = shared
    return shared


def interned_label_maps() -> int:
    """How many distinct label maps the interning cache holds now (long-run memory checks). O(1)."""
    return len(_LABELS_CACHE)


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """A controller ownerReference (``metav1.GetControllerOf``)."""

    api_version: str
    kind: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint``: empty effect/key match all; operator "" means Equal."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    match_expressions: tuple[NodeSelectorRequirement, ...]
    match_fields: tuple[NodeSelectorRequirement, ...]


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One ``spec.topologySpreadConstraints`` entry, selector parsed (``metav1.LabelSelectorAsSelector``).

    ``selector`` is NOTHING for an absent ``labelSelector`` (and for an invalid one, whose problem is in
    ``selector_error``); ``min_domains`` None and the policies "" mean the API defaults (1, Honor, Ignore).
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: Selector
    selector_error: str | None = None
    match_label_keys: tuple[str, ...] = ()
    min_domains: int | None = None
    node_affinity_policy: str = ""
    node_taints_policy: str = ""


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """The scheduling-relevant part of a pod (spec) or pod template; hashable (a constraint signature).

    ``required_terms`` is None when the pod has no required node affinity (every node passes), and a
    (possibly empty) tuple of ORed terms otherwise. ``spread_constraints`` are the topologySpreadConstraints
    (PodTopologySpread, profile v1.29); ``topology_spread`` is True when there are any.
    """

    tolerations: tuple[Toleration, ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()
    required_terms: tuple[NodeSelectorTerm, ...] | None = None
    topology_spread: bool = False
    spread_constraints: tuple[SpreadConstraint, ...] = ()

    @property
    def constraint_key(self) -> tuple[object, ...]:
        """The scheduling-constraint signature candidate sets are cached by."""
        return (self.tolerations, self.node_selector, self.required_terms)


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    uid: str = ""


@dataclass(frozen=True, slots=True)
class Pod:
    """An existing pod (or the incoming one): what ``countMatchingPods`` and the selector look at."""

    namespace: str
    name: str
    labels: Mapping[str, str]
    node_name: str = ""
    phase: str = ""
    deleting: bool = False
    controller: OwnerRef | None = None
    template: PodTemplate = field(default_factory=PodTemplate)
    uid: str = ""

    @property
    def counts(self) -> bool:
        """True when the pod can count for spreading: bound, not terminal, not being deleted."""
        return bool(self.node_name) and not self.deleting and self.phase not in TERMINAL_PHASES


@dataclass(frozen=True, slots=True)
class Service:
    namespace: str
    name: str
    selector: Mapping[str, str] | None  # None: selects nothing (an empty map is stored as None too)
    uid: str = ""


@dataclass(frozen=True, slots=True)
class Controller:
    """A ReplicationController, ReplicaSet, StatefulSet or Deployment.

    ``selector`` is the parsed label selector (for a ReplicationController, its map as equality terms);
    ``selector_map`` is the RC's raw map (None for the other kinds); ``selector_error`` explains an invalid
    selector (then ``selector`` is NOTHING).
    """

    kind: str
    api_version: str
    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    selector: Selector
    selector_map: Mapping[str, str] | None
    selector_error: str | None
    template_labels: Mapping[str, str]
    template: PodTemplate
    controller: OwnerRef | None = None
    replicas: int = 1
    revision: int = 0  # deployment.kubernetes.io/revision (ReplicaSets)
    update_revision: str = ""  # status.updateRevision (StatefulSets)
    creation: str = ""
    generation: int = 0

    @property
    def key(self) -> WorkloadKey:
        """This controller's identity (namespace, kind, name). O(1)."""
        return WorkloadKey(self.namespace, self.kind, self.name)


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str]


Record = Node | Pod | Service | Controller | Namespace

# --- parsing ----------------------------------------------------------------------------------------------


def object_ref(obj: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` (or ``Kind name``) for messages; never raises."""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "object"
    raw_meta = obj.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else "<unnamed>"
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        return f"{kind} {namespace}/{name}"
    return f"{kind} {name}"


class _Reader:
    """Typed field access on one object; errors name the object and the field path."""

    __slots__ = ("ref",)

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.ref = object_ref(obj)

    def fail(self, path: str, problem: str) -> ObjectError:
        return ObjectError(self.ref, path, problem)

    def mapping(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        value = parent.get(key)
        if value is None:
            return _EMPTY
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {_type_name(value)}")
        return value

    def string(self, parent: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
        value = parent.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_type_name(value)}")
        return value

    def integer(self, parent: Mapping[str, Any], key: str, path: str, default: int) -> int:
        value = parent.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_type_name(value)}")
        return int(value)

    def boolean(self, parent: Mapping[str, Any], key: str, path: str) -> bool:
        value = parent.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(path, f"expected a boolean, got {_type_name(value)}")
        return value

    def items(self, parent: Mapping[str, Any], key: str, path: str) -> list[Mapping[str, Any]]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {_type_name(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise self.fail(f"{path}[{i}]", f"expected a mapping, got {_type_name(item)}")
        return value

    def strings(self, parent: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        value = parent.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(path, "expected a list of strings")
        return tuple(value)

    def string_map(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, str] | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping of strings, got {_type_name(value)}")
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise self.fail(f"{path}.{k}", f"expected a string value, got {_type_name(v)}")
        return value


def _type_name(value: object) -> str:
    return {dict: "mapping", list: "list", str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


def _meta(r: _Reader, obj: Mapping[str, Any], namespaced: bool) -> tuple[str, str, str, Mapping[str, str]]:
    meta = r.mapping(obj, "metadata", "metadata")
    name = r.string(meta, "name", "metadata.name")
    if not name:
        raise r.fail("metadata.name", "is required")
    namespace = (r.string(meta, "namespace", "metadata.namespace") or "default") if namespaced else ""
    labels = intern_labels(r.string_map(meta, "labels", "metadata.labels") or _EMPTY)
    return namespace, name, r.string(meta, "uid", "metadata.uid"), labels


def _controller(r: _Reader, meta: Mapping[str, Any]) -> OwnerRef | None:
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


def _node_selector_requirements(
    r: _Reader, term: Mapping[str, Any], key: str, path: str
) -> tuple[NodeSelectorRequirement, ...]:
    out = []
    for i, req in enumerate(r.items(term, key, f"{path}.{key}")):
        p = f"{path}.{key}[{i}]"
        out.append(
            NodeSelectorRequirement(
                key=r.string(req, "key", p + ".key"),
                operator=r.string(req, "operator", p + ".operator"),
                values=r.strings(req, "values", p + ".values"),
            )
        )
    return tuple(out)


def _template(r: _Reader, spec: Mapping[str, Any], path: str) -> PodTemplate:
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
        terms = tuple(
            NodeSelectorTerm(
                _node_selector_requirements(r, t, "matchExpressions", f"{required_path}.nodeSelectorTerms[{i}]"),
                _node_selector_requirements(r, t, "matchFields", f"{required_path}.nodeSelectorTerms[{i}]"),
            )
            for i, t in enumerate(r.items(required, "nodeSelectorTerms", required_path + ".nodeSelectorTerms"))
        )
    constraints = _spread_constraints(r, spec, f"{path}.topologySpreadConstraints")
    return PodTemplate(tolerations, node_selector, terms, bool(constraints), constraints)


def _spread_constraints(r: _Reader, spec: Mapping[str, Any], path: str) -> tuple[SpreadConstraint, ...]:
    out = []
    for i, c in enumerate(r.items(spec, "topologySpreadConstraints", path)):
        p = f"{path}[{i}]"
        raw_selector = c.get("labelSelector")
        if raw_selector is not None and not isinstance(raw_selector, Mapping):
            raise r.fail(p + ".labelSelector", f"expected a mapping, got {_type_name(raw_selector)}")
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


def parse_pod(obj: Mapping[str, Any]) -> Pod:
    """Parse a Pod object; raise ObjectError when it is not a Pod or a field has the wrong type."""
    if obj.get("kind") not in ("Pod", None):
        raise ObjectError(object_ref(obj), "kind", f"expected a Pod, got {obj.get('kind')!r}")
    r = _Reader(obj)
    namespace, name, uid, labels = _meta(r, obj, namespaced=True)
    meta = r.mapping(obj, "metadata", "metadata")
    spec = r.mapping(obj, "spec", "spec")
    status = r.mapping(obj, "status", "status")
    return Pod(
        namespace=namespace,
        name=name,
        labels=labels,
        node_name=r.string(spec, "nodeName", "spec.nodeName"),
        phase=r.string(status, "phase", "status.phase"),
        deleting=meta.get("deletionTimestamp") is not None,
        controller=_controller(r, meta),
        template=_intern_template(_template(r, spec, "spec")),
        uid=uid,
    )


def _parse_node(obj: Mapping[str, Any]) -> Node:
    r = _Reader(obj)
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
    return Node(name, labels, taints, r.boolean(spec, "unschedulable", "spec.unschedulable"), uid)


def _parse_service(obj: Mapping[str, Any]) -> Service:
    r = _Reader(obj)
    namespace, name, uid, _ = _meta(r, obj, namespaced=True)
    spec = r.mapping(obj, "spec", "spec")
    selector = r.string_map(spec, "selector", "spec.selector")
    return Service(namespace, name, intern_labels(selector) if selector else None, uid)


def _parse_controller(obj: Mapping[str, Any], kind: str) -> Controller:
    r = _Reader(obj)
    namespace, name, uid, labels = _meta(r, obj, namespaced=True)
    meta = r.mapping(obj, "metadata", "metadata")
    spec = r.mapping(obj, "spec", "spec")
    status = r.mapping(obj, "status", "status")
    template = r.mapping(spec, "template", "spec.template")
    template_meta = r.mapping(template, "metadata", "spec.template.metadata")
    template_labels = intern_labels(r.string_map(template_meta, "labels", "spec.template.metadata.labels") or {})
    selector_map: Mapping[str, str] | None = None
    selector_error: str | None = None
    if kind == "ReplicationController":
        raw = r.string_map(spec, "selector", "spec.selector")
        # An RC without a selector defaults to its template's labels (API defaulting).
        selector_map = intern_labels(raw) if raw else (template_labels or None)
        try:  # a value the API server would reject: an Error report for this RC, not a failed load
            selector = from_label_selector({"matchLabels": dict(selector_map)} if selector_map else {})
        except SelectorError as err:
            selector, selector_error = NOTHING, str(err)
    else:
        raw_selector = spec.get("selector")
        try:
            selector = from_label_selector(raw_selector)
        except SelectorError as err:
            selector, selector_error = NOTHING, str(err)
    annotations = r.string_map(meta, "annotations", "metadata.annotations") or {}
    revision_text = annotations.get("deployment.kubernetes.io/revision", "0")
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
        template=_intern_template(
            _template(r, r.mapping(template, "spec", "spec.template.spec"), "spec.template.spec")
        ),
        controller=_controller(r, meta),
        replicas=r.integer(spec, "replicas", "spec.replicas", 1),
        revision=int(revision_text) if revision_text.isdigit() else 0,
        update_revision=r.string(status, "updateRevision", "status.updateRevision"),
        creation=r.string(meta, "creationTimestamp", "metadata.creationTimestamp"),
        generation=r.integer(meta, "generation", "metadata.generation", 0),
    )


def _parse_namespace(obj: Mapping[str, Any]) -> Namespace:
    r = _Reader(obj)
    _, name, _, labels = _meta(r, obj, namespaced=False)
    return Namespace(name, labels)


def parse_object(obj: Mapping[str, Any]) -> Record | None:
    """Parse one API object into its record; None for kinds spreadwatch does not use. Raises ObjectError."""
    if not isinstance(obj, Mapping):
        raise ObjectError("object", "", f"expected a mapping, got {_type_name(obj)}")
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
    if not isinstance(kind, str):
        raise ObjectError(object_ref(obj), "kind", "is required and must be a string")
    return None
