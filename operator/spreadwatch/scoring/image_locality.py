"""ImageLocality's score, integer for integer (``pkg/scheduler/framework/plugins/imagelocality``, v1.36.4).

For each image of the incoming pod (init containers, containers and image volumes, repeats counted; names
normalised with ``:latest``) that the node has, the image's size times the share of the cluster's nodes that
have it; the sum is clamped between 23 MiB and 1000 MiB × the pod's containers and mapped to 0-100.

:class:`ImageSpread` holds what the scheduler's cache knows of each image name: its size (the size reported
by the first node the cache saw with that name, as ``cache.imageStates`` keeps it) and how many nodes have
it. Pure: O(pod images) per node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from spreadwatch.model import Node, PodNeeds

__all__ = ["IMAGE_LOCALITY", "ImageSpread", "image_locality_score", "image_priority"]

IMAGE_LOCALITY: Final = "ImageLocality"
_MB: Final = 1024 * 1024
_MIN_THRESHOLD: Final = 23 * _MB
_MAX_CONTAINER_THRESHOLD: Final = 1000 * _MB
_MAX_NODE_SCORE: Final = 100


@dataclass(slots=True)
class ImageSpread:
    """Every image name of the cluster's nodes: size (first node seen) and the number of nodes having it;
    ``total_nodes`` the number of nodes of the scheduler's snapshot. O(1) look-ups."""

    sizes: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    total_nodes: int = 0

    @classmethod
    def of(cls, nodes: Iterable[Node]) -> ImageSpread:
        """The spread of the images of ``nodes``, in the order the scheduler's cache added them. O(images)."""
        spread = cls()
        for node in nodes:
            spread.total_nodes += 1
            seen: set[str] = set()
            for image in node.images:
                for name in image.names:
                    spread.sizes.setdefault(name, image.size)
                    if name not in seen:
                        seen.add(name)
                        spread.counts[name] = spread.counts.get(name, 0) + 1
        return spread


def image_priority(total: int, containers: int) -> int:
    """``calculatePriority``: the summed scaled sizes clamped and mapped to 0-100. O(1)."""
    max_threshold = _MAX_CONTAINER_THRESHOLD * containers
    if total < _MIN_THRESHOLD:
        total = _MIN_THRESHOLD
    elif total > max_threshold:
        total = max_threshold
    return _MAX_NODE_SCORE * (total - _MIN_THRESHOLD) // (max_threshold - _MIN_THRESHOLD)


def image_locality_score(needs: PodNeeds, node_names: frozenset[str] | set[str], spread: ImageSpread) -> int:
    """ImageLocality's score of a node having the image names ``node_names``. O(pod images)."""
    total = 0
    for name in needs.images:
        if name in node_names:
            scale = float(spread.counts.get(name, 0)) / float(spread.total_nodes)
            total += int(float(spread.sizes.get(name, 0)) * scale)
    return image_priority(total, needs.containers)
