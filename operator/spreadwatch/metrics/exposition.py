"""Registries and exposition: :func:`registry_for`, :func:`freeze` and :func:`render`.

A scrape of the operator's ``/metrics`` is ``freeze`` in the event loop (an immutable view of the index and
the counters: O(workloads) with cached reports, a few ms at 10,000 workloads) and ``render`` in a worker
thread (O(series); see docs/benchmarks.md, "Metrics"). The index is never read outside the loop, and the
loop keeps serving watch events while the text is formatted: the render thread holds the GIL for at most
the interpreter's switch interval (5 ms) at a time.

Collectors with a ``render_text(openmetrics)`` method (spreadwatch's own) are formatted directly; any other
collector registered in the same registry (e.g. prometheus_client's ``ProcessCollector``) goes through
prometheus_client's own formatter.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator
from typing import Final, Protocol, runtime_checkable

from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest as generate_text
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as CONTENT_TYPE_OPENMETRICS
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector

from spreadwatch.config import MetricsOptions
from spreadwatch.index import SpreadIndex
from spreadwatch.metrics.selfmetrics import OperatorCollector, OperatorSource
from spreadwatch.metrics.workloads import BuildInfoCollector, WorkloadCollector
from spreadwatch.model import WorkloadKey

__all__ = [
    "CONTENT_TYPE_OPENMETRICS",
    "CONTENT_TYPE_TEXT",
    "SpreadwatchRegistry",
    "content_type",
    "freeze",
    "registry_for",
    "render",
    "wants_openmetrics",
]

CONTENT_TYPE_TEXT: Final = CONTENT_TYPE_PLAIN_0_0_4
_EOF: Final = "# EOF\n"


@runtime_checkable
class _FastText(Protocol):
    def render_text(self, openmetrics: bool = False) -> list[str]: ...


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
) -> SpreadwatchRegistry:
    """build_info, the workload/zone/node families of ``index`` (only ``workloads`` when given) and, with
    ``operator``, the operator's self-metrics. Nothing is read until a scrape. O(1)."""
    registry = SpreadwatchRegistry()
    registry.register(BuildInfoCollector(index.profile.name))
    registry.register(WorkloadCollector(index, options, workloads=workloads))
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


def _chunks(registry: CollectorRegistry, openmetrics: bool) -> Iterator[bytes]:
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
            yield "".join(collector.render_text(openmetrics)).encode()
        else:
            others.append(collector)
    yield from flush()
    if openmetrics:
        yield _EOF.encode()


def render(registry: CollectorRegistry, *, openmetrics: bool = False) -> bytes:
    """The exposition of ``registry``: Prometheus text 0.0.4, or OpenMetrics 1.0 (ending in ``# EOF``).

    Reads whatever the collectors read: render a :func:`freeze` d registry when another thread owns the
    data. O(series).
    """
    return b"".join(_chunks(registry, openmetrics))


def wants_openmetrics(accept: str) -> bool:
    """Whether an ``Accept`` header asks for OpenMetrics (as Prometheus does when it supports it). O(len)."""
    return any(part.split(";")[0].strip() == "application/openmetrics-text" for part in accept.split(","))


def content_type(openmetrics: bool) -> str:
    return CONTENT_TYPE_OPENMETRICS if openmetrics else CONTENT_TYPE_TEXT
