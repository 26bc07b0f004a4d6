"""bench/baseline_events.py: the pod event stream replayed on an older commit's own code, in a fresh
interpreter. Nothing is timed or asserted about speed: the figures' plumbing and provenance are."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repo_tools import REPO_ROOT, load_bench

# An "older commit" whose bench/run.py has the functions baseline_child.py calls, with fixed per-event times.
_FAKE_RUN = """
import types
from spreadwatch import MARK
def build_snapshot(objects): return objects
def make_event_stream(snapshot, n): return list(range(n))
def get_profile(name): return name
def fresh_index(snapshot, profile): return None
def percentile(xs, q): return float(xs[min(len(xs) - 1, int(q / 100 * len(xs)))])
def run_stream(index, stream):
    return types.SimpleNamespace(wall_ns=[1000 * (i + 1) for i in range(len(stream))], wall_s=len(stream) / 500)
"""


def _fake_repo(path: Path) -> str:
    (path / "bench").mkdir(parents=True)
    (path / "operator" / "spreadwatch").mkdir(parents=True)
    (path / "bench" / "run.py").write_text(_FAKE_RUN)
    (path / "operator" / "spreadwatch" / "__init__.py").write_text("MARK = 'older'\n")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "older")
    return git("rev-parse", "HEAD").strip()


def test_the_older_commits_own_code_runs_and_its_figures_come_back(tmp_path: Path) -> None:
    baseline = load_bench("baseline_events")
    commit = _fake_repo(tmp_path / "repo")
    got = baseline.measure_baseline(commit, [{"kind": "Node"}], 100, 3, "v1.28", tmp_path / "work", tmp_path / "repo")
    # 100 events of 1..100 µs: p99 is the 99th smallest (this fake's percentile), 500 events/s
    assert got.commit == commit and got.events == 100
    assert got.runs_p99_us == [100.0, 100.0, 100.0] and got.p99_us == 100.0
    assert got.events_per_s == pytest.approx(500.0)
    assert not (tmp_path / "work" / "baseline-objects.json").exists()


def test_an_unknown_commit_fails_loudly(tmp_path: Path) -> None:
    baseline = load_bench("baseline_events")
    _fake_repo(tmp_path / "repo")
    with pytest.raises(subprocess.CalledProcessError):
        baseline.measure_baseline("0" * 40, [], 10, 1, "v1.28", tmp_path / "work", tmp_path / "repo")


def _has_commit(commit: str) -> bool:
    found = subprocess.run(["git", "-C", str(REPO_ROOT), "cat-file", "-e", f"{commit}^{{commit}}"], check=False)
    return found.returncode == 0


def test_the_real_baseline_replays_the_runs_cluster(tmp_path: Path) -> None:
    baseline = load_bench("baseline_events")
    if not _has_commit(baseline.BASELINE_COMMIT):
        pytest.skip("a shallow clone without the baseline commit's history")
    synth = load_bench("synth")
    got = baseline.measure_baseline(baseline.BASELINE_COMMIT, synth.generate(0.005, 1), 300, 1, "v1.28", tmp_path)
    assert got.commit == baseline.BASELINE_COMMIT and len(got.runs_p99_us) == 1
    assert got.p99_us > 0 and got.events_per_s > 0


@pytest.mark.parametrize(
    ("base", "p99_limit", "rate_limit", "source"),
    [
        # no baseline measured: the 2026-11-22 figures, 0.162 ms × 1.1 and 8,896/s × 0.9
        (None, 0.1782, 8006.4, "the 2026-11-22 run: 0.162 ms"),
        # measured: 0.250 ms × 1.1 = 0.275 ms; 7,000/s × 0.9 = 6,300/s
        (SimpleNamespace(commit="e7cd7814f2", p99_us=250.0, events_per_s=7000.0), 0.275, 6300.0, "e7cd781 in this run"),
    ],
)
def test_no_regression_is_judged_against_the_baseline_of_the_same_run(
    base: Any, p99_limit: float, rate_limit: float, source: str
) -> None:
    targets = load_bench("render_targets")
    inc = SimpleNamespace(p99_us=200.0, cpu_p99_us=201.0, events_per_s=7500.0, cpu_events_per_s=7400.0)
    p99, rate = targets._no_regression(SimpleNamespace(incremental=inc, baseline=base))
    assert p99.limit == pytest.approx(p99_limit) and source in p99.target
    assert rate.limit == pytest.approx(rate_limit) and rate.higher_is_better
    assert p99.passes(p99.value) is (p99_limit >= 0.2)
    assert len(targets._regression_then(SimpleNamespace(baseline=base))) == (0 if base is None else 2)
