"""Typed field access on one API object (:class:`FieldReader`), shared by the reference parsers.

Every read checks the value's type and names the object and the field path in the one-line
:class:`~spreadwatch.errors.ObjectError` it raises; an absent or null field gives the default. O(1) per field
(a list or map: O(entries)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeVar, cast

from spreadwatch.errors import ObjectError
from spreadwatch.model.interning import intern_labels

__all__ = ["INT32_RANGE", "INT64_RANGE", "FieldReader", "object_ref", "shown", "type_name"]

_T = TypeVar("_T")
_EMPTY: Final[Mapping[str, Any]] = intern_labels({})  # the one shared empty map
#: The API's int32 and int64 fields (replicas, maxSkew, minDomains; generation): a value outside is refused.
INT32_RANGE: Final = (-(2**31), 2**31 - 1)
INT64_RANGE: Final = (-(2**63), 2**63 - 1)


def shown(value: object) -> str:
    """A value for a message: a short string's repr, else only its type (never a deep or huge repr). O(1)."""
    if isinstance(value, str) and len(value) <= 64:
        return repr(value)
    return f"a {type_name(value)}"


def object_ref(obj: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` (or ``Kind name``) for messages; never raises."""
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else "object"
    raw_meta = obj.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else "<unnamed>"
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        return f"{kind} {namespace}/{name}"
    return f"{kind} {name}"


class FieldReader:
    """Typed field access on one object; errors name the object and the field path."""

    __slots__ = ("ref",)

    def __init__(self, obj: Mapping[str, Any]) -> None:
        self.ref = object_ref(obj)

    def fail(self, path: str, problem: str) -> ObjectError:
        return ObjectError(self.ref, path, problem)

    def _typed(self, parent: Mapping[str, Any], key: str, path: str, default: _T, kind: type, noun: str) -> _T:
        """``parent[key]`` if it is a ``kind`` (booleans are not integers), ``default`` if absent or null."""
        value = parent.get(key)
        if value is None:
            return default
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(path, f"expected {noun}, got {type_name(value)}")
        return cast(_T, value)

    def mapping(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        return self._typed(parent, key, path, _EMPTY, Mapping, "a mapping")

    def string(self, parent: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
        return self._typed(parent, key, path, default, str, "a string")

    def integer(
        self, parent: Mapping[str, Any], key: str, path: str, default: int, bounds: tuple[int, int] = INT32_RANGE
    ) -> int:
        value = int(self._typed(parent, key, path, default, int, "an integer"))
        if not bounds[0] <= value <= bounds[1]:
            bits = 32 if bounds == INT32_RANGE else 64
            raise self.fail(path, f"expected an integer of at most {bits} bits, got one of {value.bit_length()} bits")
        return value

    def boolean(self, parent: Mapping[str, Any], key: str, path: str) -> bool:
        return self._typed(parent, key, path, False, bool, "a boolean")

    def items(self, parent: Mapping[str, Any], key: str, path: str) -> list[Mapping[str, Any]]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type_name(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise self.fail(f"{path}[{i}]", f"expected a mapping, got {type_name(item)}")
        return value

    def strings(self, parent: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        value = parent.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(path, "expected a list of strings")
        return tuple(value)

    def string_map(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, str] | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping of strings, got {type_name(value)}")
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise self.fail(f"{path}.{k}", f"expected a string value, got {type_name(v)}")
        return value


def type_name(value: object) -> str:
    """A JSON value's type as messages name it (``mapping``, ``list``, ``string``, ...). O(1)."""
    return {dict: "mapping", list: "list", str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
