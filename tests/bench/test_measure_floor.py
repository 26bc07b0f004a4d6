"""bench/measure_floor.py: the CPython floor under issue 13's decode targets, at scale 0.005.

Nothing is timed or asserted about speed: that the floor really decodes and counts every pod of the dump and
answers every workload (a floor that skipped work would understate it), and that its rows are rendered only
when it was measured.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from repo_tools import load_bench

_WORKLOADS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return list(load_bench("synth").generate(0.005, seed=1))


def test_the_floor_counts_every_pod_and_answers_every_workload(objects: list[dict[str, Any]], tmp_path: Path) -> None:
    floor, decode_bench = load_bench("measure_floor"), load_bench("decode_bench")
    dump = tmp_path / "compact.json"
    dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    kinds = Counter(str(o["kind"]) for o in objects)
    got = floor.measure_floor(dump, decode_bench.api_pages(objects), 2)
    assert got.pods == got.listed_pods == kinds["Pod"] > 0
    assert got.workloads == sum(kinds[k] for k in _WORKLOADS) > 0
    parts = (got.cold_decode_cpu_s, got.cold_count_cpu_s, got.cold_workloads_cpu_s)
    assert all(p >= 0 for p in parts) and got.cold.cpu_s > 0 and got.listing.wall_s > 0


def test_the_floor_groups_pods_by_namespace_labels_and_node() -> None:
    # 3 pods of app=a (2 on n1, 1 on n2), 1 pod of app=b: the Deployment of app=a sees 2 on its busiest node, 2 nodes
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}}}
    items = [
        {**pod, "spec": {"nodeName": "n1"}},
        {**pod, "spec": {"nodeName": "n1"}},
        {**pod, "spec": {"nodeName": "n2"}},
        {**pod, "metadata": {"name": "q", "namespace": "ns", "labels": {"app": "b"}}, "spec": {"nodeName": "n1"}},
        {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
         "spec": {"template": {"metadata": {"labels": {"app": "a"}}}}},
        {"kind": "Node", "metadata": {"name": "n1"}},
    ]  # fmt: skip
    data = orjson.dumps({"kind": "List", "items": items})
    decode_s, count_s, workloads_s, pods, answers = load_bench("measure_floor")._cold_once(data)
    assert (pods, answers) == (4, [("d", 2, 2)])
    assert min(decode_s, count_s, workloads_s) >= 0


def test_floor_rows_only_when_measured() -> None:
    render_targets, bench_results = load_bench("render_targets"), load_bench("bench_results")
    cw = bench_results.CpuWall(cpu_s=0.5, wall_s=0.6)
    measured = SimpleNamespace(floor=bench_results.FloorResult(cw, 0.3, 0.1, 0.1, 10, 2, cw, 10))
    cold, listing = render_targets._floor_rows(measured)
    rows = [*cold, *listing]
    assert [(t.value, t.cpu, t.limit) for t in rows] == [(0.6, 0.5, None), (0.6, 0.5, None)]  # figures, no verdict
    assert "10 pods" in rows[1].figure
    unmeasured = SimpleNamespace(floor=None)
    assert render_targets._floor_rows(unmeasured) == ([], [])
