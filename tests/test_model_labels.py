"""Interned label maps: shared while used, forgotten when the last record using them goes."""

from __future__ import annotations

from k8s_objects import pod
from spreadwatch.model import intern_labels, interning, label_key, parse_pod


def test_equal_label_maps_are_stored_once_and_keyed_by_content() -> None:
    a = intern_labels({"app": "web", "pod-template-hash": "h1"})
    b = intern_labels({"pod-template-hash": "h1", "app": "web"})
    assert a is b
    assert label_key(a) == label_key({"app": "web", "pod-template-hash": "h1"}) == frozenset(a.items())
    assert intern_labels(a) is a


def test_label_sets_of_old_rollouts_are_forgotten_with_their_pods() -> None:
    # 50 rollouts, each with a new pod-template-hash; only the latest rollout's pods are still held.
    before = len(interning._LABELS_CACHE)
    held = []
    for rollout in range(50):
        held = [parse_pod(pod(f"web-{rollout}-{i}", {"app": "web", "pod-template-hash": f"h{rollout}"}, "n1"))
                for i in range(3)]  # fmt: skip
    assert len({id(p.labels) for p in held}) == 1  # the 3 pods share one map
    assert len(interning._LABELS_CACHE) - before <= 2  # the latest label set (+ at most one in flight), not 50
    key = label_key(held[0].labels)
    assert key in interning._LABELS_CACHE
    del held
    assert key not in interning._LABELS_CACHE


def test_empty_labels_share_one_map() -> None:
    assert intern_labels({}) is intern_labels({})
    assert label_key(intern_labels({})) == frozenset()
