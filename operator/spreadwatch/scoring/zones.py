"""Zone keys, as ``pkg/util/node.GetZoneKey`` computes them.

The legacy ``failure-domain.beta.kubernetes.io/{zone,region}`` labels win over the GA
``topology.kubernetes.io/{zone,region}`` ones when both are present (even when the beta value is empty);
profiles older than v1.17 know only the beta labels, and PodTopologySpread (v1.29) only the GA ones: there a
node without ``topology.kubernetes.io/zone`` has no zone (its region is then ignored). A node with neither a
region nor a zone has no zone.
Upstream's key is ``region + ":\\x00:" + zone``; spreadwatch keeps the (region, zone) pair. O(1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from spreadwatch.scoring.profiles import Profile

__all__ = [
    "BETA_REGION",
    "BETA_ZONE",
    "GA_REGION",
    "GA_ZONE",
    "ZoneKey",
    "zone_key",
]

BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
GA_ZONE: Final = "topology.kubernetes.io/zone"
GA_REGION: Final = "topology.kubernetes.io/region"

ZoneKey = tuple[str, str]  # (region, zone)


def zone_key(labels: Mapping[str, str], profile: Profile) -> ZoneKey | None:
    """The node's (region, zone), or None when it has no zone (upstream's empty key)."""
    if profile.pod_topology_spread:
        ga_zone = labels.get(GA_ZONE)
        return None if ga_zone is None else (labels.get(GA_REGION, ""), ga_zone)
    zone = labels.get(BETA_ZONE)
    if zone is None:
        zone = labels.get(GA_ZONE, "") if profile.ga_zone_labels else ""
    region = labels.get(BETA_REGION)
    if region is None:
        region = labels.get(GA_REGION, "") if profile.ga_zone_labels else ""
    if not region and not zone:
        return None
    return (region, zone)
