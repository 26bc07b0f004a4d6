"""The bound on writes in flight (runtime/writing/concurrency.py): Little's law with the answered writes' latency,
clamped to [floor, ceiling], halved on throttling and regained one per window; and the achieved-rate meter
(runtime/writing/ratelimit.py). Pure: tables of observations → the bound."""

from __future__ import annotations

import pytest

from spreadwatch.runtime.writing.concurrency import HEADROOM, PRIOR_LATENCY, WINDOW, WriteConcurrency
from spreadwatch.runtime.writing.ratelimit import RateMeter


def _after(latencies: list[float], rate: float = 100.0, ceiling: int = 24, floor: int = 2) -> WriteConcurrency:
    limit = WriteConcurrency(rate, ceiling, floor)
    for seconds in latencies:
        limit.observe(seconds)
    return limit


@pytest.mark.parametrize(
    ("rate", "ceiling", "latencies", "expected"),
    [
        pytest.param(100.0, 24, [], 8, id="no answer yet: 100/s x 0.050 s (prior) x 1.5 = 7.5 -> 8"),
        pytest.param(100.0, 24, [0.02] * 10, 3, id="100/s x 0.020 s x 1.5 = 3"),
        pytest.param(100.0, 24, [0.075] * 10, 12, id="100/s x 0.075 s x 1.5 = 11.25 -> 12"),
        pytest.param(100.0, 24, [0.1] * 10, 15, id="100/s x 0.100 s x 1.5 = 15"),
        pytest.param(100.0, 24, [0.16] * 10, 24, id="100/s x 0.160 s x 1.5 = 24: the ceiling, exactly"),
        pytest.param(100.0, 24, [0.5] * 10, 24, id="100/s x 0.500 s x 1.5 = 75 -> the ceiling 24"),
        pytest.param(100.0, 24, [0.005] * 10, 2, id="100/s x 0.005 s x 1.5 = 0.75 -> the floor 2"),
        pytest.param(100.0, 24, [0.05, 0.15], 15, id="mean of 0.05 and 0.15 = 0.1 s: 15"),
        pytest.param(20.0, 24, [0.2] * 10, 6, id="20/s x 0.200 s x 1.5 = 6"),
        pytest.param(100.0, 1, [0.2] * 10, 1, id="ceiling 1: the floor is lowered to it"),
        pytest.param(100.0, 10, [0.1] * 10, 10, id="15 wanted, ceiling 10"),
        # only the last WINDOW answers count: 50 slow ones pushed out by 50 fast ones
        pytest.param(100.0, 24, [1.0] * WINDOW + [0.02] * WINDOW, 3, id="old answers leave the window: 3"),
    ],
)
def test_the_bound_is_rate_times_mean_latency_times_headroom(
    rate: float, ceiling: int, latencies: list[float], expected: int
) -> None:
    assert HEADROOM == 1.5 and PRIOR_LATENCY == 0.05
    assert _after(latencies, rate, ceiling).limit == expected


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param("t", 12, id="24 wanted, throttled: 12"),
        pytest.param("tt", 12, id="two 429s before any answer: halved once"),
        pytest.param("tat", 6, id="429, an answer, 429: 6"),
        pytest.param("tatatatat", 2, id="halved down to the floor 2"),
        pytest.param("t" + "a" * (WINDOW - 1), 12, id="49 answers after: still 12"),
        pytest.param("t" + "a" * WINDOW, 13, id="50 answers after: 13 (one per window)"),
        pytest.param("t" + "a" * (12 * WINDOW), 24, id="600 answers after: back to the ceiling 24"),
        pytest.param("t" + "a" * (20 * WINDOW), 24, id="never above the ceiling"),
    ],
)
def test_throttling_halves_the_bound_and_answers_regain_it(steps: str, expected: int) -> None:
    limit = _after([0.2] * WINDOW)  # 100/s x 0.2 s x 1.5 = 30: the ceiling 24
    assert limit.limit == 24
    for step in steps:
        if step == "t":
            limit.throttled()
        else:
            limit.observe(0.2)
    assert limit.limit == expected


def test_a_throttled_bound_still_follows_a_lower_latency() -> None:
    limit = _after([0.2] * WINDOW)
    limit.throttled()  # cap 12
    for _ in range(WINDOW):
        limit.observe(0.02)  # 3 wanted: below the cap
    assert limit.limit == 3


@pytest.mark.parametrize(
    "args",
    [(0.0, 24), (100.0, 0), (100.0, 24, 0), (100.0, 24, 2, 0), (100.0, 24, 2, 50, 0.0), (100.0, 24, 2, 50, 1.5, 0)],
)
def test_unusable_settings_are_refused(args: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="need rate > 0"):
        WriteConcurrency(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        pytest.param([], 0.0, id="no sample"),
        pytest.param([(0.0, 0)], 0.0, id="one sample"),
        pytest.param([(0.0, 0), (1.0, 100)], 100.0, id="100 in 1 s"),
        pytest.param([(0.0, 0), (5.0, 250), (10.0, 500)], 50.0, id="500 in 10 s"),
        # samples older than the window go, but one at or before its start stays: (20 s) → (30 s)
        pytest.param([(0.0, 0), (20.0, 1000), (25.0, 1200), (30.0, 1400)], 40.0, id="the last 10 s: 400 in 10 s"),
        pytest.param([(0.0, 0), (0.0, 5)], 0.0, id="two samples at one instant"),
    ],
)
def test_the_rate_meter_reads_the_last_window(samples: list[tuple[float, int]], expected: float) -> None:
    meter = RateMeter(window=10.0)
    for now, count in samples:
        meter.sample(now, count)
    assert meter.rate() == pytest.approx(expected)
