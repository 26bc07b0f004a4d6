"""Reading the cluster: every object of a resource, page by page (raw JSON pages, never the typed models).

* :func:`iter_objects`: plain dicts (orjson; ``kind``/``apiVersion`` filled in on every item), optionally
  metadata-only (``PartialObjectMetadata``);
* :func:`iter_records`: the same pages decoded straight into records (msgspec, :mod:`spreadwatch.decode`; for
  the big lists: the operator's initial listing);
* :func:`iter_cluster_records`: every resource a snapshot holds
  (:data:`~spreadwatch.resources.CLUSTER_RESOURCES`), live ``analyze`` and the operator's start;

Pages of 500 items, the next one asked for while this one is loaded (:func:`pages`); an expired continue
token (410 Gone) restarts the list; every page request retries (:func:`~spreadwatch.kube.retry.call_with_retries`);
``on_page(bytes)`` hears of every page read (what a list costs: the resync's metrics). Costs: one request per
page, O(page bytes) to parse it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, Final, TypeVar

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.decode import Converter, Decoded, decode_page, page_continue
from spreadwatch.kube.retry import CONNECTION_ERRORS, REQUEST_TIMEOUT, api_error, call_with_retries
from spreadwatch.resources import CLUSTER_RESOURCES, ApiResource

__all__ = ["PAGE_SIZE", "iter_cluster_records", "iter_objects", "iter_records", "pages"]

T = TypeVar("T")

#: Items per list page.
PAGE_SIZE: Final = 500

#: Metadata-only lists (``PartialObjectMetadataList``): names without specs, about 10x smaller for pods.
_METADATA_ONLY: Final = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def _get_bytes(
    api: client.ApiClient, path: str, query: Sequence[tuple[str, str]] = (), accept: str = "application/json"
) -> bytes:
    response = api.call_api(
        path,
        "GET",
        query_params=list(query),
        header_params={"Accept": accept},
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
        _request_timeout=(REQUEST_TIMEOUT[0], 120.0),
    )
    data: bytes = response.data
    return data


def pages(
    api: client.ApiClient,
    resource: ApiResource,
    namespace: str | None,
    load: Callable[[bytes], tuple[Iterable[T], str]],
    page_size: int = PAGE_SIZE,
    label_selector: str = "",
    accept: str = "application/json",
    restart_expired: bool = True,
    on_page: Callable[[int], None] | None = None,
    read_ahead: bool = True,
) -> Iterator[T]:
    """The items of every page of one list, as ``load(page bytes) -> (items, continue token)`` gives them.
    An expired continue token (410 Gone) starts the list over, or with ``restart_expired=False`` raises
    (the caller then knows the pages it had are from an abandoned listing). ``on_page`` is called with each
    page's size in bytes as it arrives. Raises KubeApiError (one line) once the retries of a page run out.

    With ``read_ahead`` one page is read ahead: the next one is asked for (in a daemon thread) as soon as
    this one's head names its continue token (:func:`~spreadwatch.decode.page_continue`), so the API server
    makes it while this one is loaded and its items taken; a list costs about the larger of the server's
    time and the loading, not their sum, and two pages are held. Without, each page is asked for once the
    previous one's items are all taken (one page held)."""
    path = resource.path(namespace)

    def fetch(token: str) -> bytes:
        query = [("limit", str(page_size))]
        if token:
            query.append(("continue", token))
        if label_selector:
            query.append(("labelSelector", label_selector))
        return call_with_retries(_get_bytes, api, path, query, accept)

    token = ""
    ahead: tuple[str, Future[bytes]] | None = None
    while True:
        try:
            data = ahead[1].result() if ahead is not None and ahead[0] == token else fetch(token)
        except ApiException as err:
            if err.status == 410 and token and restart_expired:  # the continue token expired: start over
                token, ahead = "", None
                continue
            raise api_error(err, f"cannot list {resource.plural}") from None
        except CONNECTION_ERRORS as err:
            raise api_error(err, f"cannot list {resource.plural}") from None
        if on_page is not None:
            on_page(len(data))
        following = page_continue(data) if read_ahead else ""
        ahead = (following, _read_ahead(fetch, following, resource.plural)) if following else None
        items, token = load(data)
        yield from items
        if not token:
            return


def _read_ahead(fetch: Callable[[str], bytes], token: str, plural: str) -> Future[bytes]:
    """``fetch(token)`` begun in a daemon thread (it never holds up the interpreter's exit; an abandoned
    listing's last page is read and dropped). O(1) here."""
    future: Future[bytes] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fetch(token))
        except BaseException as err:  # raised where the page is taken
            future.set_exception(err)

    threading.Thread(target=run, name=f"list {plural} ahead", daemon=True).start()
    return future


def iter_objects(
    api: client.ApiClient,
    resource: ApiResource,
    namespace: str | None = None,
    page_size: int = PAGE_SIZE,
    label_selector: str = "",
    metadata_only: bool = False,
    on_page: Callable[[int], None] | None = None,
    read_ahead: bool = True,
) -> Iterator[dict[str, Any]]:
    """Every object of one resource (all namespaces when ``namespace`` is None), page by page.

    ``metadata_only`` asks for ``PartialObjectMetadata`` items (``metadata`` only, no spec/status);
    ``on_page(bytes)`` hears of every page and ``read_ahead`` (see :func:`pages`).
    """

    def load(data: bytes) -> tuple[list[dict[str, Any]], str]:
        page = orjson.loads(data)
        items = page.get("items") or []
        for item in items:
            item.setdefault("kind", resource.kind)
            item.setdefault("apiVersion", resource.api_version)
        return items, (page.get("metadata") or {}).get("continue") or ""

    accept = _METADATA_ONLY if metadata_only else "application/json"
    return pages(api, resource, namespace, load, page_size, label_selector, accept, on_page=on_page,
                 read_ahead=read_ahead)  # fmt: skip


def iter_records(
    api: client.ApiClient, resource: ApiResource, namespace: str | None = None, converter: Converter | None = None
) -> Iterator[Decoded]:
    """:func:`iter_objects` decoded straight from the raw pages into records (:mod:`spreadwatch.decode`).

    An item the typed decoder leaves comes as :class:`~spreadwatch.decode.Unparsed` (its dict, kind and
    apiVersion filled in) for ``parse_object``, which words its error. O(page bytes) in C per page.
    """
    conv = converter or Converter()
    return pages(api, resource, namespace, lambda data: decode_page(data, resource.kind, resource.api_version, conv))


def iter_cluster_records(
    api: client.ApiClient, namespaces: Iterable[str] = (), resources: Sequence[ApiResource] = CLUSTER_RESOURCES
) -> Iterator[tuple[ApiResource, Decoded]]:
    """Every object of ``resources`` (default: all the scorers read) as records (see :func:`iter_records`),
    each with its resource; namespaced kinds only from ``namespaces`` when given. One request per page."""
    wanted = list(namespaces)
    converter = Converter()  # label maps, owners and templates shared across all pages
    for resource in resources:
        scopes: list[str | None] = [None] if not resource.namespaced or not wanted else [*wanted]
        for scope in scopes:
            for item in iter_records(api, resource, scope, converter):
                yield resource, item
