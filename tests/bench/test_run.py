"""bench/run.py, the one runner: the declarative file, the selection, the order of the calls, parameters,
failures, the results file and the generic baseline (a worktree of REV measured in the same run).

The measures here are fakes from a test module that return what they were called with, so every assertion
is about the runner; nothing is timed. The last test checks the real bench/figures.toml against the real
measures at scale 0.005: every figure it names is returned by its measure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import run
from bench import spec as bench_spec
from repo_tools import REPO_ROOT

FAKE = """
import spreadwatch

def echo(*, scale, quick, **params):
    return {"scale": scale, "quick": int(quick), **params, "package": spreadwatch.__file__}

def boom(*, scale, quick):
    raise RuntimeError(f"no cluster at {scale}")

def nested(scale=1.0, seed=1):
    return {"load": {"seconds": 3.5}, "seed": seed}
"""

SPEC = """
scales = [0.2, 0.1]
quick_scales = [0.01]

[[measure]]
id = "a"
function = "fake_measures:echo"
params = { n = 1, word = "x" }
quick = { n = 2 }
  [[measure.figure]]
  key = "n"
  name = "n"
  target = "<= 1"

[[measure]]
id = "own"
function = "fake_measures:echo"
scales = [0.5]
  [[measure.figure]]
  key = "scale"
  name = "scale"

[[measure]]
id = "bad"
function = "fake_measures:boom"
default = false

[[measure]]
id = "nested"
function = "fake_measures:nested"
default = false
"""


@pytest.fixture
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "fake_measures.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # (the baseline's child runner imports it too)
    path = tmp_path / "figures.toml"
    path.write_text(SPEC)
    return path


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param('[[measure]]\nfunction = "m:f"\n', "measure id None missing", id="no id"),
        pytest.param(
            '[[measure]]\nid = "a"\nfunction = "m:f"\n[[measure]]\nid = "a"\nfunction = "m:f"\n',
            "measure id 'a' missing or repeated",
            id="repeated id",
        ),
        pytest.param('[[measure]]\nid = "a"\nfunction = "m.f"\n', "function must be 'module:function'", id="dot"),
        pytest.param(
            '[[measure]]\nid = "a"\nfunction = "m:f"\n[[measure.figure]]\nkey = "k"\n',
            "every figure needs a key and a name",
            id="no name",
        ),
        pytest.param(
            '[[measure]]\nid = "a"\nfunction = "m:f"\n[[measure.figure]]\nkey = "k"\nname = "k"\ntarget = "< 1"\n',
            "a.k: target must be '<= N' or '>= N'",
            id="target <",
        ),
        pytest.param("scales = [", "figures.toml", id="not TOML"),
    ],
)
def test_the_declarative_file_is_checked(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "figures.toml"
    path.write_text(text)
    with pytest.raises(bench_spec.SpecError, match=error.replace("(", r"\(")):
        bench_spec.load_spec(path)


def test_select_takes_the_defaults_or_the_named_measures_in_the_files_order(spec_file: Path) -> None:
    spec = bench_spec.load_spec(spec_file)
    assert [m["id"] for m in bench_spec.select(spec, None)] == ["a", "own"]  # "bad" and "nested": default = false
    assert [m["id"] for m in bench_spec.select(spec, ["bad", "a"])] == ["a", "bad"]
    with pytest.raises(bench_spec.SpecError, match="unknown measure nope; known: a, bad, nested, own"):
        bench_spec.select(spec, ["nope"])


@pytest.mark.parametrize(
    ("scales", "quick", "order"),
    [
        pytest.param(None, False, [(0.1, "a"), (0.2, "a"), (0.5, "own")], id="run scales ascending, own scales"),
        pytest.param(None, True, [(0.01, "a"), (0.01, "own")], id="quick: the run's quick_scales (own has none)"),
        pytest.param([0.3], False, [(0.3, "a"), (0.3, "own")], id="--scales wins over both"),
    ],
)
def test_plan_runs_scale_by_scale(
    spec_file: Path, scales: list[float] | None, quick: bool, order: list[tuple[float, str]]
) -> None:
    spec = bench_spec.load_spec(spec_file)
    assert [(s, m["id"]) for s, m in run.plan(bench_spec.select(spec, None), spec, scales, quick)] == order


def test_each_call_gets_scale_quick_and_params_and_a_failure_is_recorded(spec_file: Path) -> None:
    spec = bench_spec.load_spec(spec_file)
    got = run.run(bench_spec.select(spec, ["a", "bad"]), spec, quick=True, overrides={"a": {"word": "y"}})
    a = got["a"]["results"]["0.01"]
    assert a["values"] == {"scale": 0.01, "quick": 1, "n": 2, "word": "y", "package": a["values"]["package"]}
    assert got["a"]["params"] == {"n": 2, "word": "y"} and a["probe_s"] > 0 and a["seconds"] >= 0
    assert got["bad"]["results"]["0.01"]["error"] == "RuntimeError: no cluster at 0.01"


def test_a_measure_without_quick_gets_scale_and_params_and_nested_values_read_by_dotted_keys(spec_file: Path) -> None:
    spec = bench_spec.load_spec(spec_file)
    selected = bench_spec.select(spec, ["nested"])
    got = run.run(selected, spec, scales=[2.0], quick=True, overrides={"nested": {"seed": 7}})
    values = got["nested"]["results"]["2"]["values"]
    assert values == {"load": {"seconds": 3.5}, "seed": 7}
    lookup = bench_spec.lookup
    assert [lookup(values, k) for k in ("load.seconds", "seed", "load.minutes", "x.y")] == [3.5, 7, None, None]


@pytest.mark.parametrize(
    ("sets", "parsed"),
    [
        pytest.param(["a.n=3"], {"a": {"n": 3}}, id="TOML integer"),
        pytest.param(["a.f=0.5", "b.w=word"], {"a": {"f": 0.5}, "b": {"w": "word"}}, id="float; bare word"),
        pytest.param(["a.on=true"], {"a": {"on": True}}, id="TOML boolean"),
    ],
)
def test_set_overrides(sets: list[str], parsed: dict[str, dict[str, Any]]) -> None:
    assert run._overrides(sets) == parsed


def test_main_writes_one_results_file_with_the_environment(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert run.main(["--spec", str(spec_file), "--figures", "a,bad", "--no-render", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    env = result["run"]
    assert set(env) >= {"date", "commit", "machine", "software", "command", "load_start", "load_end", "probe_start_s"}
    assert env["probe_start_s"] > 0 and env["probe_end_s"] > 0
    assert sorted(result["measures"]) == ["a", "bad"] and sorted(result["measures"]["a"]["results"]) == ["0.1", "0.2"]


def test_main_refuses_bad_input_with_one_line(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--spec", str(spec_file), "--figures", "nope"]) == 2
    assert run.main(["--spec", str(spec_file), "--set", "novalue"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "bench: unknown measure nope; known: a, bad, nested, own",
        "bench: --set novalue: expected ID.PARAM=VALUE",
    ]


def test_a_baseline_measures_that_commits_package_in_the_same_run(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    argv = ["--spec", str(spec_file), "--figures", "own", "--baseline", "HEAD", "--no-render", "--out", str(out)]
    assert run.main(argv) == 0
    result = json.loads(out.read_text())
    here = result["measures"]["own"]["results"]["0.5"]["values"]["package"]
    base = result["baseline"]["measures"]["own"]["results"]["0.5"]["values"]["package"]
    assert Path(here).is_relative_to(REPO_ROOT / "operator")
    assert "spreadwatch-baseline-" in base and base.endswith("operator/spreadwatch/__init__.py")  # REV's package
    assert result["baseline"]["rev"] == "HEAD" and result["baseline"]["commit"]
    assert not Path(base).exists()  # the worktree is removed


def test_every_figure_of_figures_toml_is_returned_by_its_measure() -> None:
    spec = bench_spec.load_spec()
    heavy = ("go-plugin", "soak-index", "soak-cluster", "envelope", "scheduler-default-profile")
    # (tests/e2e, tests/oracle, test_soak.py, test_scheduler_agreement.py)
    cheap = [m["id"] for m in spec["measure"] if m["id"] not in heavy]
    got = run.run(bench_spec.select(spec, cheap), spec, scales=[0.005], quick=True)
    for m in bench_spec.select(spec, cheap):
        result = got[m["id"]]["results"]["0.005"]
        assert "values" in result, (m["id"], result.get("error"))
        missing = {f["key"] for f in m.get("figure", []) if bench_spec.lookup(result["values"], f["key"]) is None}
        assert not missing, (m["id"], missing)


def test_every_measure_function_resolves() -> None:
    for m in bench_spec.load_spec()["measure"]:
        assert callable(run._function(m["function"])), m["id"]
