"""Fixtures for end-to-end tests against a real local control plane.

The session-scoped `control_plane` fixture starts etcd, kube-apiserver and
kube-controller-manager through hack/devcluster.py (the code behind `make dev-cluster`)
in a temporary directory on free ports, so it never touches the developer's .dev-cluster.
The binaries come from hack/controlplane/build.sh (built once, then reused from
~/.cache/spreadwatch); set SPREADWATCH_CONTROLPLANE_BIN to use binaries from another dir.

If any test of the session failed, the control-plane logs are kept and their path is
printed in the terminal summary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster
from hack.node import localnode
from kubernetes import client
from kubernetes import config as kube_config

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(__file__).resolve().parent / "data"
_LOG_DIR_KEY = pytest.StashKey[str]()

sys.path.insert(0, str(Path(__file__).resolve().parent))
# helper modules with asserts (and chart_rbac, a plugin of test_chart): rewritten before the first import
pytest.register_assert_rewrite("chart_rbac", "operator_helpers")
from kube_helpers import ControlPlane, create_namespace, delete_namespace, delete_node  # noqa: E402
from kube_helpers import service_account_token as _service_account_token  # noqa: E402
from operator_helpers import apply_crd, create_zone_nodes  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end test against a local control plane (slow)")
    # kubernetes<35 calls urllib3's deprecated HTTPResponse.getheaders() on every request.
    config.addinivalue_line("filterwarnings", r"ignore:HTTPResponse.getheaders\(\) is deprecated:DeprecationWarning")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    log_dir = config.stash.get(_LOG_DIR_KEY, None)
    if log_dir:
        terminalreporter.write_line(f"control-plane logs kept in {log_dir}", yellow=True)


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A private control plane for the test session (admin access)."""
    state_dir = tmp_path_factory.mktemp("controlplane")
    env_bin = os.environ.get("SPREADWATCH_CONTROLPLANE_BIN")
    bin_dir = Path(env_bin) if env_bin else state_dir / "bin"
    try:
        if not env_bin:
            devcluster.ensure_tools(bin_dir)
        cluster = devcluster.up(state_dir, bin_dir=bin_dir, ports="auto", die_with_parent=True)
    except devcluster.ClusterError as err:
        devcluster.down(state_dir, keep_logs=True)
        request.config.stash[_LOG_DIR_KEY] = str(state_dir / "logs")
        pytest.fail(f"control plane did not start: {err}\nlogs: {state_dir / 'logs'}", pytrace=False)

    home = state_dir / "home"  # helm/kubectl caches and config stay inside the state dir
    env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig), HOME=str(home),
               HELM_CONFIG_HOME=str(home / "helm-config"), HELM_CACHE_HOME=str(home / "helm-cache"),
               HELM_DATA_HOME=str(home / "helm-data"))
    yield ControlPlane(dir=state_dir, kubeconfig=str(cluster.kubeconfig), server=cluster.server,
                       bin_dir=bin_dir, log_dir=cluster.log_dir, ca_file=cluster.pki_dir / "ca.crt", env=env)

    failed = request.session.testsfailed > 0
    devcluster.down(state_dir, keep_logs=failed)
    if failed:
        request.config.stash[_LOG_DIR_KEY] = str(cluster.log_dir)


@pytest.fixture(scope="module")
def real_node(control_plane: ControlPlane, request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real node in the session's cluster for one test module (hack/node/localnode.py): containerd, kubelet and
    kube-proxy in a network namespace of their own; a `localnode.Node` (.name, .node_ip, .crictl(...),
    .import_image(archive), .cgroup_name). Tainted spreadwatch.io/local-node=true:NoSchedule. Removed after the
    module (no mounts, cgroups, interfaces or iptables rules left: the host's `iptables-save` is what it was
    before up()); its logs are kept if a test failed.
    Cost: ~15-40 s to start, plus the first build of kubelet/kube-proxy/crictl (cached)."""
    cluster = devcluster.load(Path(control_plane.dir))
    node_dir = tmp_path_factory.mktemp("node")
    try:
        if not os.environ.get("SPREADWATCH_CONTROLPLANE_BIN"):
            localnode.ensure_tools(cluster.bin_dir)
        node = localnode.up(cluster, node_dir, die_with_parent=True)
    except localnode.NodeError as err:
        localnode.down(node_dir)
        request.config.stash[_LOG_DIR_KEY] = str(node_dir / "logs")
        pytest.fail(f"the local node did not start: {err}\nlogs: {node_dir / 'logs'}", pytrace=False)
    yield node
    failed = request.session.testsfailed > 0
    localnode.down(node_dir)
    if failed:
        request.config.stash[_LOG_DIR_KEY] = f"{control_plane.log_dir} and {node_dir / 'logs'}"
    left = localnode.leftovers(node)
    assert not left, f"the node's down() left {left}"


@pytest.fixture(scope="session")
def kube_api(control_plane: ControlPlane) -> Iterator[client.ApiClient]:
    """An admin `kubernetes.client.ApiClient` for the control plane."""
    api = kube_config.new_client_from_config(config_file=control_plane.kubeconfig)
    yield api
    api.close()


@pytest.fixture
def namespace(kube_api: client.ApiClient) -> Iterator[str]:
    """A fresh namespace (with its default ServiceAccount), deleted after the test."""
    name = create_namespace(kube_api)
    yield name
    delete_namespace(kube_api, name)


@pytest.fixture
def service_account_token(kube_api: client.ApiClient) -> Callable[..., str]:
    """service_account_token(namespace, name, *, audiences=None, expiration_seconds=3600, create=True) -> str

    A TokenRequest token for the ServiceAccount (created if missing), to act with its RBAC.
    """
    def token(namespace: str, name: str, *, audiences: Sequence[str] | None = None,
              expiration_seconds: int = 3600, create: bool = True) -> str:
        return _service_account_token(kube_api, namespace, name, audiences=audiences,
                                      expiration_seconds=expiration_seconds, create=create)
    return token


@pytest.fixture(scope="session")
def e2e_data_dir() -> Path:
    return DATA_DIR


@pytest.fixture(scope="module")
def crd(control_plane: ControlPlane) -> None:
    """The SpreadReport CRD, installed and served (idempotent: server-side apply)."""
    apply_crd(control_plane)


@pytest.fixture(scope="module")
def zone_nodes(kube_api: client.ApiClient) -> Iterator[list[str]]:
    """Six nodes, two in each of three zones; deleted after the module."""
    names = create_zone_nodes(kube_api)
    yield names
    for name in names:
        delete_node(kube_api, name)
