"""The envelope harness (``make bench-envelope``) at a small scale: the operator as the chart runs it, on a real
API server loaded with a synthetic cluster, under churn. Behaviour only, never timings: no probe failed,
no restart a kubelet would have made, every workload got a correct report, every change reached its report,
and the sampled reports equal ``spreadwatch analyze`` of a ``kubectl get -o json`` dump."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster

from bench import envelope

pytestmark = pytest.mark.e2e

_SMALL: dict[str, Any] = {"scale": 0.01, "threads": 8, "churn_rate": 20.0, "churn_seconds": 10.0, "burst": 5,
                          "sample": 10, "report_timeout": 900.0}  # fmt: skip


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A control plane the runs keep loaded (``cluster_dir``), ended after the module."""
    path = tmp_path_factory.mktemp("envelope-cluster")
    yield path
    devcluster.down(path, keep_logs=False)


@pytest.fixture(scope="module")
def result(cluster_dir: Path) -> dict[str, Any]:
    figures: dict[str, Any] = envelope.measure(**_SMALL, cluster_dir=str(cluster_dir),
                                                             log=lambda _line: None)  # fmt: skip
    assert "error" not in figures, figures["error"]
    return figures


def test_a_second_run_reuses_the_loaded_cluster(result: dict[str, Any], cluster_dir: Path) -> None:
    again: dict[str, Any] = envelope.measure(**{**_SMALL, "churn_seconds": 2.0, "burst": 2},
                                                           cluster_dir=str(cluster_dir), log=lambda _line: None)
    assert "error" not in again, again["error"]
    assert again["load"] == {**result["load"], "reused": True}
    assert again["workloads"] >= result["workloads"]
    assert again["every_report_correct_s"] is not None
    writer = again["api_writes"]["writer"]
    assert writer["creates"] == again["workloads"]  # the previous run's reports were deleted: all made anew


def test_every_workload_gets_a_correct_report(result: dict[str, Any]) -> None:
    assert result["workloads"] > 50
    assert result["every_report_correct_s"] is not None
    assert result["sampled_exact"] == {"compared": 10, "identical": 10}


def test_probes_never_fail_and_no_restart(result: dict[str, Any]) -> None:
    assert result["ready_s"] is not None
    assert result["probe_failures"] == {"healthz": 0, "readyz": 0}
    assert result["restarts_a_kubelet_would_make"] == 0
    assert result["scrapes"] >= 1
    assert result["scrape_failures"] == 0
    assert result["operator_exit"] == 0


def test_every_change_reaches_its_report(result: dict[str, Any]) -> None:
    churn = result["churn"]
    for phase in ("rollouts", "scattered", "burst"):
        assert churn[phase]["count"] > 0, phase


def test_one_write_per_report_and_events_only_on_transitions(result: dict[str, Any]) -> None:
    writer = result["api_writes"]["writer"]
    # the first write of each report is one request (server-side apply), never a create plus a status write
    assert writer["creates"] == result["workloads"]
    assert writer["apiWrites"] == writer["creates"] + writer["statusWrites"] + writer["deletes"] + writer["events"]
    assert result["memory_limit_mib"] > 0
    assert result["peak_rss_mib"] < result["memory_limit_mib"]
