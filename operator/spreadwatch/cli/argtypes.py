"""argparse ``type=`` converters shared by the command modules: a bad value becomes argparse's one-line usage
error (exit 2), never a traceback. Each is O(len(text))."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

__all__ = ["bool_word", "checked_number", "flag_bool", "port", "positive_seconds", "seconds", "whole_number"]

_N = TypeVar("_N", int, float)


def checked_number(text: str, convert: Callable[[str], _N], noun: str, ok: Callable[[_N], bool], bound: str) -> _N:
    """``convert(text)`` if ``ok`` accepts it; else ArgumentTypeError "expected {noun}, got ..." (not a number)
    or "expected {noun} {bound}, got ..." (out of bounds)."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {noun} {bound}, got {text!r}")
    return value


def whole_number(text: str, minimum: int = 0) -> int:
    """``text`` as an integer >= ``minimum``; raises ArgumentTypeError otherwise."""
    return checked_number(text, int, "a whole number", lambda v: v >= minimum, f">= {minimum}")


def seconds(text: str) -> float:
    """``text`` as a number of seconds >= 0 (not NaN: NaN >= 0 is false)."""
    return checked_number(text, float, "a number of seconds", lambda v: v >= 0, ">= 0")


def positive_seconds(text: str) -> float:
    """``text`` as a number > 0 (seconds, or a rate)."""
    value = seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def bool_word(text: str) -> bool | None:
    """true/false, 1/0, yes/no, on/off (any case, spaces around ignored); None for any other word."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return None


def flag_bool(text: str) -> bool:
    """A :func:`bool_word`; raises ArgumentTypeError for any other word."""
    value = bool_word(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port 0-65535."""
    value = whole_number(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, got {text!r}")
    return value
