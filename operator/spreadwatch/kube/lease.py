"""The Kubernetes API: the only module of spreadwatch that talks to it (official ``kubernetes`` client).

What it does, and nothing else — the operator is read-only to users' objects:

* **configuration** — :func:`load_configuration` (a kubeconfig file, ``$KUBECONFIG``/``~/.kube/config``, or the
  in-cluster service account) and :func:`connection_params` (the same credentials for kopf's login);
* **reading the cluster** — :func:`iter_objects` / :func:`list_cluster_objects`: nodes, namespaces, pods,
  services, replication controllers, replica sets, stateful sets and deployments as plain dicts (raw JSON
  pages of 500, parsed with orjson; ``kind``/``apiVersion`` filled in on every item); :func:`iter_records` /
  :func:`iter_cluster_records`: the same pages decoded straight into records (msgspec, for the big lists);
* **SpreadReports** — :class:`ReportClient`: list, create (ownerReference to the workload with
  ``controller: false, blockOwnerDeletion: false``), status replacement through the status subresource, owner
  fix-up, delete; plus a core/v1 Event about a SpreadReport when its health changes;
* **leader election** — :class:`LeaseElector`: a coordination.k8s.io/v1 Lease (get/create/update with
  ``resourceVersion``; renewed every ``renew_period``, taken over when not renewed for ``lease_duration``);
* **delegated authentication and authorization** of ``/metrics`` scrapers — :func:`review_token` (a
  TokenReview) and :func:`review_access` (a SubjectAccessReview), as kube-rbac-proxy does.

Every call retries with exponential backoff and full jitter on 429, 5xx, 409 Conflict and connection errors
(:func:`call_with_retries`); async callers use :func:`run_sync` (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, ParamSpec, TypeVar

import orjson
import urllib3
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from spreadwatch.decode import Converter, Decoded, decode_page
from spreadwatch.errors import InputError, SpreadwatchError

__all__ = [
    "CLUSTER_RESOURCES",
    "GROUP",
    "KIND",
    "MANAGED_BY",
    "PLURAL",
    "VERSION",
    "ApiResource",
    "AsyncReportClient",
    "KubeApiError",
    "LeaseElector",
    "ReportClient",
    "RetryPolicy",
    "ReviewedUser",
    "api_error",
    "call_with_retries",
    "connection_params",
    "context_namespace",
    "iter_cluster_objects",
    "iter_cluster_records",
    "iter_objects",
    "iter_records",
    "list_cluster_objects",
    "list_object_keys",
    "load_api_client",
    "load_configuration",
    "review_access",
    "review_token",
    "run_sync",
]

log = logging.getLogger("spreadwatch.kube")

GROUP: Final = "spreadwatch.io"
VERSION: Final = "v1alpha1"
PLURAL: Final = "spreadreports"
KIND: Final = "SpreadReport"
API_VERSION: Final = f"{GROUP}/{VERSION}"
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "spreadwatch"}
_MANAGED_SELECTOR: Final = ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())
_TIMEOUT: Final = (5.0, 30.0)  # (connect, read) seconds for every non-watch request
_PAGE: Final = 500

P = ParamSpec("P")
T = TypeVar("T")


class KubeApiError(SpreadwatchError):
    """The API could not be reached or refused a request (after retries); one line for the user."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


# --- configuration ----------------------------------------------------------------------------------------


def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> client.Configuration:
    """Client configuration: ``kubeconfig`` if given; else in-cluster when running in a pod; else the
    default kubeconfig (``$KUBECONFIG`` or ``~/.kube/config``). Raises InputError (one line)."""
    cfg = client.Configuration()
    try:
        if kubeconfig:
            if not os.path.exists(kubeconfig):
                raise InputError(f"cannot read kubeconfig {kubeconfig}: no such file")
            kube_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        elif os.environ.get("KUBERNETES_SERVICE_HOST") and not context:
            kube_config.load_incluster_config(client_configuration=cfg)
        else:
            kube_config.load_kube_config(context=context, client_configuration=cfg)
    except (ConfigException, OSError, ValueError, TypeError) as err:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config or in-cluster"
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"cannot load Kubernetes configuration ({where}): {first}") from None
    return cfg


def load_api_client(kubeconfig: str | None = None, context: str | None = None) -> client.ApiClient:
    return client.ApiClient(load_configuration(kubeconfig, context))


def context_namespace(kubeconfig: str | None = None, context: str | None = None) -> str:
    """The namespace kubectl would use: that of ``context`` (default: the current context) in the kubeconfig
    (``kubeconfig``, else ``$KUBECONFIG`` (a ``:``-separated list is merged), else ``~/.kube/config``), or
    ``default`` when it sets none or there is no kubeconfig. Reads files only; raises InputError (one line)
    for a missing ``kubeconfig`` file or an unknown context."""
    if kubeconfig and not os.path.exists(kubeconfig):
        raise InputError(f"cannot read kubeconfig {kubeconfig}: no such file")
    path = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        contexts, current = kube_config.list_kube_config_contexts(config_file=path)
    except (ConfigException, OSError, ValueError, TypeError):
        if context:
            raise InputError(f"context {context!r}: no usable kubeconfig ({path})") from None
        return "default"
    chosen = current if not context else next((c for c in contexts if c.get("name") == context), None)
    if chosen is None:
        raise InputError(f"context {context!r} not found in the kubeconfig ({path})")
    namespace = (chosen.get("context") or {}).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else "default"


def connection_params(cfg: client.Configuration) -> dict[str, Any]:
    """The credentials of a client configuration as keyword arguments of ``kopf.ConnectionInfo``."""
    header = cfg.get_api_key_with_prefix("BearerToken") or cfg.get_api_key_with_prefix("authorization")
    parts = header.split(" ", 1) if header else []
    scheme, token = (None, None) if not parts else (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    return {
        "server": cfg.host,
        "ca_path": cfg.ssl_ca_cert,
        "insecure": not cfg.verify_ssl,
        "username": cfg.username or None,
        "password": cfg.password or None,
        "scheme": scheme,
        "token": token,
        "certificate_path": cfg.cert_file,
        "private_key_path": cfg.key_file,
    }


# --- retries ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n sleeps uniform(0, min(cap, base * 2**n))."""

    attempts: int = 6
    base: float = 0.2
    cap: float = 10.0
    retry_statuses: frozenset[int] = frozenset({409, 429, 500, 502, 503, 504})

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.cap, self.base * (2**attempt)))  # jitter, not cryptography


DEFAULT_RETRY: Final = RetryPolicy()
_CONNECTION_ERRORS: Final = (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, OSError)


def _retryable(err: BaseException, policy: RetryPolicy) -> bool:
    if isinstance(err, ApiException):
        if err.status == 409 and _reason(err) == "AlreadyExists":
            return False
        return err.status in policy.retry_statuses or err.status == 0
    return isinstance(err, _CONNECTION_ERRORS)


def _reason(err: ApiException) -> str:
    try:
        body = orjson.loads(err.body) if err.body else {}
    except orjson.JSONDecodeError:
        return ""
    reason = body.get("reason", "") if isinstance(body, dict) else ""
    return reason if isinstance(reason, str) else ""


def _retry_after(err: BaseException) -> float | None:
    if isinstance(err, ApiException) and err.headers:
        raw = err.headers.get("Retry-After")
        with contextlib.suppress(TypeError, ValueError):
            return min(float(raw), 30.0)
    return None


def call_with_retries(
    fn: Callable[P, T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """Call ``fn`` with :data:`DEFAULT_RETRY`; re-raise the last error when the attempts run out."""
    return _retrying(DEFAULT_RETRY, fn, *args, **kwargs)


def _retrying(policy: RetryPolicy, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    attempt = 0
    while True:
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            if attempt + 1 >= policy.attempts or not _retryable(err, policy):
                raise
            pause = _retry_after(err) or policy.delay(attempt)
            log.debug("retrying %s in %.2fs after %s", getattr(fn, "__name__", "call"), pause, _describe(err))
            time.sleep(pause)
            attempt += 1


def _describe(err: BaseException) -> str:
    if isinstance(err, ApiException):
        return f"HTTP {err.status} {_reason(err) or err.reason}".strip()
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def api_error(err: BaseException, what: str) -> KubeApiError:
    """A one-line KubeApiError for an exception of the client."""
    if isinstance(err, ApiException):
        return KubeApiError(f"{what}: {_describe(err)}", err.status, _reason(err))
    return KubeApiError(f"{what}: {_describe(err)}")


async def run_sync(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking client call in a worker thread (for the operator's event loop)."""
    return await asyncio.to_thread(fn, *args, **kwargs)


# --- reading the cluster ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiResource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace and self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


#: What SelectorSpread reads, in the order a snapshot is best loaded (nodes and namespaces first).
CLUSTER_RESOURCES: Final = (
    ApiResource("", "v1", "nodes", "Node", namespaced=False),
    ApiResource("", "v1", "namespaces", "Namespace", namespaced=False),
    ApiResource("", "v1", "services", "Service"),
    ApiResource("", "v1", "replicationcontrollers", "ReplicationController"),
    ApiResource("apps", "v1", "replicasets", "ReplicaSet"),
    ApiResource("apps", "v1", "statefulsets", "StatefulSet"),
    ApiResource("apps", "v1", "deployments", "Deployment"),
    ApiResource("", "v1", "pods", "Pod"),
)


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
        _request_timeout=(_TIMEOUT[0], 120.0),
    )
    data: bytes = response.data
    return data


def _pages(
    api: client.ApiClient,
    resource: ApiResource,
    namespace: str | None,
    load: Callable[[bytes], tuple[Iterable[T], str]],
    page_size: int = _PAGE,
    label_selector: str = "",
    accept: str = "application/json",
) -> Iterator[T]:
    """The items of every page of one list, as ``load(page bytes) -> (items, continue token)`` gives them."""
    token = ""
    while True:
        query = [("limit", str(page_size))]
        if token:
            query.append(("continue", token))
        if label_selector:
            query.append(("labelSelector", label_selector))
        try:
            data = call_with_retries(_get_bytes, api, resource.path(namespace), query, accept)
        except ApiException as err:
            if err.status == 410 and token:  # the continue token expired: start over
                token = ""
                continue
            raise api_error(err, f"cannot list {resource.plural}") from None
        except _CONNECTION_ERRORS as err:
            raise api_error(err, f"cannot list {resource.plural}") from None
        items, token = load(data)
        yield from items
        if not token:
            return


def iter_objects(
    api: client.ApiClient,
    resource: ApiResource,
    namespace: str | None = None,
    page_size: int = _PAGE,
    label_selector: str = "",
    metadata_only: bool = False,
) -> Iterator[dict[str, Any]]:
    """Every object of one resource (all namespaces when ``namespace`` is None), page by page.

    ``metadata_only`` asks for ``PartialObjectMetadata`` items (``metadata`` only, no spec/status).
    """

    def load(data: bytes) -> tuple[list[dict[str, Any]], str]:
        page = orjson.loads(data)
        items = page.get("items") or []
        for item in items:
            item.setdefault("kind", resource.kind)
            item.setdefault("apiVersion", resource.api_version)
        return items, (page.get("metadata") or {}).get("continue") or ""

    accept = _METADATA_ONLY if metadata_only else "application/json"
    return _pages(api, resource, namespace, load, page_size, label_selector, accept)


def iter_records(
    api: client.ApiClient, resource: ApiResource, namespace: str | None = None, converter: Converter | None = None
) -> Iterator[Decoded]:
    """:func:`iter_objects` decoded straight from the raw pages into records (:mod:`spreadwatch.decode`).

    An item the typed decoder leaves comes as :class:`~spreadwatch.decode.Unparsed` (its dict, kind and
    apiVersion filled in) for ``parse_object``, which words its error. O(page bytes) in C per page.
    """
    conv = converter or Converter()
    return _pages(api, resource, namespace, lambda data: decode_page(data, resource.kind, resource.api_version, conv))


def iter_cluster_objects(
    api: client.ApiClient, namespaces: Iterable[str] = (), resources: Sequence[ApiResource] = CLUSTER_RESOURCES
) -> Iterator[dict[str, Any]]:
    """Every object SelectorSpread needs; namespaced kinds only from ``namespaces`` when given."""
    wanted = list(namespaces)
    for resource in resources:
        if not resource.namespaced or not wanted:
            yield from iter_objects(api, resource)
        else:
            for ns in wanted:
                yield from iter_objects(api, resource, ns)


def iter_cluster_records(
    api: client.ApiClient, namespaces: Iterable[str] = (), resources: Sequence[ApiResource] = CLUSTER_RESOURCES
) -> Iterator[tuple[ApiResource, Decoded]]:
    """:func:`iter_cluster_objects` as records (see :func:`iter_records`), each with its resource."""
    wanted = list(namespaces)
    converter = Converter()  # label maps, owners and templates shared across all pages
    for resource in resources:
        scopes: list[str | None] = [None] if not resource.namespaced or not wanted else [*wanted]
        for scope in scopes:
            for item in iter_records(api, resource, scope, converter):
                yield resource, item


def list_object_keys(
    api: client.ApiClient, resource: ApiResource, namespaces: Iterable[str] = ()
) -> set[tuple[str, str]]:
    """``(namespace, name)`` of every object of one resource (namespace "" for cluster-scoped kinds).

    A metadata-only list, page by page: O(objects) names in memory, no specs.
    """
    wanted = list(namespaces) if resource.namespaced else []
    scopes: list[str | None] = [*wanted] if wanted else [None]
    keys: set[tuple[str, str]] = set()
    for scope in scopes:
        for item in iter_objects(api, resource, scope, metadata_only=True):
            meta = item.get("metadata") or {}
            name = meta.get("name")
            if isinstance(name, str):
                ns = meta.get("namespace") if resource.namespaced else ""
                keys.add((ns if isinstance(ns, str) and ns else ("default" if resource.namespaced else ""), name))
    return keys


def list_cluster_objects(api: client.ApiClient, namespaces: Iterable[str] = ()) -> list[dict[str, Any]]:
    """nodes, namespaces, services, rc, rs, sts, deploy and pods as plain dicts (live ``analyze``)."""
    return list(iter_cluster_objects(api, namespaces))


# --- SpreadReports ----------------------------------------------------------------------------------------


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ReportClient:
    """SpreadReport and Event writes (blocking; wrap with :func:`run_sync` from async code).

    Never writes anything but SpreadReports (``spreadwatch.io``) and core/v1 Events about them.
    ``on_request(verb, outcome)`` is called for every write attempt (a hook for metrics).
    """

    def __init__(
        self,
        api: client.ApiClient,
        *,
        component: str = "spreadwatch",
        instance: str = "",
        on_request: Callable[[str, str], None] | None = None,
        policy: RetryPolicy = DEFAULT_RETRY,
    ) -> None:
        self.api = api
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.component = component
        self.instance = instance
        self.policy = policy
        self._on_request = on_request
        self.requests = 0  # write requests sent (for tests and benchmarks)

    def _call(self, verb: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        def once() -> T:
            self.requests += 1
            try:
                result = fn(*args, _request_timeout=_TIMEOUT, **kwargs)
            except ApiException as err:
                self._note(verb, str(err.status))
                raise
            except Exception:
                self._note(verb, "error")
                raise
            self._note(verb, "ok")
            return result

        return _retrying(self.policy, once)

    def _note(self, verb: str, outcome: str) -> None:
        if self._on_request is not None:
            self._on_request(verb, outcome)

    # reading

    def list_reports(self, namespaces: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Every SpreadReport spreadwatch manages (label app.kubernetes.io/managed-by=spreadwatch)."""
        resource = ApiResource(GROUP, VERSION, PLURAL, KIND)
        wanted: list[str | None] = [*namespaces] or [None]
        out: list[dict[str, Any]] = []
        for ns in wanted:
            out.extend(iter_objects(self.api, resource, ns, label_selector=_MANAGED_SELECTOR))
        return out

    # writing

    @staticmethod
    def owner_references(workload: Mapping[str, str]) -> list[dict[str, Any]]:
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

    def create(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        """Create the report (spec.workloadRef, ownerReference); an existing one is returned as is."""
        body = {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": dict(MANAGED_BY),
                "ownerReferences": self.owner_references(workload),
            },
            "spec": {"workloadRef": dict(workload)},
        }
        try:
            created: dict[str, Any] = self._call(
                "create", self.custom.create_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, body
            )
            return created
        except ApiException as err:
            if err.status == 409:
                found: dict[str, Any] = self._call(
                    "get", self.custom.get_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, name
                )
                return found
            raise

    def set_owner(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        """Point an existing report at a (re-created) workload: spec.workloadRef and ownerReferences."""
        patch = {
            "metadata": {"labels": dict(MANAGED_BY), "ownerReferences": self.owner_references(workload)},
            "spec": {"workloadRef": dict(workload)},
        }
        patched: dict[str, Any] = self._call(
            "patch", self.custom.patch_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, name, patch
        )
        return patched

    def replace_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the whole status through the status subresource (a JSON patch ``add /status``: no
        resourceVersion needed, and keys that disappeared are removed, unlike a merge patch)."""
        ops = [{"op": "add", "path": "/status", "value": dict(status)}]
        path = f"{ApiResource(GROUP, VERSION, PLURAL, KIND).path(namespace)}/{name}/status"
        patched: dict[str, Any] = self._call("patch_status", self._json_patch, path, ops)
        return patched

    def _json_patch(self, path: str, ops: list[dict[str, Any]], _request_timeout: Any = _TIMEOUT) -> dict[str, Any]:
        # The generated client only sends merge patches for custom objects.
        response = self.api.call_api(
            path,
            "PATCH",
            body=ops,
            header_params={"Content-Type": "application/json-patch+json", "Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
            _request_timeout=_request_timeout,
        )
        result: dict[str, Any] = orjson.loads(response.data)
        return result

    def delete(self, namespace: str, name: str) -> bool:
        """Delete a report; False when it was already gone."""
        try:
            self._call("delete", self.custom.delete_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, name)
        except ApiException as err:
            if err.status == 404:
                return False
            raise
        return True

    def post_event(
        self, report: Mapping[str, Any], event_type: str, reason: str, message: str, action: str = "Report"
    ) -> None:
        """A core/v1 Event whose involvedObject is the SpreadReport."""
        meta = report.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        now = _now()
        suffix = f"{time.time_ns():x}"
        event_name = f"{name[: 253 - len(suffix) - 1]}.{suffix}"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event_name, "namespace": namespace, "labels": dict(MANAGED_BY)},
            "involvedObject": {
                "apiVersion": API_VERSION,
                "kind": KIND,
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
            "reportingComponent": f"{GROUP}/{self.component}",
            "reportingInstance": self.instance[:128],
        }
        self._call("event", self.core.create_namespaced_event, namespace, body)


class AsyncReportClient:
    """:class:`ReportClient` for the event loop: each call runs in a worker thread; client errors become
    :class:`KubeApiError` (with the HTTP status, if any). Satisfies ``handlers.writer.ReportSink``."""

    def __init__(self, sync: ReportClient) -> None:
        self.sync = sync

    async def _run(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await run_sync(fn, *args)
        except (ApiException, *_CONNECTION_ERRORS) as err:
            raise api_error(err, what) from None

    async def list_reports(self, namespaces: Iterable[str] = ()) -> list[dict[str, Any]]:
        return await self._run("list SpreadReports", self.sync.list_reports, tuple(namespaces))

    async def create(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        return await self._run(f"create SpreadReport {namespace}/{name}", self.sync.create, namespace, name, workload)

    async def set_owner(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        return await self._run(f"patch SpreadReport {namespace}/{name}", self.sync.set_owner, namespace, name, workload)

    async def replace_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> dict[str, Any]:
        return await self._run(
            f"write SpreadReport {namespace}/{name} status", self.sync.replace_status, namespace, name, status
        )

    async def delete(self, namespace: str, name: str) -> bool:
        return await self._run(f"delete SpreadReport {namespace}/{name}", self.sync.delete, namespace, name)

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        await self._run("post Event", self.sync.post_event, report, event_type, reason, message)


# --- leader election --------------------------------------------------------------------------------------


def _micro_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElector:
    """Leader election on a coordination.k8s.io/v1 Lease, like client-go's leaderelection.

    The holder renews ``spec.renewTime`` every ``renew_period``; another candidate takes the Lease over
    (``leaseTransitions`` + 1) when it has not been renewed for ``lease_duration`` by its own clock
    (observed-time based, so clock skew between replicas does not matter). Updates carry the observed
    ``resourceVersion``: two candidates never both win. A leader that cannot renew within
    ``lease_duration`` steps down by itself. On shutdown the holder releases the Lease (empty holder).

    Timing: the leader's rounds start every ``renew_period``, a standby's every half of it (fixed rate: a slow
    API does not stretch the cadence). A renewal counts from the *start* of its round, so the leader's own
    deadline passes before any standby, which counts from when it *saw* the renewal, may take over. A standby
    wakes exactly when the holder's Lease expires by its clock, not at the next tick: after a crash it takes
    over within ``lease_duration`` + ``renew_period`` / 2 + the latency of two Lease reads, i.e. within
    ``lease_duration`` + ``renew_period`` unless those reads (and the wake-ups) take half a renew period.
    """

    def __init__(
        self,
        api: client.ApiClient,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_period: float = 2.0,
        on_change: Callable[[bool], Awaitable[None] | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.coord = client.CoordinationV1Api(api)
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_period = renew_period
        self.on_change = on_change
        self.clock = clock
        self._leader = False
        self._last_renew = 0.0  # our clock: start of the round of the last successful renew
        self._observed: tuple[str, str, float] | None = None  # (holder, renewTime, our clock when first seen)
        self._expires = 0.0  # our clock: when another holder's Lease expires (0: not held by another)

    @property
    def is_leader(self) -> bool:
        """True while this replica holds a Lease renewed within ``lease_duration``."""
        return self._leader and self.clock() - self._last_renew < self.lease_duration

    def _spec(self, transitions: int, acquire: str | None) -> dict[str, Any]:
        now = _micro_now()
        spec: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "renewTime": now,
            "leaseTransitions": transitions,
        }
        spec["acquireTime"] = acquire or now
        return spec

    def next_round_in(self, round_started: float) -> float:
        """Seconds until the next round: ``renew_period`` after this one started (half of it for a standby,
        which so sees the holder's last renewal sooner), or sooner when another holder's Lease expires before
        that (by our clock). O(1)."""
        now = self.clock()
        period = self.renew_period if self._leader else self.renew_period / 2
        delay = round_started + period - now
        if now < self._expires:
            delay = min(delay, self._expires - now)
        return max(0.0, delay)

    def try_acquire_or_renew(self) -> bool:
        """One election round (blocking). True when this replica holds the Lease afterwards."""
        started = self.clock()
        self._expires = 0.0
        try:
            lease = self.coord.read_namespaced_lease(self.name, self.namespace, _request_timeout=_TIMEOUT)
        except ApiException as err:
            if err.status != 404:
                raise
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(0, None),
            }
            try:
                self.coord.create_namespaced_lease(self.namespace, body, _request_timeout=_TIMEOUT)
            except ApiException as create_err:
                if create_err.status == 409:  # someone else created it first
                    return False
                raise
            self._last_renew = started
            return True
        spec = lease.spec
        holder = (spec.holder_identity or "") if spec else ""
        renew = spec.renew_time.isoformat() if spec is not None and spec.renew_time else ""
        duration = float(spec.lease_duration_seconds or self.lease_duration) if spec else self.lease_duration
        transitions = int(spec.lease_transitions or 0) if spec else 0
        now = self.clock()
        if self._observed is None or self._observed[:2] != (holder, renew):
            self._observed = (holder, renew, now)
        expired = now - self._observed[2] >= duration
        if holder and holder != self.identity and not expired:
            self._expires = self._observed[2] + duration
            return False
        if holder == self.identity:
            acquire = spec.acquire_time.isoformat().replace("+00:00", "Z") if spec and spec.acquire_time else None
            new_spec = self._spec(transitions, acquire)
        else:
            new_spec = self._spec(transitions + 1, None)
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "resourceVersion": lease.metadata.resource_version,
            },
            "spec": new_spec,
        }
        try:
            self.coord.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=_TIMEOUT)
        except ApiException as err:
            if err.status == 409:  # lost the race
                return False
            raise
        self._last_renew = started
        return True

    def release(self) -> None:
        """Give the Lease up (blocking) so a standby takes over at once."""
        if not self._leader:
            return
        self._leader = False
        try:
            lease = self.coord.read_namespaced_lease(self.name, self.namespace, _request_timeout=_TIMEOUT)
            if lease.spec is None or lease.spec.holder_identity != self.identity:
                return
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self.name,
                    "namespace": self.namespace,
                    "resourceVersion": lease.metadata.resource_version,
                },
                "spec": {
                    "holderIdentity": None,
                    "leaseDurationSeconds": 1,
                    "renewTime": _micro_now(),
                    "leaseTransitions": int(lease.spec.lease_transitions or 0),
                },
            }
            self.coord.replace_namespaced_lease(self.name, self.namespace, body, _request_timeout=_TIMEOUT)
        except (ApiException, *_CONNECTION_ERRORS) as err:
            log.warning("could not release Lease %s/%s: %s", self.namespace, self.name, _describe(err))

    def _set(self, leader: bool) -> bool:
        """Record the outcome of a round; True when the leadership changed."""
        if leader == self._leader:
            return False
        self._leader = leader
        if leader:
            log.info("became the leader (Lease %s/%s, identity %s)", self.namespace, self.name, self.identity)
        else:
            log.warning("lost the leadership (Lease %s/%s)", self.namespace, self.name)
        return True

    def campaign(self, halt: threading.Event, changed: Callable[[bool], None] = lambda _leader: None) -> None:
        """Campaign and renew until ``halt`` is set, then release the Lease (blocking: a thread of its own, so
        a busy event loop never delays a renewal or a take-over). ``changed`` is called on every change."""
        try:
            while not halt.is_set():
                started = self.clock()
                try:
                    held = self.try_acquire_or_renew()
                except (ApiException, *_CONNECTION_ERRORS) as err:
                    log.warning("leader election: %s", _describe(err))
                    held = self.is_leader  # keep leading until the lease would have expired
                except Exception:  # never let the elector die: writes would silently stop
                    log.exception("leader election round failed")
                    held = self.is_leader
                if self._set(held):
                    changed(held)
                halt.wait(self.next_round_in(started))
        finally:
            if self._leader:
                self.release()

    async def run(self, stop: asyncio.Event) -> None:
        """Run :meth:`campaign` in a thread until ``stop`` is set; ``on_change`` runs in the event loop."""
        loop = asyncio.get_running_loop()
        halt = threading.Event()
        running: set[asyncio.Future[None]] = set()

        def notify(leader: bool) -> None:
            if self.on_change is not None:
                result = self.on_change(leader)
                if result is not None:
                    future = asyncio.ensure_future(result)
                    running.add(future)
                    future.add_done_callback(running.discard)

        def changed(leader: bool) -> None:
            loop.call_soon_threadsafe(notify, leader)

        thread = threading.Thread(target=self.campaign, args=(halt, changed), name="spreadwatch lease", daemon=True)
        thread.start()
        try:
            await stop.wait()
        finally:
            halt.set()
            await asyncio.to_thread(thread.join)


# --- delegated authentication and authorization (secure /metrics) ------------------------------------------


@dataclass(frozen=True, slots=True)
class ReviewedUser:
    """Who a bearer token belongs to, as the API server's TokenReview says."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()  # sorted (key, values) pairs: hashable


_REVIEW_TIMEOUT: Final = (5.0, 10.0)  # (connect, read) seconds: a scrape waits for it, so no retries


def review_token(api: client.ApiClient, token: str) -> ReviewedUser | None:
    """Authenticate a bearer token: one ``create tokenreviews`` (authentication.k8s.io/v1) call, no retries.

    Returns the user, or None when the API server does not accept the token (unknown, expired, malformed).
    The API server's default audiences apply. Raises :class:`KubeApiError` when the review itself fails
    (no permission to create TokenReviews, API unreachable): the caller answers 500, not 401. O(1) calls.
    """
    body = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
    try:
        result = client.AuthenticationV1Api(api).create_token_review(body, _request_timeout=_REVIEW_TIMEOUT)
    except (ApiException, *_CONNECTION_ERRORS) as err:
        raise api_error(err, "TokenReview") from None
    status = result.status
    if status is None or not status.authenticated or status.user is None or not status.user.username:
        return None
    user = status.user
    extra = tuple(sorted((k, tuple(v or ())) for k, v in (user.extra or {}).items()))
    return ReviewedUser(user.username, user.uid or "", tuple(user.groups or ()), extra)


def review_access(api: client.ApiClient, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]:
    """Authorize ``verb`` on the non-resource URL ``path`` for ``user``: one ``create subjectaccessreviews``
    (authorization.k8s.io/v1) call, no retries. Returns (allowed, the authorizer's reason). Raises
    :class:`KubeApiError` when the review itself fails. O(1) calls.
    """
    spec = client.V1SubjectAccessReviewSpec(
        user=user.name,
        uid=user.uid or None,
        groups=list(user.groups) or None,
        extra={k: list(v) for k, v in user.extra} or None,
        non_resource_attributes=client.V1NonResourceAttributes(path=path, verb=verb),
    )
    try:
        result = client.AuthorizationV1Api(api).create_subject_access_review(
            client.V1SubjectAccessReview(spec=spec), _request_timeout=_REVIEW_TIMEOUT
        )
    except (ApiException, *_CONNECTION_ERRORS) as err:
        raise api_error(err, "SubjectAccessReview") from None
    status = result.status
    if status is None:
        return False, ""
    return bool(status.allowed) and not status.denied, status.reason or ""
