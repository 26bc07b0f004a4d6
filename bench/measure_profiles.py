"""cProfile hotspots for the "Misses (and close calls)" section of docs/benchmarks.md.

:func:`profiles` profiles, at the largest scale, the cold full computation, the pod event stream and (given a
dump) ``analyze -o json`` in-process. Profiling runs with the cyclic GC disabled (collections would be charged
to whichever function allocates; GC time is measured separately). Cost: the profiled call, ~2-3× slower.
"""

from __future__ import annotations

import cProfile
import gc
import io
import os
import pstats
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_results import Hotspot, Hotspots
from measure_cold import fresh_index
from measure_events import Event, run_stream

from spreadwatch.cli import main as cli_main
from spreadwatch.index import SpreadIndex
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot

__all__ = ["profile_call", "profiles"]


def _short(path: str) -> str:
    for marker in ("/operator/", "/bench/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def profile_call(fn: Callable[[], Any], top: int = 15) -> Hotspots:
    """cProfile ``fn``; the top functions by own time and (spreadwatch's, and the profiled entry points of this
    module) by cumulative time, with their share of the profiled total."""
    prof = cProfile.Profile()
    gc.collect()
    gc.disable()
    try:
        prof.enable()
        fn()
        prof.disable()
    finally:
        gc.enable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    total: float = stats.total_tt  # type: ignore[attr-defined]
    rows = [
        (f"{func} ({_short(path)}:{line})", nc, tt, ct)
        for (path, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
    ]

    def hotspot(row: tuple[str, int, float, float]) -> Hotspot:
        func, calls, tt, ct = row
        return Hotspot(func, calls, tt, ct, 100 * tt / total if total else 0.0, 100 * ct / total if total else 0.0)

    by_tt = sorted(rows, key=lambda r: -r[2])[:top]
    ours = (r for r in rows if "spreadwatch" in r[0] or "measure_profiles.py" in r[0])
    by_ct = sorted(ours, key=lambda r: -r[3])[:top]
    return Hotspots(total_s=total, by_tottime=[hotspot(r) for r in by_tt], by_cumtime=[hotspot(r) for r in by_ct])


def profiles(snapshot: Snapshot, profile: Profile, stream: Sequence[Event], dump: Path | None) -> dict[str, Hotspots]:
    """Hotspots of ``cold``, ``incremental`` and (with a dump) ``analyze``."""

    def cold_full() -> None:
        index = SpreadIndex(profile, ReportOptions())
        index.load(snapshot)
        index.reports()

    out = {"cold": profile_call(cold_full)}
    index = fresh_index(snapshot, profile)
    out["incremental"] = profile_call(lambda: run_stream(index, stream))
    if dump is not None:

        def analyze() -> None:
            with open(os.devnull, "w") as sink:
                cli_main(["analyze", "--cluster", str(dump), "-o", "json"], out=sink)

        out["analyze"] = profile_call(analyze)
    return out
