"""index/images.py: the image holders kept node by node, against a reference rebuilt from the nodes present.

The reference is upstream's ``imageStates`` as sets (every name → the set of nodes listing it, its size the one
the first node added with it reported) and ImageLocality's sum computed from it afresh; the rows cross the size
where a name's holders stop being a tuple.
"""

from __future__ import annotations

import random

import pytest

from spreadwatch.index.images import NodeImages
from spreadwatch.model import Image, Node, PodNeeds
from spreadwatch.scoring.image_locality import image_priority

_MIB = 1024 * 1024


def _node(name: str, images: tuple[Image, ...]) -> Node:
    return Node(name=name, labels={}, images=images)


def _reference_scores(nodes: dict[str, Node], sizes: dict[str, int], needs: PodNeeds) -> dict[str, int]:
    """ImageLocality from scratch: per node, the sum of its images' size × spread, scaled (0s left out)."""
    holders: dict[str, set[str]] = {}
    for node in nodes.values():
        for image in node.images:
            for name in image.names:
                holders.setdefault(name, set()).add(node.name)
    out = {}
    for node in nodes.values():
        names = {n for image in node.images for n in image.names}
        total = sum(int(float(sizes[n]) * (len(holders[n]) / len(nodes))) for n in needs.images if n in names)
        if (score := image_priority(total, needs.containers)) > 0:
            out[node.name] = score
    return out


@pytest.mark.parametrize(
    ("nodes", "changes"),
    [
        pytest.param(3, 10, id="3-nodes:tuples-only"),
        pytest.param(70, 200, id="70-nodes>64:a-base-image-becomes-a-list"),
        pytest.param(150, 400, id="150-nodes:lists-shrink-and-grow"),
    ],
)
def test_holders_follow_every_add_change_and_removal(nodes: int, changes: int) -> None:
    rng = random.Random(nodes)
    catalogue = [Image((f"base:{i}", f"base@{i}"), 300 * _MIB) for i in range(2)]  # on every node
    catalogue += [Image((f"app-{i}:v1",), (i + 1) * 40 * _MIB) for i in range(12)]
    images, present, sizes = NodeImages(), {}, {}

    def listing() -> tuple[Image, ...]:
        picked = rng.sample(catalogue[2:], rng.randint(0, 4))
        return (*catalogue[:2], *picked, *(picked[:1] if rng.random() < 0.2 else ()))  # (a repeat, now and then)

    def put(name: str, new: Node | None) -> None:
        images.node_changed(present.get(name), new)
        if new is None:
            present.pop(name, None)
        else:
            present[name] = new
            for image in new.images:
                for n in image.names:
                    sizes.setdefault(n, image.size)

    for i in range(nodes):
        put(f"node-{i}", _node(f"node-{i}", listing()))
    for _ in range(changes):
        name = f"node-{rng.randrange(nodes)}"
        put(name, None if name in present and rng.random() < 0.3 else _node(name, listing()))
        alive = {n for node in present.values() for image in node.images for n in image.names}
        for gone in set(sizes) - alive:  # (upstream forgets a name with its last holder)
            del sizes[gone]
    expected = {}
    for node in present.values():
        for image in node.images:
            for n in image.names:
                expected.setdefault(n, set()).add(node.name)
    assert {n: sorted(h) for n, h in images.holders.items()} == {n: sorted(h) for n, h in expected.items()}
    assert all(len(h) == len(set(h)) for h in images.holders.values())  # each node once
    assert images.nodes == len(present)
    for wanted in (("base:0", "app-3:v1"), ("app-11:v1",), ("app-5:v1", "app-6:v1", "base@1")):
        needs = PodNeeds(images=wanted, containers=len(wanted))
        assert dict(images.scores(needs)) == _reference_scores(present, sizes, needs)
