"""Timing of CPython's full (generation-2) collections for the soak benchmarks, through ``gc.callbacks``.

Every full collection — automatic, or a ``gc.collect()`` such as the operator's GC policy checkpoints — is
timed in wall clock (``time.perf_counter``) and process CPU time (``time.process_time``, which a busy machine
does not inflate). :meth:`FullCollections.take` returns the figures since the previous call (one soak
interval). Costs: two clock reads per collection of any generation; O(1) memory.
"""

from __future__ import annotations

import gc
import time
from typing import Any

__all__ = ["FullCollections"]


class FullCollections:
    """Counts and times full collections while installed (``with FullCollections() as timer: ...``)."""

    def __init__(self) -> None:
        self._started = (0.0, 0.0)
        self._reset()
        self.all_count = 0
        self.all_wall = 0.0
        self.all_max_wall = 0.0

    def _reset(self) -> None:
        self.count = 0
        self.wall = 0.0
        self.cpu = 0.0
        self.max_wall = 0.0
        self.max_cpu = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = (time.perf_counter(), time.process_time())
            return
        if info["generation"] != 2:
            return
        wall = time.perf_counter() - self._started[0]
        cpu = time.process_time() - self._started[1]
        self.count += 1
        self.wall += wall
        self.cpu += cpu
        self.max_wall = max(self.max_wall, wall)
        self.max_cpu = max(self.max_cpu, cpu)
        self.all_count += 1
        self.all_wall += wall
        self.all_max_wall = max(self.all_max_wall, wall)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def take(self) -> dict[str, float]:
        """The full collections since the last call: count, total and max pause in seconds (wall and CPU)."""
        out = {
            "gc_full": self.count,
            "gc_full_s": round(self.wall, 3),
            "gc_full_max_s": round(self.max_wall, 3),
            "gc_full_cpu_s": round(self.cpu, 3),
            "gc_full_max_cpu_s": round(self.max_cpu, 3),
        }
        self._reset()
        return out
