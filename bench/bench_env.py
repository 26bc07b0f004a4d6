"""The environment every benchmark figure must be read with: date, machine, software, commit, load average,
and a hash of the package sources (to detect code changing under a running benchmark).

Used by bench/run.py, bench/pts.py and the soaks (bench/soak_report.py). Each call reads a few /proc files or
runs git once: O(1), except :func:`source_hashes` (O(package size)).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench_results import RunInfo

__all__ = [
    "ROOT",
    "command_line",
    "commit",
    "cpu_model",
    "loadavg",
    "machine",
    "now_utc",
    "record",
    "software",
    "source_hash",
    "source_hashes",
    "speed_probe",
]

ROOT = Path(__file__).resolve().parent.parent
_PACKAGE = ROOT / "operator" / "spreadwatch"


def now_utc() -> str:
    """The current time as ``YYYY-MM-DD HH:MM UTC``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages (``/proc/loadavg``), or ``?``."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _first_field(path: str, prefix: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or ``?``."""
    return _first_field("/proc/cpuinfo", "model name") or "?"


def machine() -> str:
    """CPU model, cores, RAM, kernel: ``AMD EPYC, 2 cores, 24 GiB RAM, Linux 6.18``."""
    mem = _first_field("/proc/meminfo", "MemTotal")
    ram = f"{int(mem.split()[0]) / 2**20:.0f} GiB" if mem else "?"
    return f"{cpu_model()}, {os.cpu_count()} cores, {ram} RAM, {platform.system()} {platform.release()}"


def software() -> str:
    """The Python and the JSON libraries the figures depend on."""
    import msgspec  # noqa: PLC0415 - only for its version
    import orjson  # noqa: PLC0415

    return f"CPython {platform.python_version()}, orjson {orjson.__version__}, msgspec {msgspec.__version__}"


def commit(dirty_paths: tuple[str, ...] = ()) -> str:
    """The short commit of the checkout, with ``+ uncommitted changes`` when the tree (or ``dirty_paths``
    below it) differs from it; ``?`` without git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", *dirty_paths], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + (" + uncommitted changes" if status else "")


def command_line(make_target: str, script: str, argv: Sequence[str] | None) -> str:
    """How the run was started: ``make TARGET`` when make ran the script without arguments, else the script
    with its arguments (``argv``, default ``sys.argv[1:]``)."""
    args = list(argv if argv is not None else sys.argv[1:])
    if os.environ.get("MAKELEVEL") and not args:
        return f"make {make_target}"
    return " ".join(["python", script, *(shlex.quote(a) for a in args)])


def speed_probe() -> float:
    """The machine's speed now: CPU seconds of a fixed pure-Python loop (3,000,000 dict updates; lower is
    faster). The same code took 0.68 s to 1.20 s within minutes on one host on 2026-11-23, and 0.28 s on
    another that evening: read every absolute figure next to the probe taken before it. O(1), about a second."""
    start = time.process_time()
    counts: dict[int, int] = {}
    get = counts.get
    for i in range(3_000_000):
        counts[i & 4095] = get(i & 4095, 0) + 1
    return time.process_time() - start


def source_hashes() -> dict[str, str]:
    """Per-file hashes of the spreadwatch package sources (path → first 12 hex digits of its sha256)."""
    return {
        str(path.relative_to(_PACKAGE)): hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        for path in sorted(_PACKAGE.rglob("*.py"))
    }


def source_hash(hashes: dict[str, str]) -> str:
    """One hash of :func:`source_hashes`' result."""
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:12]


def record(command: str, seed: int, profile: str, started: float, load_start: str,
           sources: dict[str, str], probes: Sequence[tuple[str, float]] | None = None) -> RunInfo:  # fmt: skip
    """The environment of a run that began at ``started`` (``time.time()``) with ``load_start`` and the package
    sources ``sources`` (:func:`source_hashes`), taken now that it ends; ``probes``, when given, the
    :func:`speed_probe` figures taken during the run (one more, ``end``, is taken now)."""
    end = source_hashes()
    return RunInfo(
        date=now_utc(),
        machine=machine(),
        software=software(),
        command=command,
        commit=commit(),
        cpus=os.cpu_count() or 0,
        load_start=load_start,
        load_end=loadavg(),
        seed=seed,
        profile=profile,
        run_minutes=(time.time() - started) / 60,
        source_start=source_hash(sources),
        source_end=source_hash(end),
        source_changed=sorted(k for k in sources.keys() | end.keys() if sources.get(k) != end.get(k)),
        speed_probes=[] if probes is None else [*probes, ("end", speed_probe())],
    )
