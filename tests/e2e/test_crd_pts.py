"""Profile v1.29 reports with a --compare-profile comparison on a real API server: the CRD's structural
schema accepts every one (profile enum, comparison block, score bounds, the operator's lastPlacement) and
prunes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from operator_helpers import replace_report_status

from spreadwatch.index import SpreadIndex
from spreadwatch.report import PLACEMENT_OUTCOMES, Placement
from spreadwatch.runtime.writing.status import build_status
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import load_snapshot

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "spreadreports.spreadwatch.io.yaml"


@pytest.fixture(scope="module")
def crd_applied(control_plane: Any) -> None:
    control_plane.kubectl("apply", "--server-side", "-f", str(CRD))
    control_plane.kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io", "--timeout=60s")


def test_v129_reports_with_comparison_validate_server_side(
    control_plane: Any, crd_applied: None, namespace: str
) -> None:
    index = SpreadIndex(get_profile("v1.29"), compare=get_profile("v1.28"))
    index.load(load_snapshot([ROOT / "examples" / "cluster.yaml"]))
    reports = index.reports()
    assert len(reports) == 8
    # every other one with a checked placement, each outcome in turn
    placements = {
        i: Placement(f"pod-{i}", "node-a1", PLACEMENT_OUTCOMES[i // 2 % 3], "2026-01-02T03:04:05Z", i // 2)
        for i in range(1, len(reports), 2)
    }
    placed = [
        msgspec.structs.replace(r, last_placement=placements[i]) if i in placements else r
        for i, r in enumerate(reports)
    ]
    for report in placed:
        status = build_status(report, 1, None)
        name = f"{report.workload.kind.lower()}-{report.workload.name}"
        obj = {
            "apiVersion": "spreadwatch.io/v1alpha1",
            "kind": "SpreadReport",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"workloadRef": status["workload"]},
        }
        control_plane.kubectl("create", "-f", "-", input=json.dumps(obj))
        stored = replace_report_status(control_plane, namespace, name, status)
        assert stored["status"] == status  # nothing pruned, v1.29 and the comparison accepted
    checkout = json.loads(
        control_plane.kubectl("get", "spr", "deployment-checkout", "-n", namespace, "-o", "json").stdout
    )["status"]
    assert checkout["profile"] == "v1.29" and checkout["bestNodes"] == ["node-legacy"]
    assert checkout["comparison"] == {
        "profile": "v1.28",
        "bestScore": 100,
        "bestNodes": ["node-a1", "node-a2"],
        "bestNodeCount": 2,
        "bestNodesOverlap": False,
    }
