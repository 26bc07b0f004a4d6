"""spreadwatch compare --from v1.28 --to v1.29 and explain --compare: the issue's upgrade question on
examples/cluster.yaml (checkout: SelectorSpread's best node-a1/a2 100; PodTopologySpread's node-legacy 100)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from spreadwatch.cli import main
from spreadwatch.model import WorkloadKey

CLUSTER = str(Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml")


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _checkout(doc: dict[str, object]) -> dict[str, object]:
    rows = doc["workloads"]
    assert isinstance(rows, list)
    (row,) = [r for r in rows if r["workload"]["name"] == "checkout"]
    return row


def test_compare_json_answers_the_upgrade_question() -> None:
    code, out, err = _run("compare", "--cluster", CLUSTER, "--from", "v1.28", "--to", "v1.29", "-o", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert (doc["from"], doc["to"]) == ("v1.28", "v1.29")
    row = _checkout(doc)
    assert row["from"] == {"bestScore": 100, "bestNodes": ["node-a1", "node-a2"]}
    assert row["to"] == {"bestScore": 100, "bestNodes": ["node-legacy"]}
    assert (row["bestNodesChanged"], row["bestNodesOverlap"]) == (True, False)
    first = row["moved"][0]  # node-legacy: SelectorSpread 33 (rank 3), PodTopologySpread 100 (rank 1)
    assert (first["node"], first["fromScore"], first["toScore"], first["fromRank"], first["toRank"]) == (
        "node-legacy",
        33,
        100,
        3,
        1,
    )
    assert first["causes"] == ["beta-only zone label (PodTopologySpread: zoneless)"]
    assert "topology.kubernetes.io/zone maxSkew 5" in row["spreading"]
    assert doc["summary"]["bestNodesDisjoint"] >= 1


def test_compare_yaml_and_table() -> None:
    code, out, _ = _run("compare", "--cluster", CLUSTER, "-o", "yaml")
    assert code == 0 and _checkout(yaml.safe_load(out))["bestNodesOverlap"] is False
    code, out, _ = _run("compare", "--cluster", CLUSTER)
    assert code == 0
    line = next(x for x in out.splitlines() if " checkout " in x)
    assert "100:node-a1,node-a2" in line and "100:node-legacy" in line and " NO " in line
    assert "best nodes changed in" in out


def test_compare_with_custom_defaults(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
        "      defaultingType: List\n      defaultConstraints:\n"
        "      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}\n"
    )
    code, out, _ = _run("compare", "--cluster", CLUSTER, "--scheduler-config", str(config), "-o", "json")
    assert code == 0
    row = _checkout(json.loads(out))
    # zone-only List defaults: node-legacy (no GA zone) is ignored; zone a (0 pods) is best
    assert row["to"]["bestNodes"] == ["node-a1", "node-a2"] and row["bestNodesOverlap"] is True


def test_explain_compare_side_by_side() -> None:
    code, out, _ = _run("explain", "--cluster", CLUSTER, "deployment/shop/checkout", "--compare", "v1.29")
    assert code == 0
    compare = out.split("Compare:     v1.28 vs v1.29", 1)[1]  # the side-by-side table
    rows = {line.split()[0]: line.split() for line in compare.splitlines() if line.startswith("node-")}
    assert rows["node-legacy"][1:5] == ["33", "100", "#3->#1", "beta-only"]
    assert rows["node-a1"][1:4] == ["100", "77", "#1->#2"]


def test_compare_unknown_profile_is_one_line() -> None:
    code, out, err = _run("compare", "--cluster", CLUSTER, "--to", "v9")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "unknown profile" in err


def _index_with_comparison() -> Any:
    from spreadwatch.index import SpreadIndex
    from spreadwatch.scoring import get_profile
    from spreadwatch.snapshot import load_snapshot

    index = SpreadIndex(get_profile("v1.28"), compare=get_profile("v1.29"))
    index.load(load_snapshot([CLUSTER]))
    return index


def test_operator_comparison_block_and_metric() -> None:
    """--compare-profile v1.29 on a v1.28 operator: each report carries the comparison; it follows events."""
    from spreadwatch.metrics import MetricsOptions, registry_for, render
    from spreadwatch.model import parse_object

    index = _index_with_comparison()
    report = index.report_for(WorkloadKey("shop", "Deployment", "checkout"))
    assert report is not None and report.comparison is not None
    assert report.to_dict()["comparison"] == {
        "profile": "v1.29",
        "bestScore": 100,
        "bestNodes": ["node-legacy"],
        "bestNodeCount": 1,
        "bestNodesOverlap": False,  # v1.28's best: node-a1, node-a2
    }
    text = render(registry_for(index, MetricsOptions()), openmetrics=True).decode()
    assert (
        'spreadwatch_workload_comparison_best_nodes_overlap{namespace="shop",kind="Deployment",'
        'workload="checkout",profile="v1.29"} 0' in text
    )
    # node-legacy gets the GA zone label of its beta zone: under v1.29 it is no longer zoneless
    index.take_dirty()
    relabelled = parse_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": "node-legacy",
                "labels": {
                    "kubernetes.io/hostname": "node-legacy",
                    "failure-domain.beta.kubernetes.io/zone": "eu-west-1b",
                    "failure-domain.beta.kubernetes.io/region": "eu-west",
                    "topology.kubernetes.io/zone": "eu-west-1b",
                },
            },
        }
    )
    assert relabelled is not None
    index.apply(relabelled)
    assert ("shop", "Deployment", "checkout") in index.take_dirty()[0]
    after = index.report_for(WorkloadKey("shop", "Deployment", "checkout"))
    assert after is not None and after.comparison is not None
    assert after.comparison.best_nodes == ("node-a1", "node-a2") and after.comparison.best_nodes_overlap is True


def test_v129_status_with_comparison_validates_against_the_crd() -> None:
    """Every status a v1.29 operator with --compare-profile v1.28 writes fits the CRD schema."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "runtime"))
    from test_status_conditions import _status_schema, validate

    from spreadwatch.index import SpreadIndex
    from spreadwatch.runtime.writing.status import build_status
    from spreadwatch.scoring import get_profile
    from spreadwatch.snapshot import load_snapshot

    index = SpreadIndex(get_profile("v1.29"), compare=get_profile("v1.28"))
    index.load(load_snapshot([CLUSTER]))
    schema = _status_schema()
    reports = index.reports()
    assert reports and all(r.comparison is not None for r in reports)
    for report in reports:
        status = build_status(report, 1, None)
        assert status["profile"] == "v1.29" and status["comparison"]["profile"] == "v1.28"
        assert not validate(status, schema), report.workload
