"""VolumeRestrictions, VolumeBinding and VolumeZone for the incoming pod's PersistentVolumeClaims
(``pkg/scheduler/framework/plugins/volumerestrictions``, ``volumebinding`` and ``volumezone``, v1.36.4), for the
claims kube-scheduler can decide from the claim alone.

* A claim **bound** to a volume (``spec.volumeName`` and the ``pv.kubernetes.io/bind-completed`` annotation)
  pins the pod: VolumeBinding passes only nodes matching the volume's required node affinity, VolumeZone
  only nodes whose zone and region labels (GA or beta) are among the volume's (``a__b`` lists several).
  A bound volume that does not exist rejects every node (VolumeZone's PreFilter).
* A claim naming a volume whose binding is not complete is an unbound immediate claim: VolumeBinding's
  PreFilter rejects every node until the PersistentVolume controller completes it.
* A claim that does not exist rejects every node (the PreFilter of the first of VolumeRestrictions,
  VolumeBinding and VolumeZone in the profile: each looks the claim up), except a StatefulSet's claim for its
  next ordinal, which the StatefulSet controller creates before the pod (``new_claims``): it is provisioned
  where the pod lands (a WaitForFirstConsumer class is assumed) and constrains nothing.
* A ReadWriteOncePod claim another pod in the scheduler's cache already uses fails VolumeRestrictions' Filter
  on every node (``rwop``: the caller knows the pods).
* A claim without a volume yet depends on its StorageClass's binding mode, which spreadwatch does not read:
  it constrains nothing, and the prediction says it is partial.

Pure: O(claims) to plan, O(claims × terms) per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from spreadwatch.model import Node, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim
from spreadwatch.scoring.candidates import node_term_matches

__all__ = [
    "VOLUME_BINDING",
    "VOLUME_RESTRICTIONS",
    "VOLUME_ZONE",
    "VolumePlan",
    "plan_volumes",
]

VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
VOLUME_ZONE: Final = "VolumeZone"
#: the PreFilters that look each claim up and reject the pod when one does not exist, in the default order
_CLAIM_LOOKUPS: Final = (VOLUME_RESTRICTIONS, VOLUME_BINDING, VOLUME_ZONE)
_TOPOLOGY_LABELS: Final = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
_GA: Final = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
_ZONE_DELIMITER: Final = "__"


def _zones(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the ``__``-separated zones, trimmed; None when one is empty (the label is then
    ignored). O(len)."""
    zones = [z.strip() for z in value.split(_ZONE_DELIMITER)]
    return None if any(not z for z in zones) else frozenset(zones)


@dataclass(frozen=True, slots=True)
class VolumePlan:
    """What the pod's claims allow: ``rejected_by`` the plugins whose PreFilter rejects every node (the
    profile's first enabled one does; () none), the bound volumes' node affinities (VolumeBinding), their
    topology labels (VolumeZone), the ReadWriteOncePod claims (VolumeRestrictions) and why the plan is
    partial (claims whose StorageClass decides)."""

    rejected_by: tuple[str, ...] = ()
    affinities: tuple[tuple[NodeSelectorTerm, ...], ...] = ()
    topologies: tuple[tuple[str, frozenset[str]], ...] = ()
    unbound: tuple[str, ...] = ()
    has_claims: bool = False
    rwop: tuple[str, ...] = ()

    def rejecting(self, filters: tuple[str, ...]) -> str:
        """The plugin of ``filters`` (the profile's, in order) whose PreFilter rejects the pod ("" none)."""
        return next((p for p in filters if p in self.rejected_by), "")

    def binding_passes(self, node: Node) -> bool:
        """VolumeBinding's Filter for the bound claims. O(volumes × terms)."""
        return all(any(node_term_matches(t, node) for t in terms) for terms in self.affinities)

    def zone_passes(self, labels: Mapping[str, str]) -> bool:
        """VolumeZone's Filter: a node without any zone or region label passes. O(volumes)."""
        if not self.topologies or not any(key in labels for key in _TOPOLOGY_LABELS):
            return True
        for key, values in self.topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(_GA.get(key, key))
            if value is None or value not in values:
                return False
        return True


_NO_CLAIMS: Final = VolumePlan()


def plan_volumes(
    namespace: str,
    claims: Iterable[str],
    new_claims: Iterable[str],
    claim_of: Callable[[str, str], PersistentVolumeClaim | None],
    volume_of: Callable[[str], PersistentVolume | None],
) -> VolumePlan:
    """The :class:`VolumePlan` of a pod in ``namespace`` with these claim names (``new_claims``: claims the
    StatefulSet controller creates if missing). O(claims)."""
    creating = set(new_claims)
    names = [*claims, *creating]
    if not names:
        return _NO_CLAIMS
    found = [(name, claim_of(namespace, name)) for name in names]
    if any(claim is None and name not in creating for name, claim in found):
        return VolumePlan(_CLAIM_LOOKUPS, has_claims=True)
    affinities: list[tuple[NodeSelectorTerm, ...]] = []
    topologies: list[tuple[str, frozenset[str]]] = []
    unbound: list[str] = []
    rwop: list[str] = []
    rejected: list[str] = []
    for name, claim in found:
        if claim is None:
            continue
        if claim.read_write_once_pod:
            rwop.append(name)
        if not claim.volume_name:
            unbound.append(name)
            continue
        if not claim.bound:  # "pod has unbound immediate PersistentVolumeClaims"
            rejected.append(VOLUME_BINDING)
            continue
        volume = volume_of(claim.volume_name)
        if volume is None:  # 'persistentvolume "…" not found'
            rejected.append(VOLUME_ZONE)
            continue
        if volume.node_terms is not None:
            affinities.append(volume.node_terms)
        for key in _TOPOLOGY_LABELS:
            value = volume.labels.get(key)
            if value is not None:
                zones = _zones(value)
                if zones is not None:
                    topologies.append((key, zones))
    return VolumePlan(tuple(dict.fromkeys(rejected)), tuple(affinities), tuple(topologies), tuple(unbound),
                      bool(names), tuple(rwop))  # fmt: skip
