"""Prometheus metrics: spread per workload, zone and node, and the operator's self-metrics.

The names are a contract (docs/metrics.md). Each family is defined once (:class:`Family`: name, type, help,
labels and the function that makes its samples; :data:`WORKLOAD_FAMILIES`, :data:`NODE_FAMILIES`,
:data:`BUILD_INFO`, :data:`OPERATOR_FAMILIES`), and both the fast text renderer and ``collect()`` come from
it. Custom collectors read the index and the runtime's counters at scrape time: :func:`registry_for` builds
the registry, :func:`freeze` takes an immutable view in the thread that owns the index, :func:`render`
formats it (Prometheus text or OpenMetrics) in any thread, :func:`chunks` piece by piece (the operator's
``/metrics`` streams it, :func:`gzipped` when the client accepts gzip).

Layering: below the operator runtime (which serves ``/metrics``) and above config/index/report; imports
prometheus_client, never kopf, kubernetes or the runtime.
"""

from __future__ import annotations

from spreadwatch.config import NODE_SERIES_MODES, MetricsOptions
from spreadwatch.metrics.exposition import (
    CONTENT_TYPE_OPENMETRICS,
    CONTENT_TYPE_TEXT,
    SpreadwatchRegistry,
    chunks,
    content_type,
    freeze,
    gzipped,
    registry_for,
    render,
    wants_gzip,
    wants_openmetrics,
)
from spreadwatch.metrics.families import Family
from spreadwatch.metrics.histogram import DURATION_BUCKETS, DurationHistogram, HistogramSnapshot
from spreadwatch.metrics.selfmetrics import (
    OPERATOR_FAMILIES,
    WRITE_RESULTS,
    OperatorCollector,
    OperatorSource,
    OperatorState,
    StaticSource,
)
from spreadwatch.metrics.workloads import (
    BUILD_INFO,
    NODE_FAMILIES,
    WORKLOAD_FAMILIES,
    BuildInfoCollector,
    WorkloadCollector,
    WorkloadView,
)

__all__ = [
    "BUILD_INFO",
    "CONTENT_TYPE_OPENMETRICS",
    "CONTENT_TYPE_TEXT",
    "DURATION_BUCKETS",
    "NODE_FAMILIES",
    "NODE_SERIES_MODES",
    "OPERATOR_FAMILIES",
    "WORKLOAD_FAMILIES",
    "WRITE_RESULTS",
    "BuildInfoCollector",
    "DurationHistogram",
    "Family",
    "HistogramSnapshot",
    "MetricsOptions",
    "OperatorCollector",
    "OperatorSource",
    "OperatorState",
    "SpreadwatchRegistry",
    "StaticSource",
    "WorkloadCollector",
    "WorkloadView",
    "chunks",
    "content_type",
    "freeze",
    "gzipped",
    "registry_for",
    "render",
    "wants_gzip",
    "wants_openmetrics",
]
