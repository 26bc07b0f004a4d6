"""The alert rules: promtool accepts them, promtool's unit tests pass, and every alert is complete and tested."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from monitoring_helpers import ALLOWED_SERIES, RULE_TESTS_DIR, RULES, load_rules, series_names

EXPECTED_ALERTS = {
    "SpreadwatchAllReplicasOnOneNode",
    "SpreadwatchAllReplicasInOneZone",
    "SpreadwatchSkewHigh",
    "SpreadwatchPlacementsMissing",
    "SpreadwatchNextReplicaUnschedulable",
    "SpreadwatchSpreadDefeated",
    "SpreadwatchOperatorDown",
    "SpreadwatchReportsStale",
}
WORKLOAD_ALERTS = {
    "SpreadwatchAllReplicasOnOneNode",
    "SpreadwatchAllReplicasInOneZone",
    "SpreadwatchSkewHigh",
    "SpreadwatchPlacementsMissing",
    "SpreadwatchNextReplicaUnschedulable",
    "SpreadwatchSpreadDefeated",
}
RULE_TEST_FILES = sorted(RULE_TESTS_DIR.glob("*.test.yaml"))


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.prometheus
def test_promtool_check_rules(promtool: str) -> None:
    result = _run([promtool, "check", "rules", str(RULES)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(EXPECTED_ALERTS)} rules found" in result.stdout


@pytest.mark.prometheus
@pytest.mark.parametrize("test_file", RULE_TEST_FILES, ids=lambda p: p.name)
def test_promtool_unit_tests(promtool: str, test_file: Path) -> None:
    result = _run([promtool, "test", "rules", str(test_file)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.prometheus
def test_promtool_test_detects_a_wrong_expectation(promtool: str, tmp_path: Path) -> None:
    """The unit tests can fail: the same file with one expected alert removed does not pass."""
    source = RULE_TESTS_DIR / "workloads.test.yaml"
    doc = yaml.safe_load(source.read_text())
    case = next(c for c in doc["tests"][0]["alert_rule_test"] if c["exp_alerts"])
    case["exp_alerts"] = case["exp_alerts"][1:]
    doc["rule_files"] = [str(RULES)]
    broken = tmp_path / "broken.test.yaml"
    broken.write_text(yaml.safe_dump(doc))
    result = _run([promtool, "test", "rules", str(broken)])
    assert result.returncode != 0
    assert "FAILED" in result.stdout + result.stderr


def test_every_alert_has_severity_summary_description_runbook() -> None:
    rules = load_rules()
    assert {r["alert"] for r in rules} == EXPECTED_ALERTS
    for rule in rules:
        name = rule["alert"]
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, name
        annotations = rule["annotations"]
        for key in ("summary", "description", "runbook"):
            assert annotations.get(key, "").strip(), f"{name}: no {key}"
        assert "docs/alerts.md#" + name.lower() in annotations["runbook"], name
        assert "for" in rule, f"{name}: no `for` duration"
        if name in WORKLOAD_ALERTS:
            assert "kubectl get spreadreports" in annotations["runbook"], name
            assert "spreadwatch explain" in annotations["runbook"], name


def test_rule_expressions_use_contract_metrics_and_the_spreadwatch_job() -> None:
    for rule in load_rules():
        names = series_names(rule["expr"])
        assert names, rule["alert"]
        assert names <= ALLOWED_SERIES, f"{rule['alert']}: unknown series {sorted(names - ALLOWED_SERIES)}"
        if rule["alert"] not in WORKLOAD_ALERTS:
            assert 'job="spreadwatch"' in rule["expr"], rule["alert"]


def test_every_alert_has_firing_and_quiet_unit_tests() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in RULE_TEST_FILES:
        doc = yaml.safe_load(path.read_text())
        assert doc["rule_files"] == ["../../../charts/spreadwatch/files/spreadwatch-rules.yaml"], path
        for test in doc["tests"]:
            for case in test.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
    assert firing >= EXPECTED_ALERTS, f"no firing case for {sorted(EXPECTED_ALERTS - firing)}"
    assert quiet >= EXPECTED_ALERTS, f"no not-firing case for {sorted(EXPECTED_ALERTS - quiet)}"


def test_series_names_extraction() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le) (rate(spreadwatch_compute_duration_seconds_bucket{job=~"$job"}'
        '[$__rate_interval]))) > 1e3 and on (namespace) up{job="x"} or vector(0) unless foo:bar offset 5m'
    )
    assert series_names(expr) == {"spreadwatch_compute_duration_seconds_bucket", "up", "foo:bar"}
    assert series_names('label_replace(max by (a, b) (x > 1), "topology", "node", "", "")') == {"x"}
