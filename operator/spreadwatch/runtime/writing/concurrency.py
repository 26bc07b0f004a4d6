"""How many report writes may wait on the API server at once: Little's law with the latency it shows (pure).

The token bucket (``--max-writes-per-second``, rate λ) bounds how often the writer calls the API; how many
calls may be in flight together is a second bound. By Little's law the writes in flight average λ × W, W
being the mean time the server takes to answer one: the writer reaches its rate only when it may have that
many in flight, and no more are needed. :class:`WriteConcurrency` keeps the latencies of the last
``window`` answered writes and bounds the writes in flight to

    limit = clamp(⌈λ × mean(W) × headroom⌉, floor, min(ceiling, cap))

* ``headroom`` (1.5) covers the spread around the mean and each writer's own time between two requests;
* ``ceiling`` is the share of API Priority and Fairness seats the operator may hold at once
  (``--max-writes-in-flight``, default 24: a tenth of the 245 seats of ``workload-low`` on a default API
  server, within the 25 it never lends; docs/operator.md "Writes in flight");
* ``cap``: a write the server refused as throttled (HTTP 429: the priority level's queues are full) halves
  the bound at once (once per answered write: the 429s of the writes already in flight do not halve it
  again), and the cap regains one per ``window`` writes answered after it (additive increase,
  multiplicative decrease): a server that is slow because it is overloaded is not given more at once;
* ``floor`` (2): one slow write never holds back every other.

Before the first answer the mean is ``prior`` (50 ms: 8 in flight at 100 writes/s, the former fixed bound).

No clock and no I/O: O(1) per observation, O(window) per :attr:`WriteConcurrency.limit`.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import Final

__all__ = ["HEADROOM", "PRIOR_LATENCY", "WINDOW", "WriteConcurrency"]

#: Factor over λ × mean latency (the spread around the mean; each writer's time between two requests).
HEADROOM: Final = 1.5
#: Seconds assumed for one write before any was answered.
PRIOR_LATENCY: Final = 0.05
#: Answered writes the mean is taken over (about half a second at 100 writes/s); also the writes answered
#: after which a throttled bound regains one.
WINDOW: Final = 50


class WriteConcurrency:
    """The bound on writes in flight (see the module docstring). ``rate`` in writes/s; ``floor`` is lowered
    to ``ceiling`` when above it."""

    def __init__(
        self,
        rate: float,
        ceiling: int,
        floor: int = 2,
        window: int = WINDOW,
        headroom: float = HEADROOM,
        prior: float = PRIOR_LATENCY,
    ) -> None:
        if rate <= 0 or ceiling < 1 or floor < 1 or window < 1 or headroom <= 0 or prior <= 0:
            raise ValueError(
                f"need rate > 0, ceiling >= 1, floor >= 1, window >= 1, headroom > 0, prior > 0; got {rate}, "
                f"{ceiling}, {floor}, {window}, {headroom}, {prior}"
            )
        self.rate = rate
        self.ceiling = ceiling
        self.floor = min(floor, ceiling)
        self.window = window
        self.headroom = headroom
        self.prior = prior
        self._latencies: deque[float] = deque(maxlen=window)
        self._cap = ceiling
        self._answered_since_cap = 0
        self._halved = False  # halved since the last answered write

    def observe(self, seconds: float) -> None:
        """One write answered after ``seconds`` (request to response). O(1)."""
        self._latencies.append(max(0.0, seconds))
        self._halved = False
        if self._cap < self.ceiling:
            self._answered_since_cap += 1
            if self._answered_since_cap >= self.window:
                self._cap += 1
                self._answered_since_cap = 0

    def throttled(self) -> None:
        """The server refused a write as throttled (HTTP 429): halve the bound now, unless it was halved since
        the last answered write. O(window)."""
        if self._halved:
            return
        self._cap = max(self.floor, self.limit // 2)
        self._answered_since_cap = 0
        self._halved = True

    @property
    def latency(self) -> float:
        """Mean seconds of the last ``window`` answered writes (``prior`` before the first). O(window)."""
        return statistics.fmean(self._latencies) if self._latencies else self.prior

    @property
    def limit(self) -> int:
        """Writes that may be in flight now. O(window)."""
        wanted = math.ceil(self.rate * self.latency * self.headroom - 1e-9)
        return max(self.floor, min(wanted, self._cap, self.ceiling))
