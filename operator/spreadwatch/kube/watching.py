"""List and watch one resource, decoded straight from the response bytes into records (blocking; one thread each).

* :func:`list_pages`: every page of one list (500 items) as records (:func:`spreadwatch.decode.decode_list_page`:
  a malformed object as :class:`~spreadwatch.decode.Malformed`), with the list's resourceVersion, where its
  watch starts;
* :class:`WatchStream`: one watch request (``?watch=1&allowWatchBookmarks=true&resourceVersion=…``), its
  events decoded line by line (:func:`spreadwatch.decode.decode_event`); :meth:`WatchStream.close` from any
  thread ends it at once.

Nothing here keeps a dict per object or per event: the bytes of one page (a few MiB) or one line are the
largest transient. An expired resourceVersion (HTTP 410 Gone, or a watch ``ERROR`` event with code 410)
raises :class:`~spreadwatch.errors.KubeApiError` with ``status == 410``: the caller lists again.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.decode import (
    Converter,
    DecodeError,
    Informed,
    WatchEvent,
    decode_event,
    decode_list_page,
    list_resource_version,
)
from spreadwatch.errors import KubeApiError
from spreadwatch.kube.listing import PAGE_SIZE, pages
from spreadwatch.kube.retry import CONNECTION_ERRORS, REQUEST_TIMEOUT, api_error
from spreadwatch.resources import ApiResource

__all__ = ["WATCH_TIMEOUT", "ApiWatchSource", "WatchStream", "list_pages"]

#: Seconds the API server keeps one watch open (``timeoutSeconds``); the client then watches again from
#: the last resourceVersion (bookmarks keep it fresh).
WATCH_TIMEOUT: Final = 300


def list_pages(
    api: client.ApiClient, resource: ApiResource, namespace: str | None = None, page_size: int = PAGE_SIZE
) -> Iterator[tuple[Sequence[Informed], str]]:
    """Each page of the list of ``resource`` (all namespaces when ``namespace`` is None) as (records, the
    list's resourceVersion). Raises KubeApiError once a page's retries run out, with ``status`` 410 when the
    continue token expired (the caller lists again: what it saw of this listing is incomplete). O(page
    bytes) per page."""
    converter = Converter()
    version = ""

    def load(data: bytes) -> tuple[list[tuple[Sequence[Informed], str]], str]:
        nonlocal version
        records, token = decode_list_page(data, resource.kind, resource.api_version, converter)
        version = version or list_resource_version(data)  # (the first page names the list's version)
        return [(records, version)], token

    return pages(api, resource, namespace, load, page_size, restart_expired=False)


class WatchStream:
    """One watch of ``resource`` from ``resource_version``: iterate to get its events (blocking) until the
    server ends it (``timeout`` seconds) or :meth:`close` is called. Raises KubeApiError (``status`` 410
    when the version is too old); a malformed line is given as a :class:`DecodeError` item for the caller
    to log. Events are decoded with one :class:`Converter` per ``batch`` lines (its caches stay bounded)."""

    def __init__(
        self,
        api: client.ApiClient,
        resource: ApiResource,
        namespace: str | None,
        resource_version: str,
        timeout: int = WATCH_TIMEOUT,
        batch: int = 1000,
    ) -> None:
        self.api = api
        self.resource = resource
        self.namespace = namespace
        self.resource_version = resource_version
        self.timeout = timeout
        self.batch = batch
        self._response: Any = None
        self._closed = threading.Event()

    def close(self) -> None:
        """End the stream (any thread): the blocked read returns and iteration stops."""
        self._closed.set()
        response = self._response
        if response is not None:
            with contextlib.suppress(OSError):
                response.shutdown()

    def _open(self) -> Any:
        query = [
            ("watch", "1"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", self.resource_version),
            ("timeoutSeconds", str(self.timeout)),
        ]
        try:
            return self.api.call_api(
                self.resource.path(self.namespace),
                "GET",
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=(REQUEST_TIMEOUT[0], self.timeout + 60.0),
            )
        except ApiException as err:
            raise api_error(err, f"cannot watch {self.resource.plural}") from None
        except CONNECTION_ERRORS as err:
            raise api_error(err, f"cannot watch {self.resource.plural}") from None

    def __iter__(self) -> Iterator[WatchEvent | DecodeError]:
        if self._closed.is_set():
            return
        self._response = response = self._open()
        if self._closed.is_set():
            response.shutdown()
        kind, api_version = self.resource.kind, self.resource.api_version
        converter, decoded = Converter(), 0
        try:
            for line in _lines(response):
                if decoded == self.batch:
                    converter, decoded = Converter(), 0
                decoded += 1
                try:
                    event = decode_event(line, kind, api_version, converter)
                except DecodeError as err:
                    yield err
                    continue
                if event.type == "ERROR":  # (code 410: the version is too old; the caller lists again)
                    raise KubeApiError(f"watch {self.resource.plural}: error event (code {event.code})", event.code)
                if event.resource_version:
                    self.resource_version = event.resource_version
                yield event
        except CONNECTION_ERRORS as err:
            if not self._closed.is_set():
                raise api_error(err, f"watch {self.resource.plural}") from None
        finally:
            response.release_conn()
            self._response = None

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


def _lines(response: Any) -> Iterator[bytes]:
    """The response body's lines as they arrive (chunked transfer: each chunk when it is read)."""
    rest = b""
    for chunk in response.stream(amt=None, decode_content=True):
        if not chunk:
            continue
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            if part.strip():
                yield part
    if rest.strip():
        yield rest


class ApiWatchSource:
    """:func:`list_pages` and :class:`WatchStream` on one API client (the informers' ``WatchSource``)."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api

    def list(self, resource: ApiResource, namespace: str | None) -> Iterator[tuple[Sequence[Informed], str]]:
        return list_pages(self.api, resource, namespace)

    def watch(self, resource: ApiResource, namespace: str | None, resource_version: str) -> WatchStream:
        return WatchStream(self.api, resource, namespace, resource_version)
