"""Smoke run of the decoding figures of ``make bench`` (bench/decode_bench.py, rendered by
bench/render_figures.py) at scale 0.005.

Nothing is timed or asserted about speed: only that every figure is produced and rendered, and that the
API-page decoding the figures time yields the records the reference path yields.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from repo_tools import load_bench
from spreadwatch.scoring import get_profile


def test_decode_figures_machinery(tmp_path: Path) -> None:
    run = load_bench("run")
    decode_bench = run.decode_bench
    objects = run.synth.generate(0.005, seed=1)
    pages = decode_bench.api_pages(objects)
    assert decode_bench.typed_pages(pages) == decode_bench.dict_pages(pages)  # same records, typed or not
    dump = tmp_path / "c2.json"
    run.synth.write_dump(objects, dump)
    res = decode_bench.measure_decode(
        objects, dump, tmp_path, 0.005, get_profile("v1.28"), 1, lambda p: run.measure_analyze(p, 1, tmp_path)
    )
    pods = sum(1 for o in objects if o["kind"] == "Pod")
    assert res.initial_list.pods == pods and res.initial_list.pages >= 8
    assert res.analyze_compact.reports == res.analyze_indent4.reports == 50
    assert set(res.analyze_rss_mib) == {"compact", "indent2", "indent4"}
    assert res.sizes_mib["indent4"] > res.sizes_mib["indent2"] > res.sizes_mib["compact"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c2.json"]  # the variants are removed
    lines: list[str] = []
    render_figures = load_bench("render_figures")
    render_figures.decode_rows(lambda label, get, unit="": lines.append(f"{label}: {get(SimpleNamespace(decode=res))}"))
    assert len(lines) == 11 and all("None" not in line for line in lines)
