"""The seed documents' four worked examples, exactly (selector_spread walk-through, v1.28 profile).

labels1 = {foo: bar, baz: blah} (the incoming pod's labels), labels2 = {bar: foo, baz: blah}.
"""

from __future__ import annotations

import pytest

from k8s_objects import node, pod, service
from spreadwatch.analysis import score_objects

L1 = {"foo": "bar", "baz": "blah"}
L2 = {"bar": "foo", "baz": "blah"}
INCOMING = pod("incoming", L1)
ZONES = {"n1": "z1", "n2": "z2", "n3": "z2", "n4": "z3", "n5": "z3", "n6": "z3"}


def _six_nodes() -> list[dict[str, object]]:
    return [node(n, z) for n, z in ZONES.items()]


CASES = [
    pytest.param(
        [
            node("n1"),
            node("n2"),
            pod("a", L1, "n1"),
            pod("b", L2, "n1"),
            pod("c", L1, "n2"),
            pod("d", L1, "n2"),
            service("s", L1),
        ],
        {"n1": 50, "n2": 0},
        id="ex1 no zones: counts n1=1 n2=2, max 2 -> n1 100*(2-1)/2=50, n2 100*(2-2)/2=0",
    ),
    pytest.param(
        [
            node("n1"),
            node("n2"),
            pod("a", L1, "n1"),
            pod("b", L2, "n1"),
            pod("c", L1, "n2"),
            service("s", {"baz": "blah"}),
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "metadata": {"name": "rc", "namespace": "default"},
                "spec": {"selector": {"foo": "bar"}},
            },
        ],
        {"n1": 0, "n2": 50},
        id="ex2 under v1.28: the RC is not the pod's owner, so only baz=blah counts: n1=2 n2=1 -> 0, 50",
    ),
    pytest.param(
        [
            *_six_nodes(),
            pod("p1", L2, "n1"),
            pod("p2", L1, "n2"),
            pod("p3", L1, "n3"),
            pod("p4", L2, "n4"),
            pod("p5", L1, "n5"),
            service("s", L1),
        ],
        {"n1": 100, "n2": 0, "n3": 0, "n4": 66, "n5": 33, "n6": 66},
        id="ex3 zones: nodes 0,1,1,0,1,0 zones z1=0 z2=2 z3=1; n4 = 100/3 + 2/3*50 = 66",
    ),
    pytest.param(
        [
            *_six_nodes(),
            pod("p1", L1, "n1"),
            pod("p2", L1, "n2"),
            pod("p3", L2, "n3"),
            pod("p4", L1, "n4"),
            service("s", L1),
        ],
        {"n1": 0, "n2": 0, "n3": 33, "n4": 0, "n5": 33, "n6": 33},
        id="ex4 zones: nodes 1,1,0,1,0,0 every zone 1 -> zone part 0; empty nodes 100/3=33",
    ),
]


@pytest.mark.parametrize(("objects", "expected"), CASES)
def test_seed_example(objects: list[dict[str, object]], expected: dict[str, int]) -> None:
    assert score_objects(objects, INCOMING).scores == expected


def test_example_2_label_matched_rc() -> None:
    """ex2: service {baz: blah} + RC {foo: bar} merge to foo=bar,baz=blah; n1 has 1 match (labels2 lacks
    foo), n2 has 1 -> max 1, both 100*(1-1)/1 = 0. The seed's RC is found by labels: profile v1.18."""
    objects = [
        node("n1"),
        node("n2"),
        pod("a", L1, "n1"),
        pod("b", L2, "n1"),
        pod("c", L1, "n2"),
        service("s", {"baz": "blah"}),
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc", "namespace": "default"},
            "spec": {"selector": {"foo": "bar"}},
        },
    ]
    result = score_objects(objects, INCOMING, profile="v1.18")
    assert str(result.selector) == "baz=blah,foo=bar"
    assert result.scores == {"n1": 0, "n2": 0}
