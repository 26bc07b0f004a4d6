"""Watch-stream lines and list-page headers into records: :func:`decode_event`, :func:`list_resource_version`.

A watch (``GET /api/v1/pods?watch=1``) sends one JSON object per line: ``{"type": ..., "object": {...}}``.
:func:`decode_event` reads the line's type and the object's identity (namespace, name, resourceVersion) with
small msgspec shapes that skip every other byte in C, and decodes the object itself exactly as an item of a
list page of that kind (:func:`~spreadwatch.decode.decode_items`: the kind's typed shape, or
:class:`~spreadwatch.decode.Unparsed` for what only the reference parser can decide). No dict per event.

``BOOKMARK`` events carry only a resourceVersion; ``ERROR`` events a ``Status`` whose ``code`` (410: the
resourceVersion is too old) the caller acts on. Costs: O(line bytes) in C plus O(kept fields) per object.
"""

from __future__ import annotations

from typing import Final, NamedTuple

import msgspec

from spreadwatch.decode.convert import Converter
from spreadwatch.decode.reading import REFUSALS, Decoded, decode_items, refusal

__all__ = ["APPLIED", "WatchEvent", "decode_event", "list_resource_version"]

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


class WatchEvent(NamedTuple):
    """One watch event: its type, the object's identity, and (ADDED/MODIFIED/DELETED) its record."""

    type: str
    namespace: str
    name: str
    resource_version: str
    item: Decoded = None
    code: int = 0  # ERROR: the Status code (410 Gone: list again)


def decode_event(line: bytes, kind: str, api_version: str, converter: Converter) -> WatchEvent:
    """One watch line of ``kind`` → :class:`WatchEvent`. Raises :class:`DecodeError` (one line) when the line
    is not a watch event, for any bytes (never msgspec's, Unicode or recursion errors); an
    :class:`~spreadwatch.decode.Unparsed` item makes ``parse_object`` raise only ObjectError. ``converter``
    shares its caches across the events of one batch. O(line bytes)."""
    try:
        head = _line.decode(line)
        obj = _object.decode(head.object)
    except REFUSALS as err:
        raise refusal(err, "malformed watch event: ") from None
    meta = obj.metadata or _Identity()
    if head.type == "ERROR" or (head.type not in APPLIED and head.type != "DELETED"):
        return WatchEvent(head.type, meta.namespace, meta.name, meta.resourceVersion, code=obj.code)
    item = next(decode_items([head.object], kind, api_version, converter))
    return WatchEvent(head.type, meta.namespace, meta.name, meta.resourceVersion, item)


def list_resource_version(page: bytes) -> str:
    """A list page's ``metadata.resourceVersion`` (where a watch of the same list starts). Skips the items in
    C: O(page bytes), no object made."""
    try:
        head = _head.decode(page)
    except REFUSALS as err:
        raise refusal(err, "malformed list: ") from None
    return head.metadata.resourceVersion if head.metadata is not None else ""
