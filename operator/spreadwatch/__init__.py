"""spreadwatch: kube-scheduler's SelectorSpread scores and spread health for every workload.

The package is layered (each layer imports only those below it, enforced by import-linter):

    cli → runtime | analysis → kube → metrics → config | naming → index → snapshot → decode → report → scoring
        → model → selectors → errors

``runtime`` is the operator's runtime (kopf watches, the report writer, probes and ``/metrics``); inside it,
``process`` → probes, metricsauth, servingcert, relist, writer → events, store, scheduler → status,
ratelimit, apierrors, logs.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
