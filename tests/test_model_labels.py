"""Interned label maps: shared while used, forgotten when the last record using them goes."""

from __future__ import annotations

from k8s_objects import pod
from spreadwatch.model import intern_labels, interned_label_maps, interning, label_key, parse_pod


def test_equal_label_maps_are_stored_once_and_keyed_by_content() -> None:
    a = intern_labels({"app": "web", "pod-template-hash": "h1"})
    b = intern_labels({"pod-template-hash": "h1", "app": "web"})
    assert a is b
    assert label_key(a) == label_key({"app": "web", "pod-template-hash": "h1"}) == frozenset(a.items())
    assert intern_labels(a) is a


def test_label_sets_of_old_rollouts_are_forgotten_with_their_pods() -> None:
    # 50 rollouts, each with a new pod-template-hash; only the latest rollout's pods are still held.
    before = interned_label_maps()
    held = []
    for rollout in range(50):
        held = [parse_pod(pod(f"web-{rollout}-{i}", {"app": "web", "pod-template-hash": f"h{rollout}"}, "n1"))
                for i in range(3)]  # fmt: skip
    assert len({id(p.labels) for p in held}) == 1  # the 3 pods share one map
    assert interned_label_maps() - before <= 2  # the latest label set (+ at most one in flight), not 50
    key = label_key(held[0].labels)
    interning._sweep()  # the cache drops unused maps in amortised sweeps: look after one
    assert key in interning._LABELS_CACHE
    del held
    interning._sweep()
    assert key not in interning._LABELS_CACHE


def test_empty_labels_share_one_map() -> None:
    assert intern_labels({}) is intern_labels({})
    assert label_key(intern_labels({})) == frozenset()


def test_the_cache_stays_within_twice_the_maps_in_use_under_churn() -> None:
    # Three sweeps' worth of label sets, none held: the cache is swept as it doubles, never left to grow.
    for i in range(3 * interning._MIN_SWEEP):
        intern_labels({"app": "churn", "pod-template-hash": f"c{i}"})
    assert len(interning._LABELS_CACHE) <= max(interning._MIN_SWEEP, 2 * interned_label_maps())
