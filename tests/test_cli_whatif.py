"""CLI contract of ``spreadwatch simulate|rebalance|summary``: every flag, every output format, and bad input
as one line on stderr with exit code 2."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml")
CHECKOUT = "deployment/shop/checkout"
STEP_FIELDS = ["step", "bestScore", "bestNodes", "bestNodeCount", "node", "zone"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def ok_json(*argv: str) -> Any:
    code, out, err = run(*argv, "-o", "json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_simulate_add_json_contract() -> None:
    data = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "3")
    assert list(data) == ["steps", "final"]
    assert [list(s) for s in data["steps"]] == [STEP_FIELDS] * 3
    assert [s["step"] for s in data["steps"]] == [1, 2, 3]
    assert data["final"]["replicas"] == 7 and data["final"]["pods"] == 7
    assert data["final"]["workload"]["name"] == "checkout"
    code, out, _ = run("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "3", "-o", "yaml")
    assert code == 0 and yaml.safe_load(out) == data


def test_simulate_table_shows_steps_and_final_health() -> None:
    code, out, err = run("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "Choice:    first best node by name" in lines
    header = next(i for i, line in enumerate(lines) if line.startswith("STEP"))
    assert lines[header].split() == ["STEP", "BEST", "TIED", "BEST-NODES", "NODE", "ZONE"]
    assert lines[header + 1].split() == ["1", "100", "2", "node-a1,node-a2", "node-a1", "eu-west-1a"]
    assert any(line.startswith("After:     6 pods") for line in lines)


def test_simulate_seed_top_nodes_profile_and_thresholds() -> None:
    seeded = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "4", "--seed", "11")
    assert seeded == ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "4", "--seed", "11")
    code, out, _ = run("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--seed", "11")
    assert code == 0
    assert "uniformly random among the best (seed 11)" in out
    one = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--top-nodes", "1")
    assert one["steps"][0]["bestNodes"] == ["node-a1"] and one["steps"][0]["bestNodeCount"] == 2
    old = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--profile", "v1.16")
    assert old["final"]["profile"] == "v1.16" and old["steps"][0]["bestScore"] <= 10
    lax = ok_json(
        "simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--max-node-skew", "9", "--max-zone-skew", "9"
    )
    assert lax["final"]["health"] == "Balanced"
    spof = ok_json("simulate", "--cluster", EXAMPLE, "deployment/shop/cache", "--remove", "1", "--spof-min-pods", "1")
    assert spof["final"]["health"] == "SinglePointOfFailure"


def test_simulate_scale_down_rollout_and_runs() -> None:
    data = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--scale-down", "2")
    keys = ["step", "pod", "node", "zone", "rank", "candidates", "candidateCount", "replicaSet", "nodeSkew",
            "zoneSkew", "health"]  # fmt: skip
    assert [list(s) for s in data["steps"]] == [keys] * 2
    assert [s["node"] for s in data["steps"]] == ["node-b1", "node-b1"]
    assert ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--remove", "2") == data  # the older name
    rollout = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--rollout")
    assert list(rollout) == ["newReplicaSet", "restart", "maxSurge", "maxUnavailable", "steps", "worst", "end", "final"]
    assert rollout["final"]["pods"] == 4 and rollout["steps"][-1]["replicas"][1] >= 1
    code, out, _ = run("simulate", "--cluster", EXAMPLE, CHECKOUT, "--rollout")
    assert code == 0 and "Worst:     node skew" in out
    runs = ok_json("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "2", "--runs", "5", "--seed", "3")
    assert runs["runs"] == 5 and runs["seeds"] == [3, 7]
    assert sum(runs["health"].values()) == sum(runs["nodeSkew"].values()) == 5
    code, out, _ = run("simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "2", "--runs", "5")
    assert code == 0 and out.splitlines()[0] == "Runs:      5 (seeds 0-4), +2 replicas each"


def test_rebalance_outputs() -> None:
    code, out, err = run("rebalance", "--cluster", EXAMPLE, CHECKOUT)
    assert (code, err) == (0, "")
    assert "Plan:      2 eviction(s) make it Balanced" in out
    lines = out.splitlines()
    commands = lines.index("Commands (a plan only: spreadwatch evicted nothing):")
    assert lines[commands + 1 : commands + 3] == [
        "  kubectl delete pod checkout-6f7d5b9c4-0 -n shop",
        "  kubectl delete pod checkout-6f7d5b9c4-1 -n shop",
    ]
    assert any(line.startswith("Deletion costs: ") for line in lines)
    data = ok_json("rebalance", "--cluster", EXAMPLE, CHECKOUT)
    assert list(data) == [
        "found", "message", "statesExplored", "initial", "evictions", "commands", "final", "deletionCosts"
    ]  # fmt: skip
    assert data["found"] and len(data["evictions"]) == 2
    code, out, _ = run("rebalance", "--cluster", EXAMPLE, CHECKOUT, "-o", "yaml")
    assert yaml.safe_load(out) == data
    limited = ok_json("rebalance", "--cluster", EXAMPLE, CHECKOUT, "--max-evictions", "1")
    assert not limited["found"] and limited["message"].startswith("no plan exists")
    budget = ok_json("rebalance", "--cluster", EXAMPLE, CHECKOUT, "--max-states", "1")
    assert not budget["found"] and "search budget" in budget["message"]
    code, out, _ = run("rebalance", "--cluster", EXAMPLE, CHECKOUT, "--max-evictions", "1")
    assert code == 0 and "Plan:      no plan exists" in out and "kubectl delete" not in out


def test_summary_outputs_and_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run("summary", "--cluster", EXAMPLE)
    assert (code, err) == (0, "")
    assert out.startswith("Workloads: 8 (profile v1.28)")
    for section in ("HEALTH", "Worst 5:", "Zones:", "Best node set differs from the baseline:"):
        assert section in out
    data = ok_json("summary", "--cluster", EXAMPLE)
    assert list(data) == ["profile", "workloads", "health", "worst", "zones", "bestNodeSetChanges", "notes"]
    assert ok_json("summary", "--cluster", EXAMPLE, "-n", "shop")["workloads"] == 4
    assert ok_json("summary", "--cluster", EXAMPLE, "-l", "app=web")["workloads"] == 1
    assert len(ok_json("summary", "--cluster", EXAMPLE, "--worst", "1")["worst"]) == 1
    code, out, _ = run("summary", "--cluster", EXAMPLE, "-o", "yaml")
    assert yaml.safe_load(out) == data
    monkeypatch.setenv("SPREADWATCH_PROFILE", "v1.16")
    assert ok_json("summary", "--cluster", EXAMPLE)["profile"] == "v1.16"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", "--cluster", EXAMPLE, CHECKOUT], "one of the arguments --add --scale-down/--remove --rollout"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--remove", "1"], "not allowed with argument"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "0"], "expected a whole number >= 1"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "x"], "expected a whole number, got 'x'"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--remove", "1", "--runs", "1"], "--runs applies to --add only"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--rollout", "--seed", "1"], "--seed applies to --add and"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--remove", "9"], "cannot scale down by 9, it has 4 replicas"),
        (["simulate", "--cluster", EXAMPLE, "sts/data/postgres", "--rollout"], "not a StatefulSet's"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--runs", "0"], "expected a whole number >= 1"),
        (["simulate", "--cluster", EXAMPLE, "deployment/shop/nope", "--add", "1"], "no Deployment shop/nope"),
        (["simulate", "--cluster", EXAMPLE, "deployment/shop/broken", "--add", "1"], "cannot be simulated"),
        (["simulate", "--cluster", EXAMPLE, CHECKOUT, "--add", "1", "--profile", "v9"], "unknown profile 'v9'"),
        (["simulate", "--cluster", "/nonexistent.yaml", CHECKOUT, "--add", "1"], "cannot read /nonexistent.yaml"),
        (["rebalance", "--cluster", EXAMPLE, CHECKOUT, "--max-evictions", "-1"], "expected a whole number >= 0"),
        (["rebalance", "--cluster", EXAMPLE, CHECKOUT, "--max-states", "0"], "expected a whole number >= 1"),
        (["rebalance", "--cluster", EXAMPLE, "checkout"], "expected KIND/NAMESPACE/NAME"),
        (["summary", "--cluster", EXAMPLE, "-l", "a in (b"], "selector"),
        (["summary", "--cluster", EXAMPLE, "--worst", "-2"], "expected a whole number >= 0"),
        (["summary", "--cluster", EXAMPLE, "-o", "wide"], "invalid choice: 'wide'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_live_mode_without_kubeconfig_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for argv in (["simulate", CHECKOUT, "--add", "1"], ["rebalance", CHECKOUT], ["summary"]):
        code, _, err = run(*argv)
        assert code == 2 and err.count("\n") == 1 and "kubeconfig" in err
