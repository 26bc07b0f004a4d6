"""After a watch gap kopf re-lists (type-None events) but never reports what was deleted meanwhile.

The re-list reconciler lists the kind's names and removes what the index holds beyond them; objects touched
by watch events while that listing ran are kept (they may be newer than the listing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from handler_fakes import Clock, Pipeline, ev, pipeline, pod_of, run, web_cluster, zone_nodes

from spreadwatch.runtime.events import Watched
from spreadwatch.runtime.relist import RelistReconciler


class Lister:
    """A fake metadata-only lister: returns fixed names per kind; ``during`` runs while the 'list' is open."""

    def __init__(self, names: dict[str, set[tuple[str, str]]]) -> None:
        self.names = names
        self.calls: list[str] = []
        self.during: Callable[[], None] | None = None
        self.fail: int = 0

    async def __call__(self, watched: Watched) -> set[tuple[str, str]]:
        self.calls.append(watched.kind)
        if self.fail:
            self.fail -= 1
            raise OSError("connection refused")
        if self.during is not None:
            self.during()
        return set(self.names.get(watched.kind, set()))


def _setup() -> tuple[Pipeline, RelistReconciler, Lister, Clock]:
    """web: 3 pods on node-a1, node-a2, node-b1, reports written; a reconciler armed after the load."""
    pods_on = ("node-a1", "node-a2", "node-b1")
    p = pipeline()
    p.feed(*web_cluster(pods_on=pods_on))
    p.settle()
    lister = Lister({"Pod": {("shop", f"web-abc-{i}") for i in range(len(pods_on))}})
    clock = Clock()
    rec = RelistReconciler(p.index, lister, p.writer, quiet=2.0, clock=clock)
    p.router.observe = rec.observe
    rec.armed = True
    return p, rec, lister, clock


# --- detecting a re-list --------------------------------------------------------------------------------


def test_type_none_events_before_arming_are_the_initial_load_not_a_relist() -> None:
    p = pipeline()
    clock = Clock()
    rec = RelistReconciler(p.index, Lister({}), p.writer, quiet=2.0, clock=clock)
    p.router.observe = rec.observe
    p.feed(*[ev(None, e["object"]) for e in web_cluster()])
    clock.advance(10)
    assert rec.due() == []


def test_a_relisted_kind_is_due_once_quiet_for_the_quiet_period() -> None:
    p, rec, _, clock = _setup()
    p.feed(ev(None, pod_of("web", 0, "node-a1")))  # kopf replays the listing
    clock.advance(1.9)
    assert rec.due() == []  # 1.9 s < 2 s quiet
    p.feed(ev(None, pod_of("web", 1, "node-a2")))  # still listing: the quiet period restarts
    clock.advance(1.9)
    assert rec.due() == []
    clock.advance(0.1)  # 2.0 s since the last listed pod
    assert rec.due() == ["Pod"]
    assert rec.pending == ["Pod"]


def test_ordinary_watch_events_never_trigger_a_reconcile() -> None:
    p, rec, _, clock = _setup()
    p.feed(ev("MODIFIED", pod_of("web", 0, "node-a1")), ev("DELETED", pod_of("web", 2, "node-b1")))
    clock.advance(60)
    assert rec.due() == []


# --- reconciling ----------------------------------------------------------------------------------------


def test_pod_deleted_during_the_gap_is_removed_and_the_report_rewritten() -> None:
    # 3 pods: a1, a2, b1. web-abc-2 (node-b1) is deleted while the watch is down; the re-list lacks it.
    p, rec, lister, clock = _setup()
    assert p.report("shop", "deployment-web")["pods"] == 3
    lister.names["Pod"].discard(("shop", "web-abc-2"))
    p.feed(ev(None, pod_of("web", 0, "node-a1")), ev(None, pod_of("web", 1, "node-a2")))
    clock.advance(2)
    removed = run(rec.reconcile("Pod"))
    assert removed == 1
    assert p.index.object_keys("Pod") == {("shop", "web-abc-0"), ("shop", "web-abc-1")}
    p.settle()
    status = p.report("shop", "deployment-web")
    assert status["pods"] == 2  # 3 − 1 deleted during the gap
    assert {n["node"]: n["pods"] for n in status["nodes"] if n["pods"]} == {"node-a1": 1, "node-a2": 1}
    assert rec.stats.removed == 1 and rec.stats.reconciles == 1
    assert rec.due() == []


def test_object_created_while_the_listing_runs_is_kept() -> None:
    # The listing (taken before web-abc-7 existed) lacks it, but its ADDED event arrived during the listing.
    p, rec, lister, _ = _setup()
    lister.during = lambda: p.feed(ev("ADDED", pod_of("web", 7, "node-c1")))
    assert run(rec.reconcile("Pod")) == 0
    assert ("shop", "web-abc-7") in p.index.object_keys("Pod")


def test_object_added_before_the_listing_but_missing_from_it_is_removed() -> None:
    # Present in the index before the listing began, absent from the listing, untouched since: deleted.
    p, rec, _, _ = _setup()
    p.feed(ev("ADDED", pod_of("web", 9, "node-c2")))
    assert run(rec.reconcile("Pod")) == 1
    assert ("shop", "web-abc-9") not in p.index.object_keys("Pod")


def test_cluster_scoped_nodes_are_reconciled_too() -> None:
    p, rec, lister, _ = _setup()
    names = {("", o["metadata"]["name"]) for o in zone_nodes()}
    lister.names["Node"] = names - {("", "node-c2")}
    assert run(rec.reconcile("Node")) == 1
    assert ("", "node-c2") not in p.index.object_keys("Node")
    p.settle()
    assert p.report("shop", "deployment-web")["candidateNodes"] == 5  # 6 nodes − the one deleted in the gap


def test_namespace_labels_deleted_during_the_gap_are_forgotten() -> None:
    p, rec, lister, _ = _setup()
    p.feed(ev("ADDED", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old", "labels": {"a": "b"}}}))
    lister.names["Namespace"] = {("", "shop")}
    run(rec.reconcile("Namespace"))
    assert p.index.namespace_labels("old") == {}


def test_failed_listing_is_retried_with_backoff_and_removes_nothing() -> None:
    p, rec, lister, clock = _setup()
    lister.fail = 1
    lister.names["Pod"].discard(("shop", "web-abc-2"))
    p.feed(ev(None, pod_of("web", 0, "node-a1")))
    clock.advance(2)

    async def one_round() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(rec.run(stop))
        await asyncio.sleep(0.05)
        stop.set()
        await task

    run(one_round())
    assert lister.calls == ["Pod"] and rec.stats.failures == 1
    assert ("shop", "web-abc-2") in p.index.object_keys("Pod")  # nothing removed on failure
    clock.advance(1.9)
    assert rec.due() == []  # back-off: 2 s after the first failure
    clock.advance(0.1)
    assert rec.due() == ["Pod"]
    run(one_round())
    assert lister.calls == ["Pod", "Pod"] and rec.stats.removed == 1
