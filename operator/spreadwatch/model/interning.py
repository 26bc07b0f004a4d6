"""Interned label maps: equal label maps are stored once, each its own hashable key.

Pods of one ReplicaSet share a single dict. An interned map (:class:`LabelMap`) is a plain dict that also
hashes by content (the hash of its items, computed once when it is interned): the cache is a plain dict
holding each map as both key and value, and the index keys its label groups by the map itself. Nothing
else is stored per map: no frozenset of item tuples, which cost ~580 bytes per map at the envelope (~26 MiB
for the ~32,000 distinct maps of a 150,000-pod cluster, half of them StatefulSet pods' own).

The cache is swept of the maps only it still holds (no record uses them any more) each time it holds twice
the maps the last sweep found in use, so label sets of old rollouts (pod-template-hash) do not pile up in a
long-running operator, and a miss costs no weak reference (about 4x cheaper than a ``WeakValueDictionary``,
which matters when a 150,000-pod listing interns ~60,000 distinct maps). A sweep is spread over the misses
that follow it (:data:`_SWEEP_STEP` entries checked per new map), never done in one go: a sweep of 200,000
maps at once took ~1 s of CPU, a stall in the operator's event loop. Cost: O(labels + _SWEEP_STEP) per new
map, O(labels) per hit. Memory: at most about twice the label maps in use, plus those dropped since the last sweep.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import Final

__all__ = ["LabelMap", "intern_labels", "interned_label_maps", "label_key"]


class LabelMap(dict[str, str]):
    """An interned label map: a dict that hashes by its content (equal maps, equal hashes: dict equality
    is by content already). Never changed once made: it is a key of the cache and of the index's groups."""

    __slots__ = ("_hash",)

    def __init__(self, labels: Mapping[str, str]) -> None:
        super().__init__(labels)
        self._hash = hash(frozenset(labels.items()))  # (transient: only the int is kept)

    def __hash__(self) -> int:  # type: ignore[override]  # (dict is unhashable; this one never changes)
        return self._hash


_EMPTY: Final = LabelMap({})
#: Interned label maps, each its own key; entries only this dict still holds are dropped by :func:`_sweep`.
_LABELS_CACHE: dict[LabelMap, LabelMap] = {}
_MIN_SWEEP: Final = 4096  # no sweep below this many entries
_SWEEP_STEP: Final = 32  # entries a sweep under way checks per new map (~2 µs)
_next_sweep = _MIN_SWEEP
#: Maps the sweep under way has still to check (taken when it started); empty: no sweep under way.
_to_check: list[LabelMap] = []
#: Maps the sweep under way has checked and kept (in use): the next sweep comes when the cache is twice these.
_kept = 0
#: Held by the thread stepping the sweep (the operator's informers decode, and so intern, in several
#: threads at once): another thread's step is skipped, never run alongside (two steps once popped the same
#: list empty, an IndexError that stopped an informer).
_SWEEPING: Final = threading.Lock()


def _refcounts(cache: dict[LabelMap, LabelMap]) -> list[tuple[LabelMap, int]]:
    """Each cached map and its reference count, as seen from here. O(len(cache)). The maps are copied
    first, in one C call (atomic under the GIL): another thread may intern meanwhile."""
    return [(labels, sys.getrefcount(labels)) for labels in tuple(cache)]


def _popped_refcount(checking: list[LabelMap]) -> tuple[LabelMap, int]:
    """The next map of a sweep, taken off ``checking``, and its reference count as seen from here. O(1)."""
    labels = checking.pop()
    return labels, sys.getrefcount(labels)


def _measured_only_cached() -> tuple[int, int]:
    """The counts :func:`_refcounts` and :func:`_popped_refcount` report for a map nothing but the cache
    holds (measured, not assumed)."""
    labels = LabelMap({})
    cache = {labels: labels}  # (as interned: the map is its own key)
    del labels
    only_cached = _refcounts(cache)[0][1]
    return only_cached, _popped_refcount(list(cache))[1]


_ONLY_CACHED, _ONLY_CACHED_POPPED = _measured_only_cached()


def _sweep_step(budget: int) -> None:
    """Check up to ``budget`` maps of the sweep under way (starting one if the cache has doubled): drop the
    maps no one but the cache holds. O(budget), plus one O(len(cache)) copy of the maps in C when a sweep
    starts. Skipped while another thread steps the sweep."""
    if not _SWEEPING.acquire(blocking=False):
        return
    try:
        _step_locked(budget)
    finally:
        _SWEEPING.release()


def _step_locked(budget: int) -> None:
    global _next_sweep, _kept  # noqa: PLW0603 - the sweep's threshold and tally are module state, like the cache
    if not _to_check:
        if len(_LABELS_CACHE) < _next_sweep:
            return
        _start_sweep()
    for _ in range(min(budget, len(_to_check))):
        labels, refs = _popped_refcount(_to_check)
        if refs <= _ONLY_CACHED_POPPED and _LABELS_CACHE.get(labels) is labels:
            del _LABELS_CACHE[labels]
        else:
            _kept += 1
    if not _to_check:
        # twice the maps found in use, not the cache's size: the maps interned while the sweep was under way
        # are unchecked (counting them let the cache grow past twice the maps in use at every sweep)
        _next_sweep = max(_MIN_SWEEP, 2 * _kept)


def _start_sweep() -> None:
    """Take the maps a new sweep checks; none kept yet. O(len(cache)) in C."""
    global _kept  # noqa: PLW0603 - the sweep's tally is module state, like the cache
    _to_check.extend(_LABELS_CACHE)
    _kept = 0


def _sweep() -> None:
    """Finish the sweep under way, then do a whole one now (tests, diagnostics): the maps interned while a
    sweep was under way are checked too. O(len(cache))."""
    with _SWEEPING:
        if _to_check:
            _step_locked(len(_to_check))
        _start_sweep()
        _step_locked(len(_to_check))


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
    probe = LabelMap(labels)  # (keys are shared already: msgspec's and orjson's key caches)
    shared = _LABELS_CACHE.get(probe)
    if shared is None:
        if _to_check or len(_LABELS_CACHE) >= _next_sweep:
            _sweep_step(_SWEEP_STEP)
        shared = _LABELS_CACHE[probe] = probe
    return shared


def interned_label_maps() -> int:
    """How many distinct label maps are in use now (long-run memory checks): the cache's entries that some
    record still holds. O(len(cache)); does not change the cache."""
    checking = {id(labels) for labels in tuple(_to_check)}  # (a sweep under way holds these once more)
    return sum(1 for labels, refs in _refcounts(_LABELS_CACHE) if refs - (id(labels) in checking) > _ONLY_CACHED)
