"""go_log / go_round against Go's own math.Log and math.Round.

tests/data/golog.txt holds Go's math.Log bits (printed by hack/golog/main.go, go1.26 linux/amd64) for every
integer 1..5002 and for each integer up to 100,000 where CPython's math.log differs from Go's.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from spreadwatch.scoring.gomath import go_log, go_round

DATA = Path(__file__).resolve().parents[1] / "data" / "golog.txt"


def _go_values() -> list[tuple[int, float]]:
    out = []
    for line in DATA.read_text().splitlines():
        if line.startswith("#"):
            continue
        n, bits = line.split()
        out.append((int(n), struct.unpack("<d", int(bits, 16).to_bytes(8, "little"))[0]))
    return out


GO_LOG = _go_values()


def test_table_covers_every_weight_up_to_5000_nodes() -> None:
    assert [n for n, _ in GO_LOG[:5002]] == list(range(1, 5003))
    assert len(GO_LOG) > 5002  # plus the integers where libm and Go disagree


def test_go_log_equals_go_bit_for_bit() -> None:
    mismatches = [n for n, want in GO_LOG if go_log(float(n)) != want]
    assert mismatches == []


def test_cpython_log_really_differs_so_the_port_is_needed() -> None:
    differing = [n for n, want in GO_LOG if math.log(n) != want]
    assert 3 in differing  # log(3): libm 0x3ff193ea7aad030b, Go 0x3ff193ea7aad030a
    assert len(differing) > 500


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(0.5, 1, id="0.5->1 (half away from zero; Python round gives 0)"),
        pytest.param(2.5, 3, id="2.5->3 (Python round gives 2)"),
        pytest.param(1.4999999999999998, 1, id="1.4999999999999998->1"),
        pytest.param(0.49999999999999994, 0, id="0.49999999999999994->0 (floor(x+0.5) would give 1)"),
        pytest.param(-2.5, -3, id="-2.5->-3"),
        pytest.param(7.0, 7, id="7.0->7"),
        pytest.param(4503599627370497.0, 4503599627370497, id="2^52+1 stays"),
    ],
)
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want
