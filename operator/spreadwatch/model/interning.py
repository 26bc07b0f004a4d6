"""Interned values: equal label maps, controller references, pod templates and taints are stored once.

Pods of one ReplicaSet share a single label dict, a single controller reference and a single template,
however they were decoded — in one listing, or one watch event at a time by decoders whose own caches live
for a thousand lines (``kube.WatchStream``): a watch-decoded pod that kept its own owner reference and
template cost ~300–900 bytes more than a listed one (measured: 458 B a pod without tolerations and 1,048 B
with the two default ones, against 156 B shared), ~90 MiB once the envelope's 150,000 pods have turned over.

An interned label map (:class:`LabelMap`) is a plain dict that also hashes by content (the hash of its items,
computed once when it is interned): its table is a plain dict holding each map as both key and value, and
the index keys its label groups by the map itself. Nothing else is stored per map: no frozenset of item
tuples, which cost ~580 bytes per map at the envelope (~26 MiB for the ~32,000 distinct maps of a
150,000-pod cluster, half of them StatefulSet pods' own). Frozen records (``OwnerRef``, ``PodTemplate``, a
node's tuple of taints: hashable by content) are interned the same way in a table of their own
(:func:`intern_frozen`).

**Bounded.** Each table is swept of the values only it still holds (no record uses them any more) each time
it has doubled since its last sweep, so the label sets, owners and templates of old rollouts do not pile up
in a long-running operator, and a miss costs no weak reference (about 4x cheaper than a
``WeakValueDictionary``, which matters when a 150,000-pod listing interns ~60,000 distinct maps; records are
``msgspec`` Structs without weak-reference slots anyway). A sweep is spread over the misses that follow it
(:data:`_SWEEP_STEP` entries checked per new value), never done in one go: a sweep of 200,000 maps at once
took ~1 s of CPU, a stall in the operator's event loop. Cost: O(size + _SWEEP_STEP) per new value, O(size)
per hit (hash and equality). Memory: at most about twice the values in use, plus those dropped since the
last sweep.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Hashable, Mapping
from typing import Final, Generic, TypeVar, cast

__all__ = ["LabelMap", "intern_frozen", "intern_labels", "interned_frozen", "interned_label_maps", "label_key"]

H = TypeVar("H", bound=Hashable)


class LabelMap(dict[str, str]):
    """An interned label map: a dict that hashes by its content (equal maps, equal hashes: dict equality
    is by content already). Never changed once made: it is a key of the table and of the index's groups."""

    __slots__ = ("_hash",)

    def __init__(self, labels: Mapping[str, str]) -> None:
        super().__init__(labels)
        self._hash = hash(frozenset(labels.items()))  # (transient: only the int is kept)

    def __hash__(self) -> int:  # type: ignore[override]  # (dict is unhashable; this one never changes)
        return self._hash


_MIN_SWEEP: Final = 4096  # no sweep below this many entries
_SWEEP_STEP: Final = 32  # entries a sweep under way checks per new value (~2 µs)


def _refcounts(entries: dict[H, H]) -> list[tuple[H, int]]:
    """Each entry and its reference count, as seen from here. O(len(entries)). The entries are copied first,
    in one C call (atomic under the GIL): another thread may intern meanwhile."""
    return [(value, sys.getrefcount(value)) for value in tuple(entries)]


def _popped_refcount(checking: list[H]) -> tuple[H, int]:
    """The next value of a sweep, taken off ``checking``, and its reference count as seen from here. O(1)."""
    value = checking.pop()
    return value, sys.getrefcount(value)


def _measured_only_held_by_table() -> tuple[int, int]:
    """The counts :func:`_refcounts` and :func:`_popped_refcount` report for a value nothing but its table
    holds (measured, not assumed)."""
    value = LabelMap({})
    entries = {value: value}  # (as interned: the value is its own key)
    del value
    only_held = _refcounts(entries)[0][1]
    return only_held, _popped_refcount(list(entries))[1]


_ONLY_HELD, _ONLY_HELD_POPPED = _measured_only_held_by_table()


class _Table(Generic[H]):
    """One interning table: each value its own key, swept of unused values as it doubles (module docstring).

    Thread-safe: the operator's informers decode, and so intern, in several threads at once. A value is
    added with ``dict.setdefault`` (one C call: of two threads interning equal values, both get the one
    stored); the sweep under way is stepped by one thread at a time (another thread's step is skipped,
    never run alongside: two steps once popped the same list empty, an IndexError that stopped an
    informer)."""

    __slots__ = ("_sweeping", "entries", "next_sweep", "to_check")

    def __init__(self) -> None:
        #: the interned values, each its own key; entries only this dict still holds are swept
        self.entries: dict[H, H] = {}
        self.next_sweep = _MIN_SWEEP
        #: values the sweep under way has still to check (taken when it started); empty: no sweep under way
        self.to_check: list[H] = []
        self._sweeping = threading.Lock()

    def intern(self, probe: H) -> H:
        """The stored value equal to ``probe`` (``probe`` itself, stored, when there is none). O(hash +
        equality), plus O(_SWEEP_STEP) for a new value."""
        shared = self.entries.get(probe)
        if shared is None:
            if self.to_check or len(self.entries) >= self.next_sweep:
                self.step(_SWEEP_STEP)
            shared = self.entries.setdefault(probe, probe)
        return shared

    def step(self, budget: int) -> None:
        """Check up to ``budget`` values of the sweep under way (starting one if the table has doubled): drop
        the values no one but the table holds. O(budget), plus one O(len) copy of the values in C when a sweep
        starts. Skipped while another thread steps the sweep."""
        if not self._sweeping.acquire(blocking=False):
            return
        try:
            self._step_locked(budget)
        finally:
            self._sweeping.release()

    def _step_locked(self, budget: int) -> None:
        entries, to_check = self.entries, self.to_check
        if not to_check:
            if len(entries) < self.next_sweep:
                return
            to_check.extend(entries)
        for _ in range(min(budget, len(to_check))):
            value, refs = _popped_refcount(to_check)
            if refs <= _ONLY_HELD_POPPED and entries.get(value) is value:
                del entries[value]
        if not to_check:
            self.next_sweep = max(_MIN_SWEEP, 2 * len(entries))

    def sweep(self) -> None:
        """Finish the sweep under way, or do a whole one now (tests, diagnostics). O(len)."""
        with self._sweeping:
            if not self.to_check:
                self.to_check.extend(self.entries)
            self._step_locked(len(self.to_check))

    def in_use(self) -> int:
        """How many of the values are held by something besides the table. O(len); changes nothing."""
        checking = {id(value) for value in tuple(self.to_check)}  # (a sweep under way holds these once more)
        return sum(1 for value, refs in _refcounts(self.entries) if refs - (id(value) in checking) > _ONLY_HELD)


_EMPTY: Final = LabelMap({})
#: Interned label maps.
_LABELS: Final[_Table[LabelMap]] = _Table()
#: Interned frozen records and tuples of them (owner references, pod templates, taints).
_FROZEN: Final[_Table[Hashable]] = _Table()


def label_key(labels: Mapping[str, str]) -> LabelMap:
    """A hashable key of a label map, equal to the interned map of the same labels: the map itself when it
    is interned (O(1)), else a hashable copy (O(len))."""
    if type(labels) is LabelMap:
        return labels
    return LabelMap(labels)


def intern_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Return a shared dict equal to ``labels``: equal label maps are stored once. O(len(labels)), plus
    O(_SWEEP_STEP) for a new map (a step of the sweep under way)."""
    if not labels:
        return _EMPTY
    if type(labels) is LabelMap:
        return labels
    return _LABELS.intern(LabelMap(labels))  # (keys are shared already: msgspec's and orjson's key caches)


def intern_frozen(value: H) -> H:
    """Return a shared object equal to ``value``, a frozen record or a tuple of them (hashable by content:
    equal owner references, templates and taints are stored once). O(size of ``value``), plus
    O(_SWEEP_STEP) for a new one."""
    return cast(H, _FROZEN.intern(value))


def interned_label_maps() -> int:
    """How many distinct label maps are in use now (long-run memory checks): the table's entries that some
    record still holds. O(table); does not change the table."""
    return _LABELS.in_use()


def interned_frozen() -> int:
    """How many distinct frozen values (owner references, templates, taints) are in use now, as
    :func:`interned_label_maps` counts them. O(table); does not change the table."""
    return _FROZEN.in_use()
