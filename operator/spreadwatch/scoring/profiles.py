"""The SelectorSpread generations spreadwatch reproduces, as data.

=========  ==================  ========================================================  =====  ==========
profile    kube-scheduler      how the pod's selector is built                            max    zone labels
=========  ==================  ========================================================  =====  ==========
v1.28      v1.22 – v1.28       one merged selector; the controller ownerReference is       100    GA + beta
                               followed (RC map merged, RS/StatefulSet requirements ANDed)
v1.18      v1.17 – v1.21       one merged selector; RCs/RSs/StatefulSets found by labels   100    GA + beta
v1.16      v1.14 – v1.16       list of selectors, a pod counts if it matches all of them    10    beta only
v1.12      v1.12 – v1.13       list of selectors, a pod counts if it matches any of them    10    beta only
=========  ==================  ========================================================  =====  ==========

Pods with topologySpreadConstraints are skipped (every node scores 0) by the profiles whose upstream code
does so (``skips_topology_spread``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from spreadwatch.errors import ProfileError

__all__ = ["DEFAULT_PROFILE", "PROFILES", "Profile", "SelectorMode", "get_profile"]


class SelectorMode(StrEnum):
    """How the pod's spreading selector is assembled and matched."""

    OWNER_MERGED = "owner-merged"  # v1.22+: helper.DefaultSelector following the controller ownerReference
    LABEL_MERGED = "label-merged"  # v1.17-v1.21: merged, controllers found with the listers' GetPod* functions
    ALL_OF = "all-of"  # v1.14-v1.16: []Selector, a pod counts when it matches all
    ANY_OF = "any-of"  # v1.12-v1.13: []Selector, a pod counts when it matches any


@dataclass(frozen=True, slots=True)
class Profile:
    """One kube-scheduler generation of SelectorSpread."""

    name: str
    releases: str
    mode: SelectorMode
    max_score: int
    ga_zone_labels: bool  # also reads topology.kubernetes.io/{zone,region} (the beta labels win)
    skips_topology_spread: bool

    @property
    def max_score_float(self) -> float:
        return float(self.max_score)


PROFILES: Final[dict[str, Profile]] = {
    p.name: p
    for p in (
        Profile("v1.28", "v1.22-v1.28", SelectorMode.OWNER_MERGED, 100, True, True),
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
