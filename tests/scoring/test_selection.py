"""How each profile builds the selector a pod is spread by.

Cluster: Service `fe` selects tier=fe; ReplicaSet `rs1` selects app=web.
n1: {app=web,tier=fe}, {app=web};  n2: {tier=fe}, {tier=fe}.  Incoming pod: {app=web, tier=fe}.
"""

from __future__ import annotations

from typing import Any

import pytest

from k8s_objects import controller, node, owner, pod, service
from spreadwatch.analysis import score_objects

WEB_FE = {"app": "web", "tier": "fe"}
CLUSTER = [
    node("n1"),
    node("n2"),
    pod("a", WEB_FE, "n1"),
    pod("b", {"app": "web"}, "n1"),
    pod("c", {"tier": "fe"}, "n2"),
    pod("d", {"tier": "fe"}, "n2"),
    service("fe", {"tier": "fe"}),
    controller("ReplicaSet", "rs1", {"matchLabels": {"app": "web"}}),
]


@pytest.mark.parametrize(
    ("profile", "owners", "selector", "scores"),
    [
        pytest.param(
            "v1.28",
            [owner("ReplicaSet", "rs1")],
            "app=web,tier=fe",
            {"n1": 0, "n2": 100},
            id="v1.28 owner RS ANDed: n1=1 n2=0",
        ),
        pytest.param(
            "v1.28",
            None,
            "tier=fe",
            {"n1": 50, "n2": 0},
            id="v1.28 no owner: service only, n1=1 n2=2 -> 100*(2-1)/2=50",
        ),
        pytest.param(
            "v1.28",
            [owner("ReplicaSet", "rs1", "extensions/v1beta1")],
            "tier=fe",
            {"n1": 50, "n2": 0},
            id="v1.28 owner with another apiVersion is not followed",
        ),
        pytest.param(
            "v1.28",
            [owner("ReplicaSet", "missing")],
            "tier=fe",
            {"n1": 50, "n2": 0},
            id="v1.28 owner not found: service only",
        ),
        pytest.param(
            "v1.18", None, "app=web,tier=fe", {"n1": 0, "n2": 100}, id="v1.18 RS found by labels, no owner needed"
        ),
        pytest.param(
            "v1.16",
            None,
            "tier=fe,app=web",
            {"n1": 0, "n2": 10},
            id="v1.16 all of [tier=fe, app=web]: n1=1 n2=0, 0-10 scale",
        ),
        pytest.param(
            "v1.12",
            None,
            "(tier=fe) OR (app=web)",
            {"n1": 0, "n2": 0},
            id="v1.12 any of: n1=2 n2=2 -> max 2, both 10*(2-2)/2=0",
        ),
    ],
)
def test_profile_selectors(
    profile: str, owners: list[dict[str, Any]] | None, selector: str, scores: dict[str, int]
) -> None:
    result = score_objects(CLUSTER, pod("incoming", WEB_FE, owners=owners), profile=profile)
    assert str(result.selector) == selector
    assert result.scores == scores


def test_v128_owner_selector_applies_even_when_it_does_not_match_the_pod() -> None:
    """DefaultSelector follows the ownerReference by name; it never checks that the owner selects the pod."""
    cluster = [*CLUSTER, controller("ReplicaSet", "other", {"matchLabels": {"app": "api"}})]
    result = score_objects(cluster, pod("incoming", WEB_FE, owners=[owner("ReplicaSet", "other")]))
    assert str(result.selector) == "app=api,tier=fe"
    assert result.scores == {"n1": 100, "n2": 100}  # nothing matches: max 0 -> every node 100


def test_v128_rc_owner_merges_its_map() -> None:
    cluster = [*CLUSTER, controller("ReplicationController", "rc1", {"app": "web"})]
    result = score_objects(cluster, pod("incoming", WEB_FE, owners=[owner("ReplicationController", "rc1")]))
    assert str(result.selector) == "app=web,tier=fe"


@pytest.mark.parametrize("profile", ["v1.28", "v1.18", "v1.16", "v1.12"])
def test_no_selector_scores_every_node_max(profile: str) -> None:
    result = score_objects(
        [node("n1"), node("n2"), pod("a", {"x": "y"}, "n1")], pod("incoming", {"x": "y"}), profile=profile
    )
    top = result.profile.max_score
    assert result.scores == {"n1": top, "n2": top}


@pytest.mark.parametrize(("profile", "skipped"), [("v1.28", True), ("v1.18", True), ("v1.16", False)])
def test_topology_spread_constraints_skip(profile: str, skipped: bool) -> None:
    spec = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}
    result = score_objects(CLUSTER, pod("incoming", WEB_FE, spec=spec), profile=profile)
    assert result.skipped is skipped
    if skipped:
        assert result.scores == {"n1": 0, "n2": 0}


def test_pods_that_do_not_count() -> None:
    """Other namespaces, deleting, terminal and unbound pods never count."""
    cluster = [
        node("n1"),
        node("n2"),
        service("fe", {"tier": "fe"}),
        pod("ok", {"tier": "fe"}, "n1"),
        pod("other-ns", {"tier": "fe"}, "n2", namespace="elsewhere"),
        pod("deleting", {"tier": "fe"}, "n2", deleting=True),
        pod("done", {"tier": "fe"}, "n2", phase="Succeeded"),
        pod("failed", {"tier": "fe"}, "n2", phase="Failed"),
        pod("pending", {"tier": "fe"}),
    ]
    result = score_objects(cluster, pod("incoming", {"tier": "fe"}))
    assert result.counts == {"n1": 1, "n2": 0}
    assert result.scores == {"n1": 0, "n2": 100}


def test_explicit_nodes_are_unfiltered_and_ordered() -> None:
    cluster = [node("n1", unschedulable=True), node("n2"), service("fe", {"tier": "fe"})]
    assert list(score_objects(cluster, pod("i", {"tier": "fe"})).scores) == ["n2"]
    assert list(score_objects(cluster, pod("i", {"tier": "fe"}), nodes=["n2", "n1"]).scores) == ["n2", "n1"]
