"""The declarative file of the benchmarks, bench/figures.toml: where it and the results live, loading and
checking it (:func:`load_spec`), choosing measures from it (:func:`select`), its targets (:func:`parse_target`)
and the figures' dotted keys (:func:`lookup`). Used by the runner (bench/run.py) and the renderer
(bench/render.py), which import it and not each other's internals. O(figures).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["FIGURES", "RESULTS", "ROOT", "SpecError", "load_spec", "lookup", "parse_target", "select"]

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "bench" / "figures.toml"
RESULTS = ROOT / "bench" / "results"


class SpecError(ValueError):
    """bench/figures.toml, or a selection from it, is not usable (one line)."""


def load_spec(path: Path | None = None) -> dict[str, Any]:
    """The declarative file (default bench/figures.toml), checked: unique measure ids, ``module:function``
    names, each figure's key and name, targets of the form ``<= N`` / ``>= N``. Raises :class:`SpecError`.
    O(figures)."""
    path = path or FIGURES
    try:
        spec = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise SpecError(f"{path}: {err}") from None
    seen: set[str] = set()
    for m in spec.get("measure", []):
        mid = m.get("id")
        if not mid or mid in seen:
            raise SpecError(f"{path}: measure id {mid!r} missing or repeated")
        seen.add(mid)
        if ":" not in m.get("function", ""):
            raise SpecError(f"{path}: measure {mid}: function must be 'module:function'")
        for f in m.get("figure", []):
            if "key" not in f or "name" not in f:
                raise SpecError(f"{path}: measure {mid}: every figure needs a key and a name")
            target = f.get("target")
            if target is not None:
                parse_target(target, f"{mid}.{f['key']}")
    return spec


def parse_target(text: str, where: str = "target") -> tuple[str, float]:
    """``"<= 1"`` → ``("<=", 1.0)``; raises :class:`SpecError` for anything else."""
    op, _, number = text.strip().partition(" ")
    try:
        if op not in ("<=", ">="):
            raise ValueError(op)
        return op, float(number)
    except ValueError:
        raise SpecError(f"{where}: target must be '<= N' or '>= N', got {text!r}") from None


def select(spec: Mapping[str, Any], ids: Sequence[str] | None) -> list[dict[str, Any]]:
    """The measures named by ``ids`` (in the file's order), or every measure not marked ``default = false``."""
    measures: list[dict[str, Any]] = spec.get("measure", [])
    if not ids:
        return [m for m in measures if m.get("default", True)]
    known = {m["id"] for m in measures}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise SpecError(f"unknown measure {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return [m for m in measures if m["id"] in ids]


def lookup(values: Mapping[str, Any], key: str) -> Any:
    """``values[key]``, where a dotted key walks nested mappings (``churn.burst.p99_s``); None when absent."""
    if key in values:
        return values[key]
    node: Any = values
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
