"""The Helm chart rendered by the real helm over a matrix of values: objects, security context, probes, exact
RBAC rules (no wildcards, no secrets, read-only on the watched kinds), monitoring gating, namespaced mode,
the dashboard, and the container args accepted by `spreadwatch run`'s own argument parser."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_helpers import CHART, NAMESPACE, RELEASE, ROOT, Helm, by_kind, one

from spreadwatch.cli import build_parser, operator_config

FULLNAME = f"{RELEASE}-spreadwatch"
MONITORING_API = "monitoring.coreos.com/v1"
MONITORING_ON = {"serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": True}}
READ = ["get", "list", "watch"]
CORE_WATCHED = ["pods", "services", "replicationcontrollers", "persistentvolumeclaims"]
CLUSTER_WATCHED = ["nodes", "namespaces", "persistentvolumes"]
APPS_WATCHED = ["replicasets", "statefulsets", "deployments"]
POLICY_WATCHED = ["poddisruptionbudgets"]
REPORT_RULES = [
    {"apiGroups": ["spreadwatch.io"], "resources": ["spreadreports"],
     "verbs": ["get", "list", "create", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
]  # fmt: skip
STANDARD_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                   "app.kubernetes.io/managed-by", "app.kubernetes.io/component", "app.kubernetes.io/part-of",
                   "helm.sh/chart")  # fmt: skip
METRICS_READER = f"{FULLNAME}-metrics-reader"
AUTH_DELEGATOR = f"{FULLNAME}-auth-delegator"
ALLOWED_RESOURCES = {*CORE_WATCHED, *APPS_WATCHED, *CLUSTER_WATCHED, *POLICY_WATCHED, "spreadreports", "events",
                     "leases"}  # fmt: skip


def pyproject() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def chart_meta() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((CHART / "Chart.yaml").read_text())
    return data


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [c] = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def rules_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = obj["rules"]
    return rules


def named(objects: list[dict[str, Any]], kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    found = [o for o in by_kind(objects, kind) if o["metadata"]["name"] == name
             and (namespace is None or o["metadata"].get("namespace") == namespace)]  # fmt: skip
    assert len(found) == 1, f"{kind} {namespace}/{name}: found {len(found)}"
    return found[0]


def parse_run_args(args: list[str]) -> Any:
    """The container args through `spreadwatch run`'s parser and the operator's config validation."""
    try:
        parsed = build_parser().parse_args(["run", *args])
    except SystemExit as exc:  # argparse prints the reason to stderr
        raise AssertionError(f"`spreadwatch run` rejects the chart's args {args}: exit {exc.code}") from None
    return operator_config(parsed)


# --------------------------------------------------------------------------- metadata and files


def test_chart_app_version_is_the_package_version() -> None:
    meta = chart_meta()
    assert meta["apiVersion"] == "v2"
    assert meta["name"] == "spreadwatch"
    assert meta["appVersion"] == pyproject()["project"]["version"]


def test_crd_copy_is_byte_identical() -> None:
    repo = (ROOT / "crds" / "spreadreports.spreadwatch.io.yaml").read_bytes()
    assert (CHART / "crds" / "spreadreports.spreadwatch.io.yaml").read_bytes() == repo
    assert [p.name for p in (CHART / "crds").iterdir()] == ["spreadreports.spreadwatch.io.yaml"]


def _leaf_paths(values: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key not in ("resources",):
            paths += _leaf_paths(value, f"{path}.")
        else:
            paths.append(path)
    return paths


def test_readme_documents_every_value() -> None:
    readme = (CHART / "README.md").read_text()
    documented = set(re.findall(r"^\| `([^`]+)` \|", readme, flags=re.M))
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for key in values:
        assert key in documented or any(d.startswith(f"{key}.") for d in documented), f"{key} not in README"
    for path in _leaf_paths(values):
        parent = path.rsplit(".", 1)[0]
        assert path in documented or f"{parent}.*" in documented, f"{path} not in the README's values table"
    assert "helm show crds" in readme and "never upgrades" in readme


def test_schema_closes_every_object_it_defines() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    free_form = {"global", "affinity", "tolerations[]", "extraEnv[].valueFrom",  # Kubernetes types, not ours
                 "extraVolumes[]", "networkPolicy.metrics.from[]", "networkPolicy.extraIngress[]",
                 "networkPolicy.extraEgress[]", "topologySpreadConstraints[].labelSelector"}  # fmt: skip

    def walk(node: dict[str, Any], path: str) -> None:
        if "$ref" in node:  # "#/definitions/<name>"
            node = schema["definitions"][node["$ref"].removeprefix("#/definitions/")]
        if node.get("type") == "object" and path not in free_form:
            extra = node.get("additionalProperties")
            assert extra is False or isinstance(extra, dict), f"{path or '<root>'}: additionalProperties open"
            for key, child in node.get("properties", {}).items():
                walk(child, f"{path}.{key}" if path else key)
        if node.get("type") == "array":
            walk(node["items"], f"{path}[]")

    walk(schema, "")
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert set(schema["properties"]) == set(values)


# --------------------------------------------------------------------------- lint


@pytest.mark.parametrize("values", [None, MONITORING_ON, {"watchNamespaces": ["a", "b"]}],
                         ids=["defaults", "monitoring", "namespaced"])  # fmt: skip
def test_helm_lint_strict(helm: Helm, tmp_path: Path, values: dict[str, Any] | None) -> None:
    args = ["lint", "--strict", str(CHART)]
    if values:
        (tmp_path / "v.yaml").write_text(yaml.safe_dump(values))
        args += ["--values", str(tmp_path / "v.yaml")]
    out = helm.run(*args).stdout
    assert "1 chart(s) linted, 0 chart(s) failed" in out


# --------------------------------------------------------------------------- defaults


def test_defaults_render_the_expected_objects(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path)
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
    assert kinds == sorted([
        ("ServiceAccount", FULLNAME), ("ClusterRole", FULLNAME), ("ClusterRoleBinding", FULLNAME),
        ("Role", f"{FULLNAME}-leader-election"), ("RoleBinding", f"{FULLNAME}-leader-election"),
        ("ClusterRole", METRICS_READER), ("ClusterRoleBinding", AUTH_DELEGATOR),
        ("Service", f"{FULLNAME}-metrics"), ("Deployment", FULLNAME), ("ConfigMap", f"{FULLNAME}-dashboard"),
    ])  # fmt: skip
    version = chart_meta()["appVersion"]
    for obj in objects:
        labels = obj["metadata"]["labels"]
        missing = [k for k in STANDARD_LABELS if k not in labels]
        assert not missing, f"{obj['kind']} {obj['metadata']['name']} lacks {missing}"
        assert labels["app.kubernetes.io/version"] == version
        assert labels["app.kubernetes.io/part-of"] == "spreadwatch"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert obj["metadata"]["namespace"] == NAMESPACE


def test_deployment_security_probes_and_resources(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path)
    deploy = one(objects, "Deployment")
    spec = deploy["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    assert spec["selector"]["matchLabels"] == {"app.kubernetes.io/name": "spreadwatch",
                                               "app.kubernetes.io/instance": RELEASE}  # fmt: skip
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == FULLNAME
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                      "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}}  # fmt: skip
    c = container(objects)
    assert c["image"] == f"spreadwatch:{chart_meta()['appVersion']}"
    assert "command" not in c  # the image's ENTRYPOINT is `spreadwatch run`
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert isinstance(sc["runAsUser"], int) and sc["runAsUser"] > 0
    assert isinstance(sc["runAsGroup"], int) and sc["runAsGroup"] > 0
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert c["ports"] == [{"name": "metrics", "containerPort": 8443, "protocol": "TCP"},
                          {"name": "probes", "containerPort": 8081, "protocol": "TCP"}]  # fmt: skip
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
    assert set(c["resources"]) == {"requests", "limits"}
    assert set(c["resources"]["requests"]) == {"cpu", "memory"} == set(c["resources"]["limits"])
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert c["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}}]

    service = one(objects, "Service")
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 8443, "targetPort": "metrics",
                                         "protocol": "TCP"}]  # fmt: skip
    assert service["spec"]["selector"].items() <= spec["template"]["metadata"]["labels"].items()


def test_default_args_are_the_operator_defaults_plus_the_lease(helm: Helm, tmp_path: Path) -> None:
    args = container(helm.template(tmp_path))["args"]
    config = parse_run_args(args)
    assert config.namespaces == ()
    assert config.skip_namespaces == ()
    assert str(config.opt_out) == "spreadwatch.io/ignore=true"
    # the cluster's kube-scheduler's profile, SelectorSpread or PodTopologySpread beside it (issue 36)
    assert (config.profile, config.compare_profile) == ("auto", "auto")
    assert "--profile=auto" in args and "--compare-profile=auto" in args
    assert (config.debounce, config.port, config.host) == (1.0, 8081, "0.0.0.0")
    assert (config.metrics_port, config.metrics_secure, config.metrics_cert_dir) == (8443, True, None)
    assert (config.max_writes_per_second, config.write_burst, config.resync_period) == (100.0, 200, 300.0)
    assert (config.log_format, config.log_level, config.events) == ("json", "INFO", True)
    assert config.leader.enabled
    assert (config.leader.lease_name, config.leader.lease_namespace) == (f"{FULLNAME}-leader", NAMESPACE)
    assert (config.leader.lease_duration, config.leader.renew_period) == (15.0, 2.0)
    assert "--node-metrics=default" in args
    assert config.report.window_samples == 16 and "--window-samples=16" in args  # the window's odds on
    assert config.prediction and "--prediction" in args


# --------------------------------------------------------------------------- values → flags


FLAG_CASES = [
    ({"watchNamespaces": ["shop", "data"]}, lambda c: c.namespaces == ("shop", "data")),
    ({"skipNamespaces": ["kube-system", "kube-public"]}, lambda c: c.skip_namespaces == ("kube-system", "kube-public")),
    ({"optOutLabel": ""}, lambda c: c.opt_out is None),
    ({"optOutLabel": "team"}, lambda c: str(c.opt_out) == "team"),
    ({"profile": "v1.12"}, lambda c: c.profile == "v1.12"),
    ({"profile": "v1.29"}, lambda c: (c.profile, c.compare_profile, c.scheduler_config) == ("v1.29", "auto", None)),
    ({"compareProfile": "v1.29"}, lambda c: (c.profile, c.compare_profile) == ("auto", "v1.29")),
    ({"compareProfile": "none"}, lambda c: c.compare_profile == "none"),
    ({"compareProfile": ""}, lambda c: c.compare_profile == "none"),  # (empty: off, as before auto)
    ({"profile": "v1.29", "schedulerConfig": "kind: KubeSchedulerConfiguration\n", "schedulerName": "mine"},
     lambda c: (c.scheduler_config, c.scheduler_name) == ("/etc/spreadwatch/scheduler-config.yaml", "mine")),
    ({"debounce": 0.25}, lambda c: c.debounce == 0.25),
    ({"topN": 7}, lambda c: c.report.top_n == 7 == c.metrics.top_n),
    ({"maxReportNodes": 1000000}, lambda c: c.report.max_nodes == 1000000),
    ({"windowSamples": 64}, lambda c: c.report.window_samples == 64),
    ({"windowSamples": 0}, lambda c: c.report.window_samples == 0),
    ({"prediction": False}, lambda c: c.prediction is False),
    ({"health": {"maxNodeSkew": 2, "maxZoneSkew": 3, "spofMinPods": 4}},
     lambda c: (c.report.thresholds.max_node_skew, c.report.thresholds.max_zone_skew,
                c.report.thresholds.min_replicas) == (2, 3, 4)),
    ({"writes": {"perSecond": 2.5, "burst": 5}}, lambda c: (c.max_writes_per_second, c.write_burst) == (2.5, 5)),
    ({"resyncPeriod": 0}, lambda c: c.resync_period == 0),
    ({"events": False}, lambda c: c.events is False),
    ({"logFormat": "text", "logLevel": "DEBUG"}, lambda c: (c.log_format, c.log_level) == ("text", "DEBUG")),
    ({"leaderElection": {"enabled": False}}, lambda c: c.leader.enabled is False),
    ({"leaderElection": {"leaseName": "lead", "leaseDuration": 30, "renewPeriod": 5}},
     lambda c: (c.leader.lease_name, c.leader.lease_duration, c.leader.renew_period) == ("lead", 30.0, 5.0)),
    ({"metrics": {"port": 9100}}, lambda c: (c.metrics_port, c.port) == (9100, 8081)),
    ({"probes": {"port": 9101}}, lambda c: (c.metrics_port, c.port) == (8443, 9101)),
    ({"metrics": {"secure": False}}, lambda c: c.metrics_secure is False),
    ({"metrics": {"certSecret": "sw-tls"}},
     lambda c: (c.metrics_secure, c.metrics_cert_dir) == (True, "/etc/spreadwatch/metrics-cert")),
    ({"extraArgs": ["--max-node-skew=9"]}, lambda c: c.report.thresholds.max_node_skew == 9),
]  # fmt: skip


@pytest.mark.parametrize(("values", "check"), FLAG_CASES, ids=[json.dumps(v) for v, _ in FLAG_CASES])
def test_values_become_flags_the_cli_accepts(helm: Helm, tmp_path: Path, values: dict[str, Any],
                                             check: Any) -> None:  # fmt: skip
    args = container(helm.template(tmp_path, values))["args"]
    config = parse_run_args(args)
    assert check(config), args


@pytest.mark.parametrize("mode", ["default", "none", "all"])
def test_node_series_becomes_node_metrics(helm: Helm, tmp_path: Path, mode: str) -> None:
    args = container(helm.template(tmp_path, {"metrics": {"nodeSeries": mode}}))["args"]
    assert f"--node-metrics={mode}" in args
    assert parse_run_args(args).metrics.node_series == mode


def test_port_values_move_container_ports_and_probes(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"metrics": {"port": 9100}, "probes": {"port": 9101}, "service": {"port": 80}})
    c = container(objects)
    assert c["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"},
                          {"name": "probes", "containerPort": 9101, "protocol": "TCP"}]  # fmt: skip
    assert c["livenessProbe"]["httpGet"]["port"] == "probes" == c["readinessProbe"]["httpGet"]["port"]
    assert one(objects, "Service")["spec"]["ports"][0] == {"name": "metrics", "port": 80, "targetPort": "metrics",
                                                           "protocol": "TCP"}  # fmt: skip
    proc = helm.run(*helm.template_args({"metrics": {"port": 9000}, "probes": {"port": 9000}}, (), tmp_path,
                                        NAMESPACE, RELEASE), check=False)  # fmt: skip
    assert proc.returncode != 0
    assert "metrics.port and probes.port must differ" in proc.stderr


def test_cert_secret_is_mounted_read_only_as_the_metrics_cert_dir(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"metrics": {"certSecret": "sw-tls"}})
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    c = container(objects)
    assert "--metrics-cert-dir=/etc/spreadwatch/metrics-cert" in c["args"]
    assert {"name": "metrics-cert", "mountPath": "/etc/spreadwatch/metrics-cert", "readOnly": True} in c["volumeMounts"]
    assert {"name": "metrics-cert", "secret": {"secretName": "sw-tls", "items": [
        {"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]}} in pod["volumes"]  # fmt: skip
    proc = helm.run(*helm.template_args({"metrics": {"certSecret": "sw-tls", "secure": False}}, (), tmp_path,
                                        NAMESPACE, RELEASE), check=False)  # fmt: skip
    assert proc.returncode != 0
    assert "metrics.certSecret needs metrics.secure=true" in proc.stderr


def test_leader_election_off_uses_recreate_and_no_lease_role(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"leaderElection": {"enabled": False}})
    assert one(objects, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}
    assert "--no-leader-elect" in container(objects)["args"]
    assert not by_kind(objects, "Role")
    proc = helm.run(*helm.template_args({"leaderElection": {"enabled": False}, "replicaCount": 2}, (), tmp_path,
                                        NAMESPACE, RELEASE), check=False)  # fmt: skip
    assert proc.returncode != 0
    assert "replicaCount > 1 needs leaderElection.enabled=true" in proc.stderr


def test_pod_options_reach_the_pod(helm: Helm, tmp_path: Path) -> None:
    values = {
        "image": {"repository": "registry.example.com/sw", "tag": "dev", "pullPolicy": "Always"},
        "imagePullSecrets": ["regcred"], "podAnnotations": {"a": "1"}, "podLabels": {"team": "x"},
        "nodeSelector": {"pool": "ops"}, "tolerations": [{"key": "ops", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {}}, "priorityClassName": "system-cluster-critical",
        "extraEnv": [{"name": "FOO", "value": "bar"}], "replicaCount": 2,
        "serviceAccount": {"create": False, "name": "existing"},
    }  # fmt: skip
    objects = helm.template(tmp_path, values)
    assert not by_kind(objects, "ServiceAccount")
    pod = one(objects, "Deployment")["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"a": "1"}
    assert pod["metadata"]["labels"]["team"] == "x"
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "existing"
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]
    assert spec["nodeSelector"] == {"pool": "ops"}
    assert spec["tolerations"] == [{"key": "ops", "operator": "Exists"}]
    assert spec["affinity"] == {"nodeAffinity": {}}
    assert spec["priorityClassName"] == "system-cluster-critical"
    c = spec["containers"][0]
    assert (c["image"], c["imagePullPolicy"]) == ("registry.example.com/sw:dev", "Always")
    assert {"name": "FOO", "value": "bar"} in c["env"]
    assert one(objects, "Deployment")["spec"]["replicas"] == 2
    for binding in [*by_kind(objects, "ClusterRoleBinding"), *by_kind(objects, "RoleBinding")]:
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "existing", "namespace": NAMESPACE}]


# --------------------------------------------------------------------------- RBAC


def assert_least_privilege(objects: list[dict[str, Any]]) -> None:
    """No wildcards, nothing on secrets/configmaps, only get/list/watch on what the operator reads (the
    operator's own roles; the metrics-reader ClusterRole is for scrapers: test_metrics_rbac_is_exact)."""
    roles = [*by_kind(objects, "ClusterRole"), *by_kind(objects, "Role")]
    for role in [r for r in roles if r["metadata"]["name"] != METRICS_READER]:
        for rule in rules_of(role):
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert "*" not in rule.get(field, []), f"wildcard in {role['metadata']['name']}: {rule}"
            assert "nonResourceURLs" not in rule
            assert set(rule["resources"]) <= ALLOWED_RESOURCES, rule
            if set(rule["resources"]) & {*CORE_WATCHED, *APPS_WATCHED, *CLUSTER_WATCHED, *POLICY_WATCHED}:
                assert rule["verbs"] == READ, rule


def test_clusterwide_rbac_is_exact(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path)
    assert_least_privilege(objects)
    cluster_role = named(objects, "ClusterRole", FULLNAME)
    assert rules_of(cluster_role) == [
        {"apiGroups": [""], "resources": [*CLUSTER_WATCHED, *CORE_WATCHED], "verbs": READ},
        {"apiGroups": ["apps"], "resources": APPS_WATCHED, "verbs": READ},
        {"apiGroups": ["policy"], "resources": POLICY_WATCHED, "verbs": READ},
        *REPORT_RULES,
    ]
    binding = named(objects, "ClusterRoleBinding", FULLNAME)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": FULLNAME}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}]
    lease_role = one(objects, "Role")
    assert lease_role["metadata"]["namespace"] == NAMESPACE
    assert rules_of(lease_role) == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [f"{FULLNAME}-leader"],
         "verbs": ["get", "update"]},
    ]  # fmt: skip
    lease_binding = one(objects, "RoleBinding")
    assert lease_binding["roleRef"]["name"] == lease_role["metadata"]["name"]
    assert lease_binding["metadata"]["namespace"] == NAMESPACE


@pytest.mark.parametrize("values", [{}, {"watchNamespaces": ["shop"]}], ids=["clusterwide", "namespaced"])
def test_metrics_rbac_is_exact(helm: Helm, tmp_path: Path, values: dict[str, Any]) -> None:
    objects = helm.template(tmp_path, values)
    reader = named(objects, "ClusterRole", METRICS_READER)
    assert rules_of(reader) == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert not [b for b in [*by_kind(objects, "ClusterRoleBinding"), *by_kind(objects, "RoleBinding")]
                if b["roleRef"]["name"] == METRICS_READER]  # for scrapers: the chart binds nobody to it  # fmt: skip
    delegator = named(objects, "ClusterRoleBinding", AUTH_DELEGATOR)
    assert delegator["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                    "name": "system:auth-delegator"}  # fmt: skip
    assert delegator["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}]


def test_insecure_metrics_have_no_auth_delegator_binding(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"metrics": {"secure": False}})
    assert [b["metadata"]["name"] for b in by_kind(objects, "ClusterRoleBinding")] == [FULLNAME]
    assert "--metrics-secure=false" in container(objects)["args"]


def test_rbac_create_false_renders_no_rbac(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"rbac": {"create": False}})
    assert not [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]


@pytest.mark.parametrize(("values", "watched"), [
    ({"watchNamespaces": ["shop", "data"]}, ["shop", "data"]),
    ({"rbac": {"namespaced": True}}, [NAMESPACE]),
], ids=["watchNamespaces", "rbac.namespaced"])  # fmt: skip
def test_namespaced_mode_has_roles_per_namespace_and_a_minimal_cluster_role(
    helm: Helm, tmp_path: Path, values: dict[str, Any], watched: list[str]
) -> None:
    objects = helm.template(tmp_path, values)
    assert_least_privilege(objects)
    assert rules_of(named(objects, "ClusterRole", FULLNAME)) == [
        {"apiGroups": [""], "resources": CLUSTER_WATCHED, "verbs": READ}]
    expected = [
        {"apiGroups": [""], "resources": CORE_WATCHED, "verbs": READ},
        {"apiGroups": ["apps"], "resources": APPS_WATCHED, "verbs": READ},
        {"apiGroups": ["policy"], "resources": POLICY_WATCHED, "verbs": READ},
        *REPORT_RULES,
    ]
    for ns in watched:
        assert rules_of(named(objects, "Role", FULLNAME, ns)) == expected
        binding = named(objects, "RoleBinding", FULLNAME, ns)
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": FULLNAME}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": FULLNAME, "namespace": NAMESPACE}]
    watch_roles = [r for r in by_kind(objects, "Role") if r["metadata"]["name"] == FULLNAME]
    assert sorted(r["metadata"]["namespace"] for r in watch_roles) == sorted(watched)
    named(objects, "Role", f"{FULLNAME}-leader-election", NAMESPACE)
    config = parse_run_args(container(objects)["args"])
    assert config.namespaces == tuple(watched)


# --------------------------------------------------------------------------- monitoring


def test_monitoring_objects_with_the_prometheus_operator_api(helm: Helm, tmp_path: Path) -> None:
    values = {
        "serviceMonitor": {"enabled": True, "additionalLabels": {"release": "kps"}, "interval": "15s",
                           "scrapeTimeout": "5s"},
        "prometheusRule": {"enabled": True, "additionalLabels": {"release": "kps"}},
    }  # fmt: skip
    objects = helm.template(tmp_path, values, api_versions=[MONITORING_API])
    monitor = one(objects, "ServiceMonitor")
    service = one(objects, "Service")
    assert monitor["apiVersion"] == MONITORING_API
    assert monitor["metadata"]["labels"]["release"] == "kps"
    job_label = monitor["spec"]["jobLabel"]
    assert service["metadata"]["labels"][job_label] == "spreadwatch"  # Prometheus' job="spreadwatch"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics" == service["spec"]["ports"][0]["name"]
    assert (endpoint["path"], endpoint["interval"], endpoint["scrapeTimeout"]) == ("/metrics", "15s", "5s")
    assert endpoint["honorLabels"] is True  # the operator's `namespace` label is the workload's
    assert endpoint["scheme"] == "https"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}
    assert "authorization" not in endpoint

    rule = one(objects, "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kps"
    rules_file = yaml.safe_load((CHART / "files" / "spreadwatch-rules.yaml").read_text())
    assert rule["spec"] == {"groups": rules_file["groups"]}
    assert rule["spec"]["groups"], "no alert groups"


SCRAPE_AUTH_CASES = [
    ({}, {"scheme": "https", "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
          "tlsConfig": {"insecureSkipVerify": True}}),
    ({"serviceMonitor": {"authorization": {"type": "Bearer", "credentials": {"name": "prom", "key": "token"}},
                         "tlsConfig": {"ca": {"secret": {"name": "sw-tls", "key": "ca.crt"}},
                                       "serverName": "sw.example"}}},
     {"scheme": "https", "authorization": {"type": "Bearer", "credentials": {"name": "prom", "key": "token"}},
      "tlsConfig": {"ca": {"secret": {"name": "sw-tls", "key": "ca.crt"}}, "serverName": "sw.example"}}),
    ({"metrics": {"secure": False}}, {"scheme": "http"}),
]  # fmt: skip


@pytest.mark.parametrize(("values", "expected"), SCRAPE_AUTH_CASES, ids=["token file", "authorization", "insecure"])
def test_service_monitor_scrape_auth_and_tls(helm: Helm, tmp_path: Path, values: dict[str, Any],
                                             expected: dict[str, Any]) -> None:  # fmt: skip
    values = {**values, "serviceMonitor": {"enabled": True, **values.get("serviceMonitor", {})}}
    [endpoint] = one(helm.template(tmp_path, values, api_versions=[MONITORING_API]), "ServiceMonitor")["spec"][
        "endpoints"]
    keys = {"scheme", "bearerTokenFile", "authorization", "tlsConfig"}
    assert {k: v for k, v in endpoint.items() if k in keys} == expected


def test_monitoring_enabled_without_the_api_renders_nothing_for_it(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, MONITORING_ON)
    assert not by_kind(objects, "ServiceMonitor")
    assert not by_kind(objects, "PrometheusRule")
    assert {o["kind"] for o in objects} >= {"Deployment", "Service", "ConfigMap"}


def test_monitoring_disabled_with_the_api_renders_nothing_for_it(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, api_versions=[MONITORING_API])
    assert not by_kind(objects, "ServiceMonitor")
    assert not by_kind(objects, "PrometheusRule")


# --------------------------------------------------------------------------- dashboard


def test_dashboard_configmap(helm: Helm, tmp_path: Path) -> None:
    values = {"grafanaDashboard": {"namespace": "monitoring", "labels": {"team": "sre"},
                                   "annotations": {"grafana_folder": "spreadwatch"}}}  # fmt: skip
    cm = one(helm.template(tmp_path, values), "ConfigMap")
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["labels"]["team"] == "sre"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "spreadwatch"}
    [(key, text)] = cm["data"].items()
    assert key.endswith(".json")
    source = (CHART / "files" / "spreadwatch-dashboard.json").read_text()
    assert json.loads(text) == json.loads(source)


def test_dashboard_off(helm: Helm, tmp_path: Path) -> None:
    objects = helm.template(tmp_path, {"grafanaDashboard": {"enabled": False}})
    assert not by_kind(objects, "ConfigMap")
