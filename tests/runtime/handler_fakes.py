"""Fakes for the operator pipeline tests: an in-memory SpreadReport API, a manual clock, raw watch events.

No Kubernetes API and no kopf: the tests write watch events as dicts (``{"type": ..., "object": {...}}``) and a
:class:`Feeder` sends each through the route the operator runs — its bytes, one watch line, decoded as
``kube.WatchStream`` decodes them (``decode.decode_event``), taken by the kind's informer
(``ResourceWatch.take``: a malformed object logged and skipped there) → ``EventRouter`` → index — and drive
``Writer.step`` with a manual clock. (tests/runtime/test_informers.py runs the informers' own list and watch
loops on bytes from a fake API server.)
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import orjson

from k8s_objects import GA_ZONE, controller, node, owner, pod, service
from spreadwatch.config import OperatorConfig
from spreadwatch.decode import Converter, DecodeError, decode_event
from spreadwatch.errors import KubeApiError
from spreadwatch.index import SpreadIndex
from spreadwatch.runtime.informers import WATCHED, WATCHED_BY_KIND, EventRouter, ResourceWatch
from spreadwatch.runtime.writing.ratelimit import TokenBucket
from spreadwatch.runtime.writing.status import content_digest
from spreadwatch.runtime.writing.store import DIGEST_ANNOTATION
from spreadwatch.runtime.writing.writer import Writer
from spreadwatch.scoring import get_profile

T = TypeVar("T")
_uids = itertools.count(1)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def ev(event_type: str | None, obj: Mapping[str, Any]) -> dict[str, Any]:
    """A watch event as a dict (type None: a listed object)."""
    return {"type": event_type, "object": obj}


def with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out.setdefault("metadata", {}).update(meta)
    return out


class Clock:
    """A manual monotonic clock; ``sleep`` advances it (for the token bucket)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    async def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.now += seconds


@dataclass
class Call:
    verb: str
    namespace: str
    name: str
    at: float
    body: Any = None


class FakeReportApi:
    """An in-memory SpreadReport store with the writer's ReportApi interface.

    ``fail_next[verb] = [status, ...]`` makes the next calls of that verb raise KubeApiError(status).
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[Call] = []
        self.events: list[dict[str, Any]] = []
        self.fail_next: dict[str, list[int]] = {}
        self.clock = clock or Clock()
        self._rv = itertools.count(1)

    # helpers for tests

    def writes(self, verb: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.verb not in ("list", "get") and (verb is None or c.verb == verb)]

    def status(self, namespace: str, name: str) -> dict[str, Any]:
        return dict(self.objects[(namespace, name)].get("status") or {})

    def names(self) -> set[tuple[str, str]]:
        return set(self.objects)

    def put(
        self, namespace: str, name: str, workload: Mapping[str, str], status: Mapping[str, Any] | None = None
    ) -> None:
        """Pre-existing report, as a previous leader left it (its status digest annotated)."""
        obj = self._new(namespace, name, workload)
        if status is not None:
            obj["status"] = copy.deepcopy(dict(status))
            obj["metadata"]["annotations"] = {DIGEST_ANNOTATION: content_digest(status).hex()}
        self.objects[(namespace, name)] = obj

    def _maybe_fail(self, verb: str, namespace: str, name: str) -> None:
        self.calls.append(Call(verb, namespace, name, self.clock()))
        queue = self.fail_next.get(verb)
        if queue:
            status = queue.pop(0)
            raise KubeApiError(f"{verb} {namespace}/{name}: HTTP {status}", status)

    def _new(self, namespace: str, name: str, workload: Mapping[str, str]) -> dict[str, Any]:
        return {
            "apiVersion": "spreadwatch.io/v1alpha1",
            "kind": "SpreadReport",
            "metadata": {
                "namespace": namespace,
                "name": name,
                "uid": f"report-uid-{next(_uids)}",
                "resourceVersion": str(next(self._rv)),
                "labels": {"app.kubernetes.io/managed-by": "spreadwatch"},
                "ownerReferences": [{"uid": workload.get("uid", "")}] if workload.get("uid") else [],
            },
            "spec": {"workloadRef": dict(workload)},
        }

    # the ReportApi interface

    async def list_reports(
        self,
        namespaces: Iterable[str],
        keep: Callable[[dict[str, Any]], T | None],
        *,
        metadata_only: bool = False,
        on_page: Callable[[int], None] | None = None,
    ) -> list[T]:
        """One page of every report (``metadata_only``: PartialObjectMetadata items, as the API server sends)."""
        self._maybe_fail("list", "", "")
        wanted = set(namespaces)
        listed = [copy.deepcopy(o) for (ns, _), o in sorted(self.objects.items()) if not wanted or ns in wanted]
        if metadata_only:
            listed = [{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": o["metadata"]}
                      for o in listed]  # fmt: skip
        if on_page is not None:
            on_page(len(orjson.dumps({"items": listed})))
        self.calls[-1].body = {"metadata_only": metadata_only}
        return [kept for kept in map(keep, listed) if kept is not None]

    async def save(
        self,
        namespace: str,
        name: str,
        labels: Mapping[str, str],
        annotations: Mapping[str, str],
        workload: Mapping[str, str],
        status: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Server-side apply of a whole report: created when missing, else its fields replaced."""
        self._maybe_fail("apply", namespace, name)
        self.calls[-1].body = copy.deepcopy(dict(status))
        obj = self.objects.get((namespace, name))
        if obj is None:
            obj = self.objects[(namespace, name)] = self._new(namespace, name, workload)
        meta = obj["metadata"]
        meta["labels"] = {"app.kubernetes.io/managed-by": "spreadwatch", **labels}
        meta["annotations"] = {**meta.get("annotations", {}), **annotations}
        meta["ownerReferences"] = [{"uid": workload.get("uid", "")}] if workload.get("uid") else []
        meta["resourceVersion"] = str(next(self._rv))
        obj["spec"] = {"workloadRef": dict(workload)}
        obj["status"] = copy.deepcopy(dict(status))
        return copy.deepcopy(obj)

    async def get_report(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One report as stored (None: none)."""
        self._maybe_fail("get", namespace, name)
        obj = self.objects.get((namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    async def delete(self, namespace: str, name: str) -> bool:
        self._maybe_fail("delete", namespace, name)
        return self.objects.pop((namespace, name), None) is not None

    async def post_event(self, report: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self._maybe_fail("event", report["metadata"].get("namespace", ""), report["metadata"].get("name", ""))
        self.events.append(
            {"report": report["metadata"].get("name"), "type": event_type, "reason": reason, "message": message}
        )


#: The operator configuration these tests start from: profile v1.28 (their numbers are SelectorSpread's) and no
#: comparison. The defaults (``--profile auto``) read the API server's version: tests/test_profile_auto.py.
NAMED_CONFIG = OperatorConfig(profile="v1.28", compare_profile="none")


def watch_line(event: Mapping[str, Any]) -> bytes:
    """A watch-event dict as the API server sends it: one JSON line (type None, a listed object: ADDED).
    ``json`` with ASCII escapes: any str goes, as any bytes may arrive."""
    return json.dumps({**event, "type": event.get("type") or "ADDED"}).encode()


class Feeder:
    """Watch-event dicts through the route the operator runs (see the module docstring): one informer per
    watched kind over ``router``, each taking the decoded lines of its kind."""

    def __init__(self, router: EventRouter) -> None:
        self.router = router
        self.informers = {r.kind: ResourceWatch(r, None, router) for r in WATCHED}
        self._converter = Converter()

    def feed(self, *events: Mapping[str, Any], kind: str | None = None) -> None:
        """Each event to the informer of ``kind`` (default: its object's kind when that is watched, else the
        pod informer's, where a stray object would arrive)."""
        for event in events:
            resource = WATCHED_BY_KIND[kind or _kind_of(event)]
            try:
                decoded = decode_event(watch_line(event), resource.kind, resource.api_version, self._converter)
            except DecodeError as err:
                self.informers[resource.kind].take(err)
                continue
            self.informers[resource.kind].take(decoded)


def _kind_of(event: Mapping[str, Any]) -> str:
    obj = event.get("object")
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    return kind if isinstance(kind, str) and kind in WATCHED_BY_KIND else "Pod"


def malformed_of(informers: Iterable[ResourceWatch]) -> Iterator[tuple[tuple[str, str, str], str]]:
    """(kind, namespace, name) → problem of every object the informers skip as malformed now."""
    for informer in informers:
        for (namespace, name), problem in informer.malformed.items():
            yield (informer.resource.kind, namespace, name), problem


@dataclass
class Pipeline:
    """Informers (fed by the test) → router → index → writer → fake API, on a manual clock."""

    config: OperatorConfig = field(default_factory=lambda: replace(NAMED_CONFIG, debounce=1.0))
    leader: bool = True

    def __post_init__(self) -> None:
        self.clock = Clock()
        self.api = FakeReportApi(self.clock)
        self.index = SpreadIndex(get_profile(self.config.profile), self.config.report)
        bucket = TokenBucket(
            self.config.max_writes_per_second, self.config.write_burst, clock=self.clock, sleep=self.clock.sleep
        )
        self.writer = Writer(
            self.index,
            self.config,
            self.api,
            is_leader=lambda: self.leader,
            bucket=bucket,
            clock=self.clock,
            wall=self.wall,
        )
        self.writer.ready = True
        self.router = EventRouter(
            self.index, self.config.scope, wake=self.writer.wake, namespace_changed=self.writer.namespace_changed
        )
        self.feeder = Feeder(self.router)
        #: every informer over the router (the feeder's, and any a test runs itself): their malformed objects
        self.informers: list[ResourceWatch] = list(self.feeder.informers.values())

    @property
    def malformed(self) -> dict[tuple[str, str, str], str]:
        """Objects the informers skip as malformed now: (kind, namespace, name) → problem."""
        return dict(malformed_of(self.informers))

    @property
    def malformed_count(self) -> int:
        """Malformed objects the informers skipped (each time one arrived)."""
        return sum(informer.stats.malformed for informer in self.informers)

    def wall(self) -> str:
        seconds = int(self.clock())
        return f"2026-01-01T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"

    def feed(self, *events: Mapping[str, Any], kind: str | None = None) -> None:
        self.feeder.feed(*events, kind=kind)

    def step(self) -> int:
        """One writer cycle, and the end of a resync it started beside the writes (one event loop per call)."""
        return run(self._step())

    async def _step(self) -> int:
        writes = await self.writer.step()
        while self.writer.resyncing:
            await asyncio.sleep(0)
        return writes

    def settle(self, max_steps: int = 50) -> int:
        """Let every workload go quiet and write until nothing is pending; returns API writes made."""
        total = 0
        for _ in range(max_steps):
            self.clock.advance(self.writer.debounce + 0.01)
            total += self.step()
            if not self.writer.pending:
                return total
        raise AssertionError(f"still {self.writer.pending} pending after {max_steps} steps")

    def report(self, namespace: str, name: str) -> dict[str, Any]:
        return self.api.status(namespace, name)


def pipeline(**config: Any) -> Pipeline:
    base = replace(NAMED_CONFIG, debounce=1.0)
    return Pipeline(config=replace(base, **config))


# --- a small cluster as raw objects ----------------------------------------------------------------------

ZONES = ("zone-a", "zone-b", "zone-c")
NODES = [f"node-{z[-1]}{i}" for z in ZONES for i in (1, 2)]  # node-a1, node-a2, node-b1, ...


def zone_nodes() -> list[dict[str, Any]]:
    return [node(n, f"zone-{n[5]}", key=GA_ZONE) for n in NODES]


def namespace_obj(name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


def deployment(
    name: str,
    namespace: str = "shop",
    replicas: int = 3,
    generation: int = 1,
    labels: Mapping[str, str] | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    obj = controller(
        "Deployment", name, {"matchLabels": {"app": name}}, {"app": name}, namespace=namespace, replicas=replicas
    )
    obj["metadata"]["generation"] = generation
    obj["metadata"]["labels"] = dict(labels or {"app": name})
    if uid:
        obj["metadata"]["uid"] = uid
    return obj


def replicaset_of(deploy: str, namespace: str = "shop", replicas: int = 3, hash_: str = "abc") -> dict[str, Any]:
    labels = {"app": deploy, "pod-template-hash": hash_}
    obj = controller(
        "ReplicaSet",
        f"{deploy}-{hash_}",
        {"matchLabels": labels},
        labels,
        namespace=namespace,
        replicas=replicas,
        owners=[owner("Deployment", deploy)],
        annotations={"deployment.kubernetes.io/revision": "1"},
    )
    return obj


def pod_of(
    deploy: str, index: int, node_name: str, namespace: str = "shop", hash_: str = "abc", **kw: Any
) -> dict[str, Any]:
    labels = {"app": deploy, "pod-template-hash": hash_}
    return pod(
        f"{deploy}-{hash_}-{index}",
        labels,
        node_name,
        namespace=namespace,
        owners=[owner("ReplicaSet", f"{deploy}-{hash_}")],
        **kw,
    )


def web_cluster(
    namespace: str = "shop", pods_on: Iterable[str] = ("node-a1", "node-b1", "node-c1"), name: str = "web"
) -> list[dict[str, Any]]:
    """ADDED events: 6 nodes in 3 zones, the namespace, Deployment/ReplicaSet ``name`` and its pods."""
    objs: list[dict[str, Any]] = [*zone_nodes(), namespace_obj(namespace)]
    placed = list(pods_on)
    objs += [deployment(name, namespace, replicas=len(placed)), replicaset_of(name, namespace, len(placed))]
    objs += [pod_of(name, i, n, namespace) for i, n in enumerate(placed)]
    objs.append(service(name, {"app": name}, namespace=namespace))
    return [ev("ADDED", o) for o in objs]
