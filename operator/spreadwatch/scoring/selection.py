"""The selector a pod is spread by, per profile (``helper.DefaultSelector`` and its ancestors).

* v1.28 (``OWNER_MERGED``): the selectors of the pod's namespace's Services that select the pod are merged
  into one label set; the pod's *controller* ownerReference is followed by name — a ReplicationController
  (``v1``) merges its selector map into the set, a ReplicaSet or StatefulSet (``apps/v1``) ANDs its selector's
  requirements (an invalid or nil selector adds nothing). The owner need not match the pod.
* v1.18 (``LABEL_MERGED``): the same merge, but controllers are every RC/RS/StatefulSet of the namespace
  whose non-empty, valid selector matches the pod's labels (client-go's ``GetPodControllers``,
  ``GetPodReplicaSets``, ``GetPodStatefulSets``; a pod without labels has none).
* v1.16 / v1.12 (``ALL_OF`` / ``ANY_OF``): no merge: one selector per matching Service, RC, RS and
  StatefulSet; a pod counts if it matches all of them (v1.16) or any of them (v1.12).

Cost: O(services + controllers in the pod's namespace) per pod (O(services) for v1.28).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from spreadwatch.model import Controller, OwnerRef, Pod, Service, WorkloadKey
from spreadwatch.scoring.profiles import Profile, SelectorMode
from spreadwatch.selectors import EVERYTHING, Selector, selector_from_set

__all__ = [
    "ClusterLookup",
    "SpreadSelector",
    "build_spread_selector",
    "followed_owner",
    "matching_services",
    "owner_merged_selector",
]


class ClusterLookup(Protocol):
    """What selector building needs from the cluster state (implemented by the index and tests)."""

    def services_in(self, namespace: str) -> Iterable[Service]: ...

    def controllers_in(self, kind: str, namespace: str) -> Iterable[Controller]: ...

    def controller(self, key: WorkloadKey) -> Controller | None: ...


class SpreadSelector(NamedTuple):
    """The pods a pod is spread against: one merged selector, or a list matched with all/any (a tuple: the
    index makes one per workload, with ``tuple.__new__``)."""

    mode: SelectorMode
    selectors: tuple[Selector, ...]

    @property
    def empty(self) -> bool:
        """True when no pod can count (``selector.Empty()`` / ``len(selectors) == 0``): every node scores max."""
        if self.mode in (SelectorMode.OWNER_MERGED, SelectorMode.LABEL_MERGED):
            return self.selectors[0].empty
        return not self.selectors

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with ``labels`` counts (namespace and node checks are the caller's). O(r)."""
        selectors = self.selectors
        if len(selectors) == 1:
            return selectors[0].matches(labels)
        if self.mode is SelectorMode.ANY_OF:
            return any(s.matches(labels) for s in selectors)
        return all(s.matches(labels) for s in selectors)

    def __str__(self) -> str:
        if self.mode is SelectorMode.ANY_OF:
            return " OR ".join(f"({s})" for s in self.selectors)
        if len(self.selectors) == 1:  # the usual case: that selector's text ("" when it is empty)
            return str(self.selectors[0])
        return ",".join(text for text in map(str, self.selectors) if text)


def matching_services(pod: Pod, lookup: ClusterLookup) -> list[Service]:
    """``GetPodServices``: Services of the pod's namespace whose (non-nil) selector matches its labels."""
    labels = pod.labels
    return [
        svc
        for svc in lookup.services_in(pod.namespace)
        if svc.selector is not None and svc.selector.items() <= labels.items()
    ]


def _matching_controllers(pod: Pod, kind: str, lookup: ClusterLookup) -> list[Controller]:
    """The listers' ``GetPod*``: valid, non-empty selectors that match; none for a pod without labels.

    ``GetPodStatefulSets`` fails as a whole (so no StatefulSet counts) when any StatefulSet of the namespace
    has an invalid selector; the other listers skip invalid ones.
    """
    if not pod.labels:
        return []
    controllers = list(lookup.controllers_in(kind, pod.namespace))
    if kind == "StatefulSet" and any(c.selector_error is not None for c in controllers):
        return []
    return [
        c for c in controllers if c.selector_error is None and not c.selector.empty and c.selector.matches(pod.labels)
    ]


def _merge(into: dict[str, str], extra: Mapping[str, str] | None) -> None:
    if extra:
        into.update(extra)


def followed_owner(pod: Pod) -> OwnerRef | None:
    """The pod's controller ownerReference if v1.28's selector follows it (a ``v1`` ReplicationController, an
    ``apps/v1`` ReplicaSet or StatefulSet), else None. O(1)."""
    owner = pod.controller
    if owner is None:
        return None
    api_version, kind = owner.api_version, owner.kind
    if (api_version == "v1" and kind == "ReplicationController") or (
        api_version == "apps/v1" and kind in ("ReplicaSet", "StatefulSet")
    ):
        return owner
    return None


def owner_merged_selector(services: Iterable[Service], owner: Controller | None) -> Selector:
    """v1.28's merged selector from the Services that select the pod (in the namespace's order) and the
    controller its :func:`followed_owner` reference names (None: none, or not found): the Services' merged
    set, the RC's map merged in or the RS/StatefulSet's requirements added: one selector built
    (``selector_from_set`` then ``.Add``, at once). O(services + requirements)."""
    label_set: dict[str, str] = {}
    for svc in services:
        _merge(label_set, svc.selector)
    if owner is not None:
        if owner.kind == "ReplicationController":
            _merge(label_set, owner.selector_map)
        elif owner.selector_error is None and not owner.selector.nothing:
            return selector_from_set(label_set, owner.selector.requirements)
    return selector_from_set(label_set)


def _owner_merged(pod: Pod, lookup: ClusterLookup) -> Selector:
    """:func:`owner_merged_selector` of the pod's matching Services and followed controller."""
    ref = followed_owner(pod)
    owner = lookup.controller(WorkloadKey(pod.namespace, ref.kind, ref.name)) if ref is not None else None
    return owner_merged_selector(matching_services(pod, lookup), owner)


def _label_merged(pod: Pod, lookup: ClusterLookup) -> Selector:
    label_set: dict[str, str] = {}
    for svc in matching_services(pod, lookup):
        _merge(label_set, svc.selector)
    for rc in _matching_controllers(pod, "ReplicationController", lookup):
        _merge(label_set, rc.selector_map)
    selector = selector_from_set(label_set) if label_set else EVERYTHING
    for kind in ("ReplicaSet", "StatefulSet"):
        for ctrl in _matching_controllers(pod, kind, lookup):
            selector = selector.add(*ctrl.selector.requirements)
    return selector


def _selector_list(pod: Pod, lookup: ClusterLookup) -> tuple[Selector, ...]:
    selectors = [selector_from_set(svc.selector or {}) for svc in matching_services(pod, lookup)]
    for kind in ("ReplicationController", "ReplicaSet", "StatefulSet"):
        selectors.extend(c.selector for c in _matching_controllers(pod, kind, lookup))
    return tuple(selectors)


def build_spread_selector(pod: Pod, lookup: ClusterLookup, profile: Profile) -> SpreadSelector:
    """The selector ``pod`` is spread by under ``profile`` (see the module docstring)."""
    mode = profile.mode
    if mode is SelectorMode.OWNER_MERGED:
        return SpreadSelector(mode, (_owner_merged(pod, lookup),))
    if mode is SelectorMode.LABEL_MERGED:
        return SpreadSelector(mode, (_label_merged(pod, lookup),))
    return SpreadSelector(mode, _selector_list(pod, lookup))
