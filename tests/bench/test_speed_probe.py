"""bench_env.speed_probe and its header line in docs/benchmarks.md: the machine's speed next to the figures.

Nothing is asserted about the speed itself (it is what the probe measures), only that it is measured and shown.
"""

from __future__ import annotations

from repo_tools import load_bench


def _info(**probes: float) -> object:
    return load_bench("bench_results").RunInfo(
        date="d", machine="m", software="s", command="c", commit="x", cpus=2, load_start="0", load_end="0",
        seed=1, profile="v1.28", run_minutes=0.0, source_start="a", source_end="a",
        speed_probes=list(probes.items()),
    )  # fmt: skip


def test_the_probe_is_cpu_time_of_work_done() -> None:
    assert load_bench("bench_env").speed_probe() > 0


def test_the_header_lists_every_probe_in_order() -> None:
    render_doc = load_bench("render_doc")
    (line,) = render_doc._probe_lines(_info(start=0.7, end=1.25))
    assert line.startswith("* **Machine speed probe**") and line.endswith("start 0.70 s; end 1.25 s.")
    assert "0.70 s to 1.25 s in this run" in line  # the run's own range, not a figure of another run
    assert render_doc._probe_lines(_info()) == []  # a run without probes (bench/pts.py): no line


def test_record_takes_a_last_probe_at_the_end() -> None:
    bench_env = load_bench("bench_env")
    info = bench_env.record("c", 1, "v1.28", 0.0, "0", {}, [("start", 0.5)])
    assert [when for when, _ in info.speed_probes] == ["start", "end"] and info.speed_probes[1][1] > 0
    assert bench_env.record("c", 1, "v1.28", 0.0, "0", {}).speed_probes == []
