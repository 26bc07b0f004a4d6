"""The operator runtime (kopf): watch events → spread index → debounced, rate-limited SpreadReport writes.

* :mod:`~spreadwatch.handlers.events` — raw watch events into the index (kopf-free; tests feed it dicts);
* :mod:`~spreadwatch.handlers.writer` — the report writer's loop: leader gating, resync, writes in flight;
* :mod:`~spreadwatch.handlers.scheduler` — when to write: dirty workloads, debounce, oldest change first;
* :mod:`~spreadwatch.handlers.store` — how to write: the write protocol and the stored reports;
* :mod:`~spreadwatch.handlers.apierrors` — failed API requests by HTTP status;
* :mod:`~spreadwatch.handlers.relist` — reconciling the index after a watch gap;
* :mod:`~spreadwatch.handlers.status` — the SpreadReport status (report + conditions), pure;
* :mod:`~spreadwatch.handlers.ratelimit` — the global token bucket;
* :mod:`~spreadwatch.handlers.health` — the probe server (``/healthz``, ``/readyz``, ``/statusz``) and the
  ``/metrics`` server;
* :mod:`~spreadwatch.handlers.metricsauth` — TokenReview/SubjectAccessReview of ``/metrics`` requests, cached;
* :mod:`~spreadwatch.handlers.servingcert` — the metrics TLS certificate (mounted or self-signed);
* :mod:`~spreadwatch.handlers.logs` — text/JSON structured logs;
* :mod:`~spreadwatch.handlers.runtime` — kopf registry and settings, startup/cleanup, ``run_operator``.

See ``docs/operator.md``.
"""

from __future__ import annotations
