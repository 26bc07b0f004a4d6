"""Reading JSON documents and API list pages into records: :func:`decode_json`, :func:`decode_items`,
:func:`decode_page` (see the package docstring for the exactness and memory rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, NamedTuple

import msgspec
import orjson

from spreadwatch.decode import shapes
from spreadwatch.decode.convert import Converter, Fallback
from spreadwatch.model import Record

__all__ = ["DecodeError", "Decoded", "Unparsed", "decode_items", "decode_json", "decode_page"]


class DecodeError(ValueError):
    """The bytes are not well-formed JSON (the message is msgspec's, with the byte offset)."""


_PROGRESS_EVERY: Final = 16 << 20  # bytes decoded between two progress calls (mapped pages released)
_object_decoder: Final = msgspec.json.Decoder(shapes.Object)
_list_decoder: Final = msgspec.json.Decoder(shapes.RawList)
_docs_decoder: Final = msgspec.json.Decoder(list[msgspec.Raw])
_page_decoder: Final = msgspec.json.Decoder(shapes.Page)
_typed_page_decoder: Final = msgspec.json.Decoder(shapes.TypedPage)


def _is_list(kind: str | None) -> bool:
    return kind is not None and kind.endswith("List")


class Unparsed(NamedTuple):
    """An item the typed path does not take, as orjson reads it: for the reference parser (which words the
    error, or accepts what msgspec was stricter about)."""

    value: Any


Decoded = Record | Unparsed | None  # None: a kind spreadwatch does not use


def _unparsed(item: msgspec.Raw, kind: str, api_version: str) -> Unparsed:
    try:
        doc = orjson.loads(memoryview(item))
    except orjson.JSONDecodeError as err:
        raise DecodeError(str(err)) from None
    if kind and isinstance(doc, dict):
        doc.setdefault("kind", kind)
        doc.setdefault("apiVersion", api_version)
    return Unparsed(doc)


def decode_items(
    items: Iterable[msgspec.Raw], kind: str = "", api_version: str = "", converter: Converter | None = None
) -> Iterator[Decoded]:
    """The record of each raw item of a List, in order; :class:`Unparsed` for what the typed path leaves.

    ``kind``/``api_version`` fill in what the API server's typed lists omit on their items. ``converter``
    shares its caches across calls (the pages of one listing). O(total bytes) in C + O(kept fields) per
    item in Python; one item's Structs alive at a time.
    """
    decode = _object_decoder.decode
    conv = converter or Converter()
    for raw in items:
        try:
            obj = decode(raw)
            if kind:
                if obj.kind is None:
                    obj.kind = kind
                if obj.apiVersion is None:
                    obj.apiVersion = api_version
            record = conv.record(obj)
        except (msgspec.ValidationError, Fallback):
            yield _unparsed(raw, kind, api_version)
            continue
        except msgspec.DecodeError as err:
            raise DecodeError(str(err)) from None
        yield record


def _counted(items: list[msgspec.Raw], progress: Callable[[int], None]) -> Iterator[msgspec.Raw]:
    """The items, calling ``progress(n)`` every few MiB with a lower bound of the input bytes consumed."""
    done = 0
    mark = _PROGRESS_EVERY
    for raw in items:
        yield raw
        done += len(raw)
        if done >= mark:
            progress(done)
            mark = done + _PROGRESS_EVERY


def decode_json(data: bytes | memoryview, progress: Callable[[int], None] | None = None) -> Iterator[Decoded]:
    """What :func:`decode_items` yields, for every object of a JSON document (an object, a ``*List`` or an
    array of them), in order. Raises DecodeError for malformed JSON. Costs: see the module docstring.

    ``progress(n)``, when given, is called every few MiB of a List: the first ``n`` bytes of ``data`` are
    no longer needed (a lower bound), so a memory-mapped input can release them.
    """
    try:
        docs = _docs_decoder.decode(data) if bytes(data[:64]).lstrip()[:1] == b"[" else [msgspec.Raw(data)]
    except msgspec.DecodeError as err:
        raise DecodeError(str(err)) from None
    converter = Converter()
    for doc in docs:
        try:
            head = _list_decoder.decode(doc)
        except msgspec.ValidationError:
            yield _unparsed(doc, "", "")
            continue
        except msgspec.DecodeError as err:
            raise DecodeError(str(err)) from None
        if _is_list(head.kind) and head.items is not msgspec.UNSET:
            items = head.items or []
            yield from decode_items(_counted(items, progress) if progress else items, converter=converter)
        else:
            yield from decode_items([doc], converter=converter)


def decode_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Iterator[Decoded], str]:
    """One page of an API server list: its items (as :func:`decode_items`) and its ``continue`` token.

    The page is decoded in one pass into typed items; only a page msgspec rejects (a wrongly typed field in
    some item) is decoded again item by item, so the broken items come out as :class:`Unparsed` and the
    others as records. O(page bytes) in C + O(kept fields) per item; the page's Structs live until its last
    item is yielded.
    """
    try:
        page = _typed_page_decoder.decode(data)
    except msgspec.ValidationError:
        return _raw_page(data, kind, api_version, converter)
    except msgspec.DecodeError as err:
        raise DecodeError(str(err)) from None
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    return _page_records(page.items or [], data, kind, api_version, converter), token


def _raw_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Iterator[Decoded], str]:
    """:func:`decode_page` item by item (each item's own decode, so one broken item is one Unparsed)."""
    try:
        page = _page_decoder.decode(data)
    except msgspec.ValidationError as err:
        raise DecodeError(f"not a list: {err}") from None
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    return decode_items(page.items or (), kind, api_version, converter), token


def _page_records(
    objects: list[shapes.Object], data: bytes, kind: str, api_version: str, converter: Converter
) -> Iterator[Decoded]:
    """Records of a page's typed items; an item only the reference parser can decide is re-read from
    ``data`` (the page's items as raw slices, decoded once, on the first such item)."""
    record = converter.record
    # Items of a typed list carry no kind: those of the kinds whose converter reads neither kind nor
    # apiVersion go straight to it (most items are pods), the others get both filled in first.
    direct = converter.direct(kind)
    raw_items: list[msgspec.Raw] | None = None
    for i, obj in enumerate(objects):
        try:
            decoded: Decoded
            if direct is not None and obj.kind is None:
                decoded = direct(obj)
            else:
                if kind:
                    if obj.kind is None:
                        obj.kind = kind
                    if obj.apiVersion is None:
                        obj.apiVersion = api_version
                decoded = record(obj)
        except Fallback:
            if raw_items is None:
                raw_items = _page_decoder.decode(data).items or []
            decoded = _unparsed(raw_items[i], kind, api_version)
        yield decoded
