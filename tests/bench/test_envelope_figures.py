"""bench/envelope_figures.py: a churn phase's writes and changes inside and outside its resyncs.

The views and changes are built by hand (a resync of 10 s inside 100 s of churn); every expected figure is the
arithmetic in the row's id, not anything the harness computed.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.envelope_figures import OperatorView, phase_figures, scrape_shares, sum_phases

_EMPTY = {"write": [(float("inf"), 0.0)], "lag": [(float("inf"), 0.0)]}


def _view(at: float, writes: int, resyncs: list[dict[str, Any]]) -> OperatorView:
    # wall = at + 1000: the operator's unix clock runs 1000 s ahead of the harness's monotonic one
    return OperatorView(at, at + 1000.0, {"creates": 0, "statusWrites": writes}, resyncs, _EMPTY)


def _phase(beside: int, writes: int, made: list[float]) -> dict[str, Any]:
    resync = {"started": 1040.0, "seconds": 10.0, "writesBeside": beside, "pages": 2, "bytes": 100}
    return phase_figures(_view(0.0, 0, []), _view(100.0, writes, [resync]), [(t, 1.0) for t in made], 100.0)


@pytest.mark.parametrize(
    ("beside", "writes", "made", "write_ratio", "change_ratio", "per_change"),
    [
        # 10 writes in the 10 s resync, 90 in the 90 s outside: 1/s ÷ 1/s; 10 and 90 changes: 1 ÷ 1
        pytest.param(10, 100, [float(t) for t in range(100)], 1.0, 1.0, 1.0, id="writes=changes=1/s-everywhere:1/1"),
        # the writes halve during the resync (5/10 s ÷ 90/90 s = 0.5) with the changes unchanged: a stall
        pytest.param(5, 95, [float(t) for t in range(100)], 0.5, 1.0, 0.5, id="writes-halve,changes-same:0.5/1=0.5"),
        # the churn itself halves (5 changes in 40..50, 90 elsewhere) and the writes with it: no stall
        pytest.param(
            5,
            95,
            [*range(40, 50, 2), *range(40), *range(50, 100)],
            0.5,
            0.5,
            1.0,
            id="writes-and-changes-halve:0.5/0.5=1",
        ),
    ],
)
def test_writes_per_change_separates_a_stall_from_a_slower_churn(
    beside: int, writes: int, made: list[float], write_ratio: float, change_ratio: float, per_change: float
) -> None:
    phase = _phase(beside, writes, [t + 0.5 for t in made])  # (never on a window's edge)
    assert phase["changes_made"] == len(made)
    assert phase["changes_made_during_resync"] == sum(1 for t in made if 40 <= t < 50)
    summed = sum_phases([phase], _view(0.0, 0, []), _view(100.0, writes, []))
    assert (summed["write_rate_ratio"], summed["change_rate_ratio"], summed["writes_per_change_ratio"]) == (
        write_ratio,
        change_ratio,
        per_change,
    )


def test_writes_per_change_weighs_each_phase_at_its_own_rate() -> None:
    """A rollout's change makes few writes (its workload's debounce merges them), a scattered one many: the
    resyncs' writes are compared with what each phase would have written for the changes made meanwhile, not
    with the phases pooled (their mix inside the resyncs would decide)."""
    # rollouts: 9 writes for 900 changes outside (0.01 a change); 100 changes in the resync, 1 write: 1.0
    rollouts = _phase(1, 10, [t / 10 + 0.05 for t in range(1000)])
    # scattered: 90 writes for 90 changes outside (1 a change); the churn halves in the resync: 5 changes, 5
    # writes: 1.0
    made = [t + 0.5 for t in (*range(40), *range(40, 50, 2), *range(50, 100))]
    scattered = _phase(5, 95, made)
    assert (rollouts["writes_per_change_ratio"], scattered["writes_per_change_ratio"]) == (1.0, 1.0)
    summed = sum_phases([rollouts, scattered], _view(0.0, 0, []), _view(200.0, 105, []))
    assert summed["writes_per_change_ratio"] == 1.0  # expected 100 × 0.01 + 5 × 1 = 6, written 6
    # pooled, the same churn reads as a stall: (6 / 99 writes) ÷ (105 / 990 changes) = 0.57
    assert summed["write_rate_ratio"] / summed["change_rate_ratio"] == pytest.approx(0.57, abs=0.02)


@pytest.mark.parametrize(
    ("course", "expected"),
    [
        pytest.param([], {}, id="no scrape: no figure"),
        # [began, seconds, the operator's CPU, the machine's busy share]: the slowest is the 4 s one (2 s of CPU);
        # CPU ÷ seconds 0.5, 0.5, 1.0 → median 0.5; busy 1.0, 0.9, 0.8 → median 0.9
        pytest.param([[10, 1.0, 0.5, 1.0], [20, 4.0, 2.0, 0.9], [30, 2.0, 2.0, 0.8]],
                     {"scrape_slowest": [20, 4.0, 2.0, 0.9], "scrape_slowest_cpu_s": 2.0,
                      "scrape_cpu_share_p50": 0.5, "scrape_machine_busy_p50": 0.9},
                     id="slowest 4 s with 2 s CPU; shares 0.5, 0.5, 1 → 0.5; busy → 0.9"),
        # ... with etcd + the API server's CPU and the harness's: those of the slowest (4 s: 3.5 and 1.5 s)
        pytest.param([[10, 1.0, 0.5, 1.0, 0.9, 0.4], [20, 4.0, 2.0, 0.9, 3.5, 1.5]],
                     {"scrape_slowest": [20, 4.0, 2.0, 0.9, 3.5, 1.5], "scrape_slowest_cpu_s": 2.0,
                      "scrape_cpu_share_p50": 0.5, "scrape_machine_busy_p50": 0.95,
                      "scrape_slowest_control_plane_cpu_s": 3.5, "scrape_slowest_harness_cpu_s": 1.5},
                     id="slowest 4 s: control plane 3.5 s, harness 1.5 s; busy 1, 0.9 → 0.95"),
    ],
)
def test_scrape_shares_name_the_slowest_and_the_medians(course: list[list[float]], expected: dict[str, Any]) -> None:
    assert scrape_shares(course) == expected
