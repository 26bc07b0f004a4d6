"""The operator runtime: informers (list + watch) → spread index → debounced, rate-limited SpreadReport writes.

Three rooms, each named for what it holds, that share nothing but the wiring:

* :mod:`~spreadwatch.runtime.informers` — list + watch → records → the index (the informers, their worker
  threads, the event router);
* :mod:`~spreadwatch.runtime.writing` — the report writer: debounce, rate limit, the report store, the status;
* :mod:`~spreadwatch.runtime.serving` — the probe and ``/metrics`` servers, the metrics' authentication and
  authorization, their certificate.

The entry module :mod:`~spreadwatch.runtime.process` (``Runtime``: kopf's registry and settings,
startup/cleanup, ``run_operator``) is the only one that imports the rooms and the API client
(:mod:`spreadwatch.kube`), and wires them: it hands the informers the API's lists and watches and the writer's
wake-up, the writer the report API, the servers the metrics registry and the access reviews. Beside it, the
process-wide parts: :mod:`~spreadwatch.runtime.logs` (text/JSON structured logs) and
:mod:`~spreadwatch.runtime.gcpolicy` (the garbage collector: freeze the loaded state, short full collections,
memory back to the OS). import-linter holds the rooms apart (``make layers``).

See ``docs/operator.md`` and ``docs/architecture.md``.
"""

from __future__ import annotations
