"""A fake API server for the informers: paged lists and scripted watch streams, as raw bytes.

:class:`FakeApiServer` answers ``api.call_api`` as ``kubernetes.client.ApiClient`` does for the requests of
``kube.list_pages`` (``GET <collection>?limit=N&continue=T``: ``response.data`` holds the page's JSON, items
without kind/apiVersion as the API server sends them) and of ``kube.WatchStream`` (``?watch=1&...``: a response
whose ``stream()`` yields the event lines in chunks that split lines anywhere). So the tests run the operator's
own list + watch code (``kube.ApiWatchSource``) on bytes, without a cluster.

Each watch request of a collection takes the next *script* queued for it (:meth:`FakeApiServer.script`): a list
of steps, each run when the stream reaches it (in the informer's worker thread): :meth:`~FakeApiServer.added`,
``modified`` and ``deleted`` change the stored objects and send the event; ``vanish``/``appear`` delete/create
an object without an event (a watch gap); ``bookmark``, ``gone`` (an ``ERROR`` event, code 410) and ``raw``
send one line; :data:`OPEN_GONE` first makes the watch request itself answer 410.
The stream ends (as at the server's ``timeoutSeconds``) after its script; a watch request with no script left is
*held* open until the client closes it, and :meth:`holding` tells the test (an asyncio.Event): by then
the informer has applied everything sent before (it opens a new watch only after the last one's events).
"""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import orjson
from kubernetes.client.exceptions import ApiException

from spreadwatch.resources import CLUSTER_RESOURCES, ApiResource

Step = Callable[[], bytes]

_BY_PLURAL = {r.plural: r for r in CLUSTER_RESOURCES}
_PATH = re.compile(r"^/apis?/(?:[^/]+/)?v1(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[a-z]+)$")
_CHUNKS = (7, 1, 64, 3, 250, 2)  # bytes per streamed chunk, in turn: lines split anywhere

#: A script's first step that makes the watch request itself answer HTTP 410 Gone.
OPEN_GONE = b"HTTP 410"


def path_of(kind: str, namespace: str | None = None) -> str:
    """The collection path of ``kind`` (all namespaces, or one)."""
    resource = next(r for r in CLUSTER_RESOURCES if r.kind == kind)
    return resource.path(namespace)


def chunked(data: bytes, sizes: Sequence[int] = _CHUNKS) -> Iterator[bytes]:
    """``data`` cut into chunks of ``sizes`` bytes in turn (an empty chunk between each two, as urllib3 may
    give)."""
    start = 0
    for size in itertools.cycle(sizes):
        if start >= len(data):
            return
        yield data[start : start + size]
        yield b""
        start += size


@dataclass
class FakeWatchResponse:
    """One watch response: ``stream()`` runs its steps and yields their lines in odd-sized chunks; ``hold``:
    then blocks until :meth:`shutdown` (a watch the server keeps open)."""

    steps: Sequence[Step | bytes]
    hold: bool = False
    on_hold: Callable[[], None] | None = None
    shut: threading.Event = field(default_factory=threading.Event)
    released: bool = False

    def stream(self, amt: int | None = None, decode_content: bool = True) -> Iterator[bytes]:
        assert amt is None and decode_content
        buffer = b""
        for step in self.steps:
            buffer += step if isinstance(step, bytes) else step()
            cut = len(buffer) - len(buffer) % 8  # hold a tail back: a chunk seldom ends at a line's end
            yield from chunked(buffer[:cut])
            buffer = buffer[cut:]
        yield from chunked(buffer)
        if self.hold:
            if self.on_hold is not None:
                self.on_hold()
            self.shut.wait(60)  # (a bound: a test that fails never leaves the thread behind for good)

    def shutdown(self) -> None:
        self.shut.set()

    def release_conn(self) -> None:
        self.released = True


class FakeApiServer:
    """See the module docstring. ``objects``: the initial objects (kind/apiVersion set, as k8s_objects makes
    them); ``expire``: how many continue tokens answer 410 Gone (once each), ``on_expire`` is called at each
    (what changed meanwhile); ``gates``: plural → an Event the list of that resource waits for."""

    def __init__(self, objects: Sequence[Mapping[str, Any]] = (), expire: int = 0) -> None:
        self._lock = threading.Lock()
        self._rv = itertools.count(100)
        self.version = "99"
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {r.plural: {} for r in CLUSTER_RESOURCES}
        for obj in objects:
            self._store(dict(obj))
        self.expire = expire
        self.on_expire: Callable[[], None] | None = None
        self.gates: dict[str, threading.Event] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.responses: list[FakeWatchResponse] = []
        self._scripts: dict[str, deque[list[Step | bytes]]] = {}
        self._holding: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}

    # --- the objects ------------------------------------------------------------------------------------------

    @staticmethod
    def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
        meta = obj["metadata"]
        return meta.get("namespace", ""), meta["name"]

    def _plural(self, obj: Mapping[str, Any]) -> str:
        return next(r.plural for r in CLUSTER_RESOURCES if r.kind == obj["kind"])

    def _bump(self) -> str:
        self.version = str(next(self._rv))
        return self.version

    def _store(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = orjson.loads(orjson.dumps(obj))
        obj["metadata"]["resourceVersion"] = self._bump()
        self.objects[self._plural(obj)][self._key(obj)] = obj
        return obj

    # --- script steps (run in the informer's worker thread) -------------------------------------------------

    def script(self, kind: str, *steps: Step | bytes, namespace: str | None = None) -> None:
        """Queue the steps for the next watch request of ``kind``'s collection (all namespaces or one)."""
        self._scripts.setdefault(path_of(kind, namespace), deque()).append(list(steps))

    def added(self, obj: Mapping[str, Any], event: str = "ADDED") -> Step:
        def step() -> bytes:
            with self._lock:
                stored = self._store(dict(obj))
            return orjson.dumps({"type": event, "object": stored}) + b"\n"

        return step

    def modified(self, obj: Mapping[str, Any]) -> Step:
        return self.added(obj, "MODIFIED")

    def deleted(self, obj: Mapping[str, Any]) -> Step:
        def step() -> bytes:
            with self._lock:
                gone = self.objects[self._plural(obj)].pop(self._key(obj))
                gone["metadata"]["resourceVersion"] = self._bump()
            return orjson.dumps({"type": "DELETED", "object": gone}) + b"\n"

        return step

    def vanish(self, obj: Mapping[str, Any]) -> Step:
        """Delete ``obj`` with no event (it happened while nobody watched): sends nothing."""

        def step() -> bytes:
            with self._lock:
                del self.objects[self._plural(obj)][self._key(obj)]
                self._bump()
            return b""

        return step

    def appear(self, obj: Mapping[str, Any]) -> Step:
        """Create ``obj`` with no event (while nobody watched): sends nothing."""

        def step() -> bytes:
            with self._lock:
                self._store(dict(obj))
            return b""

        return step

    def bookmark(self, kind: str) -> Step:
        def step() -> bytes:
            with self._lock:
                version = self._bump()
            meta = {"resourceVersion": version}
            return orjson.dumps({"type": "BOOKMARK", "object": {"kind": kind, "metadata": meta}}) + b"\n"

        return step

    @staticmethod
    def gone() -> bytes:
        status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410}
        return orjson.dumps({"type": "ERROR", "object": {**status, "message": "too old resource version"}}) + b"\n"

    @staticmethod
    def raw(line: bytes) -> bytes:
        return line + b"\n"

    # --- waiting (in the test's event loop) -------------------------------------------------------------------

    def holding(self, kind: str, namespace: str | None = None) -> asyncio.Event:
        """Set (in the running loop) once a watch of ``kind`` is held open: every scripted step is applied."""
        event = asyncio.Event()
        self._holding[path_of(kind, namespace)] = (asyncio.get_running_loop(), event)
        return event

    def _held(self, path: str) -> None:
        waiter = self._holding.get(path)
        if waiter is not None:
            loop, event = waiter
            loop.call_soon_threadsafe(event.set)

    # --- ApiClient.call_api -----------------------------------------------------------------------------------

    def call_api(self, path: str, method: str, query_params: list[tuple[str, str]], **_: Any) -> Any:
        assert method == "GET"
        query = dict(query_params)
        self.requests.append((path, query))
        match = _PATH.match(path)
        assert match is not None, path
        resource = _BY_PLURAL[match["plural"]]
        if query.get("watch") == "1":
            return self._watch(path, query)
        gate = self.gates.get(resource.plural)
        if gate is not None:
            gate.wait(60)
        return self._page(resource, match["ns"], query)

    def _page(self, resource: ApiResource, namespace: str | None, query: Mapping[str, str]) -> Any:
        start = int(query.get("continue") or 0)
        if start and self.expire:
            self.expire -= 1
            if self.on_expire is not None:
                with self._lock:
                    self.on_expire()
            raise ApiException(status=410, reason="Expired")
        with self._lock:
            items = [
                {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
                for (ns, _), obj in sorted(self.objects[resource.plural].items())
                if namespace is None or ns == namespace
            ]
            version = self.version
        end = start + int(query["limit"])
        meta = {"resourceVersion": version, **({"continue": str(end)} if end < len(items) else {})}
        body = {"kind": f"{resource.kind}List", "apiVersion": resource.api_version, "metadata": meta}
        return SimpleNamespace(data=orjson.dumps({**body, "items": items[start:end]}))

    def _watch(self, path: str, query: Mapping[str, str]) -> FakeWatchResponse:
        assert query["allowWatchBookmarks"] == "true" and query["resourceVersion"]
        scripts = self._scripts.get(path)
        if scripts:
            steps = scripts.popleft()
            if steps and steps[0] == OPEN_GONE:  # the version is too old already when the watch opens
                raise ApiException(status=410, reason="Expired")
            response = FakeWatchResponse(steps)
        else:
            response = FakeWatchResponse((), hold=True, on_hold=lambda: self._held(path))
        self.responses.append(response)
        return response

    def watch_versions(self, kind: str, namespace: str | None = None) -> list[str]:
        """The resourceVersion each watch request of ``kind`` started from."""
        path = path_of(kind, namespace)
        return [q["resourceVersion"] for p, q in self.requests if p == path and q.get("watch") == "1"]

    def list_requests(self, kind: str, namespace: str | None = None) -> list[int]:
        """The start offset (continue token) of each list request of ``kind``."""
        path = path_of(kind, namespace)
        return [int(q.get("continue") or 0) for p, q in self.requests if p == path and q.get("watch") != "1"]

