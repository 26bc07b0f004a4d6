"""--node-metrics modes: which node series exist, how many, and that their values match the reports."""

from __future__ import annotations

import pytest
from metrics_fixture import DB, objects
from prometheus_client.parser import text_string_to_metric_families

from spreadwatch.errors import InputError
from spreadwatch.index import SpreadIndex
from spreadwatch.metrics import MetricsOptions, registry_for, render
from spreadwatch.model import WorkloadKey
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile, zone_key
from spreadwatch.snapshot import Snapshot

NodeKey = tuple[str, str, str, str]  # namespace, kind, workload, node


def load(options: ReportOptions | None = None) -> SpreadIndex:
    idx = SpreadIndex(get_profile("v1.28"), options or ReportOptions())
    idx.load(Snapshot.from_objects(objects()))
    return idx


def node_series(idx: SpreadIndex, mode: str, top_n: int = 3) -> dict[str, dict[NodeKey, float]]:
    text = render(registry_for(idx, MetricsOptions(node_series=mode, top_n=top_n))).decode()  # type: ignore[arg-type]
    out: dict[str, dict[NodeKey, float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if "node" in s.labels:
                key = (s.labels["namespace"], s.labels["kind"], s.labels["workload"], s.labels["node"])
                out.setdefault(s.name, {})[key] = s.value
    return out


def total_series(idx: SpreadIndex, mode: str) -> int:
    text = render(registry_for(idx, MetricsOptions(node_series=mode))).decode()  # type: ignore[arg-type]
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def test_default_node_pods_on_busy_nodes_and_node_scores_on_the_top_n() -> None:
    idx = load()
    got = node_series(idx, "default")
    busy: dict[NodeKey, float] = {}
    top: dict[NodeKey, float] = {}
    for r in idx.reports():
        w = r.workload
        busy.update({(w.namespace, w.kind, w.name, e.node): e.pods for e in r.nodes if e.pods > 0})
        top.update({(w.namespace, w.kind, w.name, e.node): e.score for e in r.nodes[:3]})
    assert got["spreadwatch_workload_node_pods"] == busy
    assert got["spreadwatch_workload_node_score"] == top
    # db: pods on node-a1 (2) and node-b1 (1); best three: node-x 100, node-b1 50, node-a2 33
    assert {k[3]: v for k, v in busy.items() if k[:3] == DB} == {"node-a1": 2, "node-b1": 1}
    assert {k[3]: v for k, v in top.items() if k[:3] == DB} == {"node-x": 100, "node-b1": 50, "node-a2": 33}


def test_series_counts_per_mode() -> None:
    idx = load()
    reports = idx.reports()
    workloads = len(reports)  # 5
    zone_rows = sum(len(r.zones) for r in reports)  # db 2, cache 2, spread 2, bad 0, solo 2 = 8
    busy = sum(1 for r in reports for e in r.nodes if e.pods > 0)  # db 2, cache 1, solo 1 = 4
    top = sum(min(3, len(r.nodes)) for r in reports)  # 3 each except bad (no candidates) = 12
    candidates = sum(r.candidate_nodes for r in reports)  # 4 each except bad = 16
    scored = sum(1 for r in reports if r.best_node_probability is not None)  # not bad (no candidates), skipped = 3
    forecast = sum(1 for r in reports if r.next_pod_schedulable is not None)  # not bad (Error) = 4
    # safety: zone and node loss (2 each), the scale-down's zone skew when it deletes a pod; none for Error
    safety = sum(
        2 * (r.resilience.zone_loss is not None) + 2 * (r.resilience.node_loss is not None) + (r.scale_down is not None)
        for r in reports
        if r.resilience is not None
    )  # db 5, cache 5, spread 4 (no pod to delete), bad 0, solo 5 = 19
    # build_info, 16 workload series (8 values, 7 health, skipped), next pod schedulable unless Error, 2
    # probabilities when scored, 4 zone series
    base = 1 + workloads * (8 + 7 + 1) + forecast + scored * 2 + zone_rows * 4 + safety
    assert (workloads, zone_rows, busy, top, candidates, scored, forecast, safety) == (5, 8, 4, 12, 16, 3, 4, 19)
    assert total_series(idx, "none") == base
    assert total_series(idx, "default") == base + busy + top
    assert total_series(idx, "all") == base + 2 * candidates


def test_none_leaves_the_node_families_out() -> None:
    text = render(registry_for(load(), MetricsOptions(node_series="none"))).decode()
    assert "spreadwatch_workload_node_score" not in text
    assert "spreadwatch_workload_node_pods" not in text
    assert "spreadwatch_workload_zone_pods" in text


def test_all_gives_every_candidate_node_its_report_score_and_pods() -> None:
    idx = load()
    got = node_series(idx, "all")
    profile = get_profile("v1.28")
    nodes = {n.name: n for n in Snapshot.from_objects(objects()).nodes}
    for r in idx.reports():
        w = r.workload
        key = (w.namespace, w.kind, w.name)
        mine_scores = {k[3]: v for k, v in got["spreadwatch_workload_node_score"].items() if k[:3] == key}
        mine_pods = {k[3]: v for k, v in got["spreadwatch_workload_node_pods"].items() if k[:3] == key}
        assert len(mine_scores) == len(mine_pods) == r.candidate_nodes
        assert sum(mine_pods.values()) == r.pods
        for node, score in mine_scores.items():
            assert score == r.score_of(node, zone_key(nodes[node].labels, profile))


def test_busy_nodes_beyond_max_report_nodes_still_get_series() -> None:
    capped = load(ReportOptions(max_nodes=1))  # db lists only its busiest node (node-a1) and omits node-b1
    db = capped.report_for(WorkloadKey("shop", "StatefulSet", "db"))
    assert db is not None and db.nodes_omitted == 1
    full = load()
    for mode in ("default", "all"):
        assert node_series(capped, mode)["spreadwatch_workload_node_pods"] == node_series(full, mode)[
            "spreadwatch_workload_node_pods"
        ]
    assert node_series(capped, "all") == node_series(full, "all")


def test_top_n_is_capped_at_the_reports_top_nodes() -> None:
    idx = load()
    scores = node_series(idx, "default", top_n=10)["spreadwatch_workload_node_score"]
    assert sum(1 for k in scores if k[:3] == DB) == 3
    one = node_series(idx, "default", top_n=1)["spreadwatch_workload_node_score"]
    assert {k[3]: v for k, v in one.items() if k[:3] == DB} == {"node-x": 100}


def test_options_are_validated() -> None:
    with pytest.raises(InputError, match="node metrics"):
        MetricsOptions(node_series="some")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="top-N"):
        MetricsOptions(top_n=-1)
