"""Interned label maps: equal label maps are stored once and keyed by content.

Pods of one ReplicaSet share a single dict. The cache is a plain dict, swept of the maps only it still holds
(no record uses them any more) each time it has doubled since the last sweep, so label sets of old rollouts
(pod-template-hash) do not pile up in a long-running operator, and a miss costs no weak reference (about 4x
cheaper than a ``WeakValueDictionary``, which matters when a 150,000-pod listing interns ~60,000 distinct
maps). A sweep is spread over the misses that follow it (:data:`_SWEEP_STEP` entries checked per new map),
never done in one go: a sweep of 200,000 maps at once took ~1 s of CPU, a stall in the operator's event
loop. Cost: O(1 + _SWEEP_STEP) per new map, O(1) per hit. Memory: at most about twice the label maps in use,
plus those dropped since the last sweep.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Final

__all__ = ["intern_labels", "interned_label_maps", "label_key"]


class _Labels(dict[str, str]):
    """An interned label map: a plain dict that remembers its hashable key."""

    __slots__ = ("key",)

    key: frozenset[tuple[str, str]]


_Key = frozenset[tuple[str, str]]

_EMPTY = _Labels()
_EMPTY.key = frozenset()
#: Interned label maps by content; entries only this dict still holds are dropped by :func:`_sweep`.
_LABELS_CACHE: dict[_Key, _Labels] = {}
_MIN_SWEEP: Final = 4096  # no sweep below this many entries
_SWEEP_STEP: Final = 32  # entries a sweep under way checks per new map (~2 µs)
_next_sweep = _MIN_SWEEP
#: Keys the sweep under way has still to check (taken when it started); empty: no sweep under way.
_to_check: list[_Key] = []


def _refcounts(cache: dict[_Key, _Labels]) -> list[tuple[_Key, int]]:
    """Each entry's key and the reference count of its map, as seen from here. O(len(cache)). The entries
    are copied first, in one C call (atomic under the GIL): another thread may intern meanwhile."""
    return [(key, sys.getrefcount(labels)) for key, labels in tuple(cache.items())]


def _refcount_of(cache: dict[_Key, _Labels], key: _Key) -> int:
    """The reference count of ``key``'s map as seen from here (0: no longer cached). O(1)."""
    labels = cache.get(key)
    return 0 if labels is None else sys.getrefcount(labels)


#: The counts :func:`_refcounts` and :func:`_refcount_of` report for a map nothing but the cache holds
#: (measured, not assumed).
_ONLY_CACHED: Final = _refcounts({frozenset(): _Labels()})[0][1]
_ONLY_CACHED_ONE: Final = _refcount_of({frozenset(): _Labels()}, frozenset())


def _sweep_step(budget: int) -> None:
    """Check up to ``budget`` keys of the sweep under way (starting one if the cache has doubled): drop the
    maps no one but the cache holds. O(budget), plus one O(len(cache)) copy of the keys in C when a sweep
    starts."""
    global _next_sweep  # noqa: PLW0603 - the sweep threshold is module state, like the cache
    if not _to_check:
        if len(_LABELS_CACHE) < _next_sweep:
            return
        _to_check.extend(_LABELS_CACHE)
    for _ in range(min(budget, len(_to_check))):
        key = _to_check.pop()
        if 0 < _refcount_of(_LABELS_CACHE, key) <= _ONLY_CACHED_ONE:
            _LABELS_CACHE.pop(key, None)  # (another thread's sweep may have dropped it already)
    if not _to_check:
        _next_sweep = max(_MIN_SWEEP, 2 * len(_LABELS_CACHE))


def _sweep() -> None:
    """Finish the sweep under way, or do a whole one now (tests, diagnostics). O(len(cache))."""
    if not _to_check:
        _to_check.extend(_LABELS_CACHE)
    _sweep_step(len(_to_check))


def label_key(labels: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """A hashable key of a label map: O(1) for an interned map, else O(len)."""
    if type(labels) is _Labels:
        return labels.key
    return frozenset(labels.items())


def intern_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Return a shared dict equal to ``labels``: equal label maps are stored once. O(len(labels)), plus
    O(_SWEEP_STEP) for a new map (a step of the sweep under way)."""
    if not labels:
        return _EMPTY
    if type(labels) is _Labels:
        return labels
    key = frozenset(labels.items())
    shared = _LABELS_CACHE.get(key)
    if shared is None:
        if _to_check or len(_LABELS_CACHE) >= _next_sweep:
            _sweep_step(_SWEEP_STEP)
        shared = _Labels(labels)  # (keys are shared already: msgspec's and orjson's key caches)
        shared.key = key
        _LABELS_CACHE[key] = shared
    return shared


def interned_label_maps() -> int:
    """How many distinct label maps are in use now (long-run memory checks): the cache's entries that some
    record still holds. O(len(cache)); does not change the cache."""
    return sum(1 for _, refs in _refcounts(_LABELS_CACHE) if refs > _ONLY_CACHED)
