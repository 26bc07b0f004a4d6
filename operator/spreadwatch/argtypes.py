"""argparse ``type=`` converters shared by the command modules: a bad value becomes argparse's one-line usage
error (exit 2), never a traceback."""

from __future__ import annotations

import argparse

__all__ = ["whole_number"]


def whole_number(text: str, minimum: int = 0) -> int:
    """``text`` as an integer >= ``minimum``; raises ArgumentTypeError otherwise. O(len(text))."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {text!r}")
    return value
