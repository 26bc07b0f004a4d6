"""Interned label maps: equal label maps are stored once and keyed by content.

Pods of one ReplicaSet share a single dict; an entry goes away with the last record using it.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Mapping

__all__ = ["intern_labels", "interned_label_maps", "label_key"]


class _Labels(dict[str, str]):
    """An interned label map: a plain dict that remembers its hashable key and can be weakly referenced."""

    __slots__ = ("__weakref__", "key")

    key: frozenset[tuple[str, str]]


_EMPTY = _Labels()
_EMPTY.key = frozenset()
#: Interned label maps by content. Weak: an entry goes away with the last record using it, so label sets of
#: old rollouts (pod-template-hash) do not pile up in a long-running operator.
_LABELS_CACHE: weakref.WeakValueDictionary[frozenset[tuple[str, str]], _Labels] = weakref.WeakValueDictionary()


def label_key(labels: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """A hashable key of a label map: O(1) for an interned map, else O(len)."""
    if type(labels) is _Labels:
        return labels.key
    return frozenset(labels.items())


def intern_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Return a shared dict equal to ``labels``: equal label maps are stored once. O(len(labels))."""
    if not labels:
        return _EMPTY
    if type(labels) is _Labels:
        return labels
    key = frozenset(labels.items())
    shared = _LABELS_CACHE.get(key)
    if shared is None:
        shared = _Labels({sys.intern(k): sys.intern(v) for k, v in labels.items()})
        shared.key = key
        _LABELS_CACHE[key] = shared
    return shared


def interned_label_maps() -> int:
    """How many distinct label maps the interning cache holds now (long-run memory checks). O(1)."""
    return len(_LABELS_CACHE)
