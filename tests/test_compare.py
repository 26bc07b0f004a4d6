"""spreadwatch compare --from v1.28 --to v1.29 and explain --compare: the issue's upgrade question on
examples/cluster.yaml (checkout: SelectorSpread's best node-a1/a2 100; PodTopologySpread's node-legacy 100)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import yaml

from spreadwatch.cli import main

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
