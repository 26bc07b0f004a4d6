"""Smoke run of bench/pts.py (the v1.29 benchmark) at a tiny scale: it runs, checks exactness against the
reference scorer and renders its table. Nothing is timed or asserted about speed."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

from repo_tools import load_bench


def test_pts_bench_smoke(tmp_path: Path) -> None:
    module = load_bench("pts")
    out = io.StringIO()
    with redirect_stdout(out):
        code = module.main(["--scales", "0.005", "--repeats", "1", "--events", "200", "--sample", "8", "--no-write"])
    assert code == 0
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| 0.005 |")]
    assert [r.split("|")[4].strip() for r in rows] == ["v1.28", "v1.29"]
    assert int(rows[1].split("|")[-2]) > 0  # workloads checked against score_pod
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nolder text\n")
    module.splice("<!-- pts-bench:begin -->\nA\n<!-- pts-bench:end -->\n", doc)
    module.splice("<!-- pts-bench:begin -->\nB\n<!-- pts-bench:end -->\n", doc)
    assert doc.read_text().count("pts-bench:begin") == 1 and "\nB\n" in doc.read_text()
