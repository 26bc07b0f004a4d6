"""The Helm chart on a real control plane: every rendered object passes server-side strict validation, `helm
install` works, and the chart's RBAC is sufficient and minimal. The operator (`spreadwatch run` as a local
subprocess, with the Deployment's own container args) authenticates with a TokenRequest token of the chart's
ServiceAccount and writes reports, Events and its Lease. The same token cannot write users' objects, read
Secrets or create Pods. Namespaced mode: reports only in the watched namespace, no reads elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_rbac import CHART, ChartInstall, install_chart, render_chart
from kube_helpers import (
    ControlPlane,
    create_deployment,
    create_namespace,
    create_node,
    delete_namespace,
    delete_node,
    http_get,
    schedule_pending_pods,
    token_api_client,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ports import free_port
from processes import stop_process

pytestmark = pytest.mark.e2e
pytest_plugins = ["chart_rbac"]  # the chart_rbac fixture (RBAC only, as other suites use it)

GROUP, VERSION, PLURAL = "spreadwatch.io", "v1alpha1", "spreadreports"


# --------------------------------------------------------------------------- the operator process


@dataclass
class Process:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    def get(self, path: str) -> tuple[int, str]:
        return http_get(self.port, path)

    def tail(self) -> str:
        return self.log.read_text()[-4000:]

    def stop(self, grace: float = 60) -> int:
        """SIGTERM; SIGKILL after `grace` s (a non-zero code then: the test fails on it)."""
        return stop_process(self.proc, grace).returncode


def start_operator(chart: ChartInstall, log: Path) -> Process:
    """`spreadwatch run` with the chart's args, authenticated as the chart's ServiceAccount."""
    port = free_port()
    cmd = [sys.executable, "-m", "spreadwatch.cli", "run", *chart.args, "--kubeconfig", str(chart.kubeconfig),
           f"--port={port}", f"--metrics-port={free_port()}",
           "--bind-address=127.0.0.1", "--debounce=0.2", "--log-format=json"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPREADWATCH_") and k != "KUBECONFIG"}
    env.update(chart.env)
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    op = Process(proc, port, log)

    def ready() -> bool:
        assert proc.poll() is None, f"operator exited with {proc.returncode}:\n{op.tail()}"
        return op.get("/readyz")[0] == 200

    try:
        wait_for(ready, timeout=180, message="the operator's /readyz under the chart's RBAC")
    except TimeoutError:
        op.stop()
        raise AssertionError(f"not ready under the chart's RBAC:\n{op.tail()}") from None
    return op


@pytest.fixture
def run_operator(tmp_path: Path) -> Iterator[Callable[[ChartInstall], Process]]:
    started: list[Process] = []

    def run(chart: ChartInstall) -> Process:
        op = start_operator(chart, tmp_path / f"{chart.release}.log")
        started.append(op)
        return op

    yield run
    for op in started:
        code = op.stop()
        assert code == 0, f"operator exited with {code} on SIGTERM:\n{op.tail()}"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def nodes(kube_api: client.ApiClient) -> Iterator[list[str]]:
    prefix = unique_name("chart")
    names = [create_node(kube_api, f"{prefix}-{z}", zone=f"zone-{z}", region="r1").metadata.name for z in "abc"]
    yield names
    for name in names:
        delete_node(kube_api, name)


@pytest.fixture
def installed(control_plane: ControlPlane, kube_api: client.ApiClient,
              tmp_path: Path) -> Iterator[Callable[..., ChartInstall]]:  # fmt: skip
    charts: list[ChartInstall] = []

    def install(values: dict[str, Any] | None = None) -> ChartInstall:
        chart = install_chart(control_plane, kube_api, tmp_path, values)
        charts.append(chart)
        return chart

    yield install
    for chart in reversed(charts):
        chart.uninstall()


@pytest.fixture
def extra_namespaces(kube_api: client.ApiClient) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def make() -> str:
        made.append(create_namespace(kube_api))
        return made[-1]

    yield make
    for ns in made:
        delete_namespace(kube_api, ns)


def make_deployment(api: client.ApiClient, namespace: str, nodes: list[str], name: str = "web") -> None:
    create_deployment(api, namespace, name, replicas=2)
    wait_for_pods(api, namespace, {"app": name}, 2)
    schedule_pending_pods(api, namespace, nodes[:1], {"app": name})  # both on one node: SinglePointOfFailure


def report(api: client.ApiClient, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        obj: dict[str, Any] = client.CustomObjectsApi(api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as err:
        if err.status == 404:
            return None
        raise
    return obj if obj.get("status", {}).get("pods") == 2 else None


def refused_calls(op: Process) -> list[str]:
    """Log lines about API calls the API server refused (HTTP 403 Forbidden)."""
    return [line for line in op.log.read_text().splitlines() if "HTTP 403" in line or "Forbidden" in line]


def forbidden(call: Callable[[], Any]) -> bool:
    try:
        call()
    except ApiException as err:
        return err.status == 403
    return False


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("values", [
    {},
    {"watchNamespaces": ["default", "kube-system"], "leaderElection": {"enabled": False}},
    {"replicaCount": 2, "grafanaDashboard": {"enabled": False}, "service": {"type": "NodePort"}},
], ids=["defaults", "namespaced-no-leader", "replicas-nodeport"])  # fmt: skip
def test_every_rendered_object_passes_server_side_strict_validation(
    control_plane: ControlPlane, namespace: str, tmp_path: Path, values: dict[str, Any]
) -> None:
    objects = render_chart(control_plane, unique_name("sw"), namespace, tmp_path, values)
    assert {o["kind"] for o in objects} >= {"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"}
    # CRD included: helm would install it from crds/ (helm template leaves it out)
    crd = yaml.safe_load((CHART / "crds" / "spreadreports.spreadwatch.io.yaml").read_text())
    manifest = yaml.safe_dump_all([crd, *objects])
    out = control_plane.kubectl("apply", "--dry-run=server", "--validate=strict", "--server-side",
                                "--force-conflicts", "-f", "-", input=manifest).stdout  # fmt: skip
    assert out.count("(server dry run)") == len(objects) + 1, out


def test_chart_rbac_is_sufficient_and_minimal(
    control_plane: ControlPlane, kube_api: client.ApiClient, nodes: list[str], namespace: str,
    installed: Callable[..., ChartInstall], run_operator: Callable[[ChartInstall], Process],
) -> None:  # fmt: skip
    chart = installed({"skipNamespaces": ["kube-system"]})
    status = json.loads(control_plane.helm("status", chart.release, "-n", chart.namespace, "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"
    notes = chart.notes
    assert "kubectl get spreadreports -A" in notes
    assert f"port-forward service/{chart.release}-spreadwatch-metrics 8443" in notes
    assert f"--clusterrole={chart.release}-spreadwatch-metrics-reader" in notes
    assert "every namespace except kube-system" in notes
    assert "helm show crds" in notes
    control_plane.kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io",
                          "--timeout=180s")  # fmt: skip
    op = run_operator(chart)

    # sufficient: the report, its Event and the Lease are written with the ServiceAccount's token
    make_deployment(kube_api, namespace, nodes)
    obj = wait_for(lambda: report(kube_api, namespace, "deployment-web"), timeout=180,
                   message="the SpreadReport written under the chart's RBAC")  # fmt: skip
    assert obj["status"]["health"] == "SinglePointOfFailure"
    assert obj["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    # a health transition (a third replica on another node: no longer all on one node) is posted as an Event
    control_plane.kubectl("scale", "deployment/web", "-n", namespace, "--replicas=3")
    wait_for_pods(kube_api, namespace, {"app": "web"}, 3)
    schedule_pending_pods(kube_api, namespace, nodes[1:2], {"app": "web"})
    events = wait_for(lambda: [e for e in client.CoreV1Api(kube_api).list_namespaced_event(namespace).items
                               if e.involved_object.kind == "SpreadReport"], timeout=180,
                      message="an Event about the SpreadReport")  # fmt: skip
    assert events[0].involved_object.name == "deployment-web"
    lease = client.CoordinationV1Api(kube_api).read_namespaced_lease(chart.lease_name, chart.namespace)
    assert lease.spec.holder_identity == chart.env["POD_NAME"]
    code, body = op.get("/statusz")
    assert code == 200 and json.loads(body)["leader"] is True
    # the report is deleted with the workload (delete permission) and no API call was refused
    client.AppsV1Api(kube_api).delete_namespaced_deployment("web", namespace)
    wait_for(lambda: _gone(kube_api, namespace, "deployment-web"), timeout=180,
             message="the report to go with its workload")  # fmt: skip
    assert not refused_calls(op), op.tail()

    # minimal: the same token is refused everything else
    sa = token_api_client(control_plane.server, control_plane.ca_file, chart.token)
    core, apps = client.CoreV1Api(sa), client.AppsV1Api(sa)
    create_deployment(kube_api, namespace, "other", replicas=0)
    refused = {
        "patch a Deployment": lambda: apps.patch_namespaced_deployment(
            "other", namespace, {"metadata": {"labels": {"x": "y"}}}),
        "delete a Deployment": lambda: apps.delete_namespaced_deployment("other", namespace),
        "get a Secret": lambda: core.read_namespaced_secret("nope", namespace),
        "list Secrets": lambda: core.list_namespaced_secret(namespace),
        "list Secrets cluster-wide": core.list_secret_for_all_namespaces,
        "create a Pod": lambda: core.create_namespaced_pod(namespace, client.V1Pod(
            metadata=client.V1ObjectMeta(name="x"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="i")]))),
        "list ConfigMaps": lambda: core.list_namespaced_config_map(namespace),
        "patch a Node": lambda: core.patch_node(nodes[0], {"metadata": {"labels": {"x": "y"}}}),
        "another Lease": lambda: client.CoordinationV1Api(sa).read_namespaced_lease("kube-scheduler",
                                                                                    "kube-system"),
        "a Lease elsewhere": lambda: client.CoordinationV1Api(sa).create_namespaced_lease(namespace, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": chart.lease_name}}),
        "create ClusterRoleBindings": lambda: client.RbacAuthorizationV1Api(sa).create_cluster_role_binding({
            "metadata": {"name": "x"}, "subjects": [], "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}}),
    }  # fmt: skip
    allowed = [what for what, call in refused.items() if not forbidden(call)]
    assert not allowed, f"the chart's ServiceAccount may: {allowed}"
    assert core.list_namespaced_pod(namespace).items is not None  # while reading what it needs still works


def _gone(api: client.ApiClient, namespace: str, name: str) -> bool:
    try:
        client.CustomObjectsApi(api).get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as err:
        return err.status == 404
    return False


def test_namespaced_mode_reports_only_the_watched_namespace(
    control_plane: ControlPlane, kube_api: client.ApiClient, nodes: list[str],
    chart_rbac: Callable[..., ChartInstall], run_operator: Callable[[ChartInstall], Process],
    extra_namespaces: Callable[[], str],
) -> None:  # fmt: skip
    """Through the reusable chart_rbac fixture: only the ServiceAccount and RBAC, no Deployment."""
    crd = CHART / "crds" / "spreadreports.spreadwatch.io.yaml"
    control_plane.kubectl("apply", "--server-side", "-f", str(crd))  # helm installs it only with the chart
    control_plane.kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io",
                          "--timeout=180s")  # fmt: skip
    watched, other = extra_namespaces(), extra_namespaces()
    chart = chart_rbac(values={"watchNamespaces": [watched]})
    kinds = {(o["kind"], o["metadata"].get("namespace")) for o in chart.objects}
    assert ("Role", watched) in kinds and ("Role", other) not in kinds
    assert "Deployment" not in {k for k, _ in kinds}
    op = run_operator(chart)
    make_deployment(kube_api, other, nodes)
    make_deployment(kube_api, watched, nodes)
    wait_for(lambda: report(kube_api, watched, "deployment-web"), timeout=180,
             message="the SpreadReport in the watched namespace")  # fmt: skip
    state = json.loads(op.get("/statusz")[1])
    assert state["index"]["pods"] == 2, state  # the other namespace's pods were never read
    assert _gone(kube_api, other, "deployment-web")
    assert not refused_calls(op), op.tail()

    sa = token_api_client(control_plane.server, control_plane.ca_file, chart.token)
    core = client.CoreV1Api(sa)
    assert core.list_namespaced_pod(watched).items is not None
    assert forbidden(lambda: core.list_namespaced_pod(other))
    assert forbidden(core.list_pod_for_all_namespaces)
    assert forbidden(lambda: client.AppsV1Api(sa).list_deployment_for_all_namespaces())
    assert forbidden(lambda: client.CustomObjectsApi(sa).list_namespaced_custom_object(GROUP, VERSION, other, PLURAL))
    assert core.list_node().items  # the cluster-scoped reads it needs
