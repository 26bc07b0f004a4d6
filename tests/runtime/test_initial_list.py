"""The operator's initial listing: every informer lists its resource page by page, decoded straight from the
raw pages into records (``kube.list_pages`` under ``runtime.ResourceWatch``).

The pages come from a paged fake of the API server (limit/continue, items without kind and apiVersion, as the
API server sends them: tests/runtime/watch_fakes.py); the index the eight informers load (concurrently, in
any order) must equal the one the reference parser builds (``model.parse_object`` → ``index.apply``), an
expired continue token starts that list over, and a broken object is logged once and skipped, the others
kept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from handler_fakes import Pipeline, pipeline, pod_of, web_cluster
from watch_fakes import FakeApiServer

from spreadwatch.config import OperatorConfig
from spreadwatch.index import SpreadIndex
from spreadwatch.kube import ApiWatchSource
from spreadwatch.model import parse_object
from spreadwatch.runtime.informers import WATCHED
from spreadwatch.runtime.informers.watches import ResourceWatch
from spreadwatch.scoring import get_profile


def _cluster(pods: int) -> list[dict[str, Any]]:
    """The web cluster plus ``pods`` more pods of web (more than one page of 500)."""
    objects = [e["object"] for e in web_cluster(pods_on=["node-a1", "node-b1"])]
    extra = [pod_of("web", 100 + i, "node-c1") for i in range(pods)]
    return objects + extra


def _reference_reports(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    index = SpreadIndex(get_profile("v1.28"), OperatorConfig().report)
    for record in map(parse_object, objects):
        if record is not None:
            index.apply(record)
    return [r.to_dict() for r in index.reports()]


def _load(
    objects: Sequence[dict[str, Any]], expire: int = 0, *, loading: bool = False, **config: Any
) -> tuple[Pipeline, FakeApiServer]:
    """One informer per watched resource over a fake API server holding ``objects``, run until each has
    listed and holds its watch open; ``loading``: into an index loading in bulk, as the runtime's is
    (``SpreadIndex.start_loading`` before, ``finish_loading`` after)."""
    p = pipeline(**config)
    if loading:
        p.index.start_loading()
    api = FakeApiServer(objects, expire)
    watches = [ResourceWatch(resource, None, p.router, ApiWatchSource(api)) for resource in WATCHED]
    p.informers += watches

    async def main() -> None:
        held = [api.holding(resource.kind).wait() for resource in WATCHED]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(w.run(stop)) for w in watches]
        try:
            await asyncio.wait_for(asyncio.gather(*held), 60)  # (a guard, not a timing assertion)
        finally:
            stop.set()
            await asyncio.gather(*tasks)

    asyncio.run(main())
    assert all(w.listed.is_set() and w.stats.lists == 1 and w.stats.failures == 0 for w in watches)
    if loading:
        assert p.index.workload_keys() == []  # deferred until every informer has listed
        while not p.index.finish_loading(1):
            pass
    return p, api


def test_initial_list_from_raw_pages_equals_the_reference() -> None:
    objects = _cluster(1200)
    p, api = _load(objects)
    assert p.router.stats.events == len(objects)
    reports = [r.to_dict() for r in p.index.reports()]
    assert reports == _reference_reports(objects)
    web = next(r for r in reports if r["workload"]["name"] == "web")
    assert web["pods"] == 1202  # 2 of the web cluster + 1200 extra, over three pages
    assert api.list_requests("Pod") == [0, 500, 1000]
    assert p.router.stats.applied == len(objects) and p.malformed_count == 0
    assert api.watch_versions("Pod") == [api.version]  # each watch starts at its list's version


def test_a_bulk_initial_list_equals_the_reference_and_skips_what_the_scope_does_not_watch() -> None:
    objects = _cluster(1200)
    p, _ = _load(objects, loading=True)
    assert [r.to_dict() for r in p.index.reports()] == _reference_reports(objects)
    assert (p.router.stats.events, p.router.stats.applied) == (len(objects), len(objects))
    assert p.router.stats.by_kind["Pod"] == sum(1 for o in objects if o["kind"] == "Pod")
    elsewhere = [e["object"] for e in web_cluster(pods_on=["node-a1"], namespace="elsewhere")]
    namespaced = sum(1 for o in elsewhere if o["kind"] not in ("Node", "Namespace"))
    only, _ = _load(objects + elsewhere, loading=True, namespaces=("shop",))
    assert [r.to_dict() for r in only.index.reports()] == _reference_reports(objects)
    assert only.router.stats.ignored == namespaced


def test_an_expired_continue_token_starts_the_list_over() -> None:
    objects = _cluster(600)
    p, api = _load(objects, expire=1)
    # the first page of pods came twice (applying it again changes nothing)
    assert p.router.stats.events == len(objects) + 500
    assert api.list_requests("Pod") == [0, 500, 0, 500]
    assert [r.to_dict() for r in p.index.reports()] == _reference_reports(objects)


def test_a_broken_object_in_a_page_is_logged_once_and_the_others_are_kept(caplog: pytest.LogCaptureFixture) -> None:
    objects = _cluster(10)
    broken = pod_of("web", 99, "node-a1")
    broken["metadata"]["labels"] = ["not", "a", "map"]
    objects.insert(len(objects) - 5, broken)
    with caplog.at_level(logging.WARNING, logger="spreadwatch.events"):
        p, _ = _load(objects)
    lines = [r.getMessage() for r in caplog.records]
    problem = "Pod shop/web-abc-99: metadata.labels: expected a mapping of strings, got list"
    assert lines == [f"skipping malformed object: {problem}"]
    assert p.malformed_count == 1
    assert p.malformed == {("Pod", "shop", "web-abc-99"): problem}
    web = next(r for r in p.index.reports() if r.workload.name == "web")
    assert web.to_dict()["pods"] == 12
