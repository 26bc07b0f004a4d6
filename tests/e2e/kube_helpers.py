"""Helpers for end-to-end tests against the local control plane (hack/devcluster.py).

The control plane has no kubelet, scheduler or kube-proxy:

* Nodes are plain API objects: create_node() creates one and marks it Ready through the
  status subresource (nothing ever changes it afterwards).
* Pods stay Pending.  create_pod(node_name=...) binds a pod directly (spec.nodeName);
  bind_pod() binds an existing pod through the pods/binding subresource, like a scheduler;
  schedule_pending_pods() does that round-robin for the pods a workload controller created;
  set_pod_phase() patches status.phase (and the Ready condition).
* Deleting a bound pod waits for a kubelet that never comes: delete_pod() and
  delete_namespace() therefore force-delete (grace period 0).
* kube-controller-manager runs the workload controllers (Deployment, ReplicaSet,
  StatefulSet, ReplicationController, DaemonSet, Job), the garbage collector, the
  namespace and service-account controllers.
"""

from __future__ import annotations

import base64
import itertools
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from kubernetes import client
from kubernetes.client.exceptions import ApiException

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_IMAGE = "registry.invalid/spreadwatch/pause:1.0"

T = TypeVar("T")


class KubectlError(subprocess.CalledProcessError):
    """kubectl/helm exited non-zero; str() includes its stderr."""

    def __str__(self) -> str:
        return f"{' '.join(map(str, self.cmd))} exited {self.returncode}:\n{self.stderr or self.stdout}"


@dataclass
class ControlPlane:
    """A running control plane started by the `control_plane` fixture."""

    dir: Path
    kubeconfig: str
    server: str
    bin_dir: Path
    log_dir: Path
    ca_file: Path
    env: dict[str, str] = field(default_factory=dict, repr=False)

    def _run(self, tool: str, args: Sequence[str], check: bool, input: str | None,
             timeout: float) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin_dir / tool), *map(str, args)]
        proc = subprocess.run(cmd, input=input, text=True, capture_output=True, timeout=timeout,
                              env=self.env or None, check=False)
        if check and proc.returncode != 0:
            raise KubectlError(proc.returncode, cmd, proc.stdout, proc.stderr)
        return proc

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run kubectl as cluster admin (KUBECONFIG points at this cluster)."""
        return self._run("kubectl", args, check, input, timeout)

    def helm(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run helm against this cluster (its config/cache dirs live in the state dir)."""
        return self._run("helm", args, check, None, timeout)

    def token_kubeconfig(self, token: str, path: Path | str, namespace: str = "default") -> Path:
        """Write a kubeconfig that authenticates with a bearer token (e.g. a ServiceAccount's)."""
        return write_token_kubeconfig(Path(path), self.server, self.ca_file, token, namespace)


# --------------------------------------------------------------------------- waiting


def wait_for(predicate: Callable[[], T | None], timeout: float = 120.0, interval: float = 0.25,
             message: str = "condition") -> T:
    """Poll predicate until it returns a truthy value; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {message}")
        time.sleep(interval)


def _exists(read: Callable[[], Any]) -> bool:
    try:
        read()
    except ApiException as err:
        if err.status == 404:
            return False
        raise
    return True


def wait_deleted(read: Callable[[], Any], timeout: float = 120.0, message: str = "deletion") -> None:
    wait_for(lambda: not _exists(read), timeout=timeout, message=message)


# --------------------------------------------------------------------------- namespaces


def http_get(port: int, path: str, timeout: float = 30.0) -> tuple[int, str]:
    """GET http://127.0.0.1:<port><path> → (status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError as err:
        return 0, str(err)


def unique_name(prefix: str = "e2e") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_namespace(api: client.ApiClient, name: str | None = None, labels: Mapping[str, str] | None = None,
                     wait_for_default_sa: bool = True, timeout: float = 120.0) -> str:
    """Create a namespace; by default wait for its `default` ServiceAccount (pods need it)."""
    core = client.CoreV1Api(api)
    name = name or unique_name()
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=dict(labels or {}))))
    if wait_for_default_sa:
        wait_for(lambda: _exists(lambda: core.read_namespaced_service_account("default", name)),
                 timeout=timeout, message=f"ServiceAccount {name}/default")
    return name


def delete_namespace(api: client.ApiClient, name: str, wait: bool = False, timeout: float = 120.0) -> None:
    """Force-delete the namespace's pods (no kubelet finishes them), then the namespace. ``wait``: until the
    namespace is gone, force-deleting again the pods its controllers made in between (a ReplicaSet replaces
    the deleted pods until the namespace controller deletes it; a scheduler started later would bind them)."""
    core = client.CoreV1Api(api)

    def purge(then: Callable[[], object]) -> bool:
        """Force-delete the pods, then ``then()``; True when the namespace is gone (a 404)."""
        try:
            core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
            then()
        except ApiException as err:
            if err.status != 404:
                raise
            return True
        return False

    gone = purge(lambda: core.delete_namespace(name))
    if wait and not gone:
        wait_for(lambda: purge(lambda: core.read_namespace(name)), timeout=timeout, interval=1.0,
                 message=f"namespace {name} to be deleted")  # fmt: skip


# --------------------------------------------------------------------------- nodes

TaintSpec: TypeAlias = "client.V1Taint | Mapping[str, str] | tuple[str, ...]"


def _taint(spec: TaintSpec) -> client.V1Taint:
    """V1Taint from a V1Taint, a dict (key, value, effect) or a tuple (key, value, effect)."""
    if isinstance(spec, client.V1Taint):
        return spec
    if isinstance(spec, tuple):
        if not 1 <= len(spec) <= 3:
            raise ValueError(f"taint tuple must be (key[, value[, effect]]), got {spec!r}")
        value = spec[1] if len(spec) > 1 else None
        effect = spec[2] if len(spec) > 2 else "NoSchedule"
        return client.V1Taint(key=spec[0], value=value or None, effect=effect)
    return client.V1Taint(key=spec["key"], value=spec.get("value"), effect=spec.get("effect", "NoSchedule"))


def node_labels(name: str, zone: str | None = None, region: str | None = None, legacy: bool = False,
                modern: bool = True, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Labels of a node: hostname, zone/region (topology.kubernetes.io and/or failure-domain.beta)."""
    labels = {HOSTNAME_LABEL: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    if zone is not None:
        if modern:
            labels[ZONE_LABEL] = zone
        if legacy:
            labels[LEGACY_ZONE_LABEL] = zone
    if region is not None:
        if modern:
            labels[REGION_LABEL] = region
        if legacy:
            labels[LEGACY_REGION_LABEL] = region
    labels.update(extra or {})
    return labels


def create_node(api: client.ApiClient, name: str | None = None, *, zone: str | None = None,
                region: str | None = None, legacy_labels: bool = False, modern_labels: bool = True,
                labels: Mapping[str, str] | None = None, taints: Iterable[TaintSpec] = (),
                unschedulable: bool = False, ready: bool = True, cpu: str = "4", memory: str = "16Gi",
                pods: str = "110") -> client.V1Node:
    """Create a Node (no kubelet behind it) and set its status: Ready condition and capacity.

    legacy_labels adds failure-domain.beta.kubernetes.io/{zone,region}; modern_labels=False
    leaves out topology.kubernetes.io/{zone,region} (to test legacy-only clusters).
    """
    core = client.CoreV1Api(api)
    name = name or unique_name("node")
    body = client.V1Node(
        metadata=client.V1ObjectMeta(
            name=name, labels=node_labels(name, zone, region, legacy_labels, modern_labels, labels)),
        spec=client.V1NodeSpec(taints=[_taint(t) for t in taints] or None, unschedulable=unschedulable or None),
    )
    core.create_node(body)
    return set_node_ready(api, name, ready, capacity={"cpu": cpu, "memory": memory, "pods": pods})


def set_node_ready(api: client.ApiClient, name: str, ready: bool = True,
                   capacity: Mapping[str, str] | None = None) -> client.V1Node:
    """Patch the Node's Ready condition (and optionally capacity = allocatable)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    status: dict[str, Any] = {"conditions": [{
        "type": "Ready", "status": "True" if ready else "False", "reason": "E2EFake",
        "message": "set by tests/e2e/kube_helpers.py", "lastHeartbeatTime": now, "lastTransitionTime": now,
    }]}
    if capacity:
        status["capacity"] = dict(capacity)
        status["allocatable"] = dict(capacity)
    return client.CoreV1Api(api).patch_node_status(name, {"status": status})


def delete_node(api: client.ApiClient, name: str) -> None:
    try:
        client.CoreV1Api(api).delete_node(name)
    except ApiException as err:
        if err.status != 404:
            raise


# --------------------------------------------------------------------------- pods


def pod_spec(containers: int = 1, image: str = DEFAULT_IMAGE, node_name: str | None = None,
             tolerations: Sequence[client.V1Toleration] | None = None,
             node_selector: Mapping[str, str] | None = None,
             topology_spread: Sequence[client.V1TopologySpreadConstraint] | None = None,
             affinity: client.V1Affinity | None = None) -> client.V1PodSpec:
    return client.V1PodSpec(
        containers=[client.V1Container(name=f"c{i}", image=image) for i in range(containers)],
        node_name=node_name, tolerations=list(tolerations) if tolerations else None,
        node_selector=dict(node_selector) if node_selector else None,
        topology_spread_constraints=list(topology_spread) if topology_spread else None,
        affinity=affinity, termination_grace_period_seconds=0,
    )


def owner_reference(obj: Any, controller: bool = True, block_owner_deletion: bool = False) -> client.V1OwnerReference:
    """OwnerReference pointing at a typed client object (needs api_version/kind/metadata.uid)."""
    return client.V1OwnerReference(api_version=obj.api_version, kind=obj.kind, name=obj.metadata.name,
                                   uid=obj.metadata.uid, controller=controller,
                                   block_owner_deletion=block_owner_deletion)


def create_pod(api: client.ApiClient, namespace: str, name: str | None = None, *, node_name: str | None = None,
               labels: Mapping[str, str] | None = None, owner: client.V1OwnerReference | None = None,
               phase: str | None = None, spec: client.V1PodSpec | None = None) -> client.V1Pod:
    """Create a pod, bound to node_name via spec.nodeName when given; optionally patch its phase."""
    core = client.CoreV1Api(api)
    spec = spec or pod_spec()
    if node_name is not None:
        spec.node_name = node_name
    body = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name or unique_name("pod"), labels=dict(labels or {}),
                                     owner_references=[owner] if owner else None),
        spec=spec,
    )
    pod = core.create_namespaced_pod(namespace, body)
    if phase is not None:
        pod = set_pod_phase(api, namespace, pod.metadata.name, phase)
    return pod


def bind_pod(api: client.ApiClient, namespace: str, name: str, node_name: str) -> None:
    """Bind a pending pod to a node through pods/binding, as the scheduler does."""
    body = client.V1Binding(metadata=client.V1ObjectMeta(name=name),
                            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node_name))
    # The generated client cannot deserialize the (Status) response: skip deserialisation.
    client.CoreV1Api(api).create_namespaced_pod_binding(name, namespace, body, _preload_content=False)


def set_pod_phase(api: client.ApiClient, namespace: str, name: str, phase: str = "Running",
                  ready: bool | None = None) -> client.V1Pod:
    """Patch status.phase (and the Ready condition; default: ready iff Running)."""
    ready = (phase == "Running") if ready is None else ready
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": t, "status": "True" if ready else "False", "lastTransitionTime": now}
                  for t in ("Ready", "ContainersReady")]
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": now})
    status: dict[str, Any] = {"phase": phase, "conditions": conditions}
    if phase == "Running":
        status["startTime"] = now
    return client.CoreV1Api(api).patch_namespaced_pod_status(name, namespace, {"status": status})


def delete_pod(api: client.ApiClient, namespace: str, name: str) -> None:
    """Force-delete (grace 0): a bound pod would otherwise wait for a kubelet forever."""
    try:
        client.CoreV1Api(api).delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    except ApiException as err:
        if err.status != 404:
            raise


Selector: TypeAlias = Mapping[str, str] | str


def list_pods(api: client.ApiClient, namespace: str, selector: Selector | None = None) -> list[client.V1Pod]:
    label_selector = selector if isinstance(selector, str) or selector is None else _selector(selector)
    pods: list[client.V1Pod] = client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=label_selector or "").items
    return pods


def wait_for_pods(api: client.ApiClient, namespace: str, selector: Selector, count: int,
                  timeout: float = 180.0) -> list[client.V1Pod]:
    """Wait until at least `count` non-terminating pods match (e.g. created by a workload controller)."""
    def enough() -> list[client.V1Pod] | None:
        pods = [p for p in list_pods(api, namespace, selector) if p.metadata.deletion_timestamp is None]
        return pods if len(pods) >= count else None
    return wait_for(enough, timeout=timeout, message=f"{count} pods {selector} in {namespace}")


def schedule_pending_pods(api: client.ApiClient, namespace: str, node_names: Sequence[str],
                          selector: Selector | None = None, phase: str | None = "Running") -> dict[str, str]:
    """Fake scheduler: bind the unbound pods round-robin to node_names; returns {pod: node}."""
    if not node_names:
        raise ValueError("schedule_pending_pods needs at least one node")
    unbound = sorted((p for p in list_pods(api, namespace, selector)
                      if not p.spec.node_name and p.metadata.deletion_timestamp is None),
                     key=lambda p: p.metadata.name)
    placement = dict(zip((p.metadata.name for p in unbound), itertools.cycle(node_names)))
    for pod_name, node in placement.items():
        bind_pod(api, namespace, pod_name, node)
        if phase is not None:
            set_pod_phase(api, namespace, pod_name, phase)
    return placement


# --------------------------------------------------------------------------- workloads


def _selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _template(labels: Mapping[str, str], spec: client.V1PodSpec | None) -> client.V1PodTemplateSpec:
    return client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=dict(labels)), spec=spec or pod_spec())


def _meta(name: str, labels: Mapping[str, str]) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, labels=dict(labels))


def _app_labels(name: str, labels: Mapping[str, str] | None) -> dict[str, str]:
    return dict(labels) if labels else {"app": name}


def create_deployment(api: client.ApiClient, namespace: str, name: str, replicas: int = 1,
                      labels: Mapping[str, str] | None = None,
                      spec: client.V1PodSpec | None = None) -> client.V1Deployment:
    labels = _app_labels(name, labels)
    body = client.V1Deployment(metadata=_meta(name, labels), spec=client.V1DeploymentSpec(
        replicas=replicas, selector=client.V1LabelSelector(match_labels=labels), template=_template(labels, spec)))
    return client.AppsV1Api(api).create_namespaced_deployment(namespace, body)


def create_replicaset(api: client.ApiClient, namespace: str, name: str, replicas: int = 1,
                      labels: Mapping[str, str] | None = None,
                      spec: client.V1PodSpec | None = None) -> client.V1ReplicaSet:
    labels = _app_labels(name, labels)
    body = client.V1ReplicaSet(metadata=_meta(name, labels), spec=client.V1ReplicaSetSpec(
        replicas=replicas, selector=client.V1LabelSelector(match_labels=labels), template=_template(labels, spec)))
    return client.AppsV1Api(api).create_namespaced_replica_set(namespace, body)


def create_statefulset(api: client.ApiClient, namespace: str, name: str, replicas: int = 1,
                       labels: Mapping[str, str] | None = None, spec: client.V1PodSpec | None = None,
                       service_name: str | None = None) -> client.V1StatefulSet:
    """StatefulSet (Parallel pod management, so all pods appear without waiting for readiness)."""
    labels = _app_labels(name, labels)
    body = client.V1StatefulSet(metadata=_meta(name, labels), spec=client.V1StatefulSetSpec(
        replicas=replicas, service_name=service_name or name, pod_management_policy="Parallel",
        selector=client.V1LabelSelector(match_labels=labels), template=_template(labels, spec)))
    return client.AppsV1Api(api).create_namespaced_stateful_set(namespace, body)


def create_replication_controller(api: client.ApiClient, namespace: str, name: str, replicas: int = 1,
                                  labels: Mapping[str, str] | None = None,
                                  spec: client.V1PodSpec | None = None) -> client.V1ReplicationController:
    labels = _app_labels(name, labels)
    body = client.V1ReplicationController(metadata=_meta(name, labels), spec=client.V1ReplicationControllerSpec(
        replicas=replicas, selector=dict(labels), template=_template(labels, spec)))
    return client.CoreV1Api(api).create_namespaced_replication_controller(namespace, body)


def create_service(api: client.ApiClient, namespace: str, name: str, selector: Mapping[str, str],
                   ports: Sequence[int] = (80,), headless: bool = False) -> client.V1Service:
    body = client.V1Service(metadata=client.V1ObjectMeta(name=name), spec=client.V1ServiceSpec(
        selector=dict(selector), cluster_ip="None" if headless else None,
        ports=[client.V1ServicePort(name=f"p{p}", port=p, target_port=p) for p in ports]))
    return client.CoreV1Api(api).create_namespaced_service(namespace, body)


# --------------------------------------------------------------------------- RBAC and tokens


def create_service_account(api: client.ApiClient, namespace: str, name: str) -> None:
    """Create the ServiceAccount unless it exists."""
    try:
        client.CoreV1Api(api).create_namespaced_service_account(
            namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name)))
    except ApiException as err:
        if err.status != 409:
            raise


def service_account_token(api: client.ApiClient, namespace: str, name: str, *,
                          audiences: Sequence[str] | None = None, expiration_seconds: int = 3600,
                          create: bool = True) -> str:
    """A bound token for the ServiceAccount via the TokenRequest API (creates the SA if asked)."""
    if create:
        create_service_account(api, namespace, name)
    body = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(
        audiences=list(audiences) if audiences else [], expiration_seconds=expiration_seconds))
    result = client.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, body)
    return str(result.status.token)


def grant_role(api: client.ApiClient, namespace: str, service_account: str, rules: Sequence[client.V1PolicyRule],
               name: str | None = None, sa_namespace: str | None = None) -> str:
    """Create a Role with `rules` and bind it to the ServiceAccount; returns the Role name."""
    rbac = client.RbacAuthorizationV1Api(api)
    name = name or f"{service_account}-role"
    rbac.create_namespaced_role(namespace, client.V1Role(metadata=client.V1ObjectMeta(name=name), rules=list(rules)))
    rbac.create_namespaced_role_binding(namespace, client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name=name),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=name),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name=service_account,
                                       namespace=sa_namespace or namespace)]))
    return name


def grant_cluster_role(api: client.ApiClient, service_account: str, sa_namespace: str,
                       rules: Sequence[client.V1PolicyRule], name: str | None = None) -> str:
    """Create a ClusterRole with `rules` bound cluster-wide to the ServiceAccount."""
    rbac = client.RbacAuthorizationV1Api(api)
    name = name or f"{sa_namespace}-{service_account}"
    rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(name=name), rules=list(rules)))
    rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name=name),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=name),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name=service_account, namespace=sa_namespace)]))
    return name


def token_api_client(server: str, ca_file: Path | str, token: str) -> client.ApiClient:
    """An ApiClient that authenticates with a bearer token (e.g. from service_account_token)."""
    config = client.Configuration()
    config.host = server
    config.ssl_ca_cert = str(ca_file)
    config.api_key = {"authorization": token}
    config.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(config)


def write_token_kubeconfig(path: Path, server: str, ca_file: Path, token: str, namespace: str = "default") -> Path:
    ca_data = base64.b64encode(Path(ca_file).read_bytes()).decode()
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: e2e\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca_data}\n"
        f"users:\n- name: token\n  user:\n    token: {token}\n"
        f"contexts:\n- name: e2e\n  context:\n    cluster: e2e\n    user: token\n    namespace: {namespace}\n"
        "current-context: e2e\n"
    )
    path.chmod(0o600)
    return path
