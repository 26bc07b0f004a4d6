"""PodTopologySpread (profile v1.29): the issue's golden numbers and the rules that decide integers.

Weights are Go's math.Log: log(4)=1.3863, log(5)=1.6094, log(6)=1.7918, log(8)=2.0794.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.analysis import score_objects
from spreadwatch.scoring.topology import SKIP_EMPTY_SELECTOR, SKIP_HARD_ONLY, SKIP_NO_NODES, normalize

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _docs(name: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all((EXAMPLES / name).read_text()):
        if doc and doc.get("kind") == "List":
            docs.extend(doc["items"])
        elif doc:
            docs.append(doc)
    return docs


def test_examples_cluster_checkout_golden() -> None:
    """Issue 14's numbers, measured with the real plugin: 6 candidates (hostname weight log 8 = 2.0794),
    zone domains a, b, c and "" for zoneless node-legacy (beta label only; weight log 6 = 1.7918); pods
    b1:3, c1:1. Raw: a1/a2 0+2+0+4=6; b1 3*2.0794+2+3*1.7918+4=17.61->18; b2 2+5.375+4=11.38->11;
    c1 2.079+2+1.792+4=9.87->10; legacy 2 (no zone term). min 2, max 18: 100*(20-s)//18."""
    (pod,) = _docs("pod.yaml")
    result = score_objects(_docs("cluster.yaml"), pod, profile="v1.29")
    assert dict(result.scores) == {
        "node-a1": 77,
        "node-a2": 77,
        "node-b1": 11,
        "node-b2": 50,
        "node-c1": 55,
        "node-legacy": 100,
    }
    assert result.topology is not None
    assert dict(result.topology.raw) == {
        "node-a1": 6,
        "node-a2": 6,
        "node-b1": 18,
        "node-b2": 11,
        "node-c1": 10,
        "node-legacy": 2,
    }


def _node(name: str, zone: str | None = None, hostname: bool = True, **extra: Any) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name} if hostname else {}
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    node.update(extra)
    return node


def _pod(name: str, node: str = "", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "a"}},
        "spec": dict(spec),
    }
    if node:
        body["spec"]["nodeName"] = node
    return body


def _labelled(name: str, zone: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone, **labels}},
    }


SVC = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "s", "namespace": "default"},
    "spec": {"selector": {"app": "a"}},
}


ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _soft(key: str, skew: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "a"}},
        **extra,
    }


CASES = [
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [_pod("p1", "n1")],
        _pod("in", topologySpreadConstraints=[_soft(ZONE)]),
        {"n1": 0, "n2": 100},
        id="own zone skew1: 2 domains w=log4=1.386; raw n1 1*1.386+0=1, n2 0; min0 max1: n1 100*(1+0-1)/1=0, n2 100",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2")],
        [_pod("p1", "n1")],
        _pod("in", topologySpreadConstraints=[_soft(ZONE)]),
        {"n1": 100, "n2": 0},
        id="own constraint, n2 lacks zone key: ignored (0, out of min/max); n1 raw 1 = max = min -> 100*(1+1-1)/1",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [_pod("p1", "n1")],
        _pod("in", topologySpreadConstraints=[{**_soft(ZONE), "labelSelector": {}}]),
        {"n1": 100, "n2": 100},
        id="labelSelector {} counts no pod: raw 0,0 -> max 0 -> all 100",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [
            _pod("p1", "n1", {"app": "a", "v": "1"}),
            _pod("p2", "n2", {"app": "a", "v": "2"}),
            _pod("p3", "n2", {"app": "a", "v": "2"}),
        ],
        _pod("in", labels={"app": "a", "v": "1"}, topologySpreadConstraints=[_soft(ZONE, matchLabelKeys=["v"])]),
        {"n1": 0, "n2": 100},
        id="matchLabelKeys v: only v=1 pods count: n1 1*1.386=1, n2 0 -> n1 0, n2 100",
    ),
    pytest.param(
        [
            _node("n1", "z1"),
            _node("n2", "z2"),
            _node("x", "z2", spec={"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
        ],
        [_pod("p1", "n1"), _pod("p2", "x"), _pod("p3", "x")],
        _pod("in", topologySpreadConstraints=[_soft(ZONE, nodeTaintsPolicy="Honor")]),
        {"n1": 0, "n2": 100},
        id="nodeTaintsPolicy Honor: tainted x's 2 pods leave z2: z1=1, z2=0 -> n1 0, n2 100",
    ),
    pytest.param(
        [
            _node("n1", "z1"),
            _node("n2", "z2"),
            _node("x", "z2", spec={"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
        ],
        [_pod("p1", "n1"), _pod("p2", "x"), _pod("p3", "x")],
        _pod("in", topologySpreadConstraints=[_soft(ZONE)]),
        {"n1": 100, "n2": 33},
        id="nodeTaintsPolicy Ignore (default): z2=2, w=log4: n1 1.386->1, n2 2.773->3; "
        "100*(4-1)//3=100, 100*(4-3)//3=33",
    ),
    pytest.param(
        [_labelled("n1", "z1", pool="main"), _labelled("n2", "z2", pool="main"), _labelled("x", "z2", pool="other")],
        [_pod("p1", "n1"), _pod("p2", "x"), _pod("p3", "x")],
        _pod("in", nodeSelector={"pool": "main"}, topologySpreadConstraints=[_soft(ZONE)]),
        {"n1": 0, "n2": 100},
        id="nodeAffinityPolicy Honor (default): x fails the nodeSelector, its 2 pods leave z2: z1=1, z2=0; "
        "n1 1*1.386->1, n2 0 -> n1 0, n2 100",
    ),
    pytest.param(
        [_labelled("n1", "z1", pool="main"), _labelled("n2", "z2", pool="main"), _labelled("x", "z2", pool="other")],
        [_pod("p1", "n1"), _pod("p2", "x"), _pod("p3", "x")],
        _pod("in", nodeSelector={"pool": "main"}, topologySpreadConstraints=[_soft(ZONE, nodeAffinityPolicy="Ignore")]),
        {"n1": 100, "n2": 33},
        id="nodeAffinityPolicy Ignore: z2=2: n1 1.386->1, n2 2.773->3; 100*(4-1)//3=100, 100*(4-3)//3=33",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2"), _node("n3")],
        [_pod("p1", "n1"), _pod("p2", "n1"), _pod("p3", "n3")],
        _pod("in"),
        {"n1": 33, "n2": 83, "n3": 100},
        id="system defaults: host w=log5=1.609, zone domains z1,z2,'' (n3 zoneless) w=log5; "
        "n1 2*1.609+2+2*1.609+4=12.44->12, n2 0+2+0+4=6, n3 1.609+2 (no zone term)=3.61->4; "
        "min4 max12: n1 100*4//12=33, n2 100*10//12=83, n3 100",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [_pod("p1", "n1", {"other": "x"})],
        _pod("in", labels={"other": "x"}),
        {"n1": 0, "n2": 0},
        id="system defaults, no Service/controller selects the pod: empty default selector -> skipped, all 0",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [_pod("p1", "n1")],
        _pod("in", topologySpreadConstraints=[{**_soft(ZONE), "whenUnsatisfiable": "DoNotSchedule"}]),
        {"n1": 0, "n2": 0},
        id="only DoNotSchedule constraints: skipped (defaults not applied), all 0",
    ),
    pytest.param(
        [_node("n1", "z1"), _node("n2", "z2")],
        [
            _pod("p1", "n1"),
            {**_pod("p2", "n1"), "status": {"phase": "Succeeded"}},
            {
                **_pod("p3", "n1"),
                "metadata": {
                    "name": "p3",
                    "namespace": "default",
                    "labels": {"app": "a"},
                    "deletionTimestamp": "2026-01-01T00:00:00Z",
                },
            },
            {**_pod("p4", "n1"), "metadata": {"name": "p4", "namespace": "other", "labels": {"app": "a"}}},
        ],
        _pod("in", topologySpreadConstraints=[_soft(ZONE, 2)]),
        {"n1": 50, "n2": 100},
        id="terminal, deleting and other-namespace pods do not count: z1=1, maxSkew 2: n1 1.386+1=2.39->2, "
        "n2 0+1=1; min1 max2: n1 100*(3-2)//2=50, n2 100",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "incoming", "expected"), CASES)
def test_topology_case(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], incoming: dict[str, Any], expected: dict[str, int]
) -> None:
    result = score_objects([*nodes, *pods, SVC], incoming, profile="v1.29", nodes=list(expected))
    assert dict(result.scores) == expected


def test_skip_reasons() -> None:
    nodes = [_node("n1", "z1")]
    hard = _pod("in", topologySpreadConstraints=[{**_soft(ZONE), "whenUnsatisfiable": "DoNotSchedule"}])
    assert score_objects([*nodes, SVC], hard, profile="v1.29").skip_reason == SKIP_HARD_ONLY
    lonely = _pod("in", labels={"x": "y"})
    assert score_objects([*nodes, SVC], lonely, profile="v1.29").skip_reason == SKIP_EMPTY_SELECTOR
    result = score_objects([*nodes, SVC], _pod("in"), profile="v1.29", nodes=[])
    assert (result.skipped, result.skip_reason, dict(result.scores)) == (True, SKIP_NO_NODES, {})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"a": 0, "b": 0}, ({"a": 100, "b": 100}, 0, 0), id="max 0 -> all 100"),
        pytest.param(
            {"a": 2, "b": 18, "c": None},
            ({"a": 100, "b": 11, "c": 0}, 2, 18),
            id="100*(18+2-18)//18=11; ignored c -> 0, out of min/max",
        ),
        pytest.param({"a": 5, "b": 7}, ({"a": 100, "b": 71}, 5, 7), id="100*(7+5-7)//7=71 (integer division)"),
    ],
)
def test_normalize(raw: dict[str, int | None], expected: tuple[dict[str, int], int, int]) -> None:
    assert normalize(raw) == expected
