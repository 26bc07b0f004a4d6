"""``unix_seconds``' fast path (the API's own form, by calendar arithmetic) equals datetime's for every
second it can be given, and rejects what datetime rejects."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spreadwatch.timestamps import ZERO_TIME, unix_seconds

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_the_api_form_is_datetimes_seconds(when: dt.datetime) -> None:
    when = when.replace(microsecond=0, tzinfo=dt.UTC)
    text = f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when:%H:%M:%S}Z"
    assert unix_seconds(text) == (when - _EPOCH) // dt.timedelta(seconds=1)


@pytest.mark.parametrize(
    "text",
    ["2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z",
     "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "0000-01-01T00:00:00Z", "2026-01-01 00:00:00",
     "2026-01-00T00:00:00Z"],
)  # fmt: skip
def test_impossible_times_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match=r"RFC 3339|Invalid isoformat"):
        unix_seconds(text)


def test_other_forms_and_absence() -> None:
    assert unix_seconds("2024-02-29T12:00:00Z") == 1_709_208_000
    assert unix_seconds("2024-02-29T13:00:00+01:00") == 1_709_208_000
    assert unix_seconds("2024-02-29T12:00:00.999Z") == 1_709_208_000  # the fraction floored
    assert unix_seconds("") == unix_seconds(None) == ZERO_TIME
