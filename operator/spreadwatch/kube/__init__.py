"""The Kubernetes API client: the only package of spreadwatch that imports the ``kubernetes`` library.

What it does, and nothing else — the operator is read-only to users' objects:

* :mod:`~spreadwatch.kube.config` — client configuration (a kubeconfig file, ``$KUBECONFIG``/``~/.kube/config``,
  or the in-cluster service account), the context's namespace, the same credentials for kopf's login;
* :mod:`~spreadwatch.kube.retry` — timeouts, retries with exponential backoff and full jitter (429, 5xx,
  409 Conflict, connection errors), one-line :class:`~spreadwatch.errors.KubeApiError`\\ s, worker threads;
* :mod:`~spreadwatch.kube.listing` — reading the cluster page by page, as dicts or decoded straight into
  records (the resources are :mod:`spreadwatch.resources`' table);
* :mod:`~spreadwatch.kube.watching` — the operator's list + watch of one resource, pages and watch lines
  decoded straight into records;
* :mod:`~spreadwatch.kube.reports` — the SpreadReport client (create, status, owner, delete) and Events about
  reports: the only writes besides the Lease;
* :mod:`~spreadwatch.kube.lease` — leader election on a coordination.k8s.io/v1 Lease;
* :mod:`~spreadwatch.kube.reviews` — TokenReview and SubjectAccessReview for the secure ``/metrics``
  (:class:`AccessReviewClient`);
* :mod:`~spreadwatch.kube.lazy` — the ``kubernetes`` package loaded name by name (set up first, here:
  importing this package never imports the client's ~800 modules, nor does kopf after it).
* :mod:`~spreadwatch.kube.version` — the API server's version (``GET /version``, for ``--profile auto``).

The names the rest of spreadwatch uses are re-exported here: ``from spreadwatch.kube import ReportClient``.
"""

from __future__ import annotations

from spreadwatch.kube.lazy import load_lazily

load_lazily()  # before anything imports the kubernetes client package: its names load on first use

from spreadwatch.kube.config import (  # noqa: E402
    connection_params,
    context_namespace,
    load_api_client,
    load_configuration,
)
from spreadwatch.kube.lease import LeaseElector  # noqa: E402
from spreadwatch.kube.listing import iter_cluster_records  # noqa: E402
from spreadwatch.kube.reports import ReportClient  # noqa: E402
from spreadwatch.kube.retry import RetryPolicy, run_sync  # noqa: E402
from spreadwatch.kube.reviews import AccessReviewClient, ReviewedUser, review_access, review_token  # noqa: E402
from spreadwatch.kube.version import server_version  # noqa: E402
from spreadwatch.kube.watching import ApiWatchSource, WatchStream, list_pages  # noqa: E402

__all__ = [
    "AccessReviewClient",
    "ApiWatchSource",
    "LeaseElector",
    "ReportClient",
    "RetryPolicy",
    "ReviewedUser",
    "WatchStream",
    "connection_params",
    "context_namespace",
    "iter_cluster_records",
    "list_pages",
    "load_api_client",
    "load_configuration",
    "review_access",
    "review_token",
    "run_sync",
    "server_version",
]
