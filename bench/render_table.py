"""Markdown pieces every rendering module of bench/ shares: number formatting and a table with one column per
result (scale). Pure; O(rows × columns).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

__all__ = ["ColumnTable", "Getter", "fmt"]

Getter = str | Callable[[Any], Any]  # an attribute path ("cold.load_s") or a function of the result


def fmt(x: float | None, unit: str = "") -> str:
    """A figure for a table: 3 significant digits (thousands separated from 100 up), counts and rates (unit
    ``/s``) as whole numbers, "–" when missing."""
    if x is None or math.isnan(x):
        return "–"
    if unit == "/s" or abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


class ColumnTable:
    """A markdown table: one row per figure, one column per result. A figure a result lacks (its part was not
    measured: None, or a missing key) shows "–" instead of failing the whole document."""

    def __init__(self, results: Sequence[Any], titles: Sequence[str], first: str = "figure") -> None:
        self.results = results
        self.lines = ["| " + " | ".join([first, *titles]) + " |", "|---|" + "---:|" * len(titles)]

    def cell(self, result: Any, get: Getter, unit: str = "") -> str:
        """One formatted cell: strings are taken as they are, numbers go through :func:`fmt`."""
        try:
            value = attrgetter(get)(result) if isinstance(get, str) else get(result)
        except (AttributeError, KeyError, TypeError, ZeroDivisionError):
            value = None
        return value if isinstance(value, str) else fmt(value, unit)

    def row(self, label: str, get: Getter, unit: str = "") -> None:
        self.lines.append(f"| {label} | " + " | ".join(self.cell(r, get, unit) for r in self.results) + " |")
