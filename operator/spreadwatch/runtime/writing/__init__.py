"""The writing room: index changes → debounced, rate-limited SpreadReport writes, and the report status.

* :mod:`~spreadwatch.runtime.writing.writer` — :class:`Writer`, the loop: leader gating, writes in flight,
  its record of the writes;
* :mod:`~spreadwatch.runtime.writing.resync` — the resync's plans (adopt, compare) and its record, pure;
* :mod:`~spreadwatch.runtime.writing.debounce` — when to write: dirty workloads, debounce, oldest change first;
* :mod:`~spreadwatch.runtime.writing.concurrency` — how many writes at once: the bound on writes in flight
  from the latency the server shows;
* :mod:`~spreadwatch.runtime.writing.store` — how to write: :class:`ReportStore` (the write protocol and the
  reports the API holds) over a :class:`ReportApi` (``kube.ReportClient`` in the operator, passed in);
* :mod:`~spreadwatch.runtime.writing.status` — the SpreadReport status (report + conditions), pure;
* :mod:`~spreadwatch.runtime.writing.ratelimit` — the global token bucket of the writes, the achieved rate;
* :mod:`~spreadwatch.runtime.writing.apierrors` — failed API requests by HTTP status.

Imports no API client and nothing of the other rooms. Inside, each module imports only those below it
(import-linter): ``writer`` → ``resync`` → ``store``, ``debounce`` → ``status``, ``ratelimit``,
``concurrency``, ``apierrors``.
"""

from __future__ import annotations

from spreadwatch.runtime.writing.apierrors import ApiErrors
from spreadwatch.runtime.writing.ratelimit import TokenBucket
from spreadwatch.runtime.writing.store import ReportApi, ReportStore, StoredReport, WriterStats
from spreadwatch.runtime.writing.writer import MATERIAL_AFTER, Writer, WriteRecord

__all__ = [
    "MATERIAL_AFTER",
    "ApiErrors",
    "ReportApi",
    "ReportStore",
    "StoredReport",
    "TokenBucket",
    "WriteRecord",
    "Writer",
    "WriterStats",
]
