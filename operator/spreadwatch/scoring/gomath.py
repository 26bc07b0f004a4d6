"""Go's ``math.Log`` and ``math.Round`` on float64, bit for bit, for PodTopologySpread's weights.

CPython's :func:`math.log` calls the C library, which rounds correctly; Go computes ``math.Log`` with its
own polynomial (the FreeBSD/fdlibm ``e_log.c`` reduction ``x = 2^k·(1+f)`` with ``√2/2 ≤ 1+f < √2`` and a
degree-14 minimax series in ``s = f/(2+f)``), also on amd64. The two differ by one ULP on 9,447 of the
integers 1..1,000,000 (3, 14, 48, 74, ...), and a one-ULP weight can move a ``math.Round`` of a half-way
sum, so :func:`go_log` re-implements Go's algorithm; ``tests/scoring/test_gomath.py`` checks it against
Go's own output. :func:`go_round` is Go's ``math.Round`` (half away from zero; Python's ``round`` rounds
half to even), :func:`go_div` Go's integer division (truncated toward zero; Python's ``//`` floors). All O(1).
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["go_div", "go_log", "go_round"]

# ln 2 split into a high part with trailing zero bits (k·_LN2_HI is exact) and the rest.
_LN2_HI: Final = 6.93147180369123816490e-01
_LN2_LO: Final = 1.90821492927058770002e-10
# minimax coefficients of (log(1+f) - 2s - s·R)/s² ≈ L1·s² + L2·s⁴ + ... + L7·s¹⁴ (fdlibm's Lg1..Lg7)
_L1: Final = 6.666666666666735130e-01
_L2: Final = 3.999999999940941908e-01
_L3: Final = 2.857142874366239149e-01
_L4: Final = 2.222219843214978396e-01
_L5: Final = 1.818357216161805012e-01
_L6: Final = 1.531383769920937332e-01
_L7: Final = 1.479819860511658591e-01
_HALF_SQRT2: Final = 0.70710678118654752440


def go_log(x: float) -> float:
    """``math.Log(x)`` as Go computes it, for finite ``x > 0`` (the weights are logs of integers ≥ 2)."""
    if not x > 0.0 or math.isinf(x):
        return math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    mantissa, exponent = math.frexp(x)  # x = mantissa·2^exponent, 0.5 ≤ mantissa < 1
    if mantissa < _HALF_SQRT2:
        mantissa *= 2.0
        exponent -= 1
    f = mantissa - 1.0
    k = float(exponent)
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    odd = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    even = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    series = odd + even
    half_f2 = 0.5 * f * f
    return k * _LN2_HI - ((half_f2 - (s * (half_f2 + series) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """``int64(math.Round(x))``: nearest integer, halves away from zero (``x - trunc(x)`` is exact)."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return whole


def go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: the quotient truncated toward zero (``-1 / 2 == 0``; Python's ``//`` gives
    -1). ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
