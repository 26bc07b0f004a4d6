"""How every command prints: kubectl-style columns, numbers, and the one JSON encoder (orjson).

JSON documents are encoded by orjson with 2-space indentation and a final newline; when ``out`` is a real
stream (has a binary ``buffer``), the bytes go straight to it, never through a 40 MiB ``str`` for a big
``analyze -o json``. O(size of the output).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import orjson

__all__ = ["fmt", "table", "write_json", "write_notes", "write_yaml"]


def table(rows: Sequence[Sequence[object]], out: TextIO, indent: str = "") -> None:
    """kubectl-style columns: upper-case header, 3 spaces between columns (each line after ``indent``)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for row in cells:
        out.write(indent + "   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def fmt(value: float | None) -> str:
    """A score part with at most 2 decimals, trailing zeros dropped; ``-`` for None."""
    if value is None:
        return "-"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def write_json(doc: Any, out: TextIO) -> None:
    """``doc`` as indented JSON and a newline (orjson; str keys, dataclasses as their fields). An integer
    beyond 64 bits, which orjson refuses, is written exactly by the standard library's encoder instead
    (dataclasses as their fields there too)."""
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        data = (json.dumps(doc, indent=2, ensure_ascii=False, default=_plain) + "\n").encode()
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode())
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


def _plain(value: Any) -> Any:
    """What the standard encoder cannot encode, as orjson writes it: a dataclass as its fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def write_notes(notes: Iterable[str]) -> None:
    """Each note as one ``spreadwatch: note: ...`` line on stderr (e.g. objects of kinds not read). O(notes)."""
    for note in notes:
        sys.stderr.write(f"spreadwatch: note: {note}\n")


def write_yaml(doc: Any, out: TextIO) -> None:
    """``doc`` as block YAML, keys in their order."""
    import yaml  # noqa: PLC0415 - only YAML output needs it

    out.write(yaml.safe_dump(doc, sort_keys=False))
