"""The spreadwatch CLI: outputs follow the contract; every bad-input class ends with one line and exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from k8s_objects import controller, node, owner, pod, service
from spreadwatch.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml"
REPORT_FIELDS = {
    "workload",
    "profile",
    "selector",
    "skipped",
    "skipReason",
    "pods",
    "candidateNodes",
    "excludedNodes",
    "nodes",
    "zones",
    "emptyNodeScore",
    "bestScore",
    "worstScore",
    "bestNodes",
    "nodeSkew",
    "zoneSkew",
    "health",
    "reasons",
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def write(path: Path, objects: list[dict[str, Any]] | dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(objects if isinstance(objects, list) else [objects]))
    return str(path)


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    objects = [
        node("n1", "z1"),
        node("n2", "z2"),
        node("n3", "z2"),
        service("web", {"app": "web"}),
        controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=3),
        pod("w1", {"app": "web"}, "n1", owners=[owner("ReplicaSet", "web")]),
        pod("w2", {"app": "web"}, "n2", owners=[owner("ReplicaSet", "web")]),
        controller("ReplicaSet", "bad", {"matchExpressions": [{"key": "a", "operator": "Within"}]}, {"a": "b"}),
    ]
    return write(tmp_path / "cluster.yaml", objects)


def test_score_json(cluster: str, tmp_path: Path) -> None:
    incoming = write(tmp_path / "pod.yaml", pod("next", {"app": "web"}, owners=[owner("ReplicaSet", "web")]))
    code, out, err = run("score", "--cluster", cluster, "--pod", incoming, "-o", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    # n1: node 0, zone z1=1 of max 1 -> 0; n2 same -> 0; n3: node 100, zone z2=1 -> 0 => 100/3 = 33
    assert data["scores"] == {"n1": 0, "n2": 0, "n3": 33}
    assert data["profile"] == "v1.28" and data["skipped"] is False
    assert data["selector"] == "app=web,app=web"


def test_score_explicit_nodes_in_order(cluster: str, tmp_path: Path) -> None:
    incoming = write(tmp_path / "pod.yaml", pod("next", {"app": "web"}))
    code, out, _ = run("score", "--cluster", cluster, "--pod", incoming, "--nodes", "n3,n1", "-o", "json")
    assert code == 0
    assert list(json.loads(out)["scores"]) == ["n3", "n1"]


def test_score_table(cluster: str, tmp_path: Path) -> None:
    incoming = write(tmp_path / "pod.yaml", pod("next", {"app": "web"}))
    code, out, _ = run("score", "--cluster", cluster, "--pod", incoming, "--profile", "v1.12")
    assert code == 0
    assert "NODE" in out and "SCORE" in out and "v1.12" in out


def test_analyze_json_contract_and_error_report(cluster: str) -> None:
    code, out, err = run("analyze", "--cluster", cluster, "-o", "json")
    assert (code, err) == (0, "")
    reports = {r["workload"]["name"]: r for r in json.loads(out)["reports"]}
    assert set(reports) == {"web", "bad"}
    for report in reports.values():
        assert report.keys() >= REPORT_FIELDS
    assert reports["bad"]["health"] == "Error"
    assert "not a valid label selector operator" in reports["bad"]["reasons"][0]
    web = reports["web"]
    assert web["pods"] == 2 and web["candidateNodes"] == 3 and web["health"] == "Balanced"
    assert web["zones"] == [
        {"zone": "z1", "region": "", "pods": 1, "candidateNodes": 1, "zoneScore": 0, "emptyNodeScore": 33},
        {"zone": "z2", "region": "", "pods": 1, "candidateNodes": 2, "zoneScore": 0, "emptyNodeScore": 33},
    ]
    assert web["bestNodes"] == ["n3"] and web["bestScore"] == 33 and web["worstScore"] == 0


def test_analyze_yaml_and_table(cluster: str) -> None:
    code, out, _ = run("analyze", "--cluster", cluster, "-o", "yaml")
    assert code == 0 and yaml.safe_load(out)["reports"]
    code, out, _ = run("analyze", "--cluster", cluster)
    assert code == 0
    assert out.splitlines()[0].split() == [
        "NAMESPACE",
        "KIND",
        "NAME",
        "PODS",
        "NODES",
        "ZONES",
        "NODE-SKEW",
        "ZONE-SKEW",
        "BEST",
        "HEALTH",
    ]


def test_analyze_example_cluster_verdicts() -> None:
    code, out, _ = run("analyze", "--cluster", str(EXAMPLE), "-o", "json")
    assert code == 0
    health = {r["workload"]["name"]: r["health"] for r in json.loads(out)["reports"]}
    assert health == {
        "trainer": "Balanced",
        "worker": "Skipped",
        "legacy-api": "Balanced",
        "postgres": "SinglePointOfFailure",
        "broken": "Error",
        "cache": "SinglePointOfFailure",
        "checkout": "Imbalanced",
        "web": "Balanced",
    }


def test_explain_table(cluster: str) -> None:
    code, out, err = run("explain", "--cluster", cluster, "rs/default/web")
    assert (code, err) == (0, "")
    assert "NODE-SCORE" in out and "ZONE-PART" in out
    row = next(line.split() for line in out.splitlines() if line.startswith("n3"))
    assert row == ["n3", "z2", "0", "100", "1", "0", "33.33", "0", "33"]


def test_json_input_and_list_documents(tmp_path: Path) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [node("n1"), controller("ReplicaSet", "r", {}, {"a": "b"})]}
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run("analyze", "--cluster", str(path), "-o", "json")
    assert code == 0 and len(json.loads(out)["reports"]) == 1


def test_directory_input_and_default_namespace(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    write(tmp_path / "m" / "nodes.yaml", [node("n1"), node("n2")])
    rs = controller("ReplicaSet", "r", {"matchLabels": {"a": "b"}}, {"a": "b"})
    del rs["metadata"]["namespace"]
    write(tmp_path / "m" / "rs.yml", rs)
    code, out, _ = run("analyze", "--cluster", str(tmp_path / "m"), "-o", "json")
    assert code == 0
    assert json.loads(out)["reports"][0]["workload"]["namespace"] == "default"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        pytest.param(None, ["analyze", "--cluster", "{tmp}/missing.yaml"], "no such file", id="missing file"),
        pytest.param(
            ("bad.yaml", "a: [1, 2\n"),
            ["analyze", "--cluster", "{tmp}/bad.yaml"],
            "malformed YAML",
            id="malformed yaml",
        ),
        pytest.param(
            ("bad.json", '{"kind": "Pod",'),
            ["analyze", "--cluster", "{tmp}/bad.json"],
            "malformed JSON",
            id="malformed json",
        ),
        pytest.param(
            ("scalar.yaml", "just a string\n"),
            ["analyze", "--cluster", "{tmp}/scalar.yaml"],
            "expected Kubernetes objects",
            id="not an object",
        ),
        pytest.param(
            ("typed.yaml", "kind: Pod\nmetadata: {name: p, labels: [a, b]}\n"),
            ["analyze", "--cluster", "{tmp}/typed.yaml"],
            "metadata.labels: expected a mapping",
            id="wrongly typed field",
        ),
        pytest.param(
            ("node.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["score", "--cluster", "{tmp}/node.yaml", "--pod", "{tmp}/node.yaml"],
            "expected a Pod",
            id="wrong kind where a Pod is expected",
        ),
        pytest.param(
            ("ok.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["analyze", "--cluster", "{tmp}/ok.yaml", "--profile", "v9.99"],
            "unknown profile",
            id="unknown profile",
        ),
        pytest.param(
            ("ok.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["explain", "--cluster", "{tmp}/ok.yaml", "deployment/default/nope"],
            "no Deployment",
            id="unknown workload",
        ),
        pytest.param(
            ("ok.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["explain", "--cluster", "{tmp}/ok.yaml", "nonsense"],
            "KIND/NAMESPACE/NAME",
            id="malformed workload reference",
        ),
        pytest.param(
            ("ok.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["analyze", "--cluster", "{tmp}/ok.yaml", "-l", "a in (b"],
            "invalid selector",
            id="invalid selector flag",
        ),
        pytest.param(
            ("ok.yaml", "kind: Node\nmetadata: {name: n1}\n"),
            ["analyze", "--cluster", "{tmp}/ok.yaml", "--top-nodes", "-1"],
            "whole number",
            id="bad flag value",
        ),
        pytest.param(None, ["analyze"], "required", id="missing flag"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, setup: tuple[str, str] | None, args: list[str], message: str
) -> None:
    if setup:
        (tmp_path / setup[0]).write_text(setup[1])
    code, out, err = run(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in err


def test_console_script_exit_code_and_no_traceback(tmp_path: Path) -> None:
    """Through the real entry point (a subprocess), bad input still gives exit 2 and one stderr line."""
    proc = subprocess.run(
        [sys.executable, "-m", "spreadwatch.cli", "analyze", "--cluster", str(tmp_path / "none.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
