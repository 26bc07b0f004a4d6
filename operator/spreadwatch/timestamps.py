"""The API's two timestamp forms, in UTC (pure): ``metav1.Time`` (seconds) and ``metav1.MicroTime``.

Used for SpreadReport conditions and Events (:func:`rfc3339`), for the Lease's renew and acquire times
(:func:`rfc3339_micro`), and read back from pods (:func:`unix_seconds`: creation and Ready times, which the
ReplicaSet controller ranks a scale-down by). O(1) each.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Final

__all__ = ["ZERO_TIME", "rfc3339", "rfc3339_micro", "unix_seconds"]

#: Go's zero ``time.Time`` (``metav1.Time{}``, an absent timestamp) in Unix seconds: ``IsZero`` is ``== ZERO_TIME``.
ZERO_TIME: Final = -62_135_596_800
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _utc(when: dt.datetime | None) -> dt.datetime:
    return (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)


def rfc3339(when: dt.datetime | None = None) -> str:
    """``2026-01-02T03:04:05Z``: ``when`` (default now) in UTC, to the second — the form of metav1.Time."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(when: dt.datetime | None = None) -> str:
    """``2026-01-02T03:04:05.000006Z``: ``when`` (default now) in UTC, to the microsecond — metav1.MicroTime."""
    return _utc(when).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@functools.lru_cache(maxsize=1024)
def unix_seconds(text: str | None) -> int:
    """A ``metav1.Time`` as the API server keeps it: whole Unix seconds (its protobuf form drops fractions), the
    fraction floored; None or "" is :data:`ZERO_TIME`. ValueError when ``text`` is not RFC 3339. O(1).

    Cached (the last 1024 texts): pods created, or Ready, in one second share one int, so the records of a
    burst of pods (listed or watched together) hold one object, not one each (32 bytes a pod)."""
    if not text:
        return ZERO_TIME
    if (  # the API's own form, 2026-01-02T03:04:05Z: civil-calendar arithmetic, no datetime
        len(text) == 20
        and text[4] == text[7] == "-"
        and text[10] == "T"
        and text[13] == text[16] == ":"
        and text[19] == "Z"
        and text[:4].isdigit()
    ):
        year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
        hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
        if not (
            year >= 1
            and 1 <= month <= 12
            and 1 <= day <= _month_days(year, month)
            and 0 <= hour < 24
            and 0 <= minute < 60
            and 0 <= second < 60
        ):
            raise ValueError(f"not an RFC 3339 time: {text!r}")
        return _days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    when = dt.datetime.fromisoformat(text)
    if when.tzinfo is None or text[10] not in "Tt":  # RFC 3339 needs the offset and the T
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    return (when - _EPOCH) // dt.timedelta(seconds=1)


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's ``days_from_civil``). O(1)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
