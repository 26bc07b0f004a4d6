"""The API server's version (``GET /version``), which ``--profile auto`` maps to kube-scheduler's spreading.

Every client may read ``/version`` (the ``system:public-info-viewer`` ClusterRole grants it even to
unauthenticated users), so the operator needs no RBAC for it. One request, retried as every request is
(:mod:`spreadwatch.kube.retry`).
"""

from __future__ import annotations

from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.kube.retry import CONNECTION_ERRORS, REQUEST_TIMEOUT, api_error, call_with_retries

__all__ = ["server_version"]


def _get_version(api: client.ApiClient) -> Any:
    response = api.call_api(
        "/version",
        "GET",
        header_params={"Accept": "application/json"},
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
        _request_timeout=REQUEST_TIMEOUT,
    )
    return orjson.loads(response.data)


def server_version(api: client.ApiClient) -> str:
    """The API server's ``gitVersion`` (``v1.36.4``, ``v1.31.4-gke.1234``), or ``v<major>.<minor>`` from its
    ``major``/``minor`` fields when it has none (a trailing ``+``, as EKS's ``31+``, dropped); "" when the
    answer has neither. Raises KubeApiError (one line) when the request fails. One request."""
    try:
        info = call_with_retries(_get_version, api)
    except (ApiException, *CONNECTION_ERRORS, orjson.JSONDecodeError) as err:
        raise api_error(err, "GET /version") from None
    if not isinstance(info, dict):
        return ""
    git = info.get("gitVersion")
    if isinstance(git, str) and git.strip():
        return git.strip()
    major, minor = info.get("major"), info.get("minor")
    if isinstance(major, str) and isinstance(minor, str) and major and minor:
        return f"v{major.rstrip('+')}.{minor.rstrip('+')}"
    return ""
