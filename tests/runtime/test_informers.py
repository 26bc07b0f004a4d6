"""The informers (runtime/informers/watches.py): list, then watch from the list's version; BOOKMARK, DELETED, a server
that ends its watch, 410 Gone (an ERROR event, or the watch request itself) → list again and remove what the
new list lacks; undecodable lines logged once; the runtime ready once every informer has listed.

They run the operator's own client (``kube.ApiWatchSource``: ``list_pages`` and ``WatchStream``) against a
fake API server that sends raw bytes, lines split across chunks anywhere (tests/runtime/watch_fakes.py).
The tests wait for conditions (an informer holding its next watch open, a report written), never for time.

An object deleted while a list is abandoned for an expired continue token is removed by the listing after it.

Resource versions in the assertions: the fake server stores its initial objects at 100, 101, ... and every
step of a script that changes an object (or a bookmark) takes the next number.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Mapping
from dataclasses import replace
from typing import Any

import pytest
from handler_fakes import NAMED_CONFIG, FakeReportApi, Pipeline, ev, pipeline, pod_of, web_cluster
from watch_fakes import OPEN_GONE, FakeApiServer

from spreadwatch.kube import ApiWatchSource
from spreadwatch.resources import CLUSTER_RESOURCES
from spreadwatch.runtime.informers.router import WATCHED
from spreadwatch.runtime.informers.watches import ResourceWatch
from spreadwatch.runtime.process import Runtime

POD = next(r for r in CLUSTER_RESOURCES if r.kind == "Pod")
_GUARD = 60.0  # seconds: only so that a broken informer fails the test instead of hanging it


async def _first(waiting: Awaitable[Any], *tasks: asyncio.Task[Any]) -> None:
    """Wait for ``waiting``; a task that ends first (an informer that died) fails the test with its error."""
    waiter = asyncio.ensure_future(waiting)
    done, _ = await asyncio.wait([waiter, *tasks], timeout=_GUARD, return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        waiter.cancel()
        for task in done:
            task.result()
        raise AssertionError("the informer never got there")


def _informed(
    objects: list[dict[str, Any]], namespace: str | None = None
) -> tuple[Pipeline, FakeApiServer, ResourceWatch]:
    """A pipeline fed everything but the pods, whose pods come from a pod informer over a fake API server."""
    p = pipeline()
    p.feed(*[ev("ADDED", o) for o in objects if o["kind"] != "Pod"])
    api = FakeApiServer([o for o in objects if o["kind"] == "Pod"])
    watch = ResourceWatch(POD, namespace, p.router, ApiWatchSource(api))
    p.informers.append(watch)
    return p, api, watch


def _run_until_held(watch: ResourceWatch, api: FakeApiServer, namespace: str | None = None) -> None:
    """Run the informer until it holds a watch open with nothing scripted left (all applied), then stop it."""

    async def main() -> None:
        held = api.holding("Pod", namespace)
        stop = asyncio.Event()
        task = asyncio.create_task(watch.run(stop))
        try:
            await _first(held.wait(), task)
        finally:
            stop.set()
            await asyncio.wait_for(task, _GUARD)

    asyncio.run(main())
    assert api.responses[-1].shut.is_set()  # stopping closed the open watch


def _pods(p: Pipeline) -> set[str]:
    return {name for _, name in p.index.object_keys("Pod")}


def _web() -> list[dict[str, Any]]:
    """web: pods 0, 1, 2 on node-a1, node-b1, node-c1 (and the nodes, namespace, Deployment, ...)."""
    return [e["object"] for e in web_cluster()]


def test_list_then_watch_events_bookmarks_and_resumed_watches() -> None:
    p, api, watch = _informed(_web())  # the pods stored at 100, 101, 102
    api.script(
        "Pod",
        api.added(pod_of("web", 3, "node-a2")),  # 103
        api.modified({**pod_of("web", 0, "node-a1"), "status": {"phase": "Running"}}),  # 104
        api.deleted(pod_of("web", 1, "node-b1")),  # 105
        api.bookmark("Pod"),  # 106: the server then ends this watch
    )
    api.script("Pod", api.added(pod_of("web", 4, "node-b2")))  # 107, from the bookmark's version
    _run_until_held(watch, api)
    assert _pods(p) == {"web-abc-0", "web-abc-2", "web-abc-3", "web-abc-4"}
    assert api.watch_versions("Pod") == ["102", "106", "107"]  # the list's, the bookmark's, the last event's
    assert api.list_requests("Pod") == [0]
    assert watch.stats.as_dict() == {
        "lists": 1,
        "watches": 3,
        "events": 4,  # bookmarks excluded
        "staleRemoved": 0,
        "failures": 0,
        "undecodable": 0,
    }
    assert watch.listed.is_set()
    assert all(r.released for r in api.responses[:-1])  # every ended watch gave its connection back
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 4


@pytest.mark.parametrize("how", ["error event", "HTTP 410 on the watch request"])
def test_a_410_lists_again_and_removes_what_the_new_list_lacks(how: str, caplog: pytest.LogCaptureFixture) -> None:
    p, api, watch = _informed(_web())
    gap = [
        api.added(pod_of("web", 3, "node-a2")),
        api.vanish(pod_of("web", 1, "node-b1")),  # deleted while nobody watched: no event ever says so
        api.vanish(pod_of("web", 3, "node-a2")),
        api.appear(pod_of("web", 5, "node-c2")),  # created meanwhile: the new list shows it
    ]
    if how == "error event":
        api.script("Pod", *gap, api.gone())
    else:
        api.script("Pod", *gap)
        api.script("Pod", OPEN_GONE)
    with caplog.at_level(logging.INFO, logger="spreadwatch.watch"):
        _run_until_held(watch, api)
    assert _pods(p) == {"web-abc-0", "web-abc-2", "web-abc-5"}
    assert api.list_requests("Pod") == [0, 0]
    stats = watch.stats
    assert (stats.lists, stats.stale_removed, stats.failures) == (2, 2, 0)
    assert "pods listed again: removed 2 object(s) deleted while unwatched" in caplog.messages
    assert api.watch_versions("Pod")[-1] == api.version  # the new list's version (nothing changed since)
    p.settle()
    assert p.report("shop", "deployment-web")["pods"] == 3


@pytest.mark.parametrize("relist", [False, True], ids=["first list", "relist after 410"])
def test_an_object_deleted_while_an_expired_list_restarts_is_removed(relist: bool) -> None:
    extra = [pod_of("web", 100 + i, "node-c2") for i in range(501)]  # more than one page of 500
    p, api, watch = _informed(_web() + extra)

    def delete_pod_0() -> None:  # (called under the fake's lock when the token expires)
        del api.objects["pods"][("shop", "web-abc-0")]

    api.on_expire = delete_pod_0
    if relist:

        def expire_next_token() -> bytes:
            api.expire = 1
            return b""

        api.script("Pod", expire_next_token, api.gone())
    else:
        api.expire = 1
    _run_until_held(watch, api)
    assert api.list_requests("Pod")[-4:] == [0, 500, 0, 500]  # the token expired, the list started over
    assert ("shop", "web-abc-0") not in api.objects["pods"]
    assert "web-abc-0" not in _pods(p)  # (fails today: the abandoned first page still counts)


def test_a_namespace_informer_removes_only_its_own_namespace_after_a_relist() -> None:
    objects = _web() + [e["object"] for e in web_cluster(namespace="blue") if e["object"]["kind"] != "Node"]
    blue_pods = [o for o in objects if o["kind"] == "Pod" and o["metadata"]["namespace"] == "blue"]
    p, api, watch = _informed([o for o in objects if o not in blue_pods], namespace="shop")
    p.feed(*[ev("ADDED", o) for o in blue_pods])  # held by the index, not this informer's
    api.script("Pod", api.vanish(pod_of("web", 0, "node-a1")), api.gone(), namespace="shop")
    _run_until_held(watch, api, namespace="shop")
    assert p.index.object_keys("Pod") == {
        ("shop", "web-abc-1"),
        ("shop", "web-abc-2"),
        *(("blue", o["metadata"]["name"]) for o in blue_pods),
    }
    assert watch.stats.stale_removed == 1
    assert watch.name == "pods in shop"


def test_undecodable_lines_are_logged_once_per_problem_and_the_others_applied(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p, api, watch = _informed(_web())
    broken = pod_of("web", 9, "node-a1")
    broken["metadata"]["labels"] = ["not", "a", "map"]
    api.script(
        "Pod",
        api.raw(b"not json"),
        api.raw(b"not json"),
        api.raw(b'{"type": "ADDED", "object": 3}'),
        api.added(pod_of("web", 3, "node-a2")),
        api.added(broken),  # a watch event of a malformed object: the informer words and skips it
        api.modified(broken),
        api.raw(b"not json"),
    )
    with caplog.at_level(logging.WARNING):
        _run_until_held(watch, api)
    assert _pods(p) == {"web-abc-0", "web-abc-1", "web-abc-2", "web-abc-3"}
    assert watch.stats.undecodable == 4
    assert watch.stats.events == 3
    lines = [(r.name, r.getMessage()) for r in caplog.records]
    skipped = [m for name, m in lines if name == "spreadwatch.watch"]
    assert len(skipped) == 2  # "not json" three times, the non-object once
    assert all(m.startswith("pods: skipping a watch line: malformed watch event") for m in skipped)
    problem = "Pod shop/web-abc-9: metadata.labels: expected a mapping of strings, got list"
    assert [m for name, m in lines if name == "spreadwatch.events"] == [f"skipping malformed object: {problem}"]
    assert p.malformed == {("Pod", "shop", "web-abc-9"): problem}


# --- the runtime ------------------------------------------------------------------------------------------


class NotifyingReportApi(FakeReportApi):
    """FakeReportApi that sets ``written`` (made in the test's loop) at each apply."""

    written: asyncio.Event | None = None

    async def save(self, namespace: str, name: str, *rest: Any) -> dict[str, Any]:
        obj = await super().save(namespace, name, *rest)
        if self.written is not None:
            self.written.set()
        return obj


def test_the_runtime_is_ready_once_every_informer_has_listed() -> None:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False, debounce=0.05)
    api = FakeApiServer(_web())
    gate = api.gates["pods"] = threading.Event()  # the pod list waits for the test
    sink = NotifyingReportApi()
    rt = Runtime(cfg, report_api=sink, source=ApiWatchSource(api))
    assert sorted(w.name for w in rt.watches) == sorted(r.plural for r in WATCHED)  # cluster-wide: one each

    async def main() -> tuple[bool, list[str], int, Mapping[str, Any]]:
        sink.written = asyncio.Event()
        others = [api.holding(r.kind).wait() for r in WATCHED if r.kind != "Pod"]
        await rt.start()
        try:
            await _first(asyncio.gather(*others))  # every other informer listed and watching
            unlisted = [w.name for w in rt.watches if not w.listed.is_set()]
            before = (rt.ready(), unlisted, len(sink.calls))
            gate.set()
            await _first(sink.written.wait())
            return (*before, rt.state())
        finally:
            gate.set()
            await rt.stop()

    ready, unlisted, calls, state = asyncio.run(main())
    assert (ready, unlisted, calls) == (False, ["pods"], 0)  # not ready, nothing written or even listed
    assert state["ready"] is True
    assert {name: s["lists"] for name, s in state["watches"].items()} == {r.plural: 1 for r in WATCHED}
    assert state["index"]["pods"] == 3
    assert sink.status("shop", "deployment-web")["pods"] == 3


def test_in_namespaced_mode_namespaced_kinds_get_one_informer_per_namespace() -> None:
    cfg = replace(NAMED_CONFIG, namespaces=("shop", "blue"))
    rt = Runtime(cfg, report_api=FakeReportApi(), source=ApiWatchSource(FakeApiServer()))
    names = sorted(w.name for w in rt.watches)
    per_namespace = [f"{r.plural} in {ns}" for r in WATCHED if r.namespaced for ns in ("shop", "blue")]
    assert names == sorted([r.plural for r in WATCHED if not r.namespaced] + per_namespace)
    assert Runtime(NAMED_CONFIG, report_api=FakeReportApi()).watches == []  # no source: no informers


def test_nodes_and_namespaces_are_listed_before_the_namespaced_kinds() -> None:
    """A node applied after the workloads dirties every workload it is a candidate for: the runtime starts the
    namespaced informers only once the cluster-scoped ones have listed (O(nodes + workloads), not their
    product). While the node list is held, no namespaced resource is even requested."""
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, metrics_secure=False)
    api = FakeApiServer(_web())
    gate = api.gates["nodes"] = threading.Event()
    rt = Runtime(cfg, report_api=FakeReportApi(), source=ApiWatchSource(api))
    applied: list[str] = []
    route, route_listed = rt.router.route, rt.router.route_listed

    def spy(kind: str, record: Any) -> None:
        applied.append(kind)
        route(kind, record)

    def spy_listed(kind: str, records: Any) -> None:
        applied.extend([kind] * len(records))
        route_listed(kind, records)

    rt.router.route = spy  # type: ignore[method-assign]
    rt.router.route_listed = spy_listed  # type: ignore[method-assign]

    async def main() -> list[str]:
        namespaces = api.holding("Namespace")
        rest = [api.holding(r.kind) for r in WATCHED if r.kind != "Namespace"]
        await rt.start()
        try:
            await _first(namespaces.wait())
            requested = [r.kind for r in WATCHED if r.namespaced and api.list_requests(r.kind)]
            gate.set()
            await _first(asyncio.gather(*(held.wait() for held in rest)))
            return requested
        finally:
            gate.set()
            await rt.stop()

    requested = asyncio.run(main())
    assert requested == []  # nothing namespaced listed while the nodes are
    cluster_scoped = {r.kind for r in WATCHED if not r.namespaced}
    last_cluster_scoped = max(i for i, kind in enumerate(applied) if kind in cluster_scoped)
    first_namespaced = min(i for i, kind in enumerate(applied) if kind not in cluster_scoped)
    assert last_cluster_scoped < first_namespaced
    assert rt.ready()


def test_an_unexpected_error_is_logged_and_the_informer_lists_again(caplog: pytest.LogCaptureFixture) -> None:
    # A bug while applying listed objects (here: the first page of pods) must not end the informer in silence: it
    # would never be "listed", and the operator never ready.
    p, api, watch = _informed(_web())
    route_listed = p.router.route_listed
    broken = [True]

    def route_once_broken(kind: str, records: Any) -> None:
        if broken.pop() if broken else False:
            raise RuntimeError("a bug")
        route_listed(kind, records)

    p.router.route_listed = route_once_broken  # type: ignore[method-assign]
    with caplog.at_level(logging.INFO, logger="spreadwatch.watch"):
        _run_until_held(watch, api)
    assert _pods(p) == {"web-abc-0", "web-abc-1", "web-abc-2"}
    assert (watch.stats.lists, watch.stats.failures) == (1, 1)
    assert api.list_requests("Pod") == [0, 0]  # listed again after the error
    assert "pods: unexpected error" in caplog.messages
    assert any(r.exc_info and "a bug" in str(r.exc_info[1]) for r in caplog.records)
