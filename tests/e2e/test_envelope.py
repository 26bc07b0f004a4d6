"""The envelope harness (``make bench-envelope``) at a small scale: the operator as the chart runs it, on a real
API server loaded with a synthetic cluster, under churn with resyncs inside it. Behaviour only, never timings:
no probe failed, no restart a kubelet would have made, every workload got a correct report, every change
reached its report, the resyncs ran inside the churn (metadata only, after the first), every figure the
full-scale run reports is there (the start's floor, writes during and outside resyncs, the write-latency
distribution), and the sampled reports equal ``spreadwatch analyze`` of a ``kubectl get -o json`` dump."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster

from bench import envelope

pytestmark = pytest.mark.e2e

_SMALL: dict[str, Any] = {"scale": 0.01, "threads": 8, "churn_rate": 20.0, "churn_seconds": 10.0, "burst": 5,
                          "sample": 10, "report_timeout": 900.0, "resync_period": 3.0}  # fmt: skip


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
    # [began s, seconds, the operator's CPU s meanwhile, the machine's busy share, etcd + the API server's CPU s,
    # the harness's CPU s]
    course = result["scrape_course"]
    assert len(course) == result["scrapes"] and result["scrape_slowest"] in course
    assert all(at >= 0 and took > 0 and cpu >= 0 and 0 <= busy <= 1 and control >= 0 and harness >= 0
               for at, took, cpu, busy, control, harness in course)  # fmt: skip
    slowest = result["scrape_slowest"]
    assert result["scrape_slowest_cpu_s"] == slowest[2] and 0 <= result["scrape_machine_busy_p50"] <= 1
    assert (result["scrape_slowest_control_plane_cpu_s"], result["scrape_slowest_harness_cpu_s"]) == tuple(slowest[4:])
    assert result["operator_exit"] == 0


def test_every_change_reaches_its_report(result: dict[str, Any]) -> None:
    churn = result["churn"]
    for phase in ("rollouts", "scattered", "burst"):
        assert churn[phase]["count"] > 0, phase
    assert result["predictions_current_s"] >= 0  # every prediction, refreshed in turn, equal to the harness's


def test_one_write_per_report_and_events_only_on_transitions(result: dict[str, Any]) -> None:
    writer = result["api_writes"]["writer"]
    # the first write of each report is one request (server-side apply), never a create plus a status write
    assert writer["creates"] == result["workloads"]
    assert writer["apiWrites"] == writer["creates"] + writer["statusWrites"] + writer["deletes"] + writer["events"]
    assert result["memory_limit_mib"] > 0
    assert result["peak_rss_mib"] < result["memory_limit_mib"]


def test_resyncs_run_inside_the_churn_and_its_figures_are_measured(result: dict[str, Any]) -> None:
    resync = result["resync"]
    assert resync["resyncs"] >= 2  # a periodic resync every 3 s, wholly inside the two phases of 10 s
    assert resync["resync_pages"] >= resync["resyncs"]
    assert resync["churn_minutes"] > 0
    assert resync["changes_per_s_outside"] > 0  # the churn's own rate beside the writes' (writes per change)
    for phase in ("rollouts", "scattered"):
        figures = result["churn"][phase]
        latency = figures["write_latency"]
        assert latency["count"] == sum(n for _, n in latency["buckets"]) > 0  # every apply of the phase timed
        assert latency["p50_s"] is not None and latency["p99_s"] >= latency["p50_s"]
        assert figures["report_writes"] > 0
        assert figures["writes_per_s_outside_resync"] is not None
    assert resync["write_latency"]["count"] >= sum(result["churn"][p]["write_latency"]["count"]
                                                   for p in ("rollouts", "scattered"))  # fmt: skip


def test_the_start_is_measured_against_the_list_floor_of_a_loaded_api_server(result: dict[str, Any]) -> None:
    floor = result["start_floor"]
    assert floor["seconds"] > 0 and len(floor["runs_s"]) == 2
    assert set(floor["kinds"]) == {"Node", "Namespace", "PersistentVolume", "Pod", "Service", "ReplicationController",
                                   "ReplicaSet", "StatefulSet", "Deployment", "PersistentVolumeClaim",
                                   "PodDisruptionBudget"}  # fmt: skip
    assert floor["page_size"] == 500
    assert result["ready_over_floor"] > 0 and result["listed_s"] is not None
    assert result["ready_s"] > 0 and result["ready_probe_s"] > 0  # ready by its log; seen by a probe
    assert result["apiserver"]["loaded"] == 1  # the API server that served the load, not a fresh one
