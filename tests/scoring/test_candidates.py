"""Candidate filtering: cordon, taints vs tolerations, nodeSelector, required node affinity."""

from __future__ import annotations

from typing import Any

import pytest

from k8s_objects import node, pod
from spreadwatch.model import Node, parse_object, parse_pod
from spreadwatch.scoring import exclusion_reason
from spreadwatch.scoring.candidates import affinity_label_keys, node_affinity_matches

NOSCHED = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
NOEXEC = {"key": "dedicated", "value": "db", "effect": "NoExecute"}
PREFER = {"key": "soft", "value": "x", "effect": "PreferNoSchedule"}


def _node(**kw: Any) -> Node:
    record = parse_object(node("n1", "z", **kw))
    assert isinstance(record, Node)
    return record


def _reason(n: Node, spec: dict[str, Any]) -> str | None:
    return exclusion_reason(n, parse_pod(pod("p", {}, spec=spec)).template)


def _affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


@pytest.mark.parametrize(
    ("node_kw", "spec", "reason"),
    [
        ({}, {}, None),
        ({"unschedulable": True}, {}, "Unschedulable"),
        (
            {"unschedulable": True},
            {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]},
            None,
        ),
        ({"taints": [NOSCHED]}, {}, "UntoleratedTaint"),
        ({"taints": [NOEXEC]}, {}, "UntoleratedTaint"),
        ({"taints": [PREFER]}, {}, None),  # PreferNoSchedule does not filter
        ({"taints": [NOSCHED]}, {"tolerations": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}, None),
        ({"taints": [NOSCHED]}, {"tolerations": [{"key": "gpu", "value": "false"}]}, "UntoleratedTaint"),
        ({"taints": [NOSCHED]}, {"tolerations": [{"operator": "Exists"}]}, None),  # tolerates everything
        (
            {"taints": [NOSCHED]},
            {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]},
            "UntoleratedTaint",
        ),
        ({"labels": {"disk": "ssd"}}, {"nodeSelector": {"disk": "ssd"}}, None),
        ({"labels": {"disk": "hdd"}}, {"nodeSelector": {"disk": "ssd"}}, "NodeAffinity"),
        (
            {"labels": {"tier": "3"}},
            _affinity({"matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["2"]}]}),
            None,
        ),
        (
            {"labels": {"tier": "3"}},
            _affinity({"matchExpressions": [{"key": "tier", "operator": "Lt", "values": ["2"]}]}),
            "NodeAffinity",
        ),
        ({}, _affinity({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}), None),
        ({}, _affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), None),
        (
            {},
            _affinity({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}),
            "NodeAffinity",
        ),
        ({}, _affinity({}), "NodeAffinity"),  # an empty term selects nothing
        (
            {},
            _affinity(
                {"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]},
                {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]},
            ),
            None,
        ),  # terms are ORed
    ],
)
def test_exclusion_reason(node_kw: dict[str, Any], spec: dict[str, Any], reason: str | None) -> None:
    assert _reason(_node(**node_kw), spec) == reason


@pytest.mark.parametrize(
    ("spec", "keys"),
    [
        ({}, ()),
        ({"nodeSelector": {"disk": "ssd", "tier": "web"}}, ("disk", "tier")),
        (
            {
                "nodeSelector": {"disk": "ssd"},
                **_affinity({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}),
            },
            ("disk", "zone"),
        ),
        (  # a key read twice is listed once, terms in order
            _affinity(
                {"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]},
                {"matchExpressions": [{"key": "y", "operator": "Exists"}, {"key": "x", "operator": "DoesNotExist"}]},
            ),
            ("x", "y"),
        ),
        (  # matchFields reads the node's name: no label key tuple decides it
            _affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
            None,
        ),
    ],
)
def test_affinity_label_keys(spec: dict[str, Any], keys: tuple[str, ...] | None) -> None:
    assert affinity_label_keys(parse_pod(pod("p", {}, spec=spec)).template) == keys


def test_affinity_depends_only_on_the_label_keys() -> None:
    """Nodes with the same values for ``affinity_label_keys`` get the same answer (the candidate sets cache it
    per those values): other labels do not matter."""
    spec = {
        "nodeSelector": {"disk": "ssd"},
        **_affinity({"matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["2"]}]}),
    }
    template = parse_pod(pod("p", {}, spec=spec)).template
    assert affinity_label_keys(template) == ("disk", "tier")
    cases = [({"disk": "ssd", "tier": "3"}, True), ({"disk": "ssd", "tier": "1"}, False), ({"tier": "3"}, False)]
    for labels, expected in cases:
        for extra in ({}, {"other": "x"}):
            assert node_affinity_matches(_node(labels={**labels, **extra}), template) is expected
