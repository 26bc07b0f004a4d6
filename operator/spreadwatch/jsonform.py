"""The JSON form of a record (a dataclass or NamedTuple): its snake_case fields as camelCase keys.

:func:`json_form` is called once per record class, at import: it fixes the attributes read, their keys (in
order), per-attribute converters and the attributes left out when ``None``, and compiles them into one
function that builds the dict as a single literal (as ``dataclasses`` compiles ``__init__``). Calling that
function costs what a hand-written ``to_dict`` does: O(fields), no per-call lookup of the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["JsonDict", "camel", "each", "json_form"]

JsonDict = Callable[[Any], dict[str, Any]]  # a record → its JSON dict


def camel(name: str) -> str:
    """``snake_case`` → ``camelCase`` (``best_node_count`` → ``bestNodeCount``). O(len(name))."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def each(form: Callable[[Any], Any]) -> Callable[[Iterable[Any]], list[Any]]:
    """The converter for a sequence of records: ``[form(item) for item in items]``. O(items)."""

    def convert(items: Iterable[Any]) -> list[Any]:
        return [form(item) for item in items]

    return convert


def _field_names(cls: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    names: tuple[str, ...] | None = getattr(cls, "_fields", None)  # a NamedTuple
    if names is None:
        raise TypeError(f"{cls.__name__} is neither a dataclass nor a NamedTuple")
    return names


def json_form(
    cls: type,
    fields: Sequence[str] | None = None,
    *,
    rename: Mapping[str, str] | None = None,
    convert: Mapping[str, Callable[[Any], Any]] | None = None,
    omit_none: Sequence[str] = (),
) -> JsonDict:
    """The function building ``cls``'s JSON dict.

    ``fields``: the attributes read, in key order (default: the class's fields; properties may be named);
    ``rename``: attribute → key where the key is not :func:`camel` of the attribute; ``convert``:
    attribute → a function of its value (``list`` for a tuple, ``dict`` for a mapping, :func:`each` of a
    nested form …); ``omit_none``: attributes, last in ``fields``, whose key is left out when the value is
    ``None`` (their converter is applied otherwise). Raises ValueError on names not in ``fields``.
    """
    names = tuple(fields) if fields is not None else _field_names(cls)
    renames = rename or {}
    converters = dict(convert or {})
    unknown = (set(renames) | set(converters) | set(omit_none)) - set(names)
    if unknown or not all(name.isidentifier() for name in names):
        raise ValueError(f"{cls.__name__}: not attributes of the form: {sorted(unknown) or names}")
    if names[len(names) - len(omit_none) :] != tuple(omit_none):
        raise ValueError(f"{cls.__name__}: the attributes omitted when None must come last")

    def value(name: str) -> str:
        return f"_{name}(r.{name})" if name in converters else f"r.{name}"

    def key(name: str) -> str:
        return repr(renames.get(name, camel(name)))

    kept = names[: len(names) - len(omit_none)]
    lines = ["def form(r):", "    out = {" + ", ".join(f"{key(n)}: {value(n)}" for n in kept) + "}"]
    for name in omit_none:
        lines += [f"    if r.{name} is not None:", f"        out[{key(name)}] = {value(name)}"]
    lines.append("    return out")
    scope: dict[str, Any] = {f"_{name}": fn for name, fn in converters.items()}
    exec("\n".join(lines), scope)  # the source: identifiers checked above, keys repr()-quoted
    built: JsonDict = scope["form"]
    built.__qualname__ = built.__name__ = f"{cls.__name__}_json"
    return built
