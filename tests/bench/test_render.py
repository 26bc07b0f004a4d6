"""bench/render.py: docs/benchmarks.md from the declarative file and stored results (all synthetic here).

Every input is made up in the test, so the assertions are about the rendering: the headline table with
targets, status and the outside reference, the per-area tables by scale with a baseline column, failures
listed, series tabulated, the newest result of each measure used, the runs' environment and the method notes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench import render
from bench import spec as bench_spec

SPEC = """
[[measure]]
id = "speed"
function = "m:speed"
area = "Speed"
about = "times the thing"
  [[measure.figure]]
  key = "t"
  name = "time of the thing"
  unit = "s"
  target = "<= 1"
  headline = true
  cpu = "cpu"
  reference = "other.t"
  meaning = "how long the thing takes"
  [[measure.figure]]
  key = "cpu"
  name = "  CPU time"
  unit = "s"

[[measure]]
id = "other"
function = "m:other"
area = "Speed"
series = "Per minute"
columns = ["min", "rss"]
  [[measure.figure]]
  key = "t"
  name = "the other thing"
  unit = "s"
  [[measure.figure]]
  key = "share"
  name = "share"
  unit = "%"
  target = ">= 0.5"
  headline = true

[[measure]]
id = "never"
function = "m:never"
area = "Later"
"""


def _result(date: str, measures: dict[str, Any], baseline: dict[str, Any] | None = None) -> dict[str, Any]:
    env = {"date": date, "commit": "abc1234", "machine": "M", "software": "S", "command": "make bench",
           "load_start": [1.0, 2.0, 3.0], "load_end": [1.5, 2.0, 3.0], "probe_start_s": 0.3, "probe_end_s": 0.4,
           "minutes": 2.0}  # fmt: skip
    out = {"run": env, "measures": measures}
    if baseline:
        out["baseline"] = {"rev": "old", "commit": "def5678", "measures": baseline}
    return out


def _entry(**by_scale: Any) -> dict[str, Any]:
    return {"function": "m:f", "params": {"n": 1}, "results": {s[1:].replace("_", "."): r for s, r in by_scale.items()}}


@pytest.fixture
def doc(tmp_path: Path) -> str:
    results = tmp_path / "results"
    results.mkdir()
    speed_old = _entry(s1={"values": {"t": 9.0, "cpu": 9.0}})
    speed = _entry(s0_1={"values": {"t": 0.1, "cpu": 0.09}}, s1={"values": {"t": 1.5, "cpu": 0.8}})
    series = [{"min": 1, "rss": 100.5}, {"min": 2, "rss": 101.0}]
    other = _entry(
        s0_1={"error": "RuntimeError: no oracle"}, s1={"values": {"t": 30.0, "share": 0.75, "series": series}}
    )
    base = {"speed": _entry(s1={"values": {"t": 2.0, "cpu": 1.0}})}
    (results / "old.json").write_text(json.dumps(_result("2026-01-01 00:00 UTC", {"speed": speed_old})))
    (results / "bench.json").write_text(
        json.dumps(_result("2026-02-01 00:00 UTC", {"speed": speed, "other": other}, base))
    )
    (results / "foreign.json").write_text(json.dumps({"scale": 1.0, "load": {"seconds": 3}}))  # not the runner's
    spec = tmp_path / "figures.toml"
    spec.write_text(SPEC)
    out = tmp_path / "benchmarks.md"
    render.write(out, results, spec)
    return out.read_text()


def _table(doc: str, heading: str) -> list[list[str]]:
    section = doc.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[1:]]


def test_the_headline_table_judges_each_target_at_the_largest_scale_on_wall_and_cpu_time(doc: str) -> None:
    assert _table(doc, "Headline figures") == [
        [
            "time of the thing",
            "1.5 s",
            "0.8 s",
            "1",
            "≤ 1 s",
            "**MISS** (PASS)",
            "the other thing: 30 s",
            "how long the thing takes",
        ],
        ["share", "75 %", "", "1", "≥ 50 %", "PASS", "", ""],
    ]


def test_an_area_lists_every_figure_by_scale_with_the_baseline_and_the_failures(doc: str) -> None:
    assert _table(doc, "Speed")[:4] == [
        ["time of the thing", "0.1 s", "1.5 s", "2 s", "≤ 1 s"],
        ["↳ CPU time", "0.09 s", "0.8 s", "1 s", ""],
        ["the other thing", "–", "30 s", "", ""],
        ["share", "–", "75 %", "", "≥ 50 %"],
    ]
    speed = doc.split("## Speed\n", 1)[1].split("\n## ", 1)[0]
    assert "| figure | scale 0.1 | scale 1 | def5678 (baseline) | target |" in speed
    assert "* `other` at scale 0.1 failed: RuntimeError: no oracle" in speed
    assert "**Per minute** (scale 1)" in speed and _table(doc, "Speed")[-2:] == [["1", "100"], ["2", "101"]]


def test_unmeasured_areas_say_how_to_measure_them(doc: str) -> None:
    assert "## Later\n\nNot measured yet: `make bench FIGURES=never`." in doc


def test_the_runs_and_the_method_close_the_document(doc: str) -> None:
    (runs,) = _table(doc, "Runs")  # only bench.json: old.json's one measure was measured again since
    assert runs[:3] == ["bench/results/bench.json", "2026-02-01 00:00 UTC", "abc1234; baseline def5678"]
    assert runs[5] == "1.00 2.00 3.00 → 1.50 2.00 3.00" and runs[6] == "0.3 s → 0.4 s"
    assert '* **speed** (`m:speed`, {"n": 1}): times the thing' in doc
    assert doc.index("## Headline figures") < doc.index("## Speed") < doc.index("## Runs") < doc.index("## Method")


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        pytest.param(0.61734, "s", "0.617 s", id="3 significant digits"),
        pytest.param(12632.4, "/s", "12,632 /s", id="thousands separated"),
        pytest.param(153040, "", "153,040", id="an integer"),
        pytest.param(0.319, "×", "0.319×", id="a ratio"),
        pytest.param(0.912, "%", "91.2 %", id="a fraction as a percentage"),
        pytest.param(math.nan, "s", "–", id="NaN"),
        pytest.param(None, "s", "–", id="none"),
    ],
)
def test_fmt(value: Any, unit: str, text: str) -> None:
    assert render.fmt(value, unit) == text


@pytest.mark.parametrize(
    ("value", "target", "verdict"),
    [
        pytest.param(0.5, "<= 1", "PASS", id="0.5 <= 1"),
        pytest.param(1.0, "<= 1", "PASS", id="1 <= 1"),
        pytest.param(1.01, "<= 1", "**MISS**", id="1.01 > 1"),
        pytest.param(4999, ">= 5000", "**MISS**", id="4999 < 5000"),
        pytest.param(math.nan, ">= 5000", "–", id="NaN: no verdict"),
    ],
)
def test_status(value: float, target: str, verdict: str) -> None:
    assert render.status(value, target) == verdict


def test_the_stored_results_render_with_the_real_declarative_file(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    render.write(out)  # bench/results/ as committed, bench/figures.toml
    text = out.read_text()
    areas = {m.get("area") for m in bench_spec.load_spec()["measure"]}
    assert all(f"\n## {area}\n" in text for area in areas)


@pytest.mark.parametrize(
    ("small", "large", "k"),
    [
        pytest.param(1.0, 10.0, "1.00", id="10x pods, 10x figure: k=1"),
        pytest.param(2.0, 2.0, "0.00", id="constant: k=0"),
        pytest.param(1.0, 100.0, "2.00", id="100x figure: k=2"),
        pytest.param(0.0, 1.0, "", id="zero: none"),
    ],
)
def test_growth_exponent_against_pods(small: float, large: float, k: str) -> None:
    assert render._exponent(small, large, 1000, 10000) == k


def test_a_target_measured_below_its_scale_says_so(tmp_path: Path) -> None:
    """A measure whose scales reach 1 but that only ran at 0.1 (the envelope, small): its verdict says that
    the target is for scale 1, so a PASS at 0.1 is not read as the envelope's."""
    results = tmp_path / "results"
    results.mkdir()
    spec = tmp_path / "figures.toml"
    spec.write_text(SPEC.replace('id = "speed"\n', 'id = "speed"\nscales = [1.0]\n', 1))
    speed = _entry(s0_1={"values": {"t": 0.5, "cpu": 0.4}})
    (results / "bench.json").write_text(json.dumps(_result("2026-02-01 00:00 UTC", {"speed": speed})))
    out = tmp_path / "benchmarks.md"
    render.write(out, results, spec)
    row = next(r for r in _table(out.read_text(), "Headline figures") if r[0] == "time of the thing")
    assert row[3:6] == ["0.1", "≤ 1 s", "PASS (PASS), at 0.1 (the target is for 1)"]


def test_a_result_not_measured_by_the_runner_says_where_it_comes_from(tmp_path: Path) -> None:
    """A results file transcribed from a documented run: what was not recorded shows as –, and its ``source``
    follows the runs table."""
    results = tmp_path / "results"
    results.mkdir()
    spec = tmp_path / "figures.toml"
    spec.write_text(SPEC)
    run_env = {"date": "2026-01-01 00:00 UTC", "commit": "abc1234", "machine": "not recorded", "software": "S",
               "command": "make test", "source": "transcribed from docs/x.md at abc1234"}  # fmt: skip
    other = _entry(s1={"values": {"t": 3.0, "share": 0.75}})
    (results / "other.json").write_text(json.dumps({"run": run_env, "measures": {"other": other}}))
    out = tmp_path / "benchmarks.md"
    render.write(out, results, spec)
    (row,) = _table(out.read_text(), "Runs")
    assert row[:4] == ["bench/results/other.json", "2026-01-01 00:00 UTC", "abc1234", "not recorded"]
    assert row[5:8] == ["– → –", "– → –", "–"]
    assert "\n\n* bench/results/other.json: transcribed from docs/x.md at abc1234\n" in out.read_text()


def test_a_runs_local_paths_stay_out_of_the_document() -> None:
    """A parameter naming where a run kept its files (an absolute path) is not a figure's condition: the
    document never carries one machine's directories."""
    assert render._portable({"threads": 16, "cluster_dir": "/work/envcluster", "label": "a/b"}) == {
        "threads": 16,
        "label": "a/b",
    }
