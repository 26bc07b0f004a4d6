"""Client configuration: kubeconfig files, the in-cluster service account, and kopf's login.

* :func:`load_configuration` / :func:`load_api_client`: a kubeconfig file, ``$KUBECONFIG``/``~/.kube/config``,
  or the in-cluster service account;
* :func:`context_namespace`: the namespace kubectl would use (the ``kubectl spreadwatch`` plugin's default);
* :func:`connection_params`: the same credentials as keyword arguments of ``kopf.ConnectionInfo``.

Each reads a few small files and sends no request.
"""

from __future__ import annotations

import os
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.config.config_exception import ConfigException

from spreadwatch.errors import InputError

__all__ = ["connection_params", "context_namespace", "load_api_client", "load_configuration"]


def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> client.Configuration:
    """Client configuration: ``kubeconfig`` if given; else in-cluster when running in a pod; else the
    default kubeconfig (``$KUBECONFIG`` or ``~/.kube/config``). Raises InputError (one line)."""
    cfg = client.Configuration()
    try:
        if kubeconfig:
            if not os.path.exists(kubeconfig):
                raise InputError(f"cannot read kubeconfig {kubeconfig}: no such file")
            kube_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        elif os.environ.get("KUBERNETES_SERVICE_HOST") and not context:
            kube_config.load_incluster_config(client_configuration=cfg)
        else:
            kube_config.load_kube_config(context=context, client_configuration=cfg)
    except (ConfigException, OSError, ValueError, TypeError) as err:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config or in-cluster"
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"cannot load Kubernetes configuration ({where}): {first}") from None
    return cfg


def load_api_client(
    kubeconfig: str | None = None, context: str | None = None, pool_size: int | None = None
) -> client.ApiClient:
    """An API client for :func:`load_configuration`'s credentials, keeping up to ``pool_size`` connections
    open (default: the client's, 5 per CPU; the operator's long watches hold one each). Raises InputError."""
    cfg = load_configuration(kubeconfig, context)
    if pool_size is not None:
        cfg.connection_pool_maxsize = pool_size
    return client.ApiClient(cfg)


def context_namespace(kubeconfig: str | None = None, context: str | None = None) -> str:
    """The namespace kubectl would use: that of ``context`` (default: the current context) in the kubeconfig
    (``kubeconfig``, else ``$KUBECONFIG`` (a ``:``-separated list is merged), else ``~/.kube/config``), or
    ``default`` when it sets none or there is no kubeconfig. Reads files only; raises InputError (one line)
    for a missing ``kubeconfig`` file or an unknown context."""
    if kubeconfig and not os.path.exists(kubeconfig):
        raise InputError(f"cannot read kubeconfig {kubeconfig}: no such file")
    path = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    try:
        contexts, current = kube_config.list_kube_config_contexts(config_file=path)
    except (ConfigException, OSError, ValueError, TypeError):
        if context:
            raise InputError(f"context {context!r}: no usable kubeconfig ({path})") from None
        return "default"
    chosen = current if not context else next((c for c in contexts if c.get("name") == context), None)
    if chosen is None:
        raise InputError(f"context {context!r} not found in the kubeconfig ({path})")
    namespace = (chosen.get("context") or {}).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else "default"


def connection_params(cfg: client.Configuration) -> dict[str, Any]:
    """The credentials of a client configuration as keyword arguments of ``kopf.ConnectionInfo``."""
    header = cfg.get_api_key_with_prefix("BearerToken") or cfg.get_api_key_with_prefix("authorization")
    parts = header.split(" ", 1) if header else []
    scheme, token = (None, None) if not parts else (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    return {
        "server": cfg.host,
        "ca_path": cfg.ssl_ca_cert,
        "insecure": not cfg.verify_ssl,
        "username": cfg.username or None,
        "password": cfg.password or None,
        "scheme": scheme,
        "token": token,
        "certificate_path": cfg.cert_file,
        "private_key_path": cfg.key_file,
    }
