"""Equal frozen records stored once across decoders: :class:`Shared`.

A decoder's caches live as long as one listing or one batch of watch events; what many objects share for
long (the requests of one pod template, a node's images, an instance type's allocatable) is made one object
process-wide by a :class:`Shared` table: a dict holding each value as its own key. Values only the table
still holds are swept out each time it has doubled since the last sweep, a few entries per new value
(never a whole sweep at once: no stall of the event loop), as :mod:`~spreadwatch.model.interning` does for
label maps. Thread-safe for the informers' decoding threads (a sweep step is skipped while another thread
steps it). Cost: O(1) per hit, O(:data:`SWEEP_STEP`) per new value; memory at most about twice the values in
use.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Hashable
from typing import Final, Generic, TypeVar

__all__ = ["SWEEP_STEP", "Shared"]

_V = TypeVar("_V", bound=Hashable)
_MIN_SWEEP: Final = 1024
#: entries a sweep under way checks per new value
SWEEP_STEP: Final = 16


def _refcount(value: object) -> int:
    """``value``'s reference count as seen from a caller holding it in one local name. O(1)."""
    return sys.getrefcount(value)


class Shared(Generic[_V]):
    """A table of shared values (see the module docstring). ``get(value)`` returns the stored equal value,
    storing ``value`` if none is."""

    __slots__ = ("_checking", "_lock", "_next_sweep", "_refs", "_values")

    def __init__(self) -> None:
        self._values: dict[_V, _V] = {}
        self._next_sweep = _MIN_SWEEP
        self._checking: list[_V] = []
        self._lock = threading.Lock()
        self._refs = self._table_refs()

    @staticmethod
    def _table_refs() -> int:
        """The reference count :meth:`_step` sees for a value only the table holds (measured, not assumed)."""
        probe = object()
        table = {probe: probe}
        checking = [probe]
        del probe
        value = checking.pop()
        refs = _refcount(value)
        del table
        return refs

    def get(self, value: _V) -> _V:
        """The stored value equal to ``value`` (``value`` itself when new). O(1) for a hit."""
        found = self._values.get(value)
        if found is not None:
            return found
        if self._checking or len(self._values) >= self._next_sweep:
            self._step()
        return self._values.setdefault(value, value)

    def __len__(self) -> int:
        return len(self._values)

    def _step(self) -> None:
        """Check up to :data:`SWEEP_STEP` values of the sweep under way (starting one if the table doubled):
        drop those only the table holds. Skipped while another thread steps it."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            checking = self._checking
            if not checking:
                if len(self._values) < self._next_sweep:
                    return
                checking.extend(tuple(self._values))
            for _ in range(min(SWEEP_STEP, len(checking))):
                value = checking.pop()
                if _refcount(value) <= self._refs and self._values.get(value) is value:
                    del self._values[value]
            if not checking:
                self._next_sweep = max(_MIN_SWEEP, 2 * len(self._values))
        finally:
            self._lock.release()
