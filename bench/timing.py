"""What every measure of bench/ shares: medians, percentiles, CPU-and-wall timing, the GC meter, RSS readers.

Pure helpers (no spreadwatch import); every call O(1) except where a sequence is named (O(its length)).
"""

from __future__ import annotations

import gc
import math
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "MIB",
    "GCMeter",
    "children_cpu",
    "log",
    "median",
    "median_cpu_wall",
    "percentile",
    "rss_bytes",
    "vm_hwm_bytes",
]

MIB = 2**20


def median(xs: Sequence[float]) -> float:
    """Median of ``xs`` (NaN when empty). O(n log n)."""
    return float(statistics.median(xs)) if xs else math.nan


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-100) of an already sorted sequence (NaN when empty). O(1)."""
    if not sorted_xs:
        return math.nan
    k = max(0, min(len(sorted_xs) - 1, round(q / 100.0 * len(sorted_xs) + 0.5) - 1))
    return float(sorted_xs[k])


def rss_bytes() -> int:
    """Resident set size of this process now, in bytes (``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def vm_hwm_bytes() -> int:
    """Peak RSS of this process (VmHWM), in bytes; unlike ``ru_maxrss`` not inherited from the parent."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def children_cpu() -> float:
    """User + system CPU seconds of every waited-for child process so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def log(msg: str) -> None:
    """One progress line on stderr, with the time of day."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class GCMeter:
    """Seconds spent in the cyclic garbage collector while active (``gc.callbacks``), and collections per
    generation. A context manager; O(1) per collection."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start
            self.collections[info["generation"]] += 1

    def __enter__(self) -> GCMeter:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall s, process CPU s) of one call of ``fn`` after a full collection; the result is dropped first."""
    gc.collect()
    c, t = time.process_time(), time.perf_counter()
    result = fn()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    del result
    return wall, cpu


def median_cpu_wall(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(median wall s, median process CPU s) of ``repeats`` calls of ``fn``, GC enabled."""
    runs = [_timed(fn) for _ in range(max(1, repeats))]
    return median([r[0] for r in runs]), median([r[1] for r in runs])
