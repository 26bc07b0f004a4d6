"""A token bucket for the operator's API writes (one global bucket: ``--max-writes-per-second``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

__all__ = ["TokenBucket"]


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
