"""The project's SpreadReport CRD on a real API server: structural schema accepts real reports (validated
server-side), a status write is validated against the schema, and `kubectl get spreadreports` shows the
printer columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from operator_helpers import replace_report_status

from spreadwatch.analysis import analyze_index
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import load_snapshot

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "spreadreports.spreadwatch.io.yaml"


@pytest.fixture(scope="module")
def crd_installed(control_plane: Any) -> None:
    control_plane.kubectl("apply", "--server-side", "-f", str(CRD))
    control_plane.kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io", "--timeout=180s")


def test_real_reports_validate_and_list(control_plane: Any, crd_installed: None, namespace: str) -> None:
    reports = analyze_index(load_snapshot([ROOT / "examples" / "cluster.yaml"]), get_profile("v1.28"))[1]
    assert len(reports) == 8
    for report in reports:
        body = report.to_dict()
        name = f"{report.workload.kind.lower()}-{report.workload.name}"
        obj = {
            "apiVersion": "spreadwatch.io/v1alpha1",
            "kind": "SpreadReport",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"workloadRef": body["workload"]},
        }
        control_plane.kubectl("create", "-f", "-", input=json.dumps(obj))
        status = {
            **body,
            "conditions": [
                {
                    "type": "Balanced",
                    "status": "True" if body["health"] == "Balanced" else "False",
                    "reason": body["health"],
                    "message": "; ".join(body["reasons"]) or "ok",
                    "lastTransitionTime": "2026-11-22T00:00:00Z",
                    "observedGeneration": 1,
                }
            ],
        }
        # server-side validation of every field against the structural schema; unknown fields are errors
        stored = replace_report_status(control_plane, namespace, name, status)
        # nothing pruned: every report field survived the structural schema
        assert {k: v for k, v in stored["status"].items() if k != "conditions"} == body

    table = control_plane.kubectl("get", "spreadreports", "-n", namespace).stdout.splitlines()
    assert table[0].split() == [
        "NAME",
        "KIND",
        "WORKLOAD",
        "PODS",
        "NODES",
        "ZONES",
        "NODE-SKEW",
        "ZONE-SKEW",
        "BEST",
        "HEALTH",
        "PROFILE",
        "AGE",
    ]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["deployment-checkout"][1:11] == [
        "Deployment", "checkout", "4", "6", "3", "3", "3", "100", "Imbalanced", "v1.28"
    ]  # fmt: skip
    assert rows["deployment-cache"][9] == "SinglePointOfFailure"
    wide = control_plane.kubectl("get", "spr", "deployment-web", "-n", namespace, "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-4:] == ["PROFILE", "AGE", "SELECTOR", "SCHEDULABLE"]
    assert (wide[1].split()[10], wide[1].split()[-1]) == ("v1.28", "true")


def test_schema_rejects_bad_status(control_plane: Any, crd_installed: None, namespace: str) -> None:
    obj = {
        "apiVersion": "spreadwatch.io/v1alpha1",
        "kind": "SpreadReport",
        "metadata": {"name": "bad", "namespace": namespace},
    }
    control_plane.kubectl("create", "-f", "-", input=json.dumps(obj))
    result = control_plane.kubectl(
        "patch",
        "spreadreport",
        "bad",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps({"status": {"health": "Great", "bestScore": 101}}),
        check=False,
    )
    assert result.returncode != 0
    assert "health" in result.stderr and "bestScore" in result.stderr
