"""``spreadwatch analyze -o json`` figures of ``make bench``.

* :func:`measure_analyze`: the command as a subprocess (interpreter start included, output to a file) against
  ``json.load`` of the same dump in a subprocess of the same Python (its startup excluded); medians, wall and
  CPU (``RUSAGE_CHILDREN``).
* :func:`analyze_phases`: where the command spends its time, phase by phase, in-process (one run each).

Cost: O(dump size) per run.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from bench_results import AnalyzePhases, AnalyzeResult
from measure_util import GCMeter, children_cpu, median

from spreadwatch.analysis import analyze_index
from spreadwatch.cli import main as cli_main
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot, load_snapshot, paused_gc, read_documents

__all__ = ["analyze_phases", "measure_analyze", "spreadwatch_cli"]

_JSON_LOAD = (
    "import json, sys, time\n"
    "t, c = time.perf_counter(), time.process_time()\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    json.load(f)\n"
    "print(time.perf_counter() - t, time.process_time() - c)\n"
)


def spreadwatch_cli() -> list[str]:
    """The installed ``spreadwatch`` next to this Python, or ``python -m spreadwatch.cli``."""
    exe = Path(sys.executable).with_name("spreadwatch")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "spreadwatch.cli"]


def measure_analyze(dump: Path, repeats: int, workdir: Path) -> AnalyzeResult:
    """Medians of ``repeats`` pairs: ``analyze --cluster DUMP -o json`` (subprocess) then ``json.load``."""
    analyze_runs, load_runs, load_wall_runs, analyze_cpu, load_cpu = [], [], [], [], []
    out_path = workdir / "analyze-out.json"
    for _ in range(repeats):
        gc.collect()
        with open(out_path, "wb") as out:
            c0 = children_cpu()
            t0 = time.perf_counter()
            command = [*spreadwatch_cli(), "analyze", "--cluster", str(dump), "-o", "json"]
            subprocess.run(command, check=True, stdout=out)
            analyze_runs.append(time.perf_counter() - t0)
            analyze_cpu.append(children_cpu() - c0)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", _JSON_LOAD, str(dump)], check=True, capture_output=True, text=True)
        load_wall_runs.append(time.perf_counter() - t0)
        wall_s, cpu_s = (float(x) for x in res.stdout.split())
        load_runs.append(wall_s)
        load_cpu.append(cpu_s)
    reports = len(orjson.loads(out_path.read_bytes())["reports"])
    out_size = out_path.stat().st_size
    out_path.unlink()
    a, j = median(analyze_runs), median(load_runs)
    return AnalyzeResult(
        repeats=repeats,
        analyze_s=a,
        analyze_runs_s=analyze_runs,
        json_load_s=j,
        json_load_runs_s=load_runs,
        json_load_subprocess_s=median(load_wall_runs),
        ratio=a / j,
        analyze_cpu_s=median(analyze_cpu),
        json_load_cpu_s=median(load_cpu),
        cpu_ratio=median(analyze_cpu) / median(load_cpu),
        reports=reports,
        dump_mib=dump.stat().st_size / 2**20,
        output_mib=out_size / 2**20,
    )


class _Phases:
    """Times named phases (seconds, of which cyclic GC); values pass from one phase to the next in ``state``."""

    def __init__(self) -> None:
        self.times: dict[str, tuple[float, float]] = {}
        self.state: dict[str, Any] = {}

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        with GCMeter() as meter:
            t = time.perf_counter()
            value = fn()
            self.times[name] = (time.perf_counter() - t, meter.seconds)
        return value


def _reference_splits(dump: Path, phase: _Phases) -> None:
    """How ``load_snapshot`` would split the previous way (names in parentheses: not in the total)."""
    s = phase.state
    s["raw"] = phase("(read file)", dump.read_bytes)
    phase("(orjson.loads, GC on)", lambda: orjson.loads(s.pop("raw")))
    gc.collect()
    s["docs"] = phase("(read_documents: read + orjson + flatten)", lambda: read_documents([dump]))

    def records() -> Snapshot:
        with paused_gc():
            return Snapshot.from_objects(s.pop("docs"))

    phase("(Snapshot.from_objects, GC paused)", records)
    gc.collect()


def _command_phases(dump: Path, profile: Profile, phase: _Phases) -> None:
    """The command's own phases, following ``cli``'s analyze."""
    s = phase.state
    s["snap"] = phase("load_snapshot (read + decode into records)", lambda: load_snapshot([dump]))
    s["reports"] = phase(
        "analyze_index (index load + reports)", lambda: analyze_index(s.pop("snap"), profile, ReportOptions())[1]
    )
    s["dicts"] = phase("SpreadReport.to_dict", lambda: {"reports": [r.to_dict() for r in s.pop("reports")]})
    s["text"] = phase(
        "orjson.dumps(OPT_INDENT_2).decode()", lambda: orjson.dumps(s["dicts"], option=orjson.OPT_INDENT_2).decode()
    )
    phase("(for comparison: json.dumps(indent=2), the pure-Python encoder)", lambda: json.dumps(s["dicts"], indent=2))
    with tempfile.TemporaryFile("w") as f:
        phase("write output", lambda: f.write(s["text"]))
    s.clear()
    gc.collect()


def _in_process(dump: Path) -> float:
    with open(os.devnull, "w") as sink:
        t = time.perf_counter()
        cli_main(["analyze", "--cluster", str(dump), "-o", "json"], out=sink)
        return time.perf_counter() - t


def analyze_phases(dump: Path, profile: Profile) -> AnalyzePhases:
    """Phase table of ``analyze -o json`` (one in-process run each), plus the whole in-process command with
    the GC on (and its GC share) and off."""
    phase = _Phases()
    gc.collect()
    _reference_splits(dump, phase)
    _command_phases(dump, profile, phase)
    with GCMeter() as meter:
        on = _in_process(dump)
    gc.collect()
    gc.disable()
    try:
        off = _in_process(dump)
    finally:
        gc.enable()
    gc.collect()
    return AnalyzePhases(phases=phase.times, in_process_s=on, in_process_gc_s=meter.seconds, in_process_gc_off_s=off)
