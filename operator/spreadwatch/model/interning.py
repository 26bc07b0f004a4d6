"""Interned label maps: equal label maps are stored once and keyed by content.

Pods of one ReplicaSet share a single dict. The cache is a plain dict, swept of the maps only it still holds
(no record uses them any more) each time it has doubled since the last sweep: amortised O(1) per new map, so
label sets of old rollouts (pod-template-hash) do not pile up in a long-running operator, and a miss costs no
weak reference (about 4x cheaper than a ``WeakValueDictionary``, which matters when a 150,000-pod listing
interns ~60,000 distinct maps). Memory: at most twice the label maps in use, plus those dropped since.
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
_MIN_SWEEP: Final = 4096  # no sweep below this many entries (a sweep is O(len(cache)))
_next_sweep = _MIN_SWEEP


def _refcounts(cache: dict[_Key, _Labels]) -> list[tuple[_Key, int]]:
    """Each entry's key and the reference count of its map, as seen from here. O(len(cache)). The entries
    are copied first, in one C call (atomic under the GIL): another thread may intern meanwhile."""
    return [(key, sys.getrefcount(labels)) for key, labels in tuple(cache.items())]


#: The count :func:`_refcounts` reports for a map nothing but the cache holds (measured, not assumed).
_ONLY_CACHED: Final = _refcounts({frozenset(): _Labels()})[0][1]


def _sweep() -> None:
    """Drop the maps no one but the cache holds; O(len(cache))."""
    global _next_sweep  # noqa: PLW0603 - the sweep threshold is module state, like the cache
    for key, refs in _refcounts(_LABELS_CACHE):
        if refs <= _ONLY_CACHED:
            _LABELS_CACHE.pop(key, None)  # (another thread's sweep may have dropped it already)
    _next_sweep = max(_MIN_SWEEP, 2 * len(_LABELS_CACHE))


def label_key(labels: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """A hashable key of a label map: O(1) for an interned map, else O(len)."""
    if type(labels) is _Labels:
        return labels.key
    return frozenset(labels.items())


def intern_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Return a shared dict equal to ``labels``: equal label maps are stored once. O(len(labels)), amortised
    (a sweep every time the cache has doubled)."""
    if not labels:
        return _EMPTY
    if type(labels) is _Labels:
        return labels
    key = frozenset(labels.items())
    shared = _LABELS_CACHE.get(key)
    if shared is None:
        if len(_LABELS_CACHE) >= _next_sweep:
            _sweep()
        shared = _Labels(labels)  # (keys are shared already: msgspec's and orjson's key caches)
        shared.key = key
        _LABELS_CACHE[key] = shared
    return shared


def interned_label_maps() -> int:
    """How many distinct label maps are in use now (long-run memory checks): the cache's entries that some
    record still holds. O(len(cache)); does not change the cache."""
    return sum(1 for _, refs in _refcounts(_LABELS_CACHE) if refs > _ONLY_CACHED)
