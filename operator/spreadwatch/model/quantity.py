"""Kubernetes resource quantities (``resource.Quantity``) read exactly, as kube-scheduler reads them.

A quantity (``"250m"``, ``"1.5Gi"``, ``"1e3"``, a JSON number) is parsed into an exact rational number
(:class:`fractions.Fraction`, never a float): ``<sign><digits>[.<digits>]<suffix>`` with a binary suffix
(``Ki`` … ``Ei``), a decimal one (``n``, ``u``, ``m``, none, ``k``, ``M`` … ``E``) or a decimal exponent
(``e3``, ``E-2``). :func:`quantity_value` is ``Quantity.Value()`` and :func:`quantity_milli` is
``Quantity.MilliValue()``: both round up (the ceiling), as upstream's ``ScaledValue`` does. A value that does
not fit in 64 bits, or text longer than :data:`MAX_QUANTITY_TEXT`, is refused (None): the API server never
stores one a scheduler could sum. Pure; O(len(text)).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Final

__all__ = ["MAX_QUANTITY_TEXT", "parse_quantity", "quantity_milli", "quantity_value"]

#: Longer text is refused without being read (a value that long cannot fit in 64 bits anyway).
MAX_QUANTITY_TEXT: Final = 64
_INT64_MAX: Final = 2**63 - 1
_NUMBER: Final = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)", re.ASCII | re.DOTALL)
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)", re.ASCII)
_SUFFIXES: Final[dict[str, Fraction]] = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
#: Exponents beyond these give values no 64-bit quantity holds (up) or that round to 1 or 0 (down) as well.
_MAX_EXPONENT: Final = 40


def parse_quantity(value: object) -> Fraction | None:
    """The exact value of a quantity given as text or a JSON number (``int``/``float``, as
    ``Quantity.UnmarshalJSON`` reads an unquoted number); None when it is not one, or beyond 64 bits. A
    boolean is not a quantity. O(len(text))."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value) if -_INT64_MAX - 1 <= value <= _INT64_MAX else None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = repr(value)
    if not isinstance(value, str) or not value or len(value) > MAX_QUANTITY_TEXT:
        return None
    match = _NUMBER.fullmatch(value)
    if match is None:
        return None
    sign, digits, suffix = match.groups()
    number = Fraction(digits + "0" if digits.endswith(".") else digits)
    scale = _SUFFIXES.get(suffix)
    if scale is None:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            return None
        power = max(-_MAX_EXPONENT, min(_MAX_EXPONENT, int(exponent.group(1))))
        scale = Fraction(10) ** power
    result = number * scale
    if sign == "-":
        result = -result
    if math.ceil(abs(result)) > _INT64_MAX:
        return None
    return result


def quantity_value(quantity: Fraction) -> int:
    """``Quantity.Value()``: the value rounded up to an integer. O(1)."""
    return math.ceil(quantity)


def quantity_milli(quantity: Fraction) -> int:
    """``Quantity.MilliValue()``: the value in thousandths, rounded up. O(1)."""
    return math.ceil(quantity * 1000)
