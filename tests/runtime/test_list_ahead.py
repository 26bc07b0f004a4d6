"""A list reads one page ahead (``kube.listing.pages``): the next page is asked for from the head of this one
(``decode.page_continue``) while this one is loaded, the read-ahead page is used only for the token the
loaded page names, and an expired token still starts the list over.

The API is a paged fake (``call_api`` as the generated client's, ``response.data`` the page's bytes in the API
server's field order: kind, apiVersion, metadata, items). Nothing here waits on a clock: a load blocks on an
Event set by the next page's request, with a timeout only as a guard against a hang.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from kubernetes.client.exceptions import ApiException

from spreadwatch.decode import page_continue
from spreadwatch.kube import retry
from spreadwatch.kube.listing import pages
from spreadwatch.resources import CLUSTER_RESOURCES

_PODS = next(r for r in CLUSTER_RESOURCES if r.kind == "Pod")
_GUARD_S = 120.0  # (a hang guard, never a margin: the event is set as soon as the code is right)


def _page(names: Sequence[str], token: str, *, metadata_first: bool = True) -> bytes:
    meta = {"resourceVersion": "7", **({"continue": token} if token else {})}
    items = [{"metadata": {"name": n}} for n in names]
    body: dict[str, Any] = {"kind": "PodList", "apiVersion": "v1"}
    body.update({"metadata": meta, "items": items} if metadata_first else {"items": items, "metadata": meta})
    return orjson.dumps(body)


class _PagedApi:
    """``total`` pods in pages of ``limit``; the continue token is the next offset. ``requested[token]`` is set
    when that page is asked for; ``expire`` tokens answer 410 Gone once each."""

    def __init__(self, total: int, expire: Iterable[str] = ()) -> None:
        self.total = total
        self.expire = set(expire)
        self.tokens: list[str] = []
        self.requested: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def event(self, token: str) -> threading.Event:
        with self._lock:
            return self.requested.setdefault(token, threading.Event())

    def call_api(self, path: str, method: str, *, query_params: list[tuple[str, str]], **_: Any) -> Any:
        query = dict(query_params)
        token, limit = query.get("continue", ""), int(query["limit"])
        with self._lock:
            self.tokens.append(token)
        self.event(token).set()
        if token in self.expire:
            self.expire.discard(token)
            raise ApiException(status=410, reason="Expired")
        start = int(token or 0)
        end = min(start + limit, self.total)
        return SimpleNamespace(data=_page([f"p{i}" for i in range(start, end)], str(end) if end < self.total else ""))


def _names(data: bytes) -> tuple[list[str], str]:
    page = orjson.loads(data)
    return [item["metadata"]["name"] for item in page["items"]], page["metadata"].get("continue", "")


@pytest.mark.parametrize(
    ("data", "token"),
    [
        pytest.param(_page(["a"], "500"), "500", id="metadata-first: the head alone"),
        pytest.param(_page(["a"], ""), "", id="last page: no token"),
        pytest.param(_page(["a"], "500", metadata_first=False), "500", id="items-first: the page skimmed whole"),
        pytest.param(b'{"metadata":{"x":1,"items":2,"continue":"9"},"items":[]}', "9", id="a nested key: skimmed"),
        pytest.param(b'{"kind":"PodList","metadata":{"continue":"5"},"items":[{', "5", id="a truncated page's head"),
        pytest.param(b"<html>", "", id="not JSON: none (the load words it)"),
        pytest.param(b'{"metadata":{"continue":7},"items":[]}', "", id="a token that is not a string: none"),
    ],
)
def test_page_continue_reads_the_token_from_the_head(data: bytes, token: str) -> None:
    assert page_continue(data) == token


def test_the_next_page_is_asked_for_while_this_one_is_loaded() -> None:
    api = _PagedApi(total=1250)
    asked_early: list[bool] = []

    def load(data: bytes) -> tuple[list[str], str]:
        names, token = _names(data)
        if token:  # (this page's load waits for the next page's request: without reading ahead it never comes)
            asked_early.append(api.event(token).wait(_GUARD_S))
        return names, token

    got = list(pages(api, _PODS, None, load, page_size=500))  # type: ignore[arg-type]
    assert got == [f"p{i}" for i in range(1250)]
    assert asked_early == [True, True]
    assert api.tokens == ["", "500", "1000"]


def test_a_read_ahead_page_is_used_only_for_the_token_the_loaded_page_names() -> None:
    api = _PagedApi(total=1000)

    def load(data: bytes) -> tuple[list[str], str]:
        names, token = _names(data)
        return names, ("700" if token == "500" else token)  # (a load that disagrees with the head)

    got = list(pages(api, _PODS, None, load, page_size=500))  # type: ignore[arg-type]
    assert got == [f"p{i}" for i in range(500)] + [f"p{i}" for i in range(700, 1000)]
    assert api.tokens.count("700") == 1 and api.tokens[0] == ""


def test_an_expired_read_ahead_token_starts_the_list_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry.time, "sleep", lambda _: None)
    api = _PagedApi(total=900, expire={"500"})
    got = list(pages(api, _PODS, None, _names, page_size=500))  # type: ignore[arg-type]
    assert got == [f"p{i}" for i in range(500)] + [f"p{i}" for i in range(900)]
    assert api.tokens == ["", "500", "", "500"]


def test_an_abandoned_listing_stops_taking_pages() -> None:
    api = _PagedApi(total=5000)
    listing = pages(api, _PODS, None, _names, page_size=500)  # type: ignore[arg-type]
    first = [next(listing) for _ in range(600)]
    listing.close()
    assert first == [f"p{i}" for i in range(600)]
    assert api.event("1000").wait(_GUARD_S)  # (the page read ahead is read, then dropped)
    assert "1500" not in api.tokens
