"""A pure histogram accumulator for durations (no prometheus_client): the runtime observes, metrics read.

:class:`DurationHistogram` keeps one counter per bucket, the sum and the count; :meth:`snapshot` returns an
immutable copy with *cumulative* bucket counts, as Prometheus exposes them. ``observe`` is O(log buckets),
``snapshot`` O(buckets). Not thread-safe: observe and snapshot from one thread (the event loop).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["DURATION_BUCKETS", "DurationHistogram", "HistogramSnapshot"]

#: Upper bounds in seconds: a report computation takes ~0.1 ms, a write cycle with API calls up to seconds.
DURATION_BUCKETS: Final = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)


@dataclass(frozen=True, slots=True)
class HistogramSnapshot:
    """Cumulative counts per upper bound (the last bound is +Inf and equals ``count``), sum in seconds."""

    bounds: tuple[float, ...]
    cumulative: tuple[int, ...]
    sum: float
    count: int


class DurationHistogram:
    """Counts observations (seconds) into fixed buckets. See the module docstring."""

    __slots__ = ("_bounds", "_counts", "_sum")

    def __init__(self, bounds: Sequence[float] = DURATION_BUCKETS) -> None:
        ordered = tuple(float(b) for b in bounds)
        if list(ordered) != sorted(set(ordered)) or any(math.isnan(b) or math.isinf(b) for b in ordered):
            raise ValueError("histogram bounds must be finite, distinct and ascending")
        self._bounds = ordered
        self._counts = [0] * (len(ordered) + 1)  # the last bucket is +Inf
        self._sum = 0.0

    def observe(self, seconds: float) -> None:
        """Count one duration (a value equal to a bound falls into that bound's bucket). O(log buckets)."""
        self._counts[bisect.bisect_left(self._bounds, seconds)] += 1
        self._sum += seconds

    @property
    def count(self) -> int:
        return sum(self._counts)

    def snapshot(self) -> HistogramSnapshot:
        """An immutable, cumulative copy. O(buckets)."""
        cumulative: list[int] = []
        total = 0
        for c in self._counts:
            total += c
            cumulative.append(total)
        return HistogramSnapshot((*self._bounds, math.inf), tuple(cumulative), self._sum, total)
