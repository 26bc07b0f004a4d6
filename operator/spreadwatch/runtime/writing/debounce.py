"""When each workload's report is written: dirty keys, due times, coalescing and the order of writes (pure).

:class:`Debouncer` holds one *pending* entry per workload with unwritten changes, stamped with the
time of its first and of its latest change (coalescing: any number of changes make one entry), and a set of
removed workloads whose reports are to be deleted. A pending workload is *due* once it has been quiet for
``debounce`` seconds, or ``max_delay`` after its first unwritten change even if it never goes quiet (no
starvation under churn), and not before its retry back-off ends. :meth:`Debouncer.due` lists the
due workloads **oldest change first**, so under a write budget of R writes a second the oldest pending
change waits about (dirty workloads ÷ R) seconds, not longer.

No I/O and no clock of its own: every method takes ``now`` (monotonic seconds) from the caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spreadwatch.model import WorkloadKey

__all__ = ["Debouncer", "Pending"]


@dataclass(slots=True)
class Pending:
    """One workload's unwritten changes (monotonic seconds)."""

    first: float  # first unwritten change
    last: float  # latest change
    attempts: int = 0  # failed writes so far (back-off)
    not_before: float = 0.0  # retry back-off: not due before this time
    queued_by_resync: bool = False  # a resync's check (``mark_stale``), not a change


class Debouncer:
    """See the module docstring. ``debounce`` may be changed at any time (``drain`` sets it to 0)."""

    def __init__(self, debounce: float, max_delay: float) -> None:
        self.debounce = debounce
        self.max_delay = max_delay
        self._pending: dict[WorkloadKey, Pending] = {}
        self._deletions: set[WorkloadKey] = set()

    # --- inputs -------------------------------------------------------------------------------------------

    def mark(self, key: WorkloadKey, now: float) -> None:
        """A change of ``key`` at ``now``: a new pending entry, or the latest change of the existing one (a
        resync's check becomes this change). Cancels a queued deletion (the workload is back). O(1)."""
        p = self._pending.get(key)
        if p is None:
            self._pending[key] = Pending(now, now)
        elif p.queued_by_resync:
            p.first = p.last = now
            p.queued_by_resync = False
        else:
            p.last = now
        self._deletions.discard(key)

    def mark_stale(self, keys: Iterable[WorkloadKey], now: float) -> None:
        """Every key not pending yet becomes pending as if changed ``max_delay`` ago, i.e. due now but behind
        every older real change (a resync's "check everything"). O(keys)."""
        stamp = now - self.max_delay
        for key in keys:
            if key not in self._pending:
                self._pending[key] = Pending(stamp, stamp, queued_by_resync=True)

    def collect(self, dirty: Iterable[WorkloadKey], removed: Iterable[WorkloadKey], now: float) -> None:
        """The index's dirty and removed workloads (``index.take_dirty()``). O(keys)."""
        for key in dirty:
            self.mark(key, now)
        for key in removed:
            self._pending.pop(key, None)
            self._deletions.add(key)

    def clear_backoff(self) -> None:
        """Every pending workload due again regardless of failed attempts (``drain``). O(pending)."""
        for p in self._pending.values():
            p.not_before = 0.0

    def clear(self) -> None:
        """Forget everything (a standby before ready: nothing to build yet)."""
        self._pending.clear()
        self._deletions.clear()

    # --- outputs ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Pending workloads plus queued deletions."""
        return len(self._pending) + len(self._deletions)

    def oldest_age(self, now: float) -> float:
        """Seconds since the oldest pending workload's first unwritten change (0: none). O(pending)."""
        if not self._pending:
            return 0.0
        return max(0.0, now - min(p.first for p in self._pending.values()))

    def next_due(self, now: float) -> float | None:
        """When the next workload becomes due (``now`` with deletions queued; None: nothing pending).
        O(pending)."""
        if self._deletions:
            return now
        times = [
            max(min(p.last + self.debounce, p.first + self.max_delay), p.not_before) for p in self._pending.values()
        ]
        return min(times) if times else None

    def first_change(self, key: WorkloadKey) -> float | None:
        """When ``key``'s oldest unwritten change was made (None: not pending). O(1)."""
        p = self._pending.get(key)
        return None if p is None else p.first

    def take_deletions(self) -> list[WorkloadKey]:
        """The queued deletions, sorted, and forget them. O(d log d)."""
        out = sorted(self._deletions)
        self._deletions.clear()
        return out

    def due(self, now: float) -> list[WorkloadKey]:
        """The due workloads, oldest first change first (ties by key). O(pending + due log due)."""
        debounce, max_delay = self.debounce, self.max_delay
        due = [
            (p.first, key)
            for key, p in self._pending.items()
            if now >= p.not_before and (now - p.last >= debounce or now - p.first >= max_delay)
        ]
        due.sort()
        return [key for _, key in due]

    def take(self, key: WorkloadKey) -> Pending | None:
        """Start writing ``key``: its pending entry leaves the table (None: not pending any more). A change
        while it is written makes a new entry. O(1)."""
        return self._pending.pop(key, None)

    def retry(self, key: WorkloadKey, p: Pending, now: float) -> float:
        """A failed write of ``key``: pending again with exponential back-off (0.5 s doubling, at most 60 s),
        keeping its first-change time (a change meanwhile keeps the newer entry's). Returns the back-off."""
        p.attempts += 1
        backoff: float = min(60.0, 0.5 * 2.0 ** min(p.attempts, 7))
        p.not_before = now + backoff
        self._pending.setdefault(key, p)
        return backoff
