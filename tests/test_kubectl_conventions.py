"""The kubectl plugin's conventions, in process (the real ``kubectl`` runs it in tests/e2e/test_kubectl_plugin.py):
namespace from the kubeconfig context unless -n or -A, --context, --kubeconfig, --sort-by, -o wide|name|json|yaml,
--no-headers, -l, workload names, the default command and one-line errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch import cli, kubectl_plugin
from spreadwatch.kubectl_plugin import main

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "cluster.yaml")
HEALTH_ORDER = [
    *("Unschedulable", "SinglePointOfFailure", "ZoneOutageUnsafe", "Imbalanced", "Error", "Skipped", "Balanced"),
]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kubeconfig whose current context's namespace is shop; context data-ctx points at data, bare-ctx at none."""
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {"name": "shop-ctx", "context": {"cluster": "c", "user": "u", "namespace": "shop"}},
            {"name": "data-ctx", "context": {"cluster": "c", "user": "u", "namespace": "data"}},
            {"name": "bare-ctx", "context": {"cluster": "c", "user": "u"}},
        ],
        "current-context": "shop-ctx",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return str(path)


def names(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines()[1:]]


def analyze_json(*argv: str) -> list[dict[str, Any]]:
    code, out, err = run("analyze", "--cluster", EXAMPLE, *argv, "-o", "json")
    assert (code, err) == (0, "")
    reports: list[dict[str, Any]] = json.loads(out)["reports"]
    return reports


def test_namespace_comes_from_the_context_unless_n_or_A(kubeconfig: str) -> None:
    code, out, _ = run("analyze", "--cluster", EXAMPLE)
    assert code == 0 and out.splitlines()[0].split()[:2] == ["KIND", "NAME"]  # no NAMESPACE column
    assert names(out) == ["broken", "cache", "checkout", "web"]  # shop, the current context's namespace
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "--context", "data-ctx")
    assert names(out) == ["legacy-api", "postgres"]
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "--context", "bare-ctx")
    assert out == "No workloads found in default namespace.\n"
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-n", "batch")
    assert names(out) == ["trainer", "worker"]
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-A", "-n", "batch")  # -A wins, as in kubectl
    assert out.splitlines()[0].split()[0] == "NAMESPACE" and len(out.splitlines()) == 9
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "--all-namespaces")
    assert len(out.splitlines()) == 9


def test_kubeconfig_flag_and_missing_kubeconfig(
    kubeconfig: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nothing-here"))
    _, out, _ = run("analyze", "--cluster", EXAMPLE)
    assert out == "No workloads found in default namespace.\n"  # no kubeconfig: default, like kubectl
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "--kubeconfig", kubeconfig)
    assert names(out) == ["broken", "cache", "checkout", "web"]
    code, out, err = run("analyze", "--cluster", EXAMPLE, "--kubeconfig", kubeconfig, "--context", "nope")
    assert (code, out) == (2, "") and err == (
        f"kubectl spreadwatch: error: context 'nope' not found in the kubeconfig ({kubeconfig})\n"
    )
    code, _, err = run("analyze", "--cluster", EXAMPLE, "--kubeconfig", str(tmp_path / "none"))
    assert code == 2 and err.count("\n") == 1 and "cannot read kubeconfig" in err


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("node-skew", "nodeSkew"),
        ("zone-skew", "zoneSkew"),
        ("pods", "pods"),
        ("best-score", "bestScore"),
        (".nodeSkew", "nodeSkew"),
        ("{.zoneSkew}", "zoneSkew"),
        ("bestScore", "bestScore"),
    ],
)
def test_sort_by_numbers_ascending(key: str, field: str) -> None:
    reports = analyze_json("-A", "--sort-by", key)
    values = [r[field] for r in reports]
    assert values == sorted(values) and len(values) == 8


def test_sort_by_health_puts_the_worst_first_and_keeps_ties_in_name_order() -> None:
    reports = analyze_json("-A", "--sort-by", "health")
    ranks = [HEALTH_ORDER.index(r["health"]) for r in reports]
    assert ranks == sorted(ranks)
    balanced = [r["workload"]["name"] for r in reports if r["health"] == "Balanced"]
    assert balanced == ["trainer", "legacy-api", "web"]  # batch < data < shop: the unsorted order


def test_output_formats(kubeconfig: str) -> None:
    code, out, _ = run("analyze", "--cluster", EXAMPLE, "-o", "name")
    assert code == 0 and out.splitlines() == [
        "deployment.apps/broken",
        "deployment.apps/cache",
        "deployment.apps/checkout",
        "deployment.apps/web",
    ]
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-A", "-o", "name")
    assert "replicationcontroller/legacy-api" in out.splitlines() and "statefulset.apps/postgres" in out.splitlines()
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-o", "wide")
    header = out.splitlines()[0].split()
    assert header[-4:] == ["PROFILE", "REPLICAS", "BEST-NODES", "REASONS"]
    checkout = next(line for line in out.splitlines() if " checkout " in line)
    assert "node-a1,node-a2" in checkout and "NodeSkew: 3 > 1; ZoneSkew: 3 > 1" in checkout
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-o", "yaml")
    assert [r["workload"]["name"] for r in yaml.safe_load(out)["reports"]] == ["broken", "cache", "checkout", "web"]
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "--no-headers")
    assert [line.split()[1] for line in out.splitlines()] == ["broken", "cache", "checkout", "web"]
    _, out, _ = run("analyze", "--cluster", EXAMPLE, "-n", "empty", "--no-headers")
    assert out == ""


def test_selector_and_forwarded_report_flags(kubeconfig: str) -> None:
    assert [r["workload"]["name"] for r in analyze_json("-A", "-l", "app=checkout")] == ["checkout"]
    strict = analyze_json("-n", "shop", "--max-node-skew", "0", "--max-zone-skew", "0")
    assert {r["workload"]["name"]: r["health"] for r in strict}["web"] == "Imbalanced"


def test_workload_commands_take_type_slash_name_in_the_namespace(kubeconfig: str) -> None:
    code, out, err = run("simulate", "deploy/checkout", "--add", "2", "--cluster", EXAMPLE, "-o", "json")
    assert (code, err) == (0, "")
    direct = io.StringIO()
    cli.main(["simulate", "--cluster", EXAMPLE, "deployment/shop/checkout", "--add", "2", "-o", "json"], direct)
    assert out == direct.getvalue()
    code, out, _ = run("explain", "--cluster", EXAMPLE, "-n", "data", "sts/postgres")
    assert code == 0 and out.startswith("Workload:    StatefulSet data/postgres")
    code, out, _ = run("rebalance", "--cluster", EXAMPLE, "deployment/shop/checkout", "-A")  # TYPE/NS/NAME as is
    assert code == 0 and "kubectl delete pod checkout-6f7d5b9c4-0 -n shop" in out
    code, out, err = run("rebalance", "--cluster", EXAMPLE, "-A", "deploy/checkout")
    assert (code, out) == (2, "") and "name the namespace with -n" in err and err.count("\n") == 1


def test_summary_is_the_default_command(kubeconfig: str) -> None:
    code, out, _ = run("--cluster", EXAMPLE)
    assert code == 0 and out.startswith("Workloads: 4 (profile v1.28)")  # shop only
    _, out_all, _ = run("--cluster", EXAMPLE, "-A")
    assert out_all.startswith("Workloads: 8")
    code, out, _ = run("-A", "--cluster", EXAMPLE, "-o", "json")
    assert code == 0 and json.loads(out)["workloads"] == 8
    _, explicit, _ = run("summary", "--cluster", EXAMPLE, "-A")
    assert explicit == out_all


def test_compare_is_forwarded_when_the_build_has_it() -> None:
    code, out, err = run("compare", "--cluster", EXAMPLE, "--help")
    if "compare" in kubectl_plugin._available_commands():
        assert code == 0 and "compare" in out
    else:
        assert (code, out) == (2, "")
        assert err == "kubectl spreadwatch: error: compare: this build of spreadwatch has no 'compare' command\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bogus"], "unknown command 'bogus'"),
        (["analyze", "--cluster", EXAMPLE, "--sort-by", "age"], "argument --sort-by: 'age': expected one of"),
        (["analyze", "--cluster", EXAMPLE, "-o", "wider"], "invalid choice: 'wider'"),
        (["analyze", "--cluster", EXAMPLE, "-w"], "--watch needs the live cluster"),
        (["analyze", "--cluster", EXAMPLE, "--watch-interval", "0"], "expected seconds > 0"),
        (["analyze", "--cluster", "/nonexistent.yaml", "-A"], "cannot read /nonexistent.yaml"),
        (["simulate", "--cluster", EXAMPLE, "-n", "shop", "deploy/nope", "--add", "1"], "no Deployment shop/nope"),
        (["analyze", "--cluster", EXAMPLE, "-A", "-l", "a in (b"], "selector"),
        (["analyze", "--cluster", EXAMPLE, "-A", "-n"], "argument -n/--namespace: expected one argument"),
    ],
)
def test_errors_are_one_line_exit_2(argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_help_and_version() -> None:
    code, out, _ = run("--help")
    assert code == 0 and out.startswith("usage: kubectl spreadwatch")
    for command in kubectl_plugin.COMMANDS:
        assert f"\n  {command} " in out
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("kubectl-spreadwatch ")
    code, out, _ = run("simulate", "--help")  # a command's own help is spreadwatch's
    assert code == 0 and "--add N" in out and "--runs K" in out


def test_a_kubeconfig_list_is_merged_like_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$KUBECONFIG=a:b: the current context named in a, defined (with its namespace) in b."""
    first = {"apiVersion": "v1", "kind": "Config", "current-context": "data-ctx", "contexts": [], "clusters": []}
    second = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "data-ctx", "context": {"cluster": "c", "user": "u", "namespace": "data"}}],
    }
    (tmp_path / "a").write_text(yaml.safe_dump(first))
    (tmp_path / "b").write_text(yaml.safe_dump(second))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code, out, _ = run("analyze", "--cluster", EXAMPLE, "-o", "name")
    assert (code, out) == (0, "replicationcontroller/legacy-api\nstatefulset.apps/postgres\n")
