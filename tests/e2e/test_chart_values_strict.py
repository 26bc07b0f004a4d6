"""The chart's newer values on a real API server: every object rendered with them passes server-side strict
validation (`kubectl apply --dry-run=server --validate=strict`), the ServiceMonitor and PrometheusRule against the
REAL prometheus-operator CRDs, installed from the copies in data/prometheus-operator/ (checked here against the Go
module they come from) into a control plane of this module's own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_rbac import CHART
from hack import devcluster, prometheus_operator_crds
from kube_helpers import ControlPlane, KubectlError, unique_name

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = Path(__file__).resolve().parent / "data" / "prometheus-operator"
MONITORING_API = "monitoring.coreos.com/v1"
DIGEST = "sha256:" + "0123456789abcdef" * 4


@dataclass(frozen=True)
class MonitoringCluster:
    cp: ControlPlane
    namespace: str  # the release's
    monitoring_namespace: str  # where the ServiceMonitor/PrometheusRule may go


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MonitoringCluster]:
    """A control plane of its own (not the session's) with the ServiceMonitor and PrometheusRule CRDs installed
    (server-side apply) and Established, and two namespaces. Its own, because the CRDs must neither leak into the
    other suites (their NOTES/gating tests expect no monitoring.coreos.com) nor be installed and deleted on the
    shared API server: done there, that API server then took over 60 s to stop on SIGTERM, past the wait of
    test_operator's restart test (seen twice; that test alone passed)."""
    state_dir = tmp_path_factory.mktemp("monitoring-controlplane")
    env_bin = os.environ.get("SPREADWATCH_CONTROLPLANE_BIN")
    bin_dir = Path(env_bin) if env_bin else state_dir / "bin"
    try:
        if not env_bin:
            devcluster.ensure_tools(bin_dir)
        started = devcluster.up(state_dir, bin_dir=bin_dir, ports="auto", die_with_parent=True)
    except devcluster.ClusterError as err:
        devcluster.down(state_dir, keep_logs=True)
        pytest.fail(f"control plane did not start: {err}\nlogs: {state_dir / 'logs'}", pytrace=False)
    home = state_dir / "home"
    env = dict(os.environ, KUBECONFIG=str(started.kubeconfig), HOME=str(home),
               HELM_CONFIG_HOME=str(home / "helm-config"), HELM_CACHE_HOME=str(home / "helm-cache"),
               HELM_DATA_HOME=str(home / "helm-data"))  # fmt: skip
    cp = ControlPlane(dir=state_dir, kubeconfig=str(started.kubeconfig), server=started.server, bin_dir=bin_dir,
                      log_dir=started.log_dir, ca_file=started.pki_dir / "ca.crt", env=env)  # fmt: skip
    try:
        names = []
        for path in sorted(CRD_DIR.glob("*.yaml")):
            names.append(f"crd/{yaml.safe_load(path.read_text())['metadata']['name']}")
            cp.kubectl("apply", "--server-side", "-f", str(path))
        cp.kubectl("wait", "--for=condition=Established", *names, "--timeout=60s")
        namespaces = [unique_name("sw"), unique_name("monitoring")]
        for ns in namespaces:
            cp.kubectl("create", "namespace", ns)
        yield MonitoringCluster(cp, *namespaces)
    finally:
        devcluster.down(state_dir)


def render(cp: ControlPlane, namespace: str, tmp: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    """`helm template` as for a cluster that serves monitoring.coreos.com/v1 (objects, empty documents dropped)."""
    path = tmp / f"values-{unique_name('v')}.yaml"
    path.write_text(yaml.safe_dump(values))
    out = cp.helm("template", unique_name("sw"), str(CHART), "--namespace", namespace, "--values", str(path),
                  "--api-versions", MONITORING_API).stdout  # fmt: skip
    return [doc for doc in yaml.safe_load_all(out) if doc]


def dry_run(cp: ControlPlane, objects: list[dict[str, Any]], check: bool = True) -> Any:
    return cp.kubectl("apply", "--dry-run=server", "--validate=strict", "--server-side", "--force-conflicts",
                      "-f", "-", input=yaml.safe_dump_all(objects), check=check)  # fmt: skip


def all_values(monitoring_ns: str) -> dict[str, Any]:
    selector = {"app.kubernetes.io/name": "spreadwatch"}
    return {
        "global": {"imageRegistry": "registry.example.com"},
        "image": {"registry": "other.example.com", "repository": "tools/spreadwatch", "digest": DIGEST},
        "podSecurityContext": {"fsGroupChangePolicy": "OnRootMismatch", "supplementalGroups": [4000],
                               "sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}]},
        "containerSecurityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                                     "readOnlyRootFilesystem": False},
        "commonLabels": {"team": "platform", "example.com/cost-center": "c42"},
        "revisionHistoryLimit": 5,
        "automountServiceAccountToken": False,
        "tmpDir": {"enabled": True, "sizeLimit": "32Mi", "medium": "Memory"},
        "extraVolumes": [
            {"name": "ca", "configMap": {"name": "corp-ca"}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token",
                                                                                  "expirationSeconds": 3600}}]}},
        ],
        "extraVolumeMounts": [
            {"name": "ca", "mountPath": "/etc/corp-ca", "readOnly": True},
            {"name": "token", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True},
        ],
        "replicaCount": 3,
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": selector}, "matchLabelKeys": ["pod-template-hash"], "minDomains": 2},
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "ops", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                "labelSelector": {"matchLabels": selector}}}]}},
        "podDisruptionBudget": {"enabled": True, "maxUnavailable": "34%", "unhealthyPodEvictionPolicy": "AlwaysAllow"},
        "networkPolicy": {
            "enabled": True,
            "apiServer": {"ports": [443, 6443], "cidrs": ["10.0.0.0/24", "fd00::/64"]},
            "metrics": {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": monitoring_ns}},
                                  "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]},
            "extraIngress": [{"from": [{"ipBlock": {"cidr": "192.168.0.0/16"}}], "ports": [{"port": 9999}]}],
            "extraEgress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}],
        },
        "serviceMonitor": {
            "enabled": True, "namespace": monitoring_ns, "labels": {"release": "kps"},
            "additionalLabels": {"tier": "ops"}, "interval": "15s", "scrapeTimeout": "5s",
            "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node_name",
                             "action": "replace"},
                            {"sourceLabels": ["__meta_kubernetes_pod_name"], "separator": ";", "regex": "(.*)",
                             "replacement": "$1", "targetLabel": "pod", "action": "Replace"},
                            {"sourceLabels": ["__address__"], "modulus": 4, "targetLabel": "__tmp_hash",
                             "action": "hashmod"}],
            "metricRelabelings": [{"sourceLabels": ["__name__"], "regex": "spreadwatch_node_.*", "action": "drop"},
                                  {"regex": "pod_template_hash", "action": "labeldrop"}],
        },
        "prometheusRule": {"enabled": True, "namespace": monitoring_ns, "additionalLabels": {"release": "kps"},
                           "disabled": {"SpreadwatchSkewHigh": True}},
    }  # fmt: skip


def test_crd_copies_match_the_module_they_come_from() -> None:
    tool = prometheus_operator_crds
    record = tool.load_record()
    assert record["module"] == "github.com/prometheus-operator/prometheus-operator"
    assert sorted(record["files"]) == sorted(tool.FILES) == sorted(p.name for p in CRD_DIR.glob("*.yaml"))
    problems = tool.check()  # go mod download -json <module>@<version>, then byte-for-byte
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("variant", ["every new value", "defaults with monitoring", "tmp off, minAvailable"])
def test_new_values_pass_server_side_strict_validation(cluster: MonitoringCluster, tmp_path: Path,
                                                       variant: str) -> None:  # fmt: skip
    cp, namespace, monitoring_namespace = cluster.cp, cluster.namespace, cluster.monitoring_namespace
    values = {
        "every new value": all_values(monitoring_namespace),
        "defaults with monitoring": {"serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True}},
        "tmp off, minAvailable": {"tmpDir": {"enabled": False}, "podDisruptionBudget": {"enabled": True,
                                                                                        "minAvailable": 1},
                                  "networkPolicy": {"enabled": True}, "serviceMonitor": {"enabled": True,
                                  "metricRelabelings": [{"action": "keep", "sourceLabels": ["__name__"],
                                                         "regex": "spreadwatch_.*"}]}},
    }[variant]  # fmt: skip
    objects = render(cp, namespace, tmp_path, values)
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "ServiceMonitor"} <= kinds
    out = dry_run(cp, objects).stdout
    assert out.count("(server dry run)") == len(objects), out
    if variant == "every new value":
        assert {"PodDisruptionBudget", "NetworkPolicy", "PrometheusRule"} <= kinds
        placed = {o["kind"]: o["metadata"].get("namespace") for o in objects}
        assert placed["ServiceMonitor"] == placed["PrometheusRule"] == monitoring_namespace
        assert placed["Deployment"] == placed["PodDisruptionBudget"] == placed["NetworkPolicy"] == namespace


def _edit_monitor(objects: list[dict[str, Any]], change: Any) -> list[dict[str, Any]]:
    [monitor] = [o for o in objects if o["kind"] == "ServiceMonitor"]
    change(monitor)
    return [monitor]


BROKEN_MONITORS = [
    ("unknown relabel field", lambda m: m["spec"]["endpoints"][0].update(
        relabelings=[{"source_labels": ["a"], "action": "keep"}]),
     ".spec.endpoints[0].relabelings[0].source_labels: field not declared in schema"),
    ("bad relabel action", lambda m: m["spec"]["endpoints"][0].update(
        relabelings=[{"sourceLabels": ["a"], "action": "rename"}]),
     'spec.endpoints[0].relabelings[0].action: Unsupported value: "rename"'),
    ("bad interval", lambda m: m["spec"]["endpoints"][0].update(interval="soon"),
     'spec.endpoints[0].interval: Invalid value: "soon"'),
    ("unknown endpoint field", lambda m: m["spec"]["endpoints"][0].update(honourLabels=True),
     ".spec.endpoints[0].honourLabels: field not declared in schema"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), [(c, m) for _, c, m in BROKEN_MONITORS],
                         ids=[n for n, _, _ in BROKEN_MONITORS])  # fmt: skip
def test_the_real_crds_reject_what_the_chart_must_not_render(cluster: MonitoringCluster, tmp_path: Path, change: Any,
                                                             message: str) -> None:  # fmt: skip
    """The validation above is real: the same ServiceMonitor, broken the way a wrong template would break it,
    is refused by the API server through the prometheus-operator CRD's schema."""
    objects = render(cluster.cp, cluster.namespace, tmp_path, {"serviceMonitor": {"enabled": True}})
    dry_run(cluster.cp, _edit_monitor(objects, lambda m: None))  # as rendered: accepted
    with pytest.raises(KubectlError) as err:
        dry_run(cluster.cp, _edit_monitor(objects, change))
    assert message in str(err.value), err.value
