"""The SpreadReport client: the operator's only writes (SpreadReports and core/v1 Events about them).

:class:`ReportClient` (the report writer's ``ReportApi``, for the event loop: each call runs in a thread of
its own pool, sized for the writes in flight — the loop's default executor has ``cores + 4`` threads, shared
with everything else; client errors become :class:`~spreadwatch.errors.KubeApiError`): list the managed
reports (whole, slimmed per page to what the writer keeps, or metadata only: name, owner, uid and the
status-digest annotation), save a whole report in one request (server-side apply: created or updated, with
its ownerReference to the workload with ``controller: false, blockOwnerDeletion: false``), read one report
(while the first listing of a leadership runs), delete; post an Event about a report whose health changed.
One request per call plus retries (:class:`~spreadwatch.kube.retry.RetryPolicy`); listing is one request
per page (:data:`REPORT_PAGE_SIZE` whole reports, or 500 metadata-only items).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

import msgspec
import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.kube.listing import PAGE_SIZE, iter_objects
from spreadwatch.kube.retry import (
    CONNECTION_ERRORS,
    DEFAULT_RETRY,
    REQUEST_TIMEOUT,
    RetryPolicy,
    api_error,
    retrying,
)
from spreadwatch.resources import SPREAD_REPORTS
from spreadwatch.timestamps import rfc3339

__all__ = ["FIELD_MANAGER", "MANAGED_BY", "REPORT_PAGE_SIZE", "ReportClient"]

T = TypeVar("T")

#: The label on everything spreadwatch writes.
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "spreadwatch"}
#: The server-side apply field manager of every report write.
FIELD_MANAGER: Final = "spreadwatch"
_MANAGED_SELECTOR: Final = ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())
#: SpreadReports per page of a list: a whole report carries its node table (tens of KiB at the envelope), so
#: a page of 100 is ~12 MiB of objects, a fifth of the listing default's 500.
REPORT_PAGE_SIZE: Final = 100
_KEPT_STATUS: Final = ("health", "bestNodes", "bestNodeCount", "conditions", "lastPlacement")
#: An apply patch's media type with a parameter: the generated client then sends the body's bytes as given
#: (only the bare type makes it deep-copy the body and ``json.dumps`` it, two more transient copies of a report
#: per write in flight); the API server drops parameters before matching the patch type (handlers/patch.go).
_APPLY_CONTENT_TYPE: Final = "application/apply-patch+yaml; charset=utf-8"


class _AppliedMeta(msgspec.Struct, gc=False):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    ownerReferences: list[dict[str, Any]] = []


class _Applied(msgspec.Struct, gc=False):
    """What the writer reads of a report as the API stored it (its status and managedFields are skipped
    undecoded: a whole report is tens of KiB of objects at the envelope, decoded for each write)."""

    metadata: _AppliedMeta = msgspec.field(default_factory=_AppliedMeta)
    spec: dict[str, Any] = {}


_APPLIED: Final = msgspec.json.Decoder(_Applied)
_GROUP, _VERSION, _PLURAL = SPREAD_REPORTS.group, SPREAD_REPORTS.version, SPREAD_REPORTS.plural


class ReportClient:
    """SpreadReport and Event writes for the event loop (see the module docstring).

    Never writes anything but SpreadReports (``spreadwatch.io``) and core/v1 Events about them.
    ``on_request(verb, outcome)`` is called for every write attempt (a hook for metrics), in the worker
    thread. ``threads``: the pool's size (at least the writer's bound on writes in flight, plus one for a
    resync's list: the loop's default executor silently capped the writes in flight at 6 on two cores);
    :meth:`close` ends it.
    """

    def __init__(
        self,
        api: client.ApiClient,
        *,
        component: str = "spreadwatch",
        instance: str = "",
        on_request: Callable[[str, str], None] | None = None,
        policy: RetryPolicy = DEFAULT_RETRY,
        threads: int = 8,
    ) -> None:
        self.api = api
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.component = component
        self.instance = instance
        self.policy = policy
        self._on_request = on_request
        self.requests = 0  # write requests sent (for tests and benchmarks)
        self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="spreadwatch-api")

    def close(self) -> None:
        """Stop the pool once the calls under way end (new calls fail)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _call(self, verb: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        def once() -> T:
            self.requests += 1
            try:
                result = fn(*args, _request_timeout=REQUEST_TIMEOUT, **kwargs)
            except ApiException as err:
                self._note(verb, str(err.status))
                raise
            except Exception:
                self._note(verb, "error")
                raise
            self._note(verb, "ok")
            return result

        return retrying(self.policy, once)

    def _note(self, verb: str, outcome: str) -> None:
        if self._on_request is not None:
            self._on_request(verb, outcome)

    # the writer's ReportApi: each call in a worker thread

    async def _run(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        call = functools.partial(fn, *args, **kwargs)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, call)
        except (ApiException, *CONNECTION_ERRORS) as err:
            raise api_error(err, what) from None

    async def list_reports(
        self,
        namespaces: Iterable[str],
        keep: Callable[[dict[str, Any]], T | None],
        *,
        metadata_only: bool = False,
        on_page: Callable[[int], None] | None = None,
    ) -> list[T]:
        """``keep`` of every managed SpreadReport of ``namespaces`` (empty: all), as :meth:`_list_reports`."""
        return await self._run("list SpreadReports", self._list_reports, tuple(namespaces), keep,
                               metadata_only=metadata_only, on_page=on_page)  # fmt: skip

    async def save(self, namespace: str, name: str, labels: Mapping[str, str], annotations: Mapping[str, str],
                   workload: Mapping[str, str], status: Mapping[str, Any]) -> dict[str, Any]:
        """The whole report in one request, as :meth:`_save`; its metadata and spec as stored."""
        return await self._run(
            f"apply SpreadReport {namespace}/{name}",
            self._save, namespace, name, labels, annotations, workload, status,
        )

    async def get_report(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One report as stored, slimmed as a listed one (None: there is none), as :meth:`_get`."""
        return await self._run(f"get SpreadReport {namespace}/{name}", self._get, namespace, name)

    async def delete(self, namespace: str, name: str) -> bool:
        """Delete a report; False when it was already gone."""
        return await self._run(f"delete SpreadReport {namespace}/{name}", self._delete, namespace, name)

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """A core/v1 Event whose involvedObject is the SpreadReport, as :meth:`_post_event`."""
        await self._run("post Event", self._post_event, report, event_type, reason, message)

    # reading (blocking)

    def _list_reports(
        self,
        namespaces: Iterable[str],
        keep: Callable[[dict[str, Any]], T | None],
        *,
        metadata_only: bool = False,
        on_page: Callable[[int], None] | None = None,
    ) -> list[T]:
        """``keep`` of every SpreadReport spreadwatch manages (label app.kubernetes.io/managed-by=spreadwatch)
        of ``namespaces`` (empty: all), where it is not None. Each object is slimmed and kept (or not) as its
        page is read, so only one page is ever held whole:

        * whole reports: one request per page of :data:`REPORT_PAGE_SIZE` per namespace (at the envelope's
          10,000 reports the list's peak is ~25 MiB with pages of 100 kept as they come, ~80 MiB with pages
          of 500 all slimmed first);
        * ``metadata_only``: ``PartialObjectMetadata`` items (name, labels, annotations with the status
          digest, ownerReferences, uid), no spec or status: pages of 500, ~1.9 KiB an item (most of it
          managedFields) where a whole report is tens of KiB at the envelope.

        ``on_page(bytes)`` hears of every page read (called in this thread); no page is read ahead (a resync
        is in no hurry, and one page is its memory)."""
        wanted: list[str | None] = [*namespaces] or [None]
        size = PAGE_SIZE if metadata_only else REPORT_PAGE_SIZE
        out: list[T] = []
        for ns in wanted:
            listed = iter_objects(self.api, SPREAD_REPORTS, ns, page_size=size, label_selector=_MANAGED_SELECTOR,
                                  metadata_only=metadata_only, on_page=on_page, read_ahead=False)  # fmt: skip
            out.extend(kept for kept in map(keep, map(_slim, listed)) if kept is not None)
        return out

    def _get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One GET of a report (a 404 is the answer None, not a failed request). Slimmed (:func:`_slim`)."""

        def get(_request_timeout: Any) -> dict[str, Any] | None:
            try:
                found: dict[str, Any] = self.custom.get_namespaced_custom_object(
                    _GROUP, _VERSION, namespace, _PLURAL, name, _request_timeout=_request_timeout
                )
            except ApiException as err:
                if err.status == 404:
                    return None
                raise
            return _slim(found)

        return self._call("get", get)

    # writing (blocking)

    @staticmethod
    def owner_references(workload: Mapping[str, str]) -> list[dict[str, Any]]:
        """The report's ownerReferences: the workload (neither controller nor blocking its deletion), if it
        has a uid."""
        if not workload.get("uid"):
            return []
        return [
            {
                "apiVersion": workload["apiVersion"],
                "kind": workload["kind"],
                "name": workload["name"],
                "uid": workload["uid"],
                "controller": False,
                "blockOwnerDeletion": False,
            }
        ]

    def _save(self, namespace: str, name: str, labels: Mapping[str, str], annotations: Mapping[str, str],
              workload: Mapping[str, str], status: Mapping[str, Any]) -> dict[str, Any]:
        """Create or update the whole report in one request: server-side apply (field manager
        ``spreadwatch``, forced) of its labels (``MANAGED_BY`` plus ``labels``), ``annotations``,
        ownerReference, ``spec.workloadRef`` and ``status`` (the CRD has no status subresource, so one apply
        sets them all). Returns its metadata (name, namespace, uid, resourceVersion, ownerReferences) and spec
        as stored."""
        body = {
            "apiVersion": SPREAD_REPORTS.api_version,
            "kind": SPREAD_REPORTS.kind,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {**MANAGED_BY, **labels},
                "annotations": dict(annotations),
                "ownerReferences": self.owner_references(workload),
            },
            "spec": {"workloadRef": dict(workload)},
            "status": dict(status),
        }
        path = f"{SPREAD_REPORTS.path(namespace)}/{name}"
        applied: dict[str, Any] = self._call("apply", self._server_side_apply, path, body)
        return applied

    def _server_side_apply(
        self, path: str, body: dict[str, Any], _request_timeout: Any = REQUEST_TIMEOUT
    ) -> dict[str, Any]:
        # The generated client has no server-side apply for custom objects.
        response = self.api.call_api(
            path,
            "PATCH",
            query_params=[("fieldManager", FIELD_MANAGER), ("force", "true")],
            body=orjson.dumps(body),  # (an apply patch as JSON, which is YAML)
            header_params={"Content-Type": _APPLY_CONTENT_TYPE, "Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
            _request_timeout=_request_timeout,
        )
        result: dict[str, Any] = msgspec.to_builtins(_APPLIED.decode(response.data))
        return result

    def _delete(self, namespace: str, name: str) -> bool:
        try:
            self._call(
                "delete", self.custom.delete_namespaced_custom_object, _GROUP, _VERSION, namespace, _PLURAL, name
            )
        except ApiException as err:
            if err.status == 404:
                return False
            raise
        return True

    def _post_event(
        self, report: Mapping[str, Any], event_type: str, reason: str, message: str, action: str = "Report"
    ) -> None:
        """A core/v1 Event whose involvedObject is the SpreadReport."""
        meta = report.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        now = rfc3339()
        suffix = f"{time.time_ns():x}"
        event_name = f"{name[: 253 - len(suffix) - 1]}.{suffix}"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event_name, "namespace": namespace, "labels": dict(MANAGED_BY)},
            "involvedObject": {
                "apiVersion": SPREAD_REPORTS.api_version,
                "kind": SPREAD_REPORTS.kind,
                "name": name,
                "namespace": namespace,
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "type": event_type,
            "reason": reason,
            "message": message[:1024],
            "action": action,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "source": {"component": self.component},
            "reportingComponent": f"{SPREAD_REPORTS.group}/{self.component}",
            "reportingInstance": self.instance[:128],
        }
        self._call("event", self.core.create_namespaced_event, namespace, body)


def _slim(report: dict[str, Any]) -> dict[str, Any]:
    """What the writer keeps of a listed report: metadata without managedFields, ``spec`` and the status'
    health, best nodes, last placement and conditions (not the per-node tables: a page of reports is released
    before the next is read). O(1)."""
    meta = report.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    status = report.get("status")
    if isinstance(status, dict):
        report["status"] = {k: status[k] for k in _KEPT_STATUS if k in status}
    return report
