"""The serving room: the probe server, ``/metrics``, its authentication and authorization, its certificate.

* :mod:`~spreadwatch.runtime.serving.probes` — :class:`ProbeServer` (``/healthz``, ``/readyz``, ``/statusz``,
  plain HTTP) and :class:`MetricsServer` (``/metrics``, streamed from a frozen registry);
* :mod:`~spreadwatch.runtime.serving.metricsauth` — :class:`MetricsAuth`: TokenReview/SubjectAccessReview of
  ``/metrics`` requests, cached (the reviews passed in: ``kube.AccessReviewClient``);
* :mod:`~spreadwatch.runtime.serving.servingcert` — the metrics TLS certificate (mounted or self-signed).

The only room that imports aiohttp; imports no API client and nothing of the other rooms. Its modules are
independent of each other: the runtime's entry module wires them.
"""

from __future__ import annotations

from spreadwatch.runtime.serving.metricsauth import AccessReviews, MetricsAuth
from spreadwatch.runtime.serving.probes import MetricsServer, ProbeServer
from spreadwatch.runtime.serving.servingcert import ServingCert, keep_reloading, serving_cert

__all__ = [
    "AccessReviews",
    "MetricsAuth",
    "MetricsServer",
    "ProbeServer",
    "ServingCert",
    "keep_reloading",
    "serving_cert",
]
