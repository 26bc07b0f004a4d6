"""The reference parsing of what the whole scheduler profile reads from pod specs and nodes.

* :func:`pod_needs`: a pod spec's requests as ``k8s.io/component-helpers/resource.PodRequests`` sums them
  (containers added, init containers the largest with the sidecars before them, sidecars added, pod-level
  requests for cpu, memory and hugepages, overhead), the non-zero variants kube-scheduler uses for scoring,
  host ports, images, claims (:class:`~spreadwatch.model.records.PodNeeds`);
* :func:`pod_affinity`: pod (anti-)affinity terms and preferred node affinity terms;
* :func:`node_allocatable`, :func:`node_images`: a node's ``status.allocatable`` and ``status.images``.

Quantities are exact (:mod:`~spreadwatch.model.quantity`): summed as rationals, then rounded up to
millicores or units once, as ``Resource.Add`` rounds the summed ``ResourceList``. A field of the wrong type,
a malformed or negative quantity raise the one-line :class:`~spreadwatch.errors.ObjectError` naming the
object and field. The typed decoder (``decode/convert.py``) calls these on what it decoded, so both paths give
one record. O(containers + terms) per spec.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Final

from spreadwatch.errors import SelectorError
from spreadwatch.model.quantity import parse_quantity, quantity_milli, quantity_value
from spreadwatch.model.reader import FieldReader, shown
from spreadwatch.model.records import (
    HostPort,
    Image,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodNeeds,
    PreferredSchedulingTerm,
    Resources,
    WeightedPodAffinityTerm,
)
from spreadwatch.selectors import Selector, from_label_selector, validate_label_key

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "PodAffinity",
    "is_extended_resource",
    "is_scalar_resource",
    "node_allocatable",
    "node_images",
    "node_selector_requirements",
    "normalized_image",
    "pod_affinity",
    "pod_needs",
]

#: ``pkg/scheduler/util``: what kube-scheduler counts for a container without a CPU / memory request.
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
_CPU, _MEMORY, _EPHEMERAL, _PODS = "cpu", "memory", "ephemeral-storage", "pods"
_HUGEPAGES: Final = "hugepages-"
_DEFAULTS: Final[Mapping[str, Fraction]] = {
    _CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    _MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}
_ALWAYS: Final = "Always"

ResourceList = dict[str, Fraction]


def is_extended_resource(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a qualified name with a prefix outside ``kubernetes.io/``
    (``vendor.io/gpu``). O(len(name))."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return validate_label_key(f"requests.{name}") is None


def is_scalar_resource(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: an extended resource, hugepages, a ``*kubernetes.io/`` resource
    or an attachable-volumes one. O(len(name))."""
    if name.startswith((_HUGEPAGES, "attachable-volumes-")) or "kubernetes.io/" in name:
        return True
    return is_extended_resource(name)


def _resource_list(r: FieldReader, parent: Mapping[str, Any], key: str, path: str) -> ResourceList:
    """A ``ResourceList`` (name → quantity), exact; ObjectError on a malformed or negative quantity."""
    raw = r.mapping(parent, key, path)
    out: ResourceList = {}
    for name, value in raw.items():
        quantity = parse_quantity(value)
        if quantity is None:
            raise r.fail(f"{path}.{name}", f"expected a quantity (like 250m or 1Gi), got {shown(value)}")
        if quantity < 0:
            raise r.fail(f"{path}.{name}", f"must not be negative, got {shown(value)}")
        out[str(name)] = quantity
    return out


def _add(into: ResourceList, more: Mapping[str, Fraction]) -> None:
    for name, quantity in more.items():
        into[name] = into.get(name, Fraction(0)) + quantity


def _take_max(into: ResourceList, more: Mapping[str, Fraction]) -> None:
    for name, quantity in more.items():
        if name not in into or quantity > into[name]:
            into[name] = quantity


def _with_defaults(requests: ResourceList, defaults: Mapping[str, Fraction]) -> ResourceList:
    """``applyNonMissing``: the defaults for the resources a container does not request (0 is a request)."""
    if all(name in requests for name in defaults):
        return requests
    out = dict(requests)
    for name, quantity in defaults.items():
        out.setdefault(name, quantity)
    return out


class _Container:
    """One container's requests, restart policy, host ports and image, as read."""

    __slots__ = ("host_ports", "image", "requests", "sidecar")

    def __init__(self, r: FieldReader, c: Mapping[str, Any], path: str, init: bool) -> None:
        resources = r.mapping(c, "resources", f"{path}.resources")
        self.requests = _resource_list(r, resources, "requests", f"{path}.resources.requests")
        self.sidecar = init and r.string(c, "restartPolicy", f"{path}.restartPolicy") == _ALWAYS
        self.image = r.string(c, "image", f"{path}.image")
        ports: list[HostPort] = []
        for i, p in enumerate(r.items(c, "ports", f"{path}.ports")):
            where = f"{path}.ports[{i}]"
            port = r.integer(p, "hostPort", f"{where}.hostPort", 0)
            ip = r.string(p, "hostIP", f"{where}.hostIP")
            protocol = r.string(p, "protocol", f"{where}.protocol")
            if port > 0:
                ports.append(HostPort(ip or "0.0.0.0", protocol or "TCP", port))
        self.host_ports = tuple(ports)


def _pod_requests(
    containers: Iterable[_Container],
    init: Iterable[_Container],
    pod_level: ResourceList | None,
    overhead: ResourceList,
    defaults: Mapping[str, Fraction],
) -> ResourceList:
    """``resource.PodRequests`` with ``NonMissingContainerRequests`` = ``defaults`` (empty: none), pod-level
    requests (None: not set) and overhead. O(containers × resources)."""
    total: ResourceList = {}
    for c in containers:
        _add(total, _with_defaults(c.requests, defaults) if defaults else c.requests)
    sidecars: ResourceList = {}
    largest: ResourceList = {}
    for c in init:
        requests = _with_defaults(c.requests, defaults) if defaults else c.requests
        if c.sidecar:
            _add(total, requests)
            _add(sidecars, requests)
            step = dict(sidecars)
        else:
            step = dict(requests)
            _add(step, sidecars)
        _take_max(largest, step)
    _take_max(total, largest)
    if pod_level is not None:
        for name, quantity in pod_level.items():
            if name in (_CPU, _MEMORY) or name.startswith(_HUGEPAGES):
                total[name] = quantity
    _add(total, overhead)
    return total


def _resources(amounts: Mapping[str, Fraction], allocatable: bool = False) -> Resources:
    """``Resource.Add`` of a ``ResourceList``: millicores, bytes, the pods number (``allocatable``) and the
    scalar resources; other names are not counted. O(resources)."""
    scalars = sorted((n, quantity_value(q)) for n, q in amounts.items() if is_scalar_resource(n))
    return Resources(
        quantity_milli(amounts[_CPU]) if _CPU in amounts else 0,
        quantity_value(amounts[_MEMORY]) if _MEMORY in amounts else 0,
        quantity_value(amounts[_EPHEMERAL]) if _EPHEMERAL in amounts else 0,
        quantity_value(amounts[_PODS]) if allocatable and _PODS in amounts else 0,
        tuple(scalars),
    )


def normalized_image(name: str) -> str:
    """ImageLocality's ``normalizedImageName``: ``:latest`` added when the name has no tag. O(len)."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


def _pod_level(r: FieldReader, spec: Mapping[str, Any], path: str) -> ResourceList | None:
    """The pod-level requests when ``IsPodLevelRequestsSet`` (one of cpu, memory, hugepages-*), else None."""
    requests = _resource_list(r, r.mapping(spec, "resources", f"{path}.resources"), "requests",
                              f"{path}.resources.requests")  # fmt: skip
    if any(name in (_CPU, _MEMORY) or name.startswith(_HUGEPAGES) for name in requests):
        return requests
    return None


def pod_needs(r: FieldReader, spec: Mapping[str, Any], path: str) -> PodNeeds:
    """What a pod with this spec needs from a node (:class:`PodNeeds`). Raises ObjectError. O(containers)."""
    containers = [_Container(r, c, f"{path}.containers[{i}]", False)
                  for i, c in enumerate(r.items(spec, "containers", f"{path}.containers"))]  # fmt: skip
    init = [_Container(r, c, f"{path}.initContainers[{i}]", True)
            for i, c in enumerate(r.items(spec, "initContainers", f"{path}.initContainers"))]  # fmt: skip
    overhead = _resource_list(r, spec, "overhead", f"{path}.overhead")
    pod_level = _pod_level(r, spec, path)
    requests = _pod_requests(containers, init, pod_level, overhead, {})
    # NodeResourcesFit's scorer is built without the PodLevelResources gate (noderesources/fit.go getScorer
    # leaves enablePodLevelResources false): it scores the containers' requests, pod-level ones ignored.
    score = _pod_requests(containers, init, None, overhead, _DEFAULTS)
    if pod_level is None:
        non_zero = score
    else:
        missing = {n: q for n, q in _DEFAULTS.items() if n not in requests}
        non_zero = _pod_requests(containers, init, pod_level, overhead, missing) if missing else requests
    ports = (*(p for c in init if c.sidecar for p in c.host_ports), *(p for c in containers for p in c.host_ports))
    images = [normalized_image(c.image) for c in (*init, *containers)]
    claims: list[str] = []
    for i, volume in enumerate(r.items(spec, "volumes", f"{path}.volumes")):
        where = f"{path}.volumes[{i}]"
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            claims.append(r.string(r.mapping(volume, "persistentVolumeClaim", f"{where}.persistentVolumeClaim"),
                                   "claimName", f"{where}.persistentVolumeClaim.claimName"))  # fmt: skip
        image = volume.get("image")
        if image is not None:
            reference = r.string(r.mapping(volume, "image", f"{where}.image"), "reference", f"{where}.image.reference")
            images.append(normalized_image(reference))
    return PodNeeds(
        _resources(requests),
        quantity_milli(non_zero.get(_CPU, Fraction(0))),
        quantity_value(non_zero.get(_MEMORY, Fraction(0))),
        quantity_milli(score.get(_CPU, Fraction(0))),
        quantity_value(score.get(_MEMORY, Fraction(0))),
        ports,
        tuple(images),
        len(init) + len(containers),
        tuple(claims),
        bool(r.items(spec, "resourceClaims", f"{path}.resourceClaims")),
    )


def node_allocatable(r: FieldReader, status: Mapping[str, Any]) -> Resources:
    """A node's ``status.allocatable`` as ``framework.Resource``. Raises ObjectError. O(resources)."""
    return _resources(_resource_list(r, status, "allocatable", "status.allocatable"), allocatable=True)


def node_images(r: FieldReader, status: Mapping[str, Any], intern: Callable[[Image], Image]) -> tuple[Image, ...]:
    """A node's ``status.images`` (names and ``sizeBytes``, absent: 0), each made shared by ``intern``.
    Raises ObjectError (a size that is not a non-negative 64-bit integer). O(images)."""
    out: list[Image] = []
    for i, image in enumerate(r.items(status, "images", "status.images")):
        size = r.integer(image, "sizeBytes", f"status.images[{i}].sizeBytes", 0, (0, 2**63 - 1))
        out.append(intern(Image(r.strings(image, "names", f"status.images[{i}].names"), size)))
    return tuple(out)


def node_selector_requirements(
    r: FieldReader, term: Mapping[str, Any], key: str, path: str
) -> tuple[NodeSelectorRequirement, ...]:
    """One NodeSelectorTerm's ``matchExpressions`` or ``matchFields`` (unvalidated: the matchers decide)."""
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


class PodAffinity:
    """A spec's affinity fields the whole profile reads, and the first term that does not parse."""

    __slots__ = ("error", "preferred", "preferred_anti", "preferred_node", "required", "required_anti")

    def __init__(self) -> None:
        self.required: tuple[PodAffinityTerm, ...] = ()
        self.required_anti: tuple[PodAffinityTerm, ...] = ()
        self.preferred: tuple[WeightedPodAffinityTerm, ...] = ()
        self.preferred_anti: tuple[WeightedPodAffinityTerm, ...] = ()
        self.preferred_node: tuple[PreferredSchedulingTerm, ...] | None = None
        self.error = ""


def _selector(value: object, what: str) -> Selector:
    """``metav1.LabelSelectorAsSelector`` (None: nothing); SelectorError naming ``what``."""
    try:
        return from_label_selector(value)  # type: ignore[arg-type]  # (a non-mapping is a SelectorError)
    except SelectorError as err:
        raise SelectorError(f"{what}: {err}") from None


def _affinity_term(r: FieldReader, term: Mapping[str, Any], path: str) -> PodAffinityTerm:
    """One PodAffinityTerm; SelectorError for a selector that does not parse (ObjectError: a wrong type)."""
    namespaces = r.strings(term, "namespaces", f"{path}.namespaces")
    topology_key = r.string(term, "topologyKey", f"{path}.topologyKey")
    match_keys = r.strings(term, "matchLabelKeys", f"{path}.matchLabelKeys")
    mismatch_keys = r.strings(term, "mismatchLabelKeys", f"{path}.mismatchLabelKeys")
    selector = _selector(term.get("labelSelector"), f"{path}.labelSelector")
    raw_ns = term.get("namespaceSelector")
    namespace_selector = None if raw_ns is None else _selector(raw_ns, f"{path}.namespaceSelector")
    return PodAffinityTerm(selector, topology_key, namespaces, namespace_selector, match_keys, mismatch_keys)


def _terms(r: FieldReader, parent: Mapping[str, Any], path: str, out: PodAffinity) -> tuple[PodAffinityTerm, ...]:
    """A required term list (``GetAffinityTerms``: one term that does not parse drops the list)."""
    key = "requiredDuringSchedulingIgnoredDuringExecution"
    try:
        listed = r.items(parent, key, f"{path}.{key}")
        return tuple(_affinity_term(r, t, f"{path}.{key}[{i}]") for i, t in enumerate(listed))
    except SelectorError as err:
        out.error = out.error or str(err)
        return ()


def _weighted(
    r: FieldReader, parent: Mapping[str, Any], path: str, out: PodAffinity
) -> tuple[WeightedPodAffinityTerm, ...]:
    """A preferred term list (``GetWeightedAffinityTerms``: one term that does not parse drops the list)."""
    key = "preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    try:
        for i, t in enumerate(r.items(parent, key, f"{path}.{key}")):
            where = f"{path}.{key}[{i}]"
            weight = r.integer(t, "weight", f"{where}.weight", 0)
            term = r.mapping(t, "podAffinityTerm", f"{where}.podAffinityTerm")
            terms.append(WeightedPodAffinityTerm(weight, _affinity_term(r, term, f"{where}.podAffinityTerm")))
    except SelectorError as err:
        out.error = out.error or str(err)
        return ()
    return tuple(terms)


def pod_affinity(r: FieldReader, spec: Mapping[str, Any], path: str) -> PodAffinity:
    """``spec.affinity``'s pod affinity and anti-affinity terms and preferred node affinity terms. Raises
    ObjectError for a wrong type; a selector that does not parse empties its list and sets ``error``.
    O(terms)."""
    out = PodAffinity()
    affinity = r.mapping(spec, "affinity", f"{path}.affinity")
    for key, required, preferred in (("podAffinity", "required", "preferred"),
                                     ("podAntiAffinity", "required_anti", "preferred_anti")):  # fmt: skip
        where = f"{path}.affinity.{key}"
        block = r.mapping(affinity, key, where)
        setattr(out, required, _terms(r, block, where, out))
        setattr(out, preferred, _weighted(r, block, where, out))
    node = r.mapping(affinity, "nodeAffinity", f"{path}.affinity.nodeAffinity")
    key = "preferredDuringSchedulingIgnoredDuringExecution"
    where = f"{path}.affinity.nodeAffinity.{key}"
    listed = r.items(node, key, where)
    if listed:  # (an empty list, as absent: the API server's protobuf does not keep one)
        preferred_node = []
        for i, t in enumerate(listed):
            p = f"{where}[{i}]"
            preference = r.mapping(t, "preference", f"{p}.preference")
            term = NodeSelectorTerm(
                node_selector_requirements(r, preference, "matchExpressions", f"{p}.preference"),
                node_selector_requirements(r, preference, "matchFields", f"{p}.preference"),
            )
            preferred_node.append(PreferredSchedulingTerm(r.integer(t, "weight", f"{p}.weight", 0), term))
        out.preferred_node = tuple(preferred_node)
    return out
