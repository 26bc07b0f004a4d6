"""The images kube-scheduler's cache knows, kept current node by node: :class:`NodeImages`.

Per image name, the nodes that have it and its size as the cache keeps it (``cache.imageStates``): the size
the first node added with that name reported; when no node has the name any more the entry goes, and the
next node to report it sets the size again (a node update removes its old images and adds its new ones, as
``UpdateNode`` does). ImageLocality's scores of one pod's images (:meth:`NodeImages.scores`) are cached until
an image or the node count changes. Costs: a node event O(its image names × :data:`_TUPLE_MAX`); a pod's
scores O(nodes having its images) the first time, O(pod images) when no node could score above 0 (most pods:
small images).

Memory: a name's holders are a tuple of the nodes' own name strings up to :data:`_TUPLE_MAX` of them (48 + 8
bytes a node), a list beyond (56 + ~9 bytes a node: appending stays O(1), so loading 5,000 nodes that all hold
a base image is not quadratic). At the envelope (5,000 nodes, 7,367 image names held 239,472 times, most by
10-60 nodes) a set per name took 19.1 MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from spreadwatch.model import Node, PodNeeds
from spreadwatch.scoring.image_locality import image_priority

__all__ = ["NodeImages"]

_CACHED: Final = 4096  # pods' image scores kept (cleared when full)
#: Holders of a name kept as a tuple up to this many (adding one copies it); a list beyond
_TUPLE_MAX: Final = 64

_Holders = tuple[str, ...] | list[str]


class NodeImages:
    """Image name → (size, holders) and ImageLocality's sparse scores per pod image list."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.holders: dict[str, _Holders] = {}
        self.nodes = 0  # nodes in the scheduler's snapshot (ImageLocality's total)
        self._scores: dict[tuple[tuple[str, ...], int], dict[str, int]] = {}

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A node added, changed or removed: its names out (old), then in (new). O(names)."""
        if old is not None and new is not None and old.images == new.images:
            return
        if old is not None:
            for image in old.images:
                for name in image.names:
                    self._drop(name, old.name)
        if new is not None:  # (each name once: the node holds none of them now)
            sizes: dict[str, int] = {}
            for image in new.images:
                for name in image.names:
                    sizes.setdefault(name, image.size)
            for name, size in sizes.items():
                self._add(name, new.name, size)
        self.nodes += (new is not None) - (old is not None)
        self._scores.clear()

    def _add(self, name: str, node: str, size: int) -> None:
        """``node``, not a holder yet, holds image ``name`` (of ``size`` bytes when it is the first). O(1)
        amortised (O(:data:`_TUPLE_MAX`) while a tuple)."""
        holders = self.holders.get(name)
        if holders is None:
            self.holders[name] = (node,)
            self.sizes[name] = size
        elif isinstance(holders, list):
            holders.append(node)
        else:
            self.holders[name] = (*holders, node) if len(holders) < _TUPLE_MAX else [*holders, node]

    def _drop(self, name: str, node: str) -> None:
        """``node`` no longer holds image ``name``; the name goes with its last holder. O(holders)."""
        holders = self.holders.get(name)
        if holders is None or node not in holders:
            return
        if isinstance(holders, list):
            holders.remove(node)
        else:
            self.holders[name] = holders = tuple(n for n in holders if n != node)
        if not holders:
            del self.holders[name], self.sizes[name]

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
        found = {}
        total = float(self.nodes)
        held = [(name, holders) for name in needs.images if (holders := self.holders.get(name))]
        scaled = [int(float(self.sizes[name]) * (float(len(holders)) / total)) for name, holders in held]
        if image_priority(sum(scaled), needs.containers):  # (else no node scores above 0: the score only grows)
            for (_, holders), amount in zip(held, scaled, strict=True):
                for node in holders:
                    sums[node] = sums.get(node, 0) + amount
            found = {node: score for node, s in sums.items() if (score := image_priority(s, needs.containers))}
        if len(self._scores) >= _CACHED:
            self._scores.clear()
        self._scores[key] = found
        return found
