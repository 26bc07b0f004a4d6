"""The operator's list + watch client on raw bytes: ``kube.list_pages`` (pages of records with the list's
resourceVersion) and ``kube.WatchStream`` (watch lines split across chunks anywhere → events; ERROR 410 →
KubeApiError; a malformed line → a DecodeError item; ``close`` from another thread ends a blocked stream).

The fakes answer ``api.call_api`` as ``kubernetes.client.ApiClient`` does, with the bytes the API server sends.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
import pytest
import urllib3
from handler_fakes import pod_of, web_cluster
from kubernetes.client.exceptions import ApiException
from watch_fakes import FakeApiServer

from spreadwatch.decode import Converter, DecodeError, Unparsed, WatchEvent, decode_event, decode_page
from spreadwatch.errors import KubeApiError
from spreadwatch.kube import WatchStream, list_pages
from spreadwatch.kube.watching import WATCH_TIMEOUT
from spreadwatch.model import Pod
from spreadwatch.resources import CLUSTER_RESOURCES

POD = next(r for r in CLUSTER_RESOURCES if r.kind == "Pod")


def _line(event_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


def _pod(i: int, version: str) -> dict[str, Any]:
    obj = pod_of("web", i, "node-a1")
    obj["metadata"]["resourceVersion"] = version
    return obj


_BOOKMARK = orjson.dumps({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "13"}}})
_GONE = orjson.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
#: ADDED 0, MODIFIED 1, a blank line, BOOKMARK, DELETED 0 (its last line without a newline).
_BODY = (
    _line("ADDED", _pod(0, "11"))
    + _line("MODIFIED", _pod(1, "12"))
    + b"\n  \n"
    + _BOOKMARK
    + b"\n"
    + _line("DELETED", _pod(0, "14")).rstrip(b"\n")
)
_EXPECTED = [
    ("ADDED", "shop", "web-abc-0", "11"),
    ("MODIFIED", "shop", "web-abc-1", "12"),
    ("BOOKMARK", "", "", "13"),
    ("DELETED", "shop", "web-abc-0", "14"),
]


_ONE_OF_EACH_KIND = {e["object"]["kind"]: e["object"] for e in web_cluster()}


class Response:
    """A watch response: ``chunks`` in turn, then (``hold``) blocked until ``shutdown``; ``fail`` is raised
    after the chunks (a broken connection)."""

    def __init__(self, chunks: Sequence[bytes], hold: bool = False, fail: BaseException | None = None) -> None:
        self.chunks = chunks
        self.hold = hold
        self.fail = fail
        self.blocked = threading.Event()
        self.shut = threading.Event()
        self.released = False

    def stream(self, amt: int | None = None, decode_content: bool = True) -> Iterator[bytes]:
        assert amt is None and decode_content
        yield from self.chunks
        if self.fail is not None:
            raise self.fail
        if self.hold:
            self.blocked.set()
            self.shut.wait(60)

    def shutdown(self) -> None:
        self.shut.set()

    def release_conn(self) -> None:
        self.released = True


class WatchApi:
    """``call_api`` answering one watch request with ``answer`` (a Response, or an exception to raise)."""

    def __init__(self, answer: Response | BaseException) -> None:
        self.answer = answer
        self.requests: list[tuple[str, dict[str, str]]] = []

    def call_api(self, path: str, method: str, query_params: list[tuple[str, str]], **_: Any) -> Any:
        assert method == "GET"
        self.requests.append((path, dict(query_params)))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def _cut(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _at_line_ends(data: bytes) -> list[bytes]:
    return [part + b"\n" for part in data.split(b"\n")[:-1]] + [data.rsplit(b"\n", 1)[1]]


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([_BODY], id="one chunk"),
        pytest.param(_cut(_BODY, 1), id="one byte per chunk"),
        pytest.param(_cut(_BODY, 7), id="7 bytes per chunk"),
        pytest.param(_at_line_ends(_BODY), id="chunks end at line ends"),
        pytest.param([b"", *_cut(_BODY, 100), b""], id="empty chunks"),
    ],
)
def test_watch_lines_split_anywhere_decode_to_the_same_events(chunks: list[bytes]) -> None:
    response = Response(chunks)
    api = WatchApi(response)
    stream = WatchStream(api, POD, "shop", "10")  # type: ignore[arg-type]
    events = list(stream)
    assert all(isinstance(e, WatchEvent) for e in events)
    got = [(e.type, e.namespace, e.name, e.resource_version) for e in events if isinstance(e, WatchEvent)]
    assert got == _EXPECTED
    # each object decoded (a record, or Malformed where the reference parser refuses it); a bookmark has none
    assert [e.item is not None for e in events if isinstance(e, WatchEvent)] == [True, True, False, True]
    assert stream.resource_version == "14"  # the next watch starts after the last event
    assert response.released
    assert api.requests == [
        (
            "/api/v1/namespaces/shop/pods",
            {
                "watch": "1",
                "allowWatchBookmarks": "true",
                "resourceVersion": "10",
                "timeoutSeconds": str(WATCH_TIMEOUT),
            },
        )
    ]


@pytest.mark.parametrize("obj", [pytest.param(o, id=k) for k, o in _ONE_OF_EACH_KIND.items()])
def test_a_watch_event_object_decodes_to_the_record_its_list_item_gives(obj: dict[str, Any]) -> None:
    resource = next(r for r in CLUSTER_RESOURCES if r.kind == obj["kind"])
    event = decode_event(_line("ADDED", obj), resource.kind, resource.api_version, Converter())
    item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}  # as a list page holds it
    page = orjson.dumps({"kind": "List", "metadata": {"resourceVersion": "1"}, "items": [item]})
    (listed,), _ = decode_page(page, resource.kind, resource.api_version, Converter())
    assert not isinstance(listed, Unparsed)
    assert event.item == listed  # the typed path, as for the list: no dict per event


def test_a_malformed_line_is_an_item_and_the_stream_goes_on() -> None:
    body = b"not json\n" + _line("ADDED", _pod(2, "21"))
    events = list(WatchStream(WatchApi(Response(_cut(body, 5))), POD, None, "20"))  # type: ignore[arg-type]
    assert len(events) == 2
    assert isinstance(events[0], DecodeError)
    assert str(events[0]).startswith("malformed watch event")
    assert isinstance(events[1], WatchEvent) and events[1].name == "web-abc-2"


def test_an_error_event_410_raises_after_the_events_before_it() -> None:
    response = Response([_line("ADDED", _pod(0, "31")), _GONE + b"\n", _line("ADDED", _pod(1, "32"))])
    stream = WatchStream(WatchApi(response), POD, None, "30")  # type: ignore[arg-type]
    seen: list[object] = []
    with pytest.raises(KubeApiError) as raised:
        seen.extend(stream)
    assert raised.value.status == 410
    assert [e.name for e in seen if isinstance(e, WatchEvent)] == ["web-abc-0"]
    assert stream.resource_version == "31"
    assert response.released


@pytest.mark.parametrize(
    ("error", "status", "message"),
    [
        pytest.param(ApiException(status=410, reason="Expired"), 410, "cannot watch pods: HTTP 410 Expired", id="410"),
        pytest.param(
            ApiException(status=403, reason="Forbidden"), 403, "cannot watch pods: HTTP 403 Forbidden", id="403"
        ),
        pytest.param(
            urllib3.exceptions.MaxRetryError(None, "/api/v1/pods", "refused"),  # type: ignore[arg-type]
            None,
            "cannot watch pods: MaxRetryError",
            id="connection refused",
        ),
    ],
)
def test_a_failed_watch_request_is_one_line(error: BaseException, status: int | None, message: str) -> None:
    with pytest.raises(KubeApiError) as raised:
        list(WatchStream(WatchApi(error), POD, None, "40"))  # type: ignore[arg-type]
    assert raised.value.status == status
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_a_connection_lost_mid_stream_raises_but_not_once_closed() -> None:
    lost = urllib3.exceptions.ProtocolError("Connection broken")
    response = Response([_line("ADDED", _pod(0, "51"))], fail=lost)
    stream = WatchStream(WatchApi(response), POD, None, "50")  # type: ignore[arg-type]
    with pytest.raises(KubeApiError, match="watch pods: ProtocolError"):
        list(stream)
    assert response.released
    closing = Response([], fail=lost)
    stream = WatchStream(WatchApi(closing), POD, None, "50")  # type: ignore[arg-type]
    it = iter(stream)
    stream.close()  # the read fails because the stream was closed: the end, not an error
    assert list(it) == []


def test_close_from_another_thread_ends_a_blocked_watch() -> None:
    response = Response([_line("ADDED", _pod(0, "61"))], hold=True)
    stream = WatchStream(WatchApi(response), POD, None, "60")  # type: ignore[arg-type]
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.extend(stream))
    reader.start()
    assert response.blocked.wait(60)  # the reader waits for the server's next line
    stream.close()
    reader.join(60)
    assert not reader.is_alive()
    assert [e.name for e in got if isinstance(e, WatchEvent)] == ["web-abc-0"]
    assert response.shut.is_set() and response.released and stream.closed


def test_a_stream_closed_before_it_starts_sends_no_request() -> None:
    api = WatchApi(Response([_line("ADDED", _pod(0, "71"))]))
    stream = WatchStream(api, POD, None, "70")  # type: ignore[arg-type]
    stream.close()
    assert list(stream) == []
    assert api.requests == []


def test_list_pages_gives_records_page_by_page_with_the_lists_version() -> None:
    api = FakeApiServer([pod_of("web", i, "node-b1") for i in range(12)])
    pages = list(list_pages(api, POD, "shop", page_size=5))  # type: ignore[arg-type]
    assert [len(records) for records, _ in pages] == [5, 5, 2]
    assert {version for _, version in pages} == {api.version}
    names = [r.name for records, _ in pages for r in records if isinstance(r, Pod)]
    assert names == sorted(f"web-abc-{i}" for i in range(12))
    assert api.list_requests("Pod", "shop") == [0, 5, 10]
    assert list(list_pages(api, POD, "elsewhere")) == [([], api.version)]  # type: ignore[arg-type]
