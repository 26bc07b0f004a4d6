"""The chart values users expect from the kube-state-metrics, cert-manager and kube-prometheus-stack charts, rendered
by the real helm: image registry/digest, security-context overrides, /tmp emptyDir, extra volumes, commonLabels,
revisionHistoryLimit, automountServiceAccountToken, topologySpreadConstraints, PodDisruptionBudget,
NetworkPolicy, ServiceMonitor namespace/labels/relabelings and PrometheusRule namespace/disabled alerts; and the
schema accepting each of them and rejecting bad types and unknown keys. Server-side validation of the same
objects against a real API server and the real prometheus-operator CRDs: tests/e2e/test_chart_values_strict.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_helpers import CHART, NAMESPACE, RELEASE, Helm, by_kind, one

MONITORING_API = "monitoring.coreos.com/v1"
APP_VERSION = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
DIGEST = "sha256:" + "0123456789abcdef" * 4
SELECTOR = {"app.kubernetes.io/name": "spreadwatch", "app.kubernetes.io/instance": RELEASE}
RULES_FILE = yaml.safe_load((CHART / "files" / "spreadwatch-rules.yaml").read_text())
ALERTS = {g["name"]: [r["alert"] for r in g["rules"]] for g in RULES_FILE["groups"]}
SCHEMA_ERROR = "values don't meet the specifications of the schema"

#: Every new value set at once (tests/e2e/test_chart_values_strict.py validates a set like it server-side).
ALL_NEW_VALUES: dict[str, Any] = {
    "global": {"imageRegistry": "registry.example.com"},
    "image": {"registry": "ignored.example.com", "repository": "tools/spreadwatch", "digest": DIGEST},
    "podSecurityContext": {"fsGroupChangePolicy": "OnRootMismatch", "supplementalGroups": [4000]},
    "containerSecurityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
    "commonLabels": {"team": "platform", "cost-center": "c42"},
    "revisionHistoryLimit": 5,
    "automountServiceAccountToken": True,
    "tmpDir": {"enabled": True, "sizeLimit": "32Mi", "medium": "Memory"},
    "extraVolumes": [{"name": "ca", "configMap": {"name": "corp-ca"}}],
    "extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/corp-ca", "readOnly": True}],
    "replicaCount": 2,
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": SELECTOR}}}]}},
    "podDisruptionBudget": {"enabled": True, "minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
    "networkPolicy": {
        "enabled": True,
        "apiServer": {"ports": [443, 6443], "cidrs": ["10.0.0.0/24"]},
        "metrics": {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]},
        "extraEgress": [{"ports": [{"port": 53, "protocol": "UDP"}]}],
    },
    "serviceMonitor": {
        "enabled": True, "namespace": "monitoring", "labels": {"release": "kps"},
        "relabelings": [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node_name",
                         "action": "replace"}],
        "metricRelabelings": [{"sourceLabels": ["__name__"], "regex": "spreadwatch_node_.*", "action": "drop"}],
    },
    "prometheusRule": {"enabled": True, "namespace": "monitoring", "disabled": {"SpreadwatchSkewHigh": True}},
}  # fmt: skip


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = one(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [c] = pod_spec(objects)["containers"]
    return c


def template_error(helm: Helm, tmp_path: Path, values: dict[str, Any]) -> str:
    proc = helm.run(*helm.template_args(values, (), tmp_path, NAMESPACE, RELEASE), check=False)
    assert proc.returncode != 0, f"accepted {values}"
    return proc.stderr


# --------------------------------------------------------------------------- defaults


def test_defaults_add_nothing_new_but_the_tmp_emptydir(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path)
    assert not by_kind(objects, "PodDisruptionBudget")
    assert not by_kind(objects, "NetworkPolicy")
    deployment = one(objects, "Deployment")
    assert deployment["spec"]["revisionHistoryLimit"] == 3
    spec = pod_spec(objects)
    assert spec["automountServiceAccountToken"] is True
    assert "topologySpreadConstraints" not in spec
    assert spec["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}}]
    assert container(objects)["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert container(objects)["image"] == f"spreadwatch:{APP_VERSION}"


# --------------------------------------------------------------------------- image


IMAGES = [
    ({}, f"spreadwatch:{APP_VERSION}"),
    ({"image": {"tag": "dev"}}, "spreadwatch:dev"),
    ({"image": {"registry": "registry.example.com:5000"}}, f"registry.example.com:5000/spreadwatch:{APP_VERSION}"),
    ({"image": {"registry": "registry.example.com/team", "repository": "sw"}},
     f"registry.example.com/team/sw:{APP_VERSION}"),
    ({"global": {"imageRegistry": "mirror.example.com"}, "image": {"registry": "registry.example.com"}},
     f"mirror.example.com/spreadwatch:{APP_VERSION}"),
    ({"image": {"digest": DIGEST}}, f"spreadwatch@{DIGEST}"),
    ({"image": {"registry": "r.example.com", "tag": "ignored", "digest": DIGEST}},
     f"r.example.com/spreadwatch@{DIGEST}"),
]  # fmt: skip


@pytest.mark.parametrize(("values", "image"), IMAGES, ids=[i for _, i in IMAGES])
def test_image_reference(helm: Helm, tmp_path: Path, values: dict[str, Any], image: str) -> None:
    assert container(helm.template(tmp_path, values))["image"] == image


# --------------------------------------------------------------------------- security contexts


def test_security_context_overrides_replace_only_their_keys(helm: Helm, tmp_path: Path) -> None:
    values = {
        "podSecurityContext": {"fsGroupChangePolicy": "OnRootMismatch", "fsGroup": 2000},
        "containerSecurityContext": {"readOnlyRootFilesystem": False, "runAsUser": 1001,
                                     "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
    }  # fmt: skip
    objects = helm.template(tmp_path, values)
    assert pod_spec(objects)["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "fsGroup": 2000,
        "fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": {"type": "RuntimeDefault"},
    }  # fmt: skip
    assert container(objects)["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 1001, "runAsGroup": 65532,
        "readOnlyRootFilesystem": False,  # false replaces the default true (no "empty value" merge)
        "allowPrivilegeEscalation": False, "privileged": False,
        "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }  # fmt: skip


def test_run_as_values_still_feed_both_security_contexts(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"runAsUser": 1000, "runAsGroup": 3000})
    pod, ctr = pod_spec(objects)["securityContext"], container(objects)["securityContext"]
    assert (pod["runAsUser"], pod["runAsGroup"], pod["fsGroup"]) == (1000, 3000, 3000)
    assert (ctr["runAsUser"], ctr["runAsGroup"]) == (1000, 3000)


# --------------------------------------------------------------------------- volumes


VOLUMES = [
    ({"tmpDir": {"enabled": False}}, None, None),
    ({"tmpDir": {"sizeLimit": "64Mi", "medium": "Memory"}},
     [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi", "medium": "Memory"}}], [{"name": "tmp", "mountPath": "/tmp"}]),
    ({"extraVolumes": [{"name": "ca", "configMap": {"name": "ca"}}],
      "extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/ca", "readOnly": True}]},
     [{"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}}, {"name": "ca", "configMap": {"name": "ca"}}],
     [{"name": "tmp", "mountPath": "/tmp"}, {"name": "ca", "mountPath": "/etc/ca", "readOnly": True}]),
    ({"tmpDir": {"enabled": False}, "extraVolumes": [{"name": "scratch", "emptyDir": {}}],
      "extraVolumeMounts": [{"name": "scratch", "mountPath": "/tmp", "subPath": "sw"}]},
     [{"name": "scratch", "emptyDir": {}}], [{"name": "scratch", "mountPath": "/tmp", "subPath": "sw"}]),
]  # fmt: skip


@pytest.mark.parametrize(("values", "volumes", "mounts"), VOLUMES,
                         ids=["tmp off", "tmp in memory", "extra after tmp", "extra only"])  # fmt: skip
def test_tmp_dir_and_extra_volumes(helm: Helm, tmp_path: Path, values: dict[str, Any],
                                   volumes: list[Any] | None, mounts: list[Any] | None) -> None:  # fmt: skip
    objects = helm.template(tmp_path, values)
    assert pod_spec(objects).get("volumes") == volumes
    assert container(objects).get("volumeMounts") == mounts


# --------------------------------------------------------------------------- pod placement and metadata


def test_common_labels_on_every_object(helm: Helm, tmp_path: Path) -> None:
    values = {**ALL_NEW_VALUES, "commonLabels": {"team": "platform"}}
    objects = helm.template(tmp_path, values, api_versions=[MONITORING_API])
    kinds = {o["kind"] for o in objects}
    assert kinds >= {"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                     "Service", "ConfigMap", "ServiceMonitor", "PrometheusRule", "PodDisruptionBudget",
                     "NetworkPolicy"}  # fmt: skip
    for obj in objects:
        assert obj["metadata"]["labels"]["team"] == "platform", obj["kind"]
        assert obj["metadata"]["labels"]["app.kubernetes.io/name"] == "spreadwatch", obj["kind"]
    template = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert template["team"] == "platform"
    assert one(objects, "Deployment")["spec"]["selector"]["matchLabels"] == SELECTOR  # never in the selector


def test_revision_history_and_token_mount(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"revisionHistoryLimit": 0, "automountServiceAccountToken": False})
    assert one(objects, "Deployment")["spec"]["revisionHistoryLimit"] == 0
    assert pod_spec(objects)["automountServiceAccountToken"] is False


def test_topology_spread_constraints_select_the_operator_pods_by_default(helm: Helm, tmp_path: Path) -> None:
    own = {"matchLabels": {"pool": "x"}}
    values = {"replicaCount": 2, "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": own, "matchLabelKeys": ["pod-template-hash"]},
    ]}  # fmt: skip
    objects = helm.template(tmp_path, values)
    first, second = pod_spec(objects)["topologySpreadConstraints"]
    assert first == {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                     "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": SELECTOR}}  # fmt: skip
    assert first["labelSelector"]["matchLabels"].items() <= (
        one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"].items())
    assert second["labelSelector"] == own and second["matchLabelKeys"] == ["pod-template-hash"]


# --------------------------------------------------------------------------- PodDisruptionBudget


PDBS = [
    ({"enabled": True}, {"maxUnavailable": 1}),
    ({"enabled": True, "minAvailable": 1}, {"minAvailable": 1}),
    ({"enabled": True, "maxUnavailable": "50%"}, {"maxUnavailable": "50%"}),
    ({"enabled": True, "minAvailable": 0, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
     {"minAvailable": 0, "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
]  # fmt: skip


@pytest.mark.parametrize(("pdb", "expected"), PDBS, ids=[json.dumps(p) for p, _ in PDBS])
def test_pod_disruption_budget(helm: Helm, tmp_path: Path, pdb: dict[str, Any], expected: dict[str, Any]) -> None:
    objects = helm.template(tmp_path, {"podDisruptionBudget": pdb, "replicaCount": 2})
    budget = one(objects, "PodDisruptionBudget")
    assert budget["apiVersion"] == "policy/v1"
    assert budget["metadata"]["namespace"] == NAMESPACE
    assert budget["spec"] == {"selector": {"matchLabels": SELECTOR}, **expected}
    assert SELECTOR.items() <= one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"].items()


# --------------------------------------------------------------------------- NetworkPolicy


def test_network_policy_defaults(helm: Helm, tmp_path: Path) -> None:
    policy = one(helm.template(tmp_path, {"networkPolicy": {"enabled": True}}), "NetworkPolicy")
    assert policy["apiVersion"] == "networking.k8s.io/v1"
    assert policy["spec"] == {
        "podSelector": {"matchLabels": SELECTOR},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"ports": [{"port": 8443, "protocol": "TCP"}]}],  # the metrics port, from anywhere
        "egress": [{"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}],
    }


def test_network_policy_peers_cidrs_and_extra_rules(helm: Helm, tmp_path: Path) -> None:
    peer = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    dns = {"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}
    values = {"metrics": {"port": 9100}, "networkPolicy": {
        "enabled": True, "apiServer": {"ports": [6443], "cidrs": ["10.0.0.10/32", "fd00::1/128"]},
        "metrics": {"from": [peer]}, "extraIngress": [{"from": [peer], "ports": [{"port": 9999}]}],
        "extraEgress": [dns]}}  # fmt: skip
    spec = one(helm.template(tmp_path, values), "NetworkPolicy")["spec"]
    assert spec["ingress"] == [{"ports": [{"port": 9100, "protocol": "TCP"}], "from": [peer]},
                               {"from": [peer], "ports": [{"port": 9999}]}]  # fmt: skip
    assert spec["egress"] == [
        {"ports": [{"port": 6443, "protocol": "TCP"}],
         "to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}, {"ipBlock": {"cidr": "fd00::1/128"}}]},
        dns,
    ]  # fmt: skip


# --------------------------------------------------------------------------- monitoring


def test_service_monitor_namespace_labels_and_relabelings(helm: Helm, tmp_path: Path) -> None:
    relabel = [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node_name", "action": "replace"}]
    drop = [{"sourceLabels": ["__name__"], "regex": "spreadwatch_node_.*", "action": "drop"}]
    values = {"serviceMonitor": {"enabled": True, "namespace": "monitoring", "labels": {"release": "kps"},
                                 "additionalLabels": {"tier": "ops"}, "relabelings": relabel,
                                 "metricRelabelings": drop}}  # fmt: skip
    monitor = one(helm.template(tmp_path, values, api_versions=[MONITORING_API]), "ServiceMonitor")
    assert monitor["metadata"]["namespace"] == "monitoring"
    assert monitor["metadata"]["labels"]["release"] == "kps" and monitor["metadata"]["labels"]["tier"] == "ops"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}  # still the release's Service
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["relabelings"] == relabel
    assert endpoint["metricRelabelings"] == drop


def test_service_monitor_without_relabelings_has_none(helm: Helm, tmp_path: Path) -> None:
    monitor = one(helm.template(tmp_path, {"serviceMonitor": {"enabled": True}}, api_versions=[MONITORING_API]),
                  "ServiceMonitor")  # fmt: skip
    assert monitor["metadata"]["namespace"] == NAMESPACE
    [endpoint] = monitor["spec"]["endpoints"]
    assert "relabelings" not in endpoint and "metricRelabelings" not in endpoint


def _rule_names(rule: dict[str, Any]) -> dict[str, list[str]]:
    return {g["name"]: [r["alert"] for r in g["rules"]] for g in rule["spec"]["groups"]}


def test_prometheus_rule_namespace_and_single_rules_off(helm: Helm, tmp_path: Path) -> None:
    [group, other] = list(ALERTS)
    off = ALERTS[group][0]
    values = {"prometheusRule": {"enabled": True, "namespace": "monitoring", "disabled": {off: True}}}
    rule = one(helm.template(tmp_path, values, api_versions=[MONITORING_API]), "PrometheusRule")
    assert rule["metadata"]["namespace"] == "monitoring"
    assert _rule_names(rule) == {group: ALERTS[group][1:], other: ALERTS[other]}
    # the rules left keep everything else of the file
    kept = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}
    for g in RULES_FILE["groups"]:
        for r in g["rules"]:
            assert r["alert"] == off or kept[r["alert"]] == r


def test_prometheus_rule_disabled_false_keeps_the_rule(helm: Helm, tmp_path: Path) -> None:
    values = {"prometheusRule": {"enabled": True, "disabled": dict.fromkeys(ALERTS[next(iter(ALERTS))], False)}}
    rule = one(helm.template(tmp_path, values, api_versions=[MONITORING_API]), "PrometheusRule")
    assert _rule_names(rule) == ALERTS


def test_prometheus_rule_groups_and_object_go_when_all_their_rules_are_off(helm: Helm, tmp_path: Path) -> None:
    [group, other] = list(ALERTS)
    values = {"prometheusRule": {"enabled": True, "disabled": dict.fromkeys(ALERTS[group], True)}}
    rule = one(helm.template(tmp_path, values, api_versions=[MONITORING_API]), "PrometheusRule")
    assert _rule_names(rule) == {other: ALERTS[other]}
    every = {a: True for alerts in ALERTS.values() for a in alerts}
    objects = helm.template(tmp_path, {"prometheusRule": {"enabled": True, "disabled": every}},
                            api_versions=[MONITORING_API])  # fmt: skip
    assert not by_kind(objects, "PrometheusRule")


def test_schema_lists_exactly_the_alerts_of_the_rules_file() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    disabled = schema["properties"]["prometheusRule"]["properties"]["disabled"]
    assert disabled["additionalProperties"] is False
    assert set(disabled["properties"]) == {a for alerts in ALERTS.values() for a in alerts}


# --------------------------------------------------------------------------- schema


def test_every_new_value_at_once_renders(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, ALL_NEW_VALUES, api_versions=[MONITORING_API])
    assert {"PodDisruptionBudget", "NetworkPolicy", "ServiceMonitor", "PrometheusRule"} <= {o["kind"] for o in objects}
    assert container(objects)["image"] == f"registry.example.com/tools/spreadwatch@{DIGEST}"


def test_helm_lint_strict_with_every_new_value(helm: Helm, tmp_path: Path) -> None:
    (tmp_path / "v.yaml").write_text(yaml.safe_dump(ALL_NEW_VALUES))
    out = helm.run("lint", "--strict", str(CHART), "--values", str(tmp_path / "v.yaml")).stdout
    assert "1 chart(s) linted, 0 chart(s) failed" in out


BAD_VALUES = [
    ({"global": {"imageRegistry": 5}}, "/global/imageRegistry", "want string"),
    ({"image": {"registry": "https://registry.example.com"}}, "/image/registry", "does not match pattern"),
    ({"image": {"digest": "sha256:abc"}}, "/image/digest", "does not match pattern"),
    ({"image": {"sha": "abc"}}, "/image", "'sha' not allowed"),
    ({"podSecurityContext": {"runAsUser": "root"}}, "/podSecurityContext/runAsUser", "want integer"),
    ({"podSecurityContext": {"fsGroupChangePolicy": "Sometimes"}}, "/podSecurityContext/fsGroupChangePolicy",
     "value must be one of"),
    ({"containerSecurityContext": {"readOnlyRootFilesystem": "yes"}},
     "/containerSecurityContext/readOnlyRootFilesystem", "want boolean"),
    ({"containerSecurityContext": {"capabilities": {"drop": "ALL"}}}, "/containerSecurityContext/capabilities/drop",
     "want array"),
    ({"containerSecurityContext": {"readonlyRootFilesystem": True}}, "/containerSecurityContext",
     "'readonlyRootFilesystem' not allowed"),
    ({"commonLabels": {"team": 1}}, "/commonLabels/team", "want string"),
    # helm's schema library names the wrong location for propertyNames errors; the key is in the message
    ({"commonLabels": {"app.kubernetes.io/name": "x"}}, "invalid propertyName 'app.kubernetes.io/name'",
     "'not' failed"),
    ({"revisionHistoryLimit": -1}, "/revisionHistoryLimit", "minimum"),
    ({"automountServiceAccountToken": "false"}, "/automountServiceAccountToken", "want boolean"),
    ({"tmpDir": {"medium": "Disk"}}, "/tmpDir/medium", "value must be one of"),
    ({"tmpDir": {"sizeLimit": 16}}, "/tmpDir/sizeLimit", "want string"),
    ({"extraVolumes": [{"emptyDir": {}}]}, "/extraVolumes/0", "missing property 'name'"),
    ({"extraVolumes": {"ca": {}}}, "/extraVolumes", "want array"),
    ({"extraVolumeMounts": [{"name": "x", "mountPath": "relative"}]}, "/extraVolumeMounts/0/mountPath",
     "does not match pattern"),
    ({"extraVolumeMounts": [{"name": "x", "path": "/x"}]}, "/extraVolumeMounts/0", "'path' not allowed"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone"}]}, "/topologySpreadConstraints/0",
     "missing property 'whenUnsatisfiable'"),
    ({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]},
     "/topologySpreadConstraints/0/maxSkew", "minimum"),
    ({"podDisruptionBudget": {"enabled": True, "minAvailable": 1, "maxUnavailable": 1}}, "/podDisruptionBudget",
     "'not' failed"),  # at most one of the two
    ({"podDisruptionBudget": {"enabled": True, "minAvailable": "half"}}, "/podDisruptionBudget/minAvailable",
     "'half' does not match pattern '^[0-9]+%$'"),
    ({"podDisruptionBudget": {"enable": True}}, "/podDisruptionBudget", "'enable' not allowed"),
    ({"podDisruptionBudget": {"unhealthyPodEvictionPolicy": "Never"}},
     "/podDisruptionBudget/unhealthyPodEvictionPolicy", "value must be one of"),
    ({"networkPolicy": {"apiServer": {"ports": ["https"]}}}, "/networkPolicy/apiServer/ports/0", "want integer"),
    ({"networkPolicy": {"apiServer": {"cidrs": ["10.0.0.1"]}}}, "/networkPolicy/apiServer/cidrs/0",
     "does not match pattern"),
    ({"networkPolicy": {"ingress": []}}, "/networkPolicy", "'ingress' not allowed"),
    ({"networkPolicy": {"metrics": {"from": {}}}}, "/networkPolicy/metrics/from", "want array"),
    ({"serviceMonitor": {"namespace": "Bad_NS"}}, "/serviceMonitor/namespace", "does not match pattern"),
    ({"serviceMonitor": {"labels": {"release": 1}}}, "/serviceMonitor/labels/release", "want string"),
    ({"serviceMonitor": {"relabelings": [{"action": "rename"}]}}, "/serviceMonitor/relabelings/0/action",
     "value must be one of"),
    ({"serviceMonitor": {"metricRelabelings": [{"source_labels": ["a"]}]}}, "/serviceMonitor/metricRelabelings/0",
     "'source_labels' not allowed"),
    ({"serviceMonitor": {"relabelings": [{"sourceLabels": "a"}]}}, "/serviceMonitor/relabelings/0/sourceLabels",
     "want array"),
    ({"prometheusRule": {"namespace": "Bad_NS"}}, "/prometheusRule/namespace", "does not match pattern"),
    ({"prometheusRule": {"disabled": {"SpreadwatchNoSuchAlert": True}}}, "/prometheusRule/disabled",
     "'SpreadwatchNoSuchAlert' not allowed"),
    ({"prometheusRule": {"disabled": {"SpreadwatchSkewHigh": "yes"}}}, "/prometheusRule/disabled/SpreadwatchSkewHigh",
     "want boolean"),
]  # fmt: skip


@pytest.mark.parametrize(("values", "where", "why"), BAD_VALUES, ids=[json.dumps(v) for v, _, _ in BAD_VALUES])
def test_bad_new_values_are_rejected_by_the_schema(helm: Helm, tmp_path: Path, values: dict[str, Any], where: str,
                                                   why: str) -> None:  # fmt: skip
    stderr = template_error(helm, tmp_path, values)
    assert SCHEMA_ERROR in stderr, stderr
    assert where in stderr and why in stderr, stderr
