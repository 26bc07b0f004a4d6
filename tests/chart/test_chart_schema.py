"""values.schema.json (draft-07) as helm applies it: wrong types, unknown keys at any level and unknown enum
values fail `helm template` with helm's schema error naming the key; template-level checks fail with their
own message. Good values render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chart_helpers import NAMESPACE, RELEASE, Helm

SCHEMA_ERROR = "values don't meet the specifications of the schema"

BAD_VALUES = [
    # wrong types
    ({"replicaCount": "two"}, "/replicaCount", "want integer"),
    ({"metrics": {"port": "8080"}}, "/metrics/port", "want integer"),
    ({"metrics": {"secure": "yes"}}, "/metrics/secure", "want boolean"),
    ({"serviceMonitor": {"tlsConfig": "skip"}}, "/serviceMonitor/tlsConfig", "want object"),
    ({"debounce": "1s"}, "/debounce", "want number"),
    ({"events": "yes"}, "/events", "want boolean"),
    ({"watchNamespaces": "shop"}, "/watchNamespaces", "want array"),
    ({"podLabels": {"team": 1}}, "/podLabels/team", "want string"),
    ({"extraArgs": [1]}, "/extraArgs/0", "want string"),
    # unknown keys, top level and nested
    ({"replicas": 2}, "at ''", "'replicas' not allowed"),
    ({"image": {"name": "x"}}, "/image", "'name' not allowed"),
    ({"leaderElection": {"namespace": "x"}}, "/leaderElection", "'namespace' not allowed"),
    ({"probes": {"liveness": {"path": "/x"}}}, "/probes/liveness", "'path' not allowed"),
    ({"health": {"maxSkew": 1}}, "/health", "'maxSkew' not allowed"),
    ({"serviceMonitor": {"endpoints": []}}, "/serviceMonitor", "'endpoints' not allowed"),
    ({"extraEnv": [{"name": "A", "val": "b"}]}, "/extraEnv/0", "'val' not allowed"),
    # enums and ranges
    ({"profile": "v1.99"}, "/profile", "value must be one of"),
    ({"metrics": {"nodeSeries": "some"}}, "/metrics/nodeSeries", "value must be one of"),
    ({"logFormat": "yaml"}, "/logFormat", "value must be one of"),
    ({"logLevel": "info"}, "/logLevel", "value must be one of"),
    ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy", "value must be one of"),
    ({"metrics": {"port": 70000}}, "/metrics/port", "maximum"),
    ({"probes": {"port": 0}}, "/probes/port", "minimum"),
    ({"runAsUser": 0}, "/runAsUser", "minimum"),
    ({"windowSamples": -1}, "/windowSamples", "minimum"),
    ({"writes": {"perSecond": 0}}, "/writes/perSecond", "exclusiveMinimum"),
    ({"watchNamespaces": ["Bad_Name"]}, "/watchNamespaces/0", "does not match pattern"),
    ({"serviceMonitor": {"interval": "soon"}}, "/serviceMonitor/interval", "does not match pattern"),
    ({"extraArgs": ["run"]}, "/extraArgs/0", "does not match pattern"),
]


@pytest.mark.parametrize(("values", "where", "why"), BAD_VALUES, ids=[str(v) for v, _, _ in BAD_VALUES])
def test_bad_values_are_rejected_by_the_schema(helm: Helm, tmp_path: Path, values: dict[str, Any], where: str,
                                               why: str) -> None:  # fmt: skip
    proc = helm.run(*helm.template_args(values, (), tmp_path, NAMESPACE, RELEASE), check=False)
    assert proc.returncode != 0, f"accepted {values}"
    assert SCHEMA_ERROR in proc.stderr, proc.stderr
    assert where in proc.stderr and why in proc.stderr, proc.stderr


TEMPLATE_ERRORS = [
    ({"leaderElection": {"enabled": False}, "replicaCount": 3}, "replicaCount > 1 needs leaderElection.enabled"),
    ({"leaderElection": {"leaseDuration": 2, "renewPeriod": 2}}, "leaseDuration must be greater than"),
    ({"serviceAccount": {"create": False}}, "serviceAccount.name is required"),
]


@pytest.mark.parametrize(("values", "message"), TEMPLATE_ERRORS, ids=[m for _, m in TEMPLATE_ERRORS])
def test_inconsistent_values_fail_with_a_clear_message(helm: Helm, tmp_path: Path, values: dict[str, Any],
                                                       message: str) -> None:  # fmt: skip
    proc = helm.run(*helm.template_args(values, (), tmp_path, NAMESPACE, RELEASE), check=False)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_a_full_set_of_good_values_renders(helm: Helm, tmp_path: Path) -> None:
    values = {
        "replicaCount": 2, "watchNamespaces": ["a"], "skipNamespaces": ["kube-system"], "optOutLabel": "k=v",
        "profile": "v1.18", "debounce": 0.5, "topN": 5, "maxReportNodes": 100, "windowSamples": 16,
        "health": {"maxNodeSkew": 2, "maxZoneSkew": 2, "spofMinPods": 3},
        "writes": {"perSecond": 5.5, "burst": 10}, "resyncPeriod": 60, "events": False,
        "logFormat": "text", "logLevel": "WARNING",
        "leaderElection": {"enabled": True, "leaseName": "x", "leaseDuration": 20, "renewPeriod": 4},
        "metrics": {"port": 9000, "nodeSeries": "none"},
        "service": {"enabled": True, "type": "NodePort", "port": 9000, "annotations": {"a": "b"}},
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": 2, "memory": "1Gi"}},
        "extraEnv": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }  # fmt: skip
    objects = helm.template(tmp_path, values)
    assert any(o["kind"] == "Deployment" for o in objects)
