"""Which pod the StatefulSet controller deletes on a scale-down (pure).

``pkg/controller/statefulset``: a pod's ordinal is the number after its name's last ``-``
(``getOrdinal``: ``strconv.ParseInt(tail, 10, 32)``, -1 when it does not parse); the replicas are the ordinals
``[start, start + replicas)`` (``spec.ordinals.start``, default 0); the pods outside are *condemned* and
deleted highest ordinal first, one at a time, whatever their node or readiness. O(pods).
"""

from __future__ import annotations

from collections.abc import Iterable

from spreadwatch.model import Pod

__all__ = ["next_condemned", "ordinal"]

_INT32_DIGITS = 10


def ordinal(name: str) -> int:
    """A StatefulSet pod's ordinal as the controller parses it (ASCII digits, int32), else -1; never converts
    more than 10 digits. O(len(name))."""
    _, _, tail = name.rpartition("-")
    if not (tail.isascii() and tail.isdigit()) or len(tail.lstrip("0")) > _INT32_DIGITS:
        return -1
    value = int(tail)
    return value if value < 2**31 else -1


def next_condemned(pods: Iterable[Pod], replicas: int, start: int = 0) -> Pod | None:
    """The pod deleted first when the StatefulSet keeps ``replicas`` replicas from ordinal ``start``: the active
    pod with the highest ordinal outside ``[start, start + replicas)`` (None: none is). O(pods)."""
    condemned = [
        (n, p) for p in pods if p.active and (n := ordinal(p.name)) >= 0 and not start <= n < start + replicas
    ]
    return max(condemned, key=lambda c: c[0])[1] if condemned else None
