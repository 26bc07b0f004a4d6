"""What every measurement of bench/ shares: medians, percentiles, CPU-and-wall timing, the GC meter, RSS readers.

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

from bench_results import CpuWall

__all__ = [
    "GCMeter",
    "children_cpu",
    "log",
    "median",
    "median_cpu_wall",
    "percentile",
    "rss_bytes",
    "timed_cpu_wall",
    "vm_hwm_bytes",
]


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
    """Peak RSS of this process's address space (VmHWM), in bytes. Unlike ``ru_maxrss`` it is not inherited
    from the parent across vfork/exec (Linux carries the parent's high-water mark into the child's ru_maxrss)."""
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


def timed_cpu_wall(fn: Callable[[], Any], gc_on: bool = True) -> CpuWall:
    """Process CPU and wall seconds of one call of ``fn`` (after a full collection); the result is dropped
    before returning, so it is not kept alive into the next measurement."""
    gc.collect()
    was = gc.isenabled()
    if not gc_on:
        gc.disable()
    try:
        c, t = time.process_time(), time.perf_counter()
        result = fn()
        cpu, wall = time.process_time() - c, time.perf_counter() - t
    finally:
        if was:
            gc.enable()
    del result
    return CpuWall(cpu_s=cpu, wall_s=wall)


def median_cpu_wall(fn: Callable[[], Any], repeats: int, gc_on: bool = True) -> CpuWall:
    """Median CPU and median wall seconds of ``repeats`` calls of ``fn``."""
    runs = [timed_cpu_wall(fn, gc_on) for _ in range(repeats)]
    return CpuWall(cpu_s=median([r.cpu_s for r in runs]), wall_s=median([r.wall_s for r in runs]))
