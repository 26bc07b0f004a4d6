"""The operator's initial listing decodes the raw list pages straight into records (kube.iter_cluster_records).

The pages come from a paged fake of the API server's list endpoint (limit/continue, items without kind and
apiVersion, as the API server sends them); the index it loads must equal the one the reference path (dicts
through ``EventRouter.handle``) builds, and a broken object is logged once and skipped, the others kept.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from handler_fakes import FakeReportApi, ev, pod_of, run, web_cluster
from kubernetes.client.exceptions import ApiException

from spreadwatch.config import OperatorConfig
from spreadwatch.index import SpreadIndex
from spreadwatch.resources import CLUSTER_RESOURCES
from spreadwatch.runtime.events import EventRouter
from spreadwatch.runtime.process import Runtime
from spreadwatch.scoring import get_profile

_PATHS = {r.kind: r.path() for r in CLUSTER_RESOURCES}


class PagedListApi:
    """``GET <list path>?limit=N&continue=T`` over fixed objects; ``expire`` continue tokens answer 410 once."""

    def __init__(self, objects: Sequence[dict[str, Any]], expire: int = 0) -> None:
        self.items: dict[str, list[dict[str, Any]]] = {}
        for obj in objects:
            item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            self.items.setdefault(_PATHS[obj["kind"]], []).append(item)
        self.expire = expire
        self.requests: list[tuple[str, int]] = []

    def call_api(self, path: str, method: str, query_params: list[tuple[str, str]], **_: Any) -> Any:
        assert method == "GET"
        query = dict(query_params)
        start = int(query.get("continue") or 0)
        self.requests.append((path, start))
        if start and self.expire:
            self.expire -= 1
            raise ApiException(status=410, reason="Expired")
        items = self.items.get(path, [])
        end = start + int(query["limit"])
        meta = {"resourceVersion": "7", **({"continue": str(end)} if end < len(items) else {})}
        body = {"kind": "List", "apiVersion": "v1", "metadata": meta, "items": items[start:end]}
        return SimpleNamespace(data=orjson.dumps(body))


def _cluster(pods: int) -> list[dict[str, Any]]:
    """The web cluster plus ``pods`` more pods of web (more than one page of 500)."""
    objects = [e["object"] for e in web_cluster(pods_on=["node-a1", "node-b1"])]
    extra = [pod_of("web", 100 + i, "node-c1") for i in range(pods)]
    return objects + extra


def _reference_reports(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    index = SpreadIndex(get_profile("v1.28"), OperatorConfig().report)
    router = EventRouter(index, OperatorConfig().scope)
    for obj in objects:
        router.handle(ev(None, obj))
    return [r.to_dict() for r in index.reports()]


def _load(objects: Sequence[dict[str, Any]], expire: int = 0) -> tuple[Runtime, PagedListApi, int]:
    rt = Runtime(OperatorConfig(), sink=FakeReportApi())
    rt.api = api = PagedListApi(objects, expire)
    return rt, api, run(rt.load_initial_state())


def test_initial_list_from_raw_pages_equals_the_reference() -> None:
    objects = _cluster(1200)
    rt, api, loaded = _load(objects)
    assert loaded == len(objects)
    reports = [r.to_dict() for r in rt.index.reports()]
    assert reports == _reference_reports(objects)
    web = next(r for r in reports if r["workload"]["name"] == "web")
    assert web["pods"] == 1202  # 2 of the web cluster + 1200 extra, over three pages
    assert [start for path, start in api.requests if path == _PATHS["Pod"]] == [0, 500, 1000]
    assert rt.router.stats.applied == len(objects) and rt.router.stats.broken == 0


def test_an_expired_continue_token_starts_the_list_over() -> None:
    objects = _cluster(600)
    rt, api, loaded = _load(objects, expire=1)
    assert loaded == len(objects) + 500  # the first page of pods came twice (applying it again changes nothing)
    assert [start for path, start in api.requests if path == _PATHS["Pod"]] == [0, 500, 0, 500]
    assert [r.to_dict() for r in rt.index.reports()] == _reference_reports(objects)


def test_a_broken_object_in_a_page_is_logged_once_and_the_others_are_kept(caplog: pytest.LogCaptureFixture) -> None:
    objects = _cluster(10)
    broken = pod_of("web", 99, "node-a1")
    broken["metadata"]["labels"] = ["not", "a", "map"]
    objects.insert(len(objects) - 5, broken)
    with caplog.at_level(logging.WARNING, logger="spreadwatch.events"):
        rt, _, _ = _load(objects)
    lines = [r.getMessage() for r in caplog.records]
    problem = "Pod shop/web-abc-99: metadata.labels: expected a mapping of strings, got list"
    assert lines == [f"skipping malformed object: {problem}"]
    assert rt.router.stats.broken == 1
    assert rt.router.broken_objects == {("Pod", "shop", "web-abc-99"): problem}
    web = next(r for r in rt.index.reports() if r.workload.name == "web")
    assert web.to_dict()["pods"] == 12
