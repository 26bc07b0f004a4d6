"""The images kube-scheduler's cache knows, kept current node by node: :class:`NodeImages`.

Per image name, the nodes that have it and its size as the cache keeps it (``cache.imageStates``): the size
the first node added with that name reported; when no node has the name any more the entry goes, and the
next node to report it sets the size again (a node update removes its old images and adds its new ones, as
``UpdateNode`` does). ImageLocality's scores of one pod's images (:meth:`NodeImages.scores`) are cached until
an image or the node count changes. Costs: a node event O(its image names); a pod's scores O(nodes having its
images) the first time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from spreadwatch.model import Node, PodNeeds
from spreadwatch.scoring.image_locality import image_priority

__all__ = ["NodeImages"]

_CACHED: Final = 4096  # pods' image scores kept (cleared when full)


class NodeImages:
    """Image name → (size, holders) and ImageLocality's sparse scores per pod image list."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.holders: dict[str, set[str]] = {}
        self.nodes = 0  # nodes in the scheduler's snapshot (ImageLocality's total)
        self._scores: dict[tuple[tuple[str, ...], int], dict[str, int]] = {}

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A node added, changed or removed: its names out (old), then in (new). O(names)."""
        if old is not None and new is not None and old.images == new.images:
            return
        if old is not None:
            for image in old.images:
                for name in image.names:
                    holders = self.holders.get(name)
                    if holders is not None:
                        holders.discard(old.name)
                        if not holders:
                            del self.holders[name], self.sizes[name]
        if new is not None:
            for image in new.images:
                for name in image.names:
                    holders = self.holders.get(name)
                    if holders is None:
                        self.holders[name] = {new.name}
                        self.sizes[name] = image.size
                    else:
                        holders.add(new.name)
        self.nodes += (new is not None) - (old is not None)
        self._scores.clear()

    def count_changed(self) -> None:
        """The node count changed without an image change (a node without images came or went)."""
        self._scores.clear()

    def scores(self, needs: PodNeeds) -> Mapping[str, int]:
        """ImageLocality's score per node with a positive one (every other node scores 0). O(1) cached."""
        key = (needs.images, needs.containers)
        found = self._scores.get(key)
        if found is not None:
            return found
        sums: dict[str, int] = {}
        total = float(self.nodes)
        for name in needs.images:
            holders = self.holders.get(name)
            if not holders:
                continue
            scaled = int(float(self.sizes[name]) * (float(len(holders)) / total))
            for node in holders:
                sums[node] = sums.get(node, 0) + scaled
        found = {node: score for node, s in sums.items() if (score := image_priority(s, needs.containers))}
        if len(self._scores) >= _CACHED:
            self._scores.clear()
        self._scores[key] = found
        return found
