"""Registries and exposition: :func:`registry_for`, :func:`freeze` and :func:`render`.

A scrape of the operator's ``/metrics`` is ``freeze`` in the event loop (an immutable view of the index and
the counters: O(workloads) with cached reports, a few ms at 10,000 workloads) and :func:`chunks` in a worker
thread, each piece written out before the next is made (O(series) time; see docs/benchmarks.md, "Metrics"):
the text of 400,000 series is never held whole (rendered at once, it added about 250 MiB to the operator's
RSS during each scrape at the envelope). The index is never read outside the loop, and the
loop keeps serving watch events while the text is formatted: the render thread holds the GIL for at most
the interpreter's switch interval (5 ms) at a time.

Collectors with a ``render_text(openmetrics)`` method (spreadwatch's own) are formatted directly; any other
collector registered in the same registry (e.g. prometheus_client's ``ProcessCollector``) goes through
prometheus_client's own formatter.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Collection, Iterable, Iterator
from typing import Final, Protocol, runtime_checkable

from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest as generate_text
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as CONTENT_TYPE_OPENMETRICS
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector

from spreadwatch.config import MetricsOptions, Scope
from spreadwatch.index import SpreadIndex
from spreadwatch.metrics.selfmetrics import OperatorCollector, OperatorSource
from spreadwatch.metrics.workloads import BuildInfoCollector, WorkloadCollector
from spreadwatch.model import WorkloadKey

__all__ = [
    "CHUNK_BYTES",
    "CONTENT_TYPE_OPENMETRICS",
    "CONTENT_TYPE_TEXT",
    "GZIP_CHUNK_BYTES",
    "SpreadwatchRegistry",
    "chunks",
    "content_type",
    "freeze",
    "gzipped",
    "registry_for",
    "render",
    "wants_gzip",
    "wants_openmetrics",
]

CONTENT_TYPE_TEXT: Final = CONTENT_TYPE_PLAIN_0_0_4
#: Bytes of text per piece of a streamed exposition (:func:`chunks`; about 2,000 series): the operator's
#: ``/metrics`` hands each piece from its formatting thread to the event loop, ~290 hops at the envelope
#: without gzip (with gzip: one per :data:`GZIP_CHUNK_BYTES`). A scrape's own memory follows it: at scale 0.3
#: its peak was 9.6 MiB with pieces of 1 MiB (and blocks of 512 workloads), 4.4 MiB with these, at the same
#: CPU.
CHUNK_BYTES: Final = 256 * 1024
#: Bytes of gzip per piece of :func:`gzipped` (~4 MiB of text at the envelope's ~16:1): 18 hops a scrape there
#: (73 MiB of text, 4.4 MiB gzipped). A scrape's own memory peak at scale 0.3 (tracemalloc, the operator's
#: defaults): 4.31 MiB with pieces of 1 MiB, 3.52 MiB with these.
GZIP_CHUNK_BYTES: Final = 256 * 1024
#: zlib level of :func:`gzipped`: level 1 compresses the envelope's 54 MiB to 3.1 MiB in 0.15 s of CPU here
#: (level 6: 2.4 MiB in 0.40 s); zlib releases the GIL while it compresses.
_GZIP_LEVEL: Final = 1
_EOF: Final = "# EOF\n"


@runtime_checkable
class _FastText(Protocol):
    def render_text(self, openmetrics: bool = False) -> Iterable[str]: ...


@runtime_checkable
class _Viewable(Protocol):
    def view(self) -> Collector: ...


class SpreadwatchRegistry(CollectorRegistry):
    """A CollectorRegistry that remembers its collectors in registration order (for :func:`render`)."""

    def __init__(self) -> None:
        super().__init__(auto_describe=False)
        self._ordered: list[Collector] = []
        self._ordered_lock = threading.Lock()

    def register(self, collector: Collector) -> None:
        super().register(collector)
        with self._ordered_lock:
            self._ordered.append(collector)

    def unregister(self, collector: Collector) -> None:
        super().unregister(collector)
        with self._ordered_lock:
            self._ordered.remove(collector)

    def collectors(self) -> list[Collector]:
        with self._ordered_lock:
            return list(self._ordered)


def registry_for(
    index: SpreadIndex,
    options: MetricsOptions,
    operator: OperatorSource | None = None,
    *,
    workloads: Collection[WorkloadKey] | None = None,
    scope: Scope | None = None,
    as_built: bool = False,
) -> SpreadwatchRegistry:
    """build_info, the workload/zone/node families of ``index`` (only ``workloads`` when given; only those in
    ``scope`` when given; ``as_built``: the reports as last built, see :class:`WorkloadCollector`) and, with
    ``operator``, the operator's self-metrics. Nothing is read until a scrape. O(1)."""
    registry = SpreadwatchRegistry()
    registry.register(BuildInfoCollector(index.profile.name))
    registry.register(WorkloadCollector(index, options, workloads=workloads, scope=scope, as_built=as_built))
    if operator is not None:
        registry.register(OperatorCollector(operator))
    return registry


def freeze(registry: CollectorRegistry) -> CollectorRegistry:
    """A registry of immutable views, safe to render in another thread. Call it in the thread that owns
    the index and the counters. O(workloads) with cached reports; other registries are returned as is."""
    if not isinstance(registry, SpreadwatchRegistry):
        return registry
    frozen = SpreadwatchRegistry()
    for collector in registry.collectors():
        frozen.register(collector.view() if isinstance(collector, _Viewable) else collector)
    return frozen


def _pieces(registry: CollectorRegistry, openmetrics: bool) -> Iterator[str | bytes]:
    """The exposition as spreadwatch's collectors' lines (str) and other collectors' whole text (bytes)."""
    generate = generate_openmetrics if openmetrics else generate_text
    if not isinstance(registry, SpreadwatchRegistry):
        yield generate(registry)
        return
    others: list[Collector] = []

    def flush() -> Iterator[bytes]:
        if others:
            group = CollectorRegistry(auto_describe=False)
            for c in others:
                group.register(c)
            text = generate(group)
            yield text.removesuffix(_EOF.encode()) if openmetrics else text
            others.clear()

    for item in registry.collectors():
        collector = item.view() if isinstance(item, _Viewable) and not isinstance(item, _FastText) else item
        if isinstance(collector, _FastText):
            yield from flush()
            yield from collector.render_text(openmetrics)
        else:
            others.append(collector)
    yield from flush()
    if openmetrics:
        yield _EOF


def chunks(registry: CollectorRegistry, *, openmetrics: bool = False, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The exposition of ``registry`` (as :func:`render`) in pieces of about ``size`` bytes, made as they are
    taken: a server writes each out before the next is formatted. O(series) time; O(size) memory beyond the
    frozen view for spreadwatch's collectors (prometheus_client's formatter makes its collectors' text whole)."""
    lines: list[str] = []
    held = 0
    for piece in _pieces(registry, openmetrics):
        if isinstance(piece, bytes):
            if lines:
                yield "".join(lines).encode()
                lines, held = [], 0
            yield piece
            continue
        lines.append(piece)
        held += len(piece)
        if held >= size:
            yield "".join(lines).encode()
            lines, held = [], 0
    if lines:
        yield "".join(lines).encode()


def gzipped(pieces: Iterable[bytes], *, size: int = GZIP_CHUNK_BYTES) -> Iterator[bytes]:
    """One gzip stream (RFC 1952) of the concatenated ``pieces``, in pieces of about ``size`` bytes, made as
    they are taken: ``gzipped(chunks(registry))`` is the exposition for a client that accepts gzip (as
    Prometheus does), with O(size + a piece of ``pieces``) memory. O(bytes) time, outside the GIL."""
    stream = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out: list[bytes] = []
    held = 0
    for piece in pieces:
        packed = stream.compress(piece)
        if packed:
            out.append(packed)
            held += len(packed)
        if held >= size:
            yield b"".join(out)
            out, held = [], 0
    out.append(stream.flush())
    yield b"".join(out)


def render(registry: CollectorRegistry, *, openmetrics: bool = False) -> bytes:
    """The exposition of ``registry``: Prometheus text 0.0.4, or OpenMetrics 1.0 (ending in ``# EOF``).

    Reads whatever the collectors read: render a :func:`freeze` d registry when another thread owns the
    data. O(series) time and memory (the whole text; :func:`chunks` for pieces).
    """
    return b"".join(chunks(registry, openmetrics=openmetrics))


def wants_openmetrics(accept: str) -> bool:
    """Whether an ``Accept`` header asks for OpenMetrics (as Prometheus does when it supports it). O(len)."""
    return any(part.split(";")[0].strip() == "application/openmetrics-text" for part in accept.split(","))


def wants_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` header accepts gzip (Prometheus sends ``gzip``): listed by name (or
    ``*``) without ``q=0``. O(len)."""
    for part in accept_encoding.split(","):
        coding, _, params = part.partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().lower().removeprefix("q=")
            try:
                return not params.strip() or float(q) > 0
            except ValueError:
                return False
    return False


def content_type(openmetrics: bool) -> str:
    return CONTENT_TYPE_OPENMETRICS if openmetrics else CONTENT_TYPE_TEXT
