"""The API's two timestamp forms, in UTC (pure): ``metav1.Time`` (seconds) and ``metav1.MicroTime``.

Used for SpreadReport conditions and Events (:func:`rfc3339`) and for the Lease's renew and acquire times
(:func:`rfc3339_micro`). O(1) each.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["rfc3339", "rfc3339_micro"]


def _utc(when: dt.datetime | None) -> dt.datetime:
    return (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)


def rfc3339(when: dt.datetime | None = None) -> str:
    """``2026-01-02T03:04:05Z``: ``when`` (default now) in UTC, to the second — the form of metav1.Time."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(when: dt.datetime | None = None) -> str:
    """``2026-01-02T03:04:05.000006Z``: ``when`` (default now) in UTC, to the microsecond — metav1.MicroTime."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
