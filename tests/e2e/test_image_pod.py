"""The chart's pod, run for real: `helm install` into the test control plane, then the built image
(build/spreadwatch.oci.tar, unpacked by umoci) under runc exactly as the rendered Deployment says — UID 65532
with no passwd entry, read-only root, no capabilities, no_new_privs, /tmp as tmpfs, in-cluster credentials of
the chart's ServiceAccount (tests/e2e/oci_pod.py lists what is taken from the rendered object).

Checks: the rendered readiness and liveness probes answer; a SpreadReport and its Event appear for a new
workload; /metrics passes `promtool check metrics`; SIGTERM stops the container within
terminationGracePeriodSeconds; a second pod started as in a rolling update (`helm upgrade`, new pod template)
stays standby, then takes over the Lease when the first gets SIGTERM, with no report lost or written twice.

Without runc/umoci/skopeo, the image or promtool this test fails (`make test` builds and installs them first).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_rbac import CHART, ChartInstall, install_chart
from kube_helpers import (
    ControlPlane,
    create_deployment,
    create_node,
    create_service_account,
    delete_node,
    schedule_pending_pods,
    service_account_token,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from oci_pod import Image, PodRun, fetch, http_endpoint, metrics_endpoint, unpack_image

from ports import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT / "build" / "spreadwatch.oci.tar"
GROUP, VERSION, PLURAL = "spreadwatch.io", "v1alpha1", "spreadreports"
START_TIMEOUT = 180.0  # start-up on a loaded 2-core machine: image unpacked, Python imports, initial listing


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    return unpack_image(ARCHIVE, tmp_path_factory.mktemp("image"))


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool not on PATH: run `make prometheus-tools`"
    return path


@pytest.fixture
def nodes(kube_api: client.ApiClient) -> Iterator[list[str]]:
    prefix = unique_name("pod")
    names = [create_node(kube_api, f"{prefix}-{z}", zone=f"zone-{z}", region="r1").metadata.name for z in "abc"]
    yield names
    for name in names:
        delete_node(kube_api, name)


@pytest.fixture
def chart(control_plane: ControlPlane, kube_api: client.ApiClient, tmp_path: Path) -> Iterator[ChartInstall]:
    # The pods share the host's network namespace: each pod template gets its own free port.
    installed = install_chart(control_plane, kube_api, tmp_path, _own_ports())
    yield installed
    installed.uninstall()


@pytest.fixture
def pods(control_plane: ControlPlane, image: Image, tmp_path: Path) -> Iterator[Callable[..., PodRun]]:
    """start(deployment, chart) → a started PodRun; every pod still running is stopped (TERM→KILL) after."""
    started: list[PodRun] = []

    def start(deployment: dict[str, Any], chart: ChartInstall) -> PodRun:
        sa_files = {"token": chart.token, "ca.crt": Path(control_plane.ca_file).read_text(),
                    "namespace": chart.namespace}  # fmt: skip
        pod = PodRun.from_deployment(deployment, image, tmp_path / f"pod-{len(started)}", sa_files=sa_files,
                                     api_server=control_plane.server, state_dir=tmp_path / "runc")  # fmt: skip
        pod.start()
        started.append(pod)
        return pod

    yield start
    for pod in started:
        if pod.proc is not None:
            pod.stop()


def _own_ports() -> dict[str, Any]:
    """Chart values giving a pod template its own metrics and probe ports (the pods share the host's network)."""
    return {"metrics": {"port": free_port()}, "probes": {"port": free_port()}}


def metrics_reader_token(api: client.ApiClient, chart: ChartInstall) -> str:
    """A token of a new ServiceAccount bound to the chart's metrics-reader ClusterRole (what Prometheus uses)."""
    [role] = [o["metadata"]["name"] for o in chart.objects
              if o["kind"] == "ClusterRole" and o["metadata"]["name"].endswith("-metrics-reader")]  # fmt: skip
    create_service_account(api, chart.namespace, "scraper")
    client.RbacAuthorizationV1Api(api).create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name=unique_name("scraper")),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="scraper", namespace=chart.namespace)]))  # fmt: skip
    return service_account_token(api, chart.namespace, "scraper", create=False)


def deployment_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    return deployment


def answers(pod: PodRun, probe: str) -> bool:
    assert pod.running(), f"container exited with {pod.proc.returncode if pod.proc else None}:\n{pod.tail()}"
    return fetch(http_endpoint(pod.container, probe))[0] == 200


def wait_started(pod: PodRun) -> None:
    for probe in ("readinessProbe", "livenessProbe"):
        try:
            wait_for(lambda p=probe: answers(pod, p), timeout=START_TIMEOUT, interval=0.5,
                     message=f"the rendered {probe} of {pod.name}")  # fmt: skip
        except TimeoutError as err:
            raise AssertionError(f"{err}\n{pod.tail()}") from None


def statusz(pod: PodRun) -> dict[str, Any]:
    url = http_endpoint(pod.container, "readinessProbe").rsplit("/", 1)[0] + "/statusz"
    code, body = fetch(url)
    assert code == 200, body
    state: dict[str, Any] = json.loads(body)
    return state


def make_workload(api: client.ApiClient, namespace: str, nodes: list[str], name: str) -> None:
    create_deployment(api, namespace, name, replicas=2)
    wait_for_pods(api, namespace, {"app": name}, 2)
    schedule_pending_pods(api, namespace, nodes[:1], {"app": name})  # both on one node: SinglePointOfFailure


def report(api: client.ApiClient, namespace: str, name: str) -> dict[str, Any] | None:
    """The workload's SpreadReport once its status counts both pods."""
    try:
        obj: dict[str, Any] = client.CustomObjectsApi(api).get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, f"deployment-{name}")
    except ApiException as err:
        if err.status == 404:
            return None
        raise
    return obj if obj.get("status", {}).get("pods") == 2 else None


def report_events(api: client.ApiClient, namespace: str) -> dict[str, int]:
    """{report name: Event count} of the Events about SpreadReports in the namespace."""
    counts: dict[str, int] = {}
    for event in client.CoreV1Api(api).list_namespaced_event(namespace).items:
        if event.involved_object.kind == "SpreadReport":
            counts[event.involved_object.name] = counts.get(event.involved_object.name, 0) + (event.count or 1)
    return counts


def lease_holder(api: client.ApiClient, chart: ChartInstall) -> str | None:
    lease = client.CoordinationV1Api(api).read_namespaced_lease(chart.lease_name, chart.namespace)
    holder: str | None = lease.spec.holder_identity
    return holder


def test_the_charts_pod_runs_under_runc(
    control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str, nodes: list[str], image: Image,
    chart: ChartInstall, pods: Callable[..., PodRun], promtool: str, tmp_path: Path,
) -> None:  # fmt: skip
    deployment_a = deployment_of(chart.objects)
    uid = deployment_a["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsUser"]
    passwd = (image.rootfs / "etc" / "passwd").read_text()
    assert f":{uid}:" not in passwd, "the pod's user must have no passwd entry (as under containerd/CRI-O)"

    # --- pod A: started as the kubelet would; its probes answer; it holds the Lease
    a = pods(deployment_a, chart)
    wait_started(a)
    status = a.process_status()
    assert (status["Uid"].split()[0], status["Gid"].split()[0]) == (str(uid), str(uid)), status
    assert (status["NoNewPrivs"], int(status["CapEff"], 16), int(status["CapBnd"], 16)) == ("1", 0, 0), status
    assert not a.root_writable(), "the root filesystem must be read-only"
    wait_for(lambda: lease_holder(kube_api, chart) == a.name, timeout=180, message="pod A to hold the Lease")

    # --- a SpreadReport and its Event for a new workload
    make_workload(kube_api, namespace, nodes, "web")
    web = wait_for(lambda: report(kube_api, namespace, "web"), timeout=180, message="the SpreadReport of web")
    assert web["status"]["health"] == "SinglePointOfFailure"
    wait_for(lambda: report_events(kube_api, namespace).get("deployment-web"), timeout=180,
             message="the Event about deployment-web")  # fmt: skip

    # --- /metrics passes promtool
    code, body = fetch(metrics_endpoint(a.container), bearer=metrics_reader_token(kube_api, chart))
    assert code == 200 and "spreadwatch_workload_pods" in body, body[:500]
    checked = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True,
                             timeout=180, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # --- rolling update: a new pod template (its own port: shared network namespace), pod B stays standby
    upgrade = tmp_path / "upgrade.yaml"
    upgrade.write_text(yaml.safe_dump(_own_ports()))
    control_plane.helm("upgrade", chart.release, str(CHART), "--namespace", chart.namespace,
                       "--values", str(upgrade), "--wait=false")  # fmt: skip
    manifest = control_plane.helm("get", "manifest", chart.release, "--namespace", chart.namespace).stdout
    deployment_b = deployment_of([doc for doc in yaml.safe_load_all(manifest) if doc])
    assert deployment_b["spec"]["strategy"]["type"] == "RollingUpdate"
    b = pods(deployment_b, chart)
    wait_started(b)  # ready while standby: the index is warm, only writes wait for the Lease
    assert statusz(b)["leader"] is False
    assert lease_holder(kube_api, chart) == a.name

    make_workload(kube_api, namespace, nodes, "api")  # written by A while B is standby
    wait_for(lambda: report(kube_api, namespace, "api"), timeout=180, message="the SpreadReport of api")
    wait_for(lambda: report_events(kube_api, namespace).get("deployment-api"), timeout=180,
             message="the Event about deployment-api")  # fmt: skip
    assert statusz(b)["writer"]["apiWrites"] == 0, "a standby must not write"
    versions = {n: wait_for(lambda n=n: report(kube_api, namespace, n))["metadata"]["resourceVersion"]
                for n in ("web", "api")}  # fmt: skip
    events = report_events(kube_api, namespace)

    # --- SIGTERM to A: it stops within terminationGracePeriodSeconds and B takes over the Lease
    code, seconds = a.stop()
    grace = a.termination_grace
    assert code == 0, f"pod A exited with {code} {seconds:.1f}s after SIGTERM (grace {grace}s):\n{a.tail()}"
    wait_for(lambda: lease_holder(kube_api, chart) == b.name, timeout=180, message="pod B to take over the Lease")
    wait_for(lambda: statusz(b)["leader"], timeout=180, message="pod B to see itself as the leader")

    # B writes the next workload's report; its take-over resync ran before that write (same writer loop)
    make_workload(kube_api, namespace, nodes, "db")
    wait_for(lambda: report(kube_api, namespace, "db"), timeout=180, message="the SpreadReport of db (by B)")
    writer = statusz(b)["writer"]
    assert writer["resyncs"] >= 1 and writer["creates"] == 1, writer
    # no report lost (all three are there) or written twice (A's reports untouched by B, no second Event)
    after = {n: report(kube_api, namespace, n) for n in ("web", "api")}
    assert {n: r["metadata"]["resourceVersion"] if r else None for n, r in after.items()} == versions
    now = report_events(kube_api, namespace)
    assert {n: now.get(n) for n in events} == events

    code, seconds = b.stop()
    assert code == 0, f"pod B exited with {code} {seconds:.1f}s after SIGTERM:\n{b.tail()}"
