"""The operator's API write rate: the token bucket that bounds it (one global bucket: ``--max-writes-per-second``)
and the meter that tells what it achieved (:class:`RateMeter`: ``spreadwatch_api_writes_per_second``)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

__all__ = ["RateMeter", "TokenBucket"]


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; :meth:`acquire` waits for one.

    Over any window of T seconds at most ``burst + rate * T`` tokens are handed out. ``clock`` and
    ``sleep`` are injectable for tests. Not thread-safe (one event loop).
    """

    def __init__(
        self,
        rate: float,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be > 0, got {rate}")
        self.rate = rate
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def available(self, within: float = 0.0) -> int:
        """Tokens that can be handed out now plus those refilled within ``within`` seconds. O(1)."""
        self._refill()
        return int(min(float(self.burst), self._tokens) + within * self.rate + 1e-9)  # (try_acquire's tolerance)

    def try_acquire(self) -> bool:
        self._refill()
        if self._tokens >= 1.0 - 1e-9:  # tolerance: refills are sums of float products
            self._tokens = max(0.0, self._tokens - 1.0)
            return True
        return False

    async def acquire(self) -> None:
        while not self.try_acquire():
            # at least 1 ms, so that a tiny remainder cannot vanish in the clock's rounding forever
            pause = max(0.001, (1.0 - self._tokens) / self.rate)
            await self._sleep(pause)


class RateMeter:
    """A running count's rate over the last ``window`` seconds, from samples ``(now, count)`` taken at any
    times (the writer takes one per cycle, at least once a second, and one when read). Pure: the caller
    passes monotonic seconds. O(1) amortized per sample (samples older than the window are dropped), O(1) per
    read."""

    def __init__(self, window: float = 10.0) -> None:
        if window <= 0:
            raise ValueError(f"window must be > 0, got {window}")
        self.window = window
        self._samples: deque[tuple[float, int]] = deque()

    def sample(self, now: float, count: int) -> None:
        """The count at ``now`` (monotonic seconds, non-decreasing)."""
        samples = self._samples
        samples.append((now, count))
        while len(samples) > 2 and samples[1][0] <= now - self.window:
            samples.popleft()  # keep one sample at or before the window's start

    def rate(self) -> float:
        """Counts per second between the oldest sample kept and the newest (0 with fewer than two samples, or
        none apart)."""
        if len(self._samples) < 2:
            return 0.0
        (t0, c0), (t1, c1) = self._samples[0], self._samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0
