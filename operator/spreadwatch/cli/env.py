"""``SPREADWATCH_<FLAG>`` environment defaults of the command-line flags, validated.

Every flag's default comes from its environment variable when set (``SPREADWATCH_PROFILE``, ...). A value
that cannot be used raises :class:`~spreadwatch.errors.InputError` naming the variable (one line on stderr,
exit 2), before any flag is parsed. Each function is O(len(value)).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

from spreadwatch.cli.argtypes import bool_word
from spreadwatch.errors import InputError

__all__ = ["env", "env_bool", "env_choice", "env_float", "env_int", "env_list", "split_list"]

_Num = TypeVar("_Num", int, float)


def env(name: str, default: str) -> str:
    """``SPREADWATCH_<name>``, or ``default`` when unset."""
    return os.environ.get(f"SPREADWATCH_{name}", default)


def _env_number(name: str, default: _Num, convert: Callable[[str], _Num], what: str) -> _Num:
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    try:
        return convert(raw)
    except ValueError:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected {what}") from None


def env_int(name: str, default: int) -> int:
    """``SPREADWATCH_<name>`` as an integer; InputError otherwise."""
    return _env_number(name, default, int, "an integer")


def env_float(name: str, default: float) -> float:
    """``SPREADWATCH_<name>`` as a number; InputError otherwise."""
    return _env_number(name, default, float, "a number")


def env_bool(name: str, default: bool) -> bool:
    """``SPREADWATCH_<name>`` as true (1, true, yes, on) or false (0, false, no, off); InputError otherwise."""
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    value = bool_word(raw)
    if value is None:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected true or false")
    return value


def env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    """``SPREADWATCH_<name>``, which must be one of ``choices``; InputError otherwise."""
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    if raw not in choices:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected one of {', '.join(choices)}")
    return raw


def env_list(name: str) -> list[str]:
    """``SPREADWATCH_<name>`` as a comma-separated list (empty items dropped)."""
    return split_list(os.environ.get(f"SPREADWATCH_{name}", ""))


def split_list(text: str) -> list[str]:
    """``a, b,,c`` → ``["a", "b", "c"]``."""
    return [part.strip() for part in text.split(",") if part.strip()]
