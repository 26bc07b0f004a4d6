"""Smoke tests of the local control plane itself (hack/devcluster.py + the built binaries)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_helpers import (
    LEGACY_ZONE_LABEL,
    REGION_LABEL,
    ZONE_LABEL,
    ControlPlane,
    create_deployment,
    create_node,
    create_pod,
    create_replication_controller,
    create_service,
    create_statefulset,
    delete_node,
    grant_role,
    owner_reference,
    schedule_pending_pods,
    set_pod_phase,
    token_api_client,
    wait_deleted,
    wait_for,
    wait_for_pods,
)
from kubernetes import client, utils
from kubernetes.client.exceptions import ApiException

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
CRD_GROUP, CRD_VERSION, CRD_PLURAL = "e2e.spreadwatch.dev", "v1alpha1", "widgets"


def pinned_kubernetes_version() -> str:
    text = (REPO_ROOT / "hack" / "controlplane" / "versions.env").read_text()
    match = re.search(r"^KUBERNETES_VERSION=(\S+)$", text, re.M)
    assert match, "KUBERNETES_VERSION missing from versions.env"
    return match.group(1)


def test_readyz(control_plane: ControlPlane, kube_api: client.ApiClient) -> None:
    assert control_plane.kubectl("get", "--raw", "/readyz").stdout.strip() == "ok"
    verbose = control_plane.kubectl("get", "--raw", "/readyz?verbose").stdout
    assert "[+]etcd ok" in verbose
    body, status, _ = kube_api.call_api("/livez", "GET", auth_settings=["BearerToken"], response_type="str",
                                        _return_http_data_only=False)
    assert status == 200
    assert body == "ok"


def test_kubectl_version_is_stamped(control_plane: ControlPlane) -> None:
    version = json.loads(control_plane.kubectl("version", "-o", "json").stdout)
    expected = pinned_kubernetes_version()
    minor = expected.split(".")[1]
    for side in ("clientVersion", "serverVersion"):
        assert version[side]["gitVersion"] == expected, version
        assert (version[side]["major"], version[side]["minor"]) == ("1", minor), version


def test_crd_with_status_subresource(control_plane: ControlPlane, kube_api: client.ApiClient,
                                     namespace: str, e2e_data_dir: Path) -> None:
    control_plane.kubectl("apply", "-f", str(e2e_data_dir / "test-crd.yaml"))
    control_plane.kubectl("wait", "--for=condition=Established", "--timeout=180s",
                          f"crd/{CRD_PLURAL}.{CRD_GROUP}")
    custom = client.CustomObjectsApi(kube_api)

    def create() -> dict[str, Any] | None:  # discovery of the new API can lag a moment behind Established
        try:
            obj: dict[str, Any] = custom.create_namespaced_custom_object(
                CRD_GROUP, CRD_VERSION, namespace, CRD_PLURAL,
                {"apiVersion": f"{CRD_GROUP}/{CRD_VERSION}", "kind": "Widget",
                 "metadata": {"name": "w1"}, "spec": {"replicas": 3, "zone": "zone-a"}})
            return obj
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    created = wait_for(create, timeout=180, message="Widget API to be served")
    assert "status" not in created

    # status goes through the subresource only; the main resource ignores it and vice versa
    custom.patch_namespaced_custom_object_status(CRD_GROUP, CRD_VERSION, namespace, CRD_PLURAL, "w1",
                                                 {"status": {"phase": "Ready", "observedGeneration": 1}})
    custom.patch_namespaced_custom_object(CRD_GROUP, CRD_VERSION, namespace, CRD_PLURAL, "w1",
                                          {"status": {"phase": "Failed"}})
    got = custom.get_namespaced_custom_object(CRD_GROUP, CRD_VERSION, namespace, CRD_PLURAL, "w1")
    assert got["status"] == {"phase": "Ready", "observedGeneration": 1}
    assert got["spec"] == {"replicas": 3, "zone": "zone-a"}

    # schema validation (enum) is enforced on the status subresource too
    with pytest.raises(ApiException) as err:
        custom.patch_namespaced_custom_object_status(CRD_GROUP, CRD_VERSION, namespace, CRD_PLURAL, "w1",
                                                     {"status": {"phase": "Bogus"}})
    assert err.value.status == 422

    table = control_plane.kubectl("get", "widgets", "-n", namespace).stdout.split()
    assert table[:4] == ["NAME", "REPLICAS", "PHASE", "AGE"], table
    assert table[4:7] == ["w1", "3", "Ready"], table


def test_node_with_zone_and_bound_pod(kube_api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    node = create_node(kube_api, zone="zone-a", region="region-1", legacy_labels=True,
                       taints=[("dedicated", "e2e", "NoSchedule")], unschedulable=True)
    name = node.metadata.name
    try:
        got = core.read_node(name)
        assert got.metadata.labels[ZONE_LABEL] == "zone-a"
        assert got.metadata.labels[LEGACY_ZONE_LABEL] == "zone-a"
        assert got.metadata.labels[REGION_LABEL] == "region-1"
        assert got.spec.unschedulable is True
        assert [(t.key, t.value, t.effect) for t in got.spec.taints] == [("dedicated", "e2e", "NoSchedule")]
        assert {c.type: c.status for c in got.status.conditions}["Ready"] == "True"
        assert got.status.allocatable["cpu"] == "4"

        pod = create_pod(kube_api, namespace, "bound", node_name=name, labels={"app": "bound"})
        assert pod.spec.node_name == name
        assert pod.status.phase == "Pending"
        set_pod_phase(kube_api, namespace, "bound", "Running")
        got_pod = core.read_namespaced_pod("bound", namespace)
        assert got_pod.spec.node_name == name
        assert got_pod.status.phase == "Running"
        assert {c.type: c.status for c in got_pod.status.conditions}["Ready"] == "True"
    finally:
        delete_node(kube_api, name)


def test_workload_helpers(kube_api: client.ApiClient, namespace: str) -> None:
    nodes = [create_node(kube_api, zone=z).metadata.name for z in ("zone-a", "zone-b", "zone-c")]
    try:
        create_deployment(kube_api, namespace, "web", replicas=3)
        create_statefulset(kube_api, namespace, "db", replicas=2)
        create_service(kube_api, namespace, "db", {"app": "db"}, headless=True)
        create_replication_controller(kube_api, namespace, "legacy", replicas=1)
        create_service(kube_api, namespace, "web", {"app": "web"}, ports=(80, 443))

        web = wait_for_pods(kube_api, namespace, {"app": "web"}, 3)
        assert all(p.metadata.owner_references[0].kind == "ReplicaSet" for p in web)
        wait_for_pods(kube_api, namespace, {"app": "db"}, 2)
        wait_for_pods(kube_api, namespace, {"app": "legacy"}, 1)

        placement = schedule_pending_pods(kube_api, namespace, nodes, {"app": "web"})
        assert sorted(placement.values()) == sorted(nodes)
        pods = client.CoreV1Api(kube_api).list_namespaced_pod(namespace, label_selector="app=web").items
        assert {p.spec.node_name for p in pods} == set(nodes)
        assert all(p.status.phase == "Running" for p in pods)
    finally:
        for node in nodes:
            delete_node(kube_api, node)


def test_rbac_service_account_token(control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str,
                                    service_account_token: Callable[..., str]) -> None:
    token = service_account_token(namespace, "pod-reader")
    grant_role(kube_api, namespace, "pod-reader",
               [client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get"])])
    create_pod(kube_api, namespace, "target")

    sa_api = token_api_client(control_plane.server, control_plane.ca_file, token)
    sa_core = client.CoreV1Api(sa_api)
    # RBAC is evaluated per request; the binding may take a moment to be visible to the authorizer
    wait_for(lambda: sa_core.read_namespaced_pod("target", namespace), timeout=180,
             message="pod-reader to be allowed to get pods")
    with pytest.raises(ApiException) as err:
        sa_core.list_namespaced_secret(namespace)
    assert err.value.status == 403
    assert f"system:serviceaccount:{namespace}:pod-reader" in err.value.body
    with pytest.raises(ApiException) as err:  # get is allowed, list is not
        sa_core.list_namespaced_pod(namespace)
    assert err.value.status == 403

    kubeconfig = control_plane.token_kubeconfig(token, control_plane.dir / "pod-reader.kubeconfig", namespace)
    denied = control_plane.kubectl("--kubeconfig", str(kubeconfig), "get", "secrets", check=False)
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr.lower()
    sa_api.close()


def test_owner_reference_garbage_collection(kube_api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    owner = core.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="owner"), data={"k": "v"}))
    owner.api_version, owner.kind = "v1", "ConfigMap"  # not set on create responses
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="dependent", owner_references=[owner_reference(owner)])))
    core.delete_namespaced_config_map("owner", namespace)
    wait_deleted(lambda: core.read_namespaced_config_map("dependent", namespace), timeout=180,
                 message="the garbage collector to delete the dependent ConfigMap")


def test_helm(control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str,
              e2e_data_dir: Path) -> None:
    version = control_plane.helm("version", "--short").stdout.strip()
    assert re.match(r"^v3\.\d+\.\d+", version), version
    chart = str(e2e_data_dir / "tinychart")

    rendered = list(yaml.safe_load_all(control_plane.helm(
        "template", "demo", chart, "--namespace", namespace, "--set", "greeting=hi").stdout))
    kinds = sorted(doc["kind"] for doc in rendered if doc)
    assert kinds == ["ConfigMap", "Deployment"]

    control_plane.helm("install", "demo", chart, "--namespace", namespace, "--wait=false",
                       "--set", "greeting=installed")
    cm = client.CoreV1Api(kube_api).read_namespaced_config_map("demo-config", namespace)
    assert cm.data["greeting"] == "installed"
    # the chart sees the server's real (stamped) version via .Capabilities
    assert cm.data["kubeVersion"] == pinned_kubernetes_version()
    status = json.loads(control_plane.helm("status", "demo", "--namespace", namespace, "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"
    control_plane.helm("uninstall", "demo", "--namespace", namespace)
    wait_deleted(lambda: client.CoreV1Api(kube_api).read_namespaced_config_map("demo-config", namespace),
                 message="helm uninstall")


def test_utils_create_from_yaml(kube_api: client.ApiClient, namespace: str) -> None:
    """The python client's create_from_yaml works too (used by operator tests for manifests)."""
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-yaml"}, "data": {"a": "b"}}
    utils.create_from_dict(kube_api, manifest, namespace=namespace)
    assert client.CoreV1Api(kube_api).read_namespaced_config_map("from-yaml", namespace).data == {"a": "b"}
