"""The informers' decoding: watch-stream lines and list pages into records, :func:`decode_event`,
:func:`decode_list_page`, :func:`list_resource_version`.

A watch (``GET /api/v1/pods?watch=1``) sends one JSON object per line: ``{"type": ..., "object": {...}}``.
:func:`decode_event` reads the line's type and the object's identity (namespace, name, resourceVersion) with
small msgspec shapes that skip every other byte in C, and decodes the object itself exactly as an item of a
list page of that kind (:func:`~spreadwatch.decode.decode_items`). No dict per event.

What only the reference parser can decide (an :class:`~spreadwatch.decode.Unparsed` item) is decided here,
where it is decoded (:func:`settle`): :func:`~spreadwatch.model.parse_object` gives its record, or its
:class:`~spreadwatch.errors.ObjectError` becomes a :class:`Malformed` item — the object's identity and the
one-line problem — for the informer to log once and skip. So an informer hands its router records only.

``BOOKMARK`` events carry only a resourceVersion; ``ERROR`` events a ``Status`` whose ``code`` (410: the
resourceVersion is too old) the caller acts on. Costs: O(line bytes) in C plus O(kept fields) per object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

import msgspec

from spreadwatch.decode.convert import Converter
from spreadwatch.decode.reading import REFUSALS, Decoded, Unparsed, decode_items, decode_page, refusal
from spreadwatch.errors import ObjectError
from spreadwatch.model import Record, parse_object

__all__ = [
    "APPLIED",
    "Informed",
    "Malformed",
    "WatchEvent",
    "decode_event",
    "decode_list_page",
    "list_resource_version",
    "settle",
]

#: The event types that carry an object's new state.
APPLIED: Final = frozenset({"ADDED", "MODIFIED"})


class _Identity(msgspec.Struct, gc=False):
    namespace: str = ""
    name: str = ""
    resourceVersion: str = ""


class _Object(msgspec.Struct, gc=False):
    metadata: _Identity | None = None
    code: int = 0  # an ERROR event's Status


class _Line(msgspec.Struct, gc=False):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"null")


class _ListHead(msgspec.Struct, gc=False):
    metadata: _Identity | None = None


_line: Final = msgspec.json.Decoder(_Line)
_object: Final = msgspec.json.Decoder(_Object)
_head: Final = msgspec.json.Decoder(_ListHead)


class Malformed(NamedTuple):
    """An object the reference parser refused: its identity ("" where it has none) and the one-line problem
    (:class:`~spreadwatch.errors.ObjectError`'s, naming the object and the field)."""

    namespace: str
    name: str
    problem: str


#: What the informers get for one object: its record, :class:`Malformed`, or None (a kind spreadwatch does
#: not read).
Informed = Record | Malformed | None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def settle(item: Decoded) -> Informed:
    """``item`` as the informers take it: an :class:`Unparsed` item through the reference parser (its record,
    or :class:`Malformed`); a record or None as it is. O(1) for a record; O(object) for what the typed path
    left."""
    if not isinstance(item, Unparsed):
        return item
    try:
        return parse_object(item.value)
    except ObjectError as err:
        meta = item.value.get("metadata") if isinstance(item.value, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        return Malformed(_text(meta.get("namespace")), _text(meta.get("name")), str(err))


class WatchEvent(NamedTuple):
    """One watch event: its type, the object's identity, and (ADDED/MODIFIED/DELETED) its record."""

    type: str
    namespace: str
    name: str
    resource_version: str
    item: Informed = None
    code: int = 0  # ERROR: the Status code (410 Gone: list again)


def decode_event(line: bytes, kind: str, api_version: str, converter: Converter) -> WatchEvent:
    """One watch line of ``kind`` → :class:`WatchEvent`, its object settled (:func:`settle`). Raises
    :class:`DecodeError` (one line) when the line is not a watch event, for any bytes (never msgspec's,
    Unicode or recursion errors); a malformed object is a :class:`Malformed` item. ``converter`` shares its
    caches across the events of one batch. O(line bytes)."""
    try:
        head = _line.decode(line)
        obj = _object.decode(head.object)
    except REFUSALS as err:
        raise refusal(err, "malformed watch event: ") from None
    meta = obj.metadata or _Identity()
    if head.type == "ERROR" or (head.type not in APPLIED and head.type != "DELETED"):
        return WatchEvent(head.type, meta.namespace, meta.name, meta.resourceVersion, code=obj.code)
    item = settle(next(decode_items([head.object], kind, api_version, converter)))
    return WatchEvent(head.type, meta.namespace, meta.name, meta.resourceVersion, item)


def decode_list_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[list[Informed], str]:
    """One page of an API server list of ``kind`` (:func:`~spreadwatch.decode.decode_page`), each item
    settled (:func:`settle`), and the page's ``continue`` token. Raises only DecodeError. O(page bytes) in C
    + O(kept fields) per item."""
    items, token = decode_page(data, kind, api_version, converter)
    return _settled(items), token


def _settled(items: Sequence[Decoded]) -> list[Informed]:
    if Unparsed in set(map(type, items)):  # (rare: one C pass to tell)
        return [settle(item) for item in items]
    return list(items)  # type: ignore[arg-type]  # (records and None only)


def list_resource_version(page: bytes) -> str:
    """A list page's ``metadata.resourceVersion`` (where a watch of the same list starts). Skips the items in
    C: O(page bytes), no object made."""
    try:
        head = _head.decode(page)
    except REFUSALS as err:
        raise refusal(err, "malformed list: ") from None
    return head.metadata.resourceVersion if head.metadata is not None else ""
