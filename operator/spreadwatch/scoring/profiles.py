"""The SelectorSpread generations spreadwatch reproduces, as data.

=========  ==================  ========================================================  =====  ==========
profile    kube-scheduler      how the pod's selector is built                            max    zone labels
=========  ==================  ========================================================  =====  ==========
v1.28      v1.22 – v1.28       one merged selector; the controller ownerReference is       100    GA + beta
                               followed (RC map merged, RS/StatefulSet requirements ANDed)
v1.18      v1.17 – v1.21       one merged selector; RCs/RSs/StatefulSets found by labels   100    GA + beta
v1.16      v1.14 – v1.16       list of selectors, a pod counts if it matches all of them    10    beta only
v1.12      v1.12 – v1.13       list of selectors, a pod counts if it matches any of them    10    beta only
v1.29      v1.29 – v1.36       PodTopologySpread (scoring/topology.py): the pod's own       100    GA only
                               ScheduleAnyway constraints, or the default constraints with
                               the v1.28 selector
=========  ==================  ========================================================  =====  ==========

Pods with topologySpreadConstraints are skipped (every node scores 0) by the profiles whose upstream code
does so (``skips_topology_spread``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from spreadwatch.errors import ProfileError
from spreadwatch.model import SpreadConstraint
from spreadwatch.selectors import EVERYTHING

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraints",
    "Profile",
    "SelectorMode",
    "get_profile",
]


class SelectorMode(StrEnum):
    """How the pod's spreading selector is assembled and matched."""

    OWNER_MERGED = "owner-merged"  # v1.22+: helper.DefaultSelector following the controller ownerReference
    LABEL_MERGED = "label-merged"  # v1.17-v1.21: merged, controllers found with the listers' GetPod* functions
    ALL_OF = "all-of"  # v1.14-v1.16: []Selector, a pod counts when it matches all
    ANY_OF = "any-of"  # v1.12-v1.13: []Selector, a pod counts when it matches any


@dataclass(frozen=True, slots=True)
class DefaultConstraints:
    """PodTopologySpreadArgs: the constraints applied to pods without their own, and how they were set.

    ``system`` is ``defaultingType: System`` (kube-scheduler's built-in constraints; nodes missing a key
    still score); ``List`` constraints, like a pod's own, leave out nodes missing any of their keys.
    """

    constraints: tuple[SpreadConstraint, ...]
    system: bool
    source: str = "system defaults"


#: kube-scheduler's ``systemDefaultConstraints`` (hostname maxSkew 3, GA zone maxSkew 5, ScheduleAnyway).
SYSTEM_DEFAULT_CONSTRAINTS: Final = DefaultConstraints(
    (
        SpreadConstraint(3, "kubernetes.io/hostname", "ScheduleAnyway", EVERYTHING),
        SpreadConstraint(5, "topology.kubernetes.io/zone", "ScheduleAnyway", EVERYTHING),
    ),
    system=True,
)


@dataclass(frozen=True, slots=True)
class Profile:
    """One kube-scheduler generation of SelectorSpread."""

    name: str
    releases: str
    mode: SelectorMode
    max_score: int
    ga_zone_labels: bool  # also reads topology.kubernetes.io/{zone,region} (the beta labels win)
    skips_topology_spread: bool
    pod_topology_spread: bool = False  # scored by the PodTopologySpread plugin, not SelectorSpread
    #: PodTopologySpread's default constraints (``--scheduler-config`` replaces them); unused otherwise
    default_constraints: DefaultConstraints = field(default=SYSTEM_DEFAULT_CONSTRAINTS, compare=False)
    #: ``percentageOfNodesToScore`` (``--scheduler-config``, ``--percentage-of-nodes-to-score``): 1-100, or 0
    #: for kube-scheduler's adaptive default (scoring/window.py)
    score_percentage: int = field(default=0, compare=False)


PROFILES: Final[dict[str, Profile]] = {
    p.name: p
    for p in (
        Profile("v1.28", "v1.22-v1.28", SelectorMode.OWNER_MERGED, 100, True, True),
        Profile("v1.29", "v1.29-v1.36", SelectorMode.OWNER_MERGED, 100, True, False, pod_topology_spread=True),
        Profile("v1.18", "v1.17-v1.21", SelectorMode.LABEL_MERGED, 100, True, True),
        Profile("v1.16", "v1.14-v1.16", SelectorMode.ALL_OF, 10, False, False),
        Profile("v1.12", "v1.12-v1.13", SelectorMode.ANY_OF, 10, False, False),
    )
}

DEFAULT_PROFILE: Final = "v1.28"


def get_profile(name: str) -> Profile:
    """Look a profile up by name; raise ProfileError listing the valid names."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ProfileError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}") from None
