"""The chart's pod on a real node: `helm install` into the test control plane, and a kubelet runs the pod.

The node (fixture ``real_node``: containerd, kubelet and kube-proxy in a network namespace of their own,
hack/node/localnode.py) runs the image `make image` built (build/spreadwatch.oci.tar), imported into its
containerd under the name the chart asks for. The chart is installed with its default values plus, for this
test only, a toleration of the node's taint and a nodeSelector for it (the node is tainted so that the other
tests' workloads never land on it). The control plane has no kube-scheduler: the test binds the pods
(pods/binding, as a scheduler would; the nodeSelector and toleration make a real scheduler choose the same node).

Checks (one node for the module, ~2-4 min on a busy 2-core machine):

* the kubelet starts the pod under the chart's securityContext (UID 65532 with no passwd entry, no
  capabilities, no_new_privs, read-only root) and the rendered readiness probe makes it Ready; it takes the
  Lease and writes a SpreadReport for a workload on fake nodes;
* the real Prometheus scrapes /metrics at the pod IP, found through the chart's Service by Kubernetes service
  discovery, with the ServiceMonitor's endpoint settings (port name, scheme, path, bearer token, TLS config,
  honorLabels, interval, scrapeTimeout);
* `helm upgrade` rolls the pod: the new pod is Ready while standby, the old one exits 0 on SIGTERM within
  terminationGracePeriodSeconds, the Lease goes to the new pod; `helm uninstall` leaves no pod in containerd;
* the pod's memory cgroup limit is the chart's resources.limits.memory; the pod survives a restart of the API
  server (same container, Ready, still writing reports); a hung container (SIGSTOP) fails its liveness probe
  and the kubelet restarts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from chart_rbac import CHART, ChartInstall, install_chart
from hack import devcluster
from hack.node import localnode
from kube_helpers import (
    ControlPlane,
    bind_pod,
    create_deployment,
    create_node,
    create_service_account,
    delete_node,
    pod_spec,
    schedule_pending_pods,
    service_account_token,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "monitoring"))
from monitoring_helpers import Prometheus, require_binary

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT / "build" / "spreadwatch.oci.tar"
GROUP, VERSION, PLURAL = "spreadwatch.io", "v1alpha1", "spreadreports"
START = 300.0  # a pod's start on a loaded 2-core machine: sandbox, Python imports, initial listing, probes
MEMORY_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
CGROUP_ROOT = Path("/sys/fs/cgroup")
# GET argv[1] with the bearer token in the file argv[2] (HTTPS unverified); prints the status code
FETCH_STATUS = """import ssl, sys, urllib.request
req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + open(sys.argv[2]).read()})
print(urllib.request.urlopen(req, timeout=30, context=ssl._create_unverified_context()).status)"""


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def image_ref(real_node: Any) -> str:
    """build/spreadwatch.oci.tar in the node's containerd, as `docker.io/library/spreadwatch:<version>`."""
    assert ARCHIVE.is_file(), f"{ARCHIVE} is missing: run `make image` (a prerequisite of `make test`)"
    ref: str = real_node.import_image(ARCHIVE)
    return ref


@pytest.fixture(scope="module")
def fake_nodes(kube_api: client.ApiClient) -> Iterator[list[str]]:
    prefix = unique_name("fake")
    names = [create_node(kube_api, f"{prefix}-{z}", zone=f"zone-{z}", region="r1").metadata.name for z in "abc"]
    yield names
    for name in names:
        delete_node(kube_api, name)


@pytest.fixture
def on_node(real_node: Any, image_ref: str, crd: None) -> dict[str, Any]:
    """Values that put the chart's pod on the real node: tolerate its taint, select it by hostname."""
    taint = real_node_taint()
    return {"tolerations": [{"key": taint["key"], "operator": "Equal", "value": taint["value"],
                             "effect": taint["effect"]}],
            "nodeSelector": {"kubernetes.io/hostname": real_node.name}}  # fmt: skip


def real_node_taint() -> dict[str, str]:
    taint: dict[str, str] = localnode.TAINT
    return taint


# --------------------------------------------------------------------------- helpers


def selector_of(chart: ChartInstall) -> str:
    [deployment] = [o for o in chart.objects if o["kind"] == "Deployment"]
    labels: dict[str, str] = deployment["spec"]["selector"]["matchLabels"]
    return ",".join(f"{k}={v}" for k, v in labels.items())


def chart_pods(api: client.ApiClient, chart: ChartInstall) -> list[client.V1Pod]:
    pods = client.CoreV1Api(api).list_namespaced_pod(chart.namespace, label_selector=selector_of(chart)).items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def bind_pending(api: client.ApiClient, chart: ChartInstall, node: str) -> None:
    """Bind the chart's unscheduled pods to `node` (what kube-scheduler would do with the nodeSelector)."""
    for pod in chart_pods(api, chart):
        if not pod.spec.node_name:
            try:
                bind_pod(api, chart.namespace, pod.metadata.name, node)
            except ApiException as err:
                if err.status != 409:  # 409: bound meanwhile (by a scheduler)
                    raise


def ready(pod: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def wait_ready_pod(api: client.ApiClient, chart: ChartInstall, node: str, exclude: set[str] | None = None,
                   timeout: float = START) -> client.V1Pod:  # fmt: skip
    """Bind the chart's pending pods to the node until one (not in `exclude`) is Running and Ready."""
    def one() -> client.V1Pod | None:
        bind_pending(api, chart, node)
        for pod in chart_pods(api, chart):
            if pod.metadata.name not in (exclude or set()) and pod.status.phase == "Running" and ready(pod):
                return pod
        return None

    try:
        return wait_for(one, timeout=timeout, interval=1.0, message="the chart's pod to be Running and Ready")
    except TimeoutError as err:
        pods = chart_pods(api, chart)
        states = [(p.metadata.name, p.spec.node_name, p.status.phase, p.status.container_statuses) for p in pods]
        raise AssertionError(f"{err}; pods: {states}; their last logs:\n{_last_logs(api, pods)}") from None


def _last_logs(api: client.ApiClient, pods: list[client.V1Pod]) -> str:
    """The tail of each pod's operator container's log (the last run's when it restarted), for a failure."""
    core, out = client.CoreV1Api(api), []
    for pod in pods:
        for previous in (True, False):
            try:
                text = core.read_namespaced_pod_log(pod.metadata.name, pod.metadata.namespace, tail_lines=15,
                                                    previous=previous)  # fmt: skip
            except client.ApiException as err:
                text = f"(no log: HTTP {err.status})"
            out.append(f"--- {pod.metadata.name} ({'previous' if previous else 'current'}):\n{text}")
    return "\n".join(out)


def read_pod(api: client.ApiClient, namespace: str, name: str) -> client.V1Pod:
    return client.CoreV1Api(api).read_namespaced_pod(name, namespace)


def container_info(node: Any, pod: client.V1Pod) -> dict[str, Any]:
    """`crictl inspect` of the pod's (first) container: info.pid, info.runtimeSpec (cgroupsPath, mounts, ...)."""
    container_id = pod.status.container_statuses[0].container_id.removeprefix("containerd://")
    info: dict[str, Any] = json.loads(node.crictl("inspect", container_id))["info"]
    return info


def proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def root_writable(pid: int) -> bool:
    roots = [line.split() for line in Path(f"/proc/{pid}/mounts").read_text().splitlines() if line.split()[1] == "/"]
    return "rw" in roots[-1][3].split(",")


def memory_bytes(quantity: str) -> int:
    for suffix, factor in MEMORY_UNITS.items():
        if quantity.endswith(suffix):
            return int(quantity.removesuffix(suffix)) * factor
    return int(quantity)


def memory_limit_in_cgroup(cgroups_path: str) -> int | None:
    """A cgroup's memory limit (cgroupfs path, as in the runtime spec): memory.limit_in_bytes in the v1 memory
    hierarchy if one is mounted, else memory.max in the unified hierarchy (cgroup v2); None for v2's `max`."""
    relative = cgroups_path.lstrip("/")
    if (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():
        return int((CGROUP_ROOT / "memory" / relative / "memory.limit_in_bytes").read_text())
    value = (CGROUP_ROOT / relative / "memory.max").read_text().strip()
    return None if value == "max" else int(value)


def lease_holder(api: client.ApiClient, chart: ChartInstall) -> str | None:
    try:
        lease = client.CoordinationV1Api(api).read_namespaced_lease(chart.lease_name, chart.namespace)
    except ApiException as err:
        if err.status == 404:
            return None
        raise
    holder: str | None = lease.spec.holder_identity
    return holder


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


def fetch(url: str, bearer: str) -> tuple[int, str]:
    """GET with a bearer token → (status, body); HTTPS unverified (the operator's self-signed certificate)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {bearer}"})
    try:
        with urllib.request.urlopen(request, timeout=30, context=ssl._create_unverified_context()) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def report_events(api: client.ApiClient, namespace: str) -> dict[str, int]:
    """{report name: Event count} of the Events about SpreadReports in the namespace."""
    counts: dict[str, int] = {}
    for event in client.CoreV1Api(api).list_namespaced_event(namespace).items:
        if event.involved_object.kind == "SpreadReport":
            counts[event.involved_object.name] = counts.get(event.involved_object.name, 0) + (event.count or 1)
    return counts


def metrics_reader_token(api: client.ApiClient, chart: ChartInstall, account: str) -> str:
    """A token of a new ServiceAccount bound to the chart's metrics-reader ClusterRole (what Prometheus runs as)."""
    [role] = [o["metadata"]["name"] for o in chart.objects
              if o["kind"] == "ClusterRole" and o["metadata"]["name"].endswith("-metrics-reader")]  # fmt: skip
    create_service_account(api, chart.namespace, account)
    client.RbacAuthorizationV1Api(api).create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name=unique_name(account)),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name=account, namespace=chart.namespace)]))  # fmt: skip
    return service_account_token(api, chart.namespace, account, create=False)


def service_monitor(cp: ControlPlane, chart: ChartInstall, tmp: Path, values: Mapping[str, Any]) -> dict[str, Any]:
    """The chart's ServiceMonitor as rendered for this release (serviceMonitor.enabled=true)."""
    path = tmp / "servicemonitor-values.yaml"
    path.write_text(yaml.safe_dump({**values, "serviceMonitor": {"enabled": True}}))
    out = cp.helm("template", chart.release, str(CHART), "--namespace", chart.namespace, "--values", str(path),
                  "--api-versions", "monitoring.coreos.com/v1", "--show-only", "templates/servicemonitor.yaml").stdout
    monitor: dict[str, Any] = yaml.safe_load(out)
    return monitor


def scrape_config(monitor: Mapping[str, Any], token_file: Path, sd_file: Path) -> dict[str, Any]:
    """What prometheus-operator generates for the ServiceMonitor's first endpoint: targets of the Services it
    selects, kept by the Service labels and the port name, scraped with the endpoint's scheme, path, TLS settings,
    honorLabels, interval and scrapeTimeout (one it leaves unset: the global setting); its bearerTokenFile is
    Prometheus's own ServiceAccount token, here a file with a token of such an account. Debian's prometheus is
    built without Kubernetes service discovery, so the targets come from a file (`endpoint_targets` writes it from
    the EndpointSlices, with the labels that discovery would set)."""
    [endpoint] = monitor["spec"]["endpoints"]
    keep = [{"source_labels": [f"__meta_kubernetes_service_label_{_label(k)}"], "regex": v, "action": "keep"}
            for k, v in monitor["spec"]["selector"]["matchLabels"].items()]  # fmt: skip
    keep.append({"source_labels": ["__meta_kubernetes_endpoint_port_name"], "regex": endpoint["port"],
                 "action": "keep"})  # fmt: skip
    tls = endpoint.get("tlsConfig", {})
    timing = {option: endpoint[field] for option, field in (("scrape_interval", "interval"),
                                                            ("scrape_timeout", "scrapeTimeout")) if endpoint.get(field)}
    return {
        "job_name": f"serviceMonitor/{monitor['metadata']['namespace']}/{monitor['metadata']['name']}/0",
        **timing, "honor_labels": bool(endpoint.get("honorLabels", False)),
        "scheme": endpoint.get("scheme", "http"), "metrics_path": endpoint.get("path", "/metrics"),
        "bearer_token_file": str(token_file),
        "tls_config": {"insecure_skip_verify": bool(tls.get("insecureSkipVerify", False)),
                       **({"server_name": tls["serverName"]} if "serverName" in tls else {})},
        "file_sd_configs": [{"files": [str(sd_file)], "refresh_interval": "2s"}],
        "relabel_configs": keep,
    }  # fmt: skip


def endpoint_targets(api: client.ApiClient, namespace: str, sd_file: Path) -> None:
    """Every ready endpoint address:port of every Service in the namespace, labelled as Prometheus's Kubernetes
    service discovery (role endpointslice) labels them, written as a file_sd target list."""
    core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    groups = []
    for service in core.list_namespaced_service(namespace).items:
        labels = {f"__meta_kubernetes_service_label_{_label(k)}": v for k, v in (service.metadata.labels or {}).items()}
        slices = discovery.list_namespaced_endpoint_slice(
            namespace, label_selector=f"kubernetes.io/service-name={service.metadata.name}").items
        for endpoint_slice in slices:
            for port in endpoint_slice.ports or []:
                for endpoint in endpoint_slice.endpoints or []:
                    if endpoint.conditions.ready:
                        groups += [{"targets": [f"{address}:{port.port}"], "labels": {
                            **labels, "__meta_kubernetes_namespace": namespace,
                            "__meta_kubernetes_service_name": service.metadata.name,
                            "__meta_kubernetes_endpoint_port_name": port.name or ""}}
                            for address in endpoint.addresses]  # fmt: skip
    sd_file.write_text(json.dumps(groups))


def _label(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


class PodWatch(threading.Thread):
    """The last state the API server showed of each pod in a namespace (a watch, so a status the kubelet writes
    just before the pod object is deleted is not missed)."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        super().__init__(daemon=True)
        self.api, self.namespace = api, namespace
        self.last: dict[str, client.V1Pod] = {}
        self._watch = watch.Watch()

    def run(self) -> None:
        # An observer only: the test asserts on what it saw. A stream cut when the control plane stops at the end
        # of the session ends the thread quietly.
        with contextlib.suppress(ApiException, OSError, urllib3.exceptions.HTTPError):
            for event in self._watch.stream(client.CoreV1Api(self.api).list_namespaced_pod, self.namespace,
                                            timeout_seconds=900):  # fmt: skip
                pod = event["object"]
                if pod.status.container_statuses:
                    self.last[pod.metadata.name] = pod

    def stop(self) -> None:
        self._watch.stop()  # the stream ends at its next event


def terminated(pod: client.V1Pod | None) -> client.V1ContainerStateTerminated | None:
    if pod is None or not pod.status.container_statuses:
        return None
    state: client.V1ContainerStateTerminated | None = pod.status.container_statuses[0].state.terminated
    return state


def no_sandboxes(node: Any, namespace: str) -> bool:
    return not node.crictl("pods", "--namespace", namespace, "--quiet").split()


# --------------------------------------------------------------------------- tests


def test_helm_install_runs_the_pod_on_the_node(
    control_plane: ControlPlane, kube_api: client.ApiClient, real_node: Any, image_ref: str, on_node: dict[str, Any],
    fake_nodes: list[str], tmp_path: Path,
) -> None:  # fmt: skip
    # a node web cannot use (tainted), made before web's report: db's pods go there in the hand-over (pods on
    # web's candidate nodes would change their loads, and so web's predicted scores: a write B must make)
    aside = create_node(kube_api, unique_name("aside"), zone="zone-a", region="r1",
                        taints=[("spreadwatch.io/aside", "true", "NoSchedule")]).metadata.name  # fmt: skip
    chart = install_chart(control_plane, kube_api, tmp_path, on_node)
    pods = PodWatch(kube_api, chart.namespace)
    pods.start()
    prometheus: Prometheus | None = None
    try:
        a = wait_ready_pod(kube_api, chart, real_node.name)
        assert a.spec.node_name == real_node.name
        [container] = a.spec.containers
        assert image_ref == f"docker.io/library/{container.image}", "the image the chart asks for"

        # --- the chart's securityContext, as the kubelet and runc applied it
        info = container_info(real_node, a)
        status = proc_status(int(info["pid"]))
        uid = container.security_context.run_as_user
        assert (status["Uid"].split()[0], status["Gid"].split()[0]) == (str(uid), str(uid)), status
        assert (status["NoNewPrivs"], int(status["CapEff"], 16), int(status["CapBnd"], 16)) == ("1", 0, 0), status
        assert not root_writable(int(info["pid"])), "the root filesystem must be read-only"
        passwd = Path(f"/proc/{info['pid']}/root/etc/passwd").read_text()
        assert f":{uid}:" not in passwd, "the pod's user has no passwd entry in the image"

        # --- it leads and writes a SpreadReport for a workload on the fake nodes
        wait_for(lambda: lease_holder(kube_api, chart) == a.metadata.name, timeout=START,
                 message="pod A to hold the Lease")  # fmt: skip
        make_workload(kube_api, chart.namespace, fake_nodes, "web")
        web = wait_for(lambda: report(kube_api, chart.namespace, "web"), timeout=START,
                       message="the SpreadReport of web")  # fmt: skip
        assert web["status"]["health"] == "SinglePointOfFailure"

        # --- /metrics at the pod IP (HTTPS, a metrics-reader token) passes promtool
        token_file = tmp_path / "prometheus-token"
        token_file.write_text(metrics_reader_token(kube_api, chart, "prometheus"))
        [port] = [p.container_port for p in container.ports if p.name == "metrics"]
        code, body = fetch(f"https://{a.status.pod_ip}:{port}/metrics", token_file.read_text())
        assert code == 200 and "spreadwatch_workload_pods" in body, body[:500]
        checked = subprocess.run([require_binary("promtool"), "check", "metrics"], input=body, capture_output=True,
                                 text=True, timeout=180, check=False)  # fmt: skip
        assert checked.returncode == 0, checked.stdout + checked.stderr

        # --- the real Prometheus scrapes the pod IP through the Service, as the ServiceMonitor says
        monitor = service_monitor(control_plane, chart, tmp_path, on_node)
        sd_file = tmp_path / "targets.json"
        endpoint_targets(kube_api, chart.namespace, sd_file)
        config = {"global": {"scrape_interval": "2s"}, "scrape_configs": [scrape_config(monitor, token_file, sd_file)]}
        (tmp_path / "prometheus").mkdir()
        prometheus = Prometheus(require_binary("prometheus"), tmp_path / "prometheus", config)
        prometheus.wait_ready()
        prom = prometheus

        def scraped() -> list[dict[str, Any]] | None:
            targets = prom.api("targets")["activeTargets"]
            return targets if targets and all(t["health"] == "up" for t in targets) else None

        try:
            targets = wait_for(scraped, timeout=START, interval=1.0, message="Prometheus to scrape the pod")
        except TimeoutError as err:
            raise AssertionError(f"{err}: {prom.api('targets')}\n{prom.log_tail()}") from None
        [target] = targets
        assert target["scrapeUrl"].startswith(f"https://{a.status.pod_ip}:"), target
        series = wait_for(lambda: prom.query('spreadwatch_workload_pods{workload="web"}'), timeout=START,
                          message="spreadwatch_workload_pods of web in Prometheus")  # fmt: skip
        assert series[0]["metric"]["namespace"] == chart.namespace, series
        # ... and the Service's ClusterIP answers in the node's network (kube-proxy's rules) with the same token
        [service] = [o for o in chart.objects if o["kind"] == "Service"]
        cluster_ip = client.CoreV1Api(kube_api).read_namespaced_service(service["metadata"]["name"],
                                                                         chart.namespace).spec.cluster_ip
        url = f"https://{cluster_ip}:{service['spec']['ports'][0]['port']}/metrics"
        status = real_node.run_in_netns(sys.executable, "-c", FETCH_STATUS, url, str(token_file))
        assert status.strip() == "200", status
        prometheus.stop()
        prometheus = None

        # --- helm upgrade: a new pod template; the new pod is Ready while standby, then takes the Lease
        version = web["metadata"]["resourceVersion"]
        events = report_events(kube_api, chart.namespace)
        upgrade = tmp_path / "upgrade.yaml"
        upgrade.write_text(yaml.safe_dump({**on_node, "podAnnotations": {"e2e/rollout": "2"}}))
        control_plane.helm("upgrade", chart.release, str(CHART), "--namespace", chart.namespace,
                           "--values", str(upgrade), "--wait=false")  # fmt: skip
        b = wait_ready_pod(kube_api, chart, real_node.name, exclude={a.metadata.name})
        wait_for(lambda: lease_holder(kube_api, chart) == b.metadata.name, timeout=START,
                 message="pod B to take over the Lease")  # fmt: skip
        old = wait_for(lambda: terminated(pods.last.get(a.metadata.name)), timeout=START,
                       message="pod A's container to terminate")  # fmt: skip
        assert old.exit_code == 0, f"pod A exited with {old.exit_code} ({old.reason}) after SIGTERM"
        # deletionTimestamp = the time of the delete request (SIGTERM) + terminationGracePeriodSeconds
        deadline = pods.last[a.metadata.name].metadata.deletion_timestamp
        assert deadline is not None and old.finished_at <= deadline, (old.finished_at, deadline)
        # db's pods (tolerating it) on the node web cannot use: nothing changes in web's report, its prediction
        # included
        create_deployment(kube_api, chart.namespace, "db", replicas=2, spec=pod_spec(tolerations=[client.V1Toleration(
            key="spreadwatch.io/aside", operator="Equal", value="true", effect="NoSchedule")]))  # fmt: skip
        wait_for_pods(kube_api, chart.namespace, {"app": "db"}, 2)
        schedule_pending_pods(kube_api, chart.namespace, [aside], {"app": "db"})
        wait_for(lambda: report(kube_api, chart.namespace, "db"), timeout=START,
                 message="the SpreadReport of db (written by B)")  # fmt: skip
        # nothing lost or written twice in the hand-over: A's report untouched by B, no Event added about it
        assert report(kube_api, chart.namespace, "web")["metadata"]["resourceVersion"] == version
        now = report_events(kube_api, chart.namespace)
        assert {n: now.get(n) for n in events} == events

        # --- helm uninstall: the kubelet stops the pod; nothing of it is left in containerd
        control_plane.helm("uninstall", chart.release, "--namespace", chart.namespace, "--wait", "--timeout", "5m",
                           timeout=400)  # fmt: skip
        wait_for(lambda: not chart_pods(kube_api, chart) and no_sandboxes(real_node, chart.namespace),
                 timeout=START, interval=1.0, message="the pods to be gone from the API and from containerd")
        chart.helm_release = False
    finally:
        pods.stop()
        if prometheus is not None:
            prometheus.stop()
        chart.uninstall()
        delete_node(kube_api, aside)


def test_memory_limit_probes_and_api_server_restart(
    control_plane: ControlPlane, kube_api: client.ApiClient, real_node: Any, on_node: dict[str, Any],
    fake_nodes: list[str], tmp_path: Path,
) -> None:  # fmt: skip
    # Liveness: the chart's probe, checked every 2 s and failed after 2 misses (the defaults take 30 s).
    values = {**on_node, "probes": {"liveness": {"periodSeconds": 2, "timeoutSeconds": 1, "failureThreshold": 2}}}
    chart = install_chart(control_plane, kube_api, tmp_path, values)
    try:
        pod = wait_ready_pod(kube_api, chart, real_node.name)
        [container] = pod.spec.containers
        limit = memory_bytes(container.resources.limits["memory"])
        default = yaml.safe_load((CHART / "values.yaml").read_text())["resources"]["limits"]["memory"]
        assert limit == memory_bytes(default), container.resources.limits  # the chart's default limit

        # --- the memory limit is the container's cgroup limit, and its pod's
        info = container_info(real_node, pod)
        cgroups_path = info["runtimeSpec"]["linux"]["cgroupsPath"]
        assert cgroups_path.startswith(f"/{real_node.cgroup_name}/kubepods/burstable/pod{pod.metadata.uid}/")
        assert memory_limit_in_cgroup(cgroups_path) == limit
        assert memory_limit_in_cgroup(cgroups_path.rsplit("/", 1)[0]) == limit

        # --- a restart of the API server: the pod keeps running (same container), Ready, and writes reports
        wait_for(lambda: lease_holder(kube_api, chart) == pod.metadata.name, timeout=START,
                 message="the pod to hold the Lease")  # fmt: skip
        devcluster.restart_apiserver(Path(control_plane.dir))
        wait_for(lambda: ready(read_pod(kube_api, chart.namespace, pod.metadata.name)), timeout=START,
                 message="the pod Ready after the API server restart")  # fmt: skip
        make_workload(kube_api, chart.namespace, fake_nodes, "after-restart")
        wait_for(lambda: report(kube_api, chart.namespace, "after-restart"), timeout=START,
                 message="a SpreadReport written after the API server restart")  # fmt: skip
        after = read_pod(kube_api, chart.namespace, pod.metadata.name).status.container_statuses[0]
        assert (after.restart_count, after.container_id) == (0, pod.status.container_statuses[0].container_id)

        # --- a hung container fails its liveness probe: the kubelet kills and restarts it
        os.kill(int(info["pid"]), signal.SIGSTOP)

        def restarted() -> client.V1ContainerStatus | None:
            status = read_pod(kube_api, chart.namespace, pod.metadata.name).status.container_statuses[0]
            return status if status.restart_count >= 1 and status.ready else None

        status = wait_for(restarted, timeout=START, interval=1.0, message="the kubelet to restart the container")
        assert status.container_id != after.container_id
        assert status.last_state.terminated is not None, status
        events = client.CoreV1Api(kube_api).list_namespaced_event(
            chart.namespace, field_selector=f"involvedObject.name={pod.metadata.name}").items
        assert any(e.reason == "Unhealthy" and "Liveness probe failed" in (e.message or "") for e in events), [
            (e.reason, e.message) for e in events]
    finally:
        chart.uninstall()
        wait_for(lambda: no_sandboxes(real_node, chart.namespace), timeout=START, interval=1.0,
                 message="the pod gone from containerd")  # fmt: skip


def test_workload_pods_stay_off_the_tainted_node(real_node: Any, kube_api: client.ApiClient) -> None:
    node = client.CoreV1Api(kube_api).read_node(real_node.name)
    assert [(t.key, t.value, t.effect) for t in node.spec.taints] == [tuple(real_node_taint().values())]
    assert node.status.node_info.kubelet_version == "v1.36.4"
    assert node.status.node_info.container_runtime_version.startswith("containerd://1.")
    assert [a.address for a in node.status.addresses if a.type == "InternalIP"] == [real_node.node_ip]

