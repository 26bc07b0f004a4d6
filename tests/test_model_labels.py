"""Interned label maps: shared while used, forgotten when the last record using them goes."""

from __future__ import annotations

import sys
import threading

import pytest

from k8s_objects import pod
from spreadwatch.model import intern_labels, interned_label_maps, interning, label_key, parse_pod


def test_equal_label_maps_are_stored_once_and_keyed_by_content() -> None:
    a = intern_labels({"app": "web", "pod-template-hash": "h1"})
    b = intern_labels({"pod-template-hash": "h1", "app": "web"})
    assert a is b
    assert label_key(a) is a  # an interned map is its own key
    plain = label_key({"app": "web", "pod-template-hash": "h1"})  # a plain map: an equal key, not the map
    assert plain == a and hash(plain) == hash(a) and plain is not a
    assert {a: "group"}[plain] == "group"
    assert hash(intern_labels({"app": "web"})) != hash(a)  # (distinct sets, distinct hashes here)
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
    key = label_key(dict(held[0].labels))  # (an equal key that does not hold the interned map)
    interning._sweep()  # the cache drops unused maps in amortised sweeps: look after one
    assert key in interning._LABELS_CACHE
    del held
    interning._sweep()
    assert key not in interning._LABELS_CACHE


def test_empty_labels_share_one_map() -> None:
    assert intern_labels({}) is intern_labels({})
    assert label_key(intern_labels({})) == {} and hash(label_key({})) == hash(label_key(intern_labels({})))


def test_the_cache_stays_within_twice_the_maps_in_use_under_churn() -> None:
    # Three sweeps' worth of label sets, none held: the cache is swept as it doubles, never left to grow.
    # A sweep is spread over the next misses (_SWEEP_STEP keys each): the cache may grow by 1/_SWEEP_STEP
    # of its size while one is under way. From a finished sweep: maps earlier tests dropped since the last one
    # are not in use but still cached (the module's "plus those dropped since the last sweep").
    interning._sweep()
    bound = max(interning._MIN_SWEEP, 2 * interned_label_maps())
    for i in range(3 * interning._MIN_SWEEP):
        intern_labels({"app": "churn", "pod-template-hash": f"c{i}"})
        assert len(interning._LABELS_CACHE) <= bound + bound // interning._SWEEP_STEP + 1


@pytest.mark.parametrize("held_every", [1, 2, 7])
def test_a_sweep_is_spread_over_new_maps_and_drops_only_unheld_ones(held_every: int) -> None:
    interning._sweep()
    held = [intern_labels({"app": "spread", "i": str(i)}) for i in range(0, 2 * interning._MIN_SWEEP, held_every)]
    for i in range(2 * interning._MIN_SWEEP):  # the unheld ones (the held ones are hits)
        intern_labels({"app": "spread", "i": str(i)})
    size = len(interning._LABELS_CACHE)
    interning._to_check.clear()
    interning._next_sweep = size  # the next miss starts a sweep
    intern_labels({"app": "spread", "i": "start"})
    assert len(interning._to_check) == size - interning._SWEEP_STEP  # one step done, not the whole sweep
    while interning._to_check:  # each new map checks one more step
        intern_labels({"app": "spread", "i": f"more-{len(interning._to_check)}"})
    assert all(label_key(h) in interning._LABELS_CACHE for h in held)  # held maps are never dropped
    dropped = {f"{i}" for i in range(2 * interning._MIN_SWEEP)} - {h["i"] for h in held}
    assert not any(label_key({"app": "spread", "i": i}) in interning._LABELS_CACHE for i in dropped)


def test_threads_interning_at_once_never_break_the_sweep() -> None:
    # The operator's informers decode (and intern) in one thread each: sweeps under way in several threads
    # at once once popped the same list empty (IndexError), which stopped an informer.
    interning._sweep()
    held = [intern_labels({"app": "held", "i": str(i)}) for i in range(64)]
    errors: list[BaseException] = []

    def churn(worker: int) -> None:
        try:
            for i in range(4 * interning._MIN_SWEEP):
                intern_labels({"app": "threads", "worker": str(worker), "i": str(i)})
        except BaseException as err:  # any error is the failure this test looks for
            errors.append(err)

    workers = [threading.Thread(target=churn, args=(w,)) for w in range(4)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert errors == []
    interning._sweep()
    assert all(interning._LABELS_CACHE.get(h) is h for h in held)  # held maps are still the shared ones
    assert len(interning._LABELS_CACHE) < 2 * interning._MIN_SWEEP  # the churned ones were swept
