"""The operator runtime: informers (list + watch) → spread index → debounced, rate-limited SpreadReport writes.

Inside, each layer imports only those below it (import-linter): ``process`` → ``probes``, ``metricsauth``,
``servingcert``, ``watches``, ``writer`` → ``events``, ``store``, ``debounce`` → ``status``, ``ratelimit``,
``apierrors``, ``logs``, ``gcpolicy``, ``pump``.

* :mod:`~spreadwatch.runtime.watches` — the informers: one list + watch loop per resource, records straight
  from the API's bytes;
* :mod:`~spreadwatch.runtime.events` — what the informers decoded (and raw objects) into the index;
* :mod:`~spreadwatch.runtime.writer` — the report writer's loop: leader gating, resync, writes in flight;
* :mod:`~spreadwatch.runtime.debounce` — when to write: dirty workloads, debounce, oldest change first;
* :mod:`~spreadwatch.runtime.store` — how to write: the write protocol and the stored reports;
* :mod:`~spreadwatch.runtime.apierrors` — failed API requests by HTTP status;
* :mod:`~spreadwatch.runtime.status` — the SpreadReport status (report + conditions), pure;
* :mod:`~spreadwatch.runtime.ratelimit` — the global token bucket;
* :mod:`~spreadwatch.runtime.probes` — the probe server (``/healthz``, ``/readyz``, ``/statusz``) and the
  ``/metrics`` server;
* :mod:`~spreadwatch.runtime.metricsauth` — TokenReview/SubjectAccessReview of ``/metrics`` requests, cached;
* :mod:`~spreadwatch.runtime.servingcert` — the metrics TLS certificate (mounted or self-signed);
* :mod:`~spreadwatch.runtime.logs` — text/JSON structured logs;
* :mod:`~spreadwatch.runtime.gcpolicy` — the garbage collector: freeze the loaded state, short full collections,
  free memory back to the OS;
* :mod:`~spreadwatch.runtime.pump` — a blocking iterator in a worker thread, its items handed to the loop
  (the informers' decoding);
* :mod:`~spreadwatch.runtime.process` — kopf registry and settings, startup/cleanup, ``run_operator``.

See ``docs/operator.md``.
"""

from __future__ import annotations
