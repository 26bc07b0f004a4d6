"""New bindings checked against the report held just before them (router → index → status), never on the
initial list.

The cluster: 6 nodes in zones a, b, c (two each); Deployment web's pods on node-a1, node-b1, node-c1, so the
best nodes for the next pod (SelectorSpread, v1.28) are the empty node-a2, node-b2, node-c2 (100).
"""

from __future__ import annotations

from handler_fakes import Pipeline, ev, pipeline, pod_of, web_cluster

TIME = "2026-01-02T03:04:05Z"


def _watching() -> Pipeline:
    p = pipeline()
    p.feed(*[ev(None, e["object"]) for e in web_cluster()])  # the initial list: never checked
    p.settle()
    p.router.check_placements = True  # what Runtime._loaded does once every informer has listed
    p.router.clock = lambda: TIME
    return p


def _placed(p: Pipeline) -> dict[str, object]:
    p.settle()
    placed = p.report("shop", "deployment-web").get("lastPlacement")
    assert isinstance(placed, dict)
    return placed


def test_the_initial_list_is_not_checked() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    p.settle()
    assert "lastPlacement" not in p.report("shop", "deployment-web")
    assert p.index.placements == {"best_node": 0, "best_zone": 0, "other": 0}


def test_a_pending_pod_bound_to_a_best_node_is_a_hit() -> None:
    p = _watching()
    p.feed(ev("ADDED", pod_of("web", 7, "")))  # pending: not a binding
    assert p.index.placements == {"best_node": 0, "best_zone": 0, "other": 0}
    p.feed(ev("MODIFIED", pod_of("web", 7, "node-a2")))  # bound: a2 scored 100 = best
    placed = _placed(p)
    assert placed == {
        "pod": "web-abc-7",
        "node": "node-a2",
        "outcome": "best_node",
        "time": TIME,
        "consecutiveMisses": 0,
    }
    assert p.index.placements == {"best_node": 1, "best_zone": 0, "other": 0}


def test_misses_count_in_a_row_and_a_hit_resets_them() -> None:
    p = _watching()
    # a new pod already bound is a binding too: node-a1 holds a pod (zone a: 1 pod, its empty node a2 is best)
    p.feed(ev("ADDED", pod_of("web", 7, "node-a1")))
    assert _placed(p)["outcome"] == "best_zone"
    assert _placed(p)["consecutiveMisses"] == 1
    # now zone a holds 2 pods, zones b and c 1: best nodes b2, c2; node-a2 (zone a) is neither best nor in a
    # best zone
    p.feed(ev("ADDED", pod_of("web", 8, "node-a2")))
    placed = _placed(p)
    assert (placed["node"], placed["outcome"], placed["consecutiveMisses"]) == ("node-a2", "other", 2)
    p.feed(ev("ADDED", pod_of("web", 9, "node-b2")))  # b2: empty, in a 1-pod zone: best
    placed = _placed(p)
    assert (placed["outcome"], placed["consecutiveMisses"]) == ("best_node", 0)
    assert p.index.placements == {"best_node": 1, "best_zone": 1, "other": 1}


def test_an_update_of_a_bound_pod_is_not_a_new_binding() -> None:
    p = _watching()
    p.feed(ev("MODIFIED", pod_of("web", 0, "node-a1")))  # already bound on node-a1 (listed)
    p.feed(ev("MODIFIED", pod_of("web", 1, "node-b1", phase="Running")))
    p.settle()
    assert "lastPlacement" not in p.report("shop", "deployment-web")
    assert p.index.placements == {"best_node": 0, "best_zone": 0, "other": 0}


def test_a_pod_of_no_workload_checks_nothing() -> None:
    p = _watching()
    p.feed(ev("ADDED", pod_of("stray", 1, "node-a1")))
    p.settle()
    assert p.index.placements == {"best_node": 0, "best_zone": 0, "other": 0}
    assert "lastPlacement" not in p.report("shop", "deployment-web")
