"""`spreadwatch analyze -o openmetrics` and the --node-metrics flag of analyze and run."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from metrics_fixture import objects
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from metrics_contract import NODE_FAMILIES, SAFETY_FAMILIES, WINDOW_FAMILIES, WORKLOAD_FAMILIES
from spreadwatch.cli import build_parser, main, operator_config
from spreadwatch.config import MetricsOptions


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    objs = objects()
    for obj in objs:
        if obj["kind"] == "StatefulSet" and obj["metadata"]["name"] == "db":
            obj["metadata"]["labels"] = {"tier": "data"}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def families(text: str) -> dict[str, set[tuple[str, str, str]]]:
    """family name -> (namespace, kind, workload) of its samples (parsed by prometheus_client)."""
    out: dict[str, set[tuple[str, str, str]]] = {}
    for family in text_string_to_metric_families(text):
        keys = out.setdefault(family.name, set())
        for s in family.samples:
            if "workload" in s.labels:
                keys.add((s.labels["namespace"], s.labels["kind"], s.labels["workload"]))
    return out


def test_openmetrics_output_has_the_workload_families_and_build_info_only(cluster: str) -> None:
    code, out, err = run("analyze", "--cluster", cluster, "-o", "openmetrics")
    assert (code, err) == (0, "")
    assert out.endswith("# EOF\n") and out.count("# EOF") == 1
    got = families(out)
    pdb = {f for f in SAFETY_FAMILIES if "_pdb_" in f}  # (no PodDisruptionBudget in this cluster)
    assert set(got) == WORKLOAD_FAMILIES | WINDOW_FAMILIES | NODE_FAMILIES | (SAFETY_FAMILIES - pdb) | {
        "spreadwatch_build_info"
    }
    assert len(got["spreadwatch_workload_pods"]) == 5


def test_window_probabilities_are_certain_when_every_node_is_scored(cluster: str) -> None:
    """Fewer than 100 nodes: kube-scheduler scores every candidate, so the next replica lands on a best node
    with probability 1; with --percentage-of-nodes-to-score the window is still the whole (small) cluster."""
    for extra in ((), ("--percentage-of-nodes-to-score", "10")):
        _, out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics", *extra)
        scored = {
            s.labels["workload"]: s.value
            for f in text_string_to_metric_families(out)
            for s in f.samples
            if f.name == "spreadwatch_workload_nodes_scored"
        }
        candidates = {
            s.labels["workload"]: s.value
            for f in text_string_to_metric_families(out)
            for s in f.samples
            if f.name == "spreadwatch_workload_candidate_nodes"
        }
        assert scored == candidates
        odds = [
            s.value
            for f in text_string_to_metric_families(out)
            for s in f.samples
            if f.name == "spreadwatch_workload_best_node_probability"
        ]
        assert odds and set(odds) == {1.0}


def test_namespace_and_selector_filters(cluster: str) -> None:
    _, out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics", "-n", "other")
    assert families(out)["spreadwatch_workload_pods"] == {("other", "StatefulSet", "solo")}
    _, out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics", "-l", "tier=data")
    got = families(out)
    assert all(keys <= {("shop", "StatefulSet", "db")} for keys in got.values())
    assert got["spreadwatch_workload_node_pods"] == {("shop", "StatefulSet", "db")}


def test_node_metrics_flag_and_environment(cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _, out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics", "--node-metrics", "none")
    assert not NODE_FAMILIES & set(families(out))
    _, all_out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics", "--node-metrics", "all")
    # 4 candidate nodes for each of the four scorable workloads, two families
    assert all_out.count("spreadwatch_workload_node_score{") == 16
    assert all_out.count("spreadwatch_workload_node_pods{") == 16
    monkeypatch.setenv("SPREADWATCH_NODE_METRICS", "none")
    _, env_out, _ = run("analyze", "--cluster", cluster, "-o", "openmetrics")
    assert env_out == out
    monkeypatch.setenv("SPREADWATCH_NODE_METRICS", "some")
    code, out, err = run("analyze", "--cluster", cluster, "-o", "openmetrics")
    assert (code, out) == (2, "")
    assert err == "spreadwatch: error: SPREADWATCH_NODE_METRICS='some': expected one of default, none, all\n"


def test_bad_node_metrics_value_is_a_usage_error(cluster: str) -> None:
    code, out, err = run("analyze", "--cluster", cluster, "--node-metrics", "every")
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "--node-metrics" in err


def test_run_maps_node_metrics_into_the_operator_config(monkeypatch: pytest.MonkeyPatch) -> None:
    args = build_parser().parse_args(["run", "--node-metrics", "all", "--top-nodes", "5"])
    assert operator_config(args).metrics == MetricsOptions(node_series="all", top_n=5)
    assert operator_config(build_parser().parse_args(["run"])).metrics == MetricsOptions()
    monkeypatch.setenv("SPREADWATCH_NODE_METRICS", "none")
    assert operator_config(build_parser().parse_args(["run"])).metrics.node_series == "none"
