"""NormalizeScore arithmetic: float64 order of operations and truncation, as upstream."""

from __future__ import annotations

import pytest

from spreadwatch.scoring import summarize

Z = ("r", "z1")
Z2 = ("r", "z2")


@pytest.mark.parametrize(
    ("nodes", "max_score", "expected"),
    [
        pytest.param([(None, 0), (None, 0)], 100, [100, 100], id="no matching pods anywhere: every node 100"),
        pytest.param([(None, 1), (None, 2)], 100, [50, 0], id="max 2: 100*(2-1)/2=50, 100*(2-2)/2=0"),
        pytest.param([(None, 1), (None, 3)], 100, [66, 0], id="100*(3-1)/3=66.67 truncates to 66"),
        pytest.param([(None, 1), (None, 3)], 10, [6, 0], id="0-10 scale: 10*(2/3)=6.67 -> 6"),
        pytest.param([(Z, 0), (Z2, 0)], 100, [100, 100], id="zones, no pods: node 100, zone 100 -> 100"),
        pytest.param(
            [(Z, 0), (Z, 1), (Z2, 0)],
            100,
            [33, 0, 100],
            id="z1=1 z2=0: n1 100/3+0=33.33; n2 0; n3 100/3+2/3*100=100",
        ),
        pytest.param(
            [(Z, 0), (None, 1), (Z2, 0)],
            100,
            [100, 0, 100],
            id="zoneless node gets node part only; zone sums 0 -> zone part 100",
        ),
        pytest.param(
            [(Z, 2), (Z2, 1), (None, 0)],
            100,
            [0, 50, 100],
            id="z1=2 z2=1: n2 node 100*(2-1)/2=50, zone 50 -> 50/3+2/3*50 = 50; zoneless empty 100",
        ),
    ],
)
def test_normalize(nodes: list[tuple[tuple[str, str] | None, int]], max_score: int, expected: list[int]) -> None:
    summary = summarize(nodes, max_score)
    assert [summary.score(c, z) for z, c in nodes] == expected


def test_float_order_matters() -> None:
    """0-10 scale, z1 = 6+6+3 = 15 pods, z2 = 5 pods on n4 (maxNode 6):
    n4 node = 10*(6-5)/6 = 1.667, zone = 10*(15-5)/15 = 6.667; in exact arithmetic 1.667/3 + 2/3*6.667 = 5,
    but upstream's float64 (node*(1-2/3)) + (2/3*zone) = 4.999999999999999, truncated to 4."""
    nodes = [(Z, 6), (Z, 6), (Z, 3), (Z2, 5)]
    summary = summarize(nodes, 10)
    b = summary.breakdown(5, Z2)
    assert b.node_part + b.zone_part < 5.0
    assert [summary.score(c, z) for z, c in nodes] == [0, 0, 1, 4]
