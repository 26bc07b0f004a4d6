"""spreadwatch: kube-scheduler's SelectorSpread scores and spread health for every workload.

The package is layered (each layer imports only those below it; the contracts in pyproject.toml's
``[tool.importlinter]`` enforce it):

    plugin → cli → whatif → runtime | analysis → kube → metrics → config | naming → index → snapshot → decode
        → report → scoring → model → selectors → resources | timestamps → errors

The pure core (index, snapshot, decode, report, scoring, model, selectors) imports no kopf, kubernetes or
prometheus_client code. Inside it: ``report`` holds the report type (``spread_report``), the spread verdict
(``verdict``) and its builders; ``scoring`` the profiles and the next pod of a workload (``next_pod``);
``model`` the records (``records``), their parsers (``parse``), shared label maps (``interning``) and
``WorkloadKey`` (``keys``), layered parse → records → keys | interning.

``runtime`` is the operator's runtime (its informers, the report writer, probes and ``/metrics``); inside it,
``process`` → probes, metricsauth, servingcert, watches, writer → events, store, debounce → status,
ratelimit, apierrors, logs. ``kube`` is the API client, the only package that imports the kubernetes
library.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
