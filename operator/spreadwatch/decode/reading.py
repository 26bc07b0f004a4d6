"""Reading JSON documents and API list pages into records: :func:`decode_json`, :func:`decode_items`,
:func:`decode_page` (see the package docstring for the exactness and memory rules).

**Any bytes.** These entry points raise only :class:`~spreadwatch.errors.DecodeError` (an InputError) for
bytes the decoders refuse — not UTF-8 (an invalid byte, an encoded surrogate, an overlong sequence), malformed
JSON, nesting deeper than the decoders' limit (msgspec stops at Python's recursion limit, about 1,000 levels
less the caller's stack; orjson at 1,024), a number beyond 64 bits where the typed path reads one — never
``UnicodeDecodeError``, ``RecursionError`` or msgspec's own errors. What they yield is a record,
:class:`Unparsed` (for :func:`~spreadwatch.model.parse_object`, which raises only ObjectError) or None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from operator import attrgetter
from typing import Any, Final, NamedTuple

import msgspec
import orjson

from spreadwatch.decode import shapes
from spreadwatch.decode.convert import Converter
from spreadwatch.errors import DecodeError
from spreadwatch.model import Record

__all__ = [
    "REFUSALS",
    "DecodeError",
    "Decoded",
    "Unparsed",
    "decode_items",
    "decode_json",
    "decode_json_chunks",
    "decode_page",
    "page_continue",
    "refusal",
]

_TOO_DEEP: Final = "nested too deeply (the JSON decoders stop at about 1,000 levels)"
#: What msgspec's decoders raise for bytes they refuse: its own errors (ValidationError among them), a string
#: that is not UTF-8, nesting beyond the recursion limit. :func:`refusal` words each as a DecodeError.
REFUSALS: Final = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def refusal(err: BaseException, what: str = "") -> DecodeError:
    """The DecodeError (one line, ``what`` before it) of a decoder's refusal of the bytes (one of REFUSALS)."""
    if isinstance(err, UnicodeDecodeError):
        reason = f"a string is not valid UTF-8 ({err.reason})"
    else:
        reason = _TOO_DEEP if isinstance(err, RecursionError) else str(err)
    return DecodeError(f"{what}{reason}")


def _decoded(decoder: msgspec.json.Decoder[Any], data: Any) -> Any:
    """``decoder.decode(data)``; msgspec's ValidationError (a shape not taken) passes through, every refusal
    of the bytes themselves becomes DecodeError. O(bytes)."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        raise
    except REFUSALS as err:
        raise refusal(err) from None


_CHUNK: Final = 4096  # items of a typed document converted (then freed) at a time, between progress calls
_document_decoder: Final = msgspec.json.Decoder(shapes.Document)
_list_decoder: Final = msgspec.json.Decoder(shapes.RawList)
_docs_decoder: Final = msgspec.json.Decoder(list[msgspec.Raw])
_page_decoder: Final = msgspec.json.Decoder(shapes.Page)
_item_decoder: Final = msgspec.json.Decoder(shapes.Item)
_head_decoder: Final = msgspec.json.Decoder(shapes.PageHead)
_page_decoders: Final = {kind: msgspec.json.Decoder(page) for kind, page in shapes.PAGES.items()}
_kind_of: Final = attrgetter("kind")
_page_kinds: Final = {kind: {obj: kind} for kind, obj in shapes.OBJECTS.items()}
_object_decoders: Final = {kind: msgspec.json.Decoder(obj) for kind, obj in shapes.OBJECTS.items()}


def _is_list(kind: str | None) -> bool:
    return kind is not None and kind.endswith("List")


class Unparsed(NamedTuple):
    """An item the typed path does not take, as orjson reads it: for the reference parser (which words the
    error, or accepts what msgspec was stricter about)."""

    value: Any


Decoded = Record | Unparsed | None  # None: a kind spreadwatch does not use (only from a page of such a kind)


def _unparsed(item: msgspec.Raw, kind: str, api_version: str) -> Unparsed:
    try:
        doc = orjson.loads(memoryview(item))
    except orjson.JSONDecodeError as err:
        raise DecodeError(str(err)) from None
    if kind and isinstance(doc, dict):
        doc.setdefault("kind", kind)
        doc.setdefault("apiVersion", api_version)
    return Unparsed(doc)


def _convert(
    converter: Converter, items: Sequence[Any], kinds: Mapping[type, str], api_version: str = ""
) -> tuple[list[Record | None], list[int]]:
    """``converter.convert``; a raw sub-object it decodes late (labels, scheduling fields: captured, not
    checked, in the first pass) that is not UTF-8 or not JSON is DecodeError too. O(kept fields)."""
    try:
        return converter.convert(items, kinds, api_version)
    except REFUSALS as err:
        raise refusal(err) from None


def _one(raw: msgspec.Raw, kind: str, api_version: str, converter: Converter) -> Decoded:
    """One item decoded alone: its record, or :class:`Unparsed` (also for a file's item of a kind not read:
    ``parse_object`` gives None for it, and the reader can say which kinds it skipped). O(item bytes)."""
    try:
        if kind:  # a list page's item: the page's kind unless it names another
            decoder = _object_decoders.get(kind)
            if decoder is None:  # (a kind not read: the listing never asks for one)
                return _unparsed(raw, kind, api_version)
            obj: Any = _decoded(decoder, raw)
            if obj.kind is not msgspec.UNSET and obj.kind != kind:  # (a watch event's object names its kind)
                return _unparsed(raw, kind, api_version)
            item_kind = kind
        else:  # a file's item names its kind
            obj = _decoded(_item_decoder, raw)
            item_kind = shapes.ITEM_KINDS[type(obj)]
    except msgspec.ValidationError:
        return _unparsed(raw, kind, api_version)
    records, redo = _convert(converter, [obj], {type(obj): item_kind}, api_version)
    return _unparsed(raw, kind, api_version) if redo else records[0]


def decode_items(
    items: Iterable[msgspec.Raw], kind: str = "", api_version: str = "", converter: Converter | None = None
) -> Iterator[Decoded]:
    """The record of each raw item of a List, in order; :class:`Unparsed` for what the typed path leaves.

    ``kind``/``api_version`` fill in what the API server's typed lists omit on their items. ``converter``
    shares its caches across calls (the pages of one listing). O(total bytes) in C + O(kept fields) per
    item in Python; one item's Structs alive at a time.
    """
    conv = converter or Converter()
    for raw in items:
        yield _one(raw, kind, api_version, conv)


def _typed_chunks(
    doc: msgspec.Raw | bytes | memoryview,
    items: list[Any],
    converter: Converter,
    progress: Callable[[int], None] | None,
) -> Iterator[list[Decoded]]:
    """The records of a typed document's items (tagged Structs), ``_CHUNK`` at a time, each chunk's Structs
    freed once converted; an item only the reference parser decides is re-read raw (the document's items
    as raw slices, decoded on the first such item). ``progress`` is told an estimate of the bytes no longer
    needed (the share of items done)."""
    total, size = len(items), len(doc)
    kinds = shapes.ITEM_KINDS
    raws: list[msgspec.Raw] | None = None
    for done in range(0, total, _CHUNK):
        chunk = items[done : done + _CHUNK]
        items[done : done + _CHUNK] = repeat(None, len(chunk))  # (the Structs go with the chunk)
        records, redo = _convert(converter, chunk, kinds)
        del chunk
        if redo:
            if raws is None:
                raws = _decoded(_list_decoder, doc).items or []
            out: list[Decoded] = list(records)
            for i in redo:
                out[i] = _unparsed(raws[done + i], "", "")
            yield out
        else:
            yield records  # type: ignore[misc]  # (list is invariant: records are Decoded)
        if progress is not None and done + _CHUNK < total:
            progress(size * (done + _CHUNK) // total * 7 // 8)  # a hint (released pages are read again if need be)


def _counted(items: list[msgspec.Raw], progress: Callable[[int], None]) -> Iterator[msgspec.Raw]:
    """The items, calling ``progress(n)`` every 16 MiB with a lower bound of the input bytes consumed."""
    done = 0
    mark = 16 << 20
    for raw in items:
        yield raw
        done += len(raw)
        if done >= mark:
            progress(done)
            mark = done + (16 << 20)


def decode_json(data: bytes | memoryview, progress: Callable[[int], None] | None = None) -> Iterator[Decoded]:
    """What :func:`decode_items` yields, for every object of a JSON document (an object, a ``*List`` or an
    array of them), in order. Raises DecodeError for malformed JSON. Costs: see the module docstring.

    A List is first decoded whole, typed (one pass over its bytes, per-kind shapes); only one msgspec
    rejects (a kind not read, a wrongly typed field) is read again item by item. ``progress(n)``, when
    given, is called every few MiB of a List: the first ``n`` bytes of ``data`` are likely no longer needed
    (a hint), so a memory-mapped input can release them.
    """
    return chain.from_iterable(decode_json_chunks(data, progress))


def decode_json_chunks(
    data: bytes | memoryview, progress: Callable[[int], None] | None = None
) -> Iterator[list[Decoded]]:
    """:func:`decode_json` in lists of up to a few thousand items (what a bulk consumer iterates faster)."""
    try:
        docs = _decoded(_docs_decoder, data) if bytes(data[:64]).lstrip()[:1] == b"[" else [msgspec.Raw(data)]
    except msgspec.ValidationError as err:
        raise DecodeError(str(err)) from None
    converter = Converter()
    for doc in docs:
        try:
            typed = _decoded(_document_decoder, doc)
        except msgspec.ValidationError:
            typed = None
        if typed is not None and typed.items is not msgspec.UNSET and _is_list(typed.kind):
            items = typed.items or []
            del typed
            yield from _typed_chunks(doc, items, converter, progress)
            continue
        del typed
        try:
            head = _decoded(_list_decoder, doc)
        except msgspec.ValidationError:
            yield [_unparsed(doc, "", "")]
            continue
        if _is_list(head.kind) and head.items is not msgspec.UNSET:
            raws = head.items or []
            decoded = decode_items(_counted(raws, progress) if progress else raws, converter=converter)
            while chunk := list(islice(decoded, _CHUNK)):
                yield chunk
        else:
            yield [_one(doc, "", "", converter)]


def decode_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Sequence[Decoded], str]:
    """One page of an API server list: its items (as :func:`decode_items`) and its ``continue`` token.

    The page is decoded in one pass into the typed items of ``kind``'s shape; only a page msgspec rejects (a
    wrongly typed field in some item) is decoded again item by item, so the broken items come out as
    :class:`Unparsed` and the others as records. O(page bytes) in C + O(kept fields) per item.
    """
    decoder = _page_decoders.get(kind)
    try:
        page: Any = _decoded(decoder, data) if decoder is not None else None
    except msgspec.ValidationError:
        page = None
    if page is None:
        return _raw_page(data, kind, api_version, converter)
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    objects = page.items or []
    records, redo = _convert(converter, objects, _page_kinds[kind], api_version)
    if set(map(_kind_of, objects)) != {msgspec.UNSET}:  # (the usual page: no item names its kind)
        redo = sorted({*redo, *(i for i, obj in enumerate(objects) if obj.kind is not msgspec.UNSET)})
    if redo:  # items only the reference parser can decide: re-read raw
        raw_items = _decoded(_page_decoder, data).items or []
        out: list[Decoded] = list(records)
        for i in redo:
            out[i] = _unparsed(raw_items[i], kind, api_version)
        return out, token
    return records, token


#: Where the API server's compact JSON starts a list's items: after ``kind``, ``apiVersion`` and ``metadata``
#: (Go's field order), so a page's head is its first ~200 bytes.
_ITEMS_KEY: Final = b',"items":'
_HEAD_BYTES: Final = 4096


def page_continue(data: bytes) -> str:
    """A list page's ``continue`` token ("" for none), without decoding its items: the next page can be asked
    for while this one is decoded. Where the page starts with its metadata (the API server's order), only
    those bytes are decoded: O(head bytes); otherwise msgspec skims the page in C: O(page bytes). Bytes that
    are not a list page give "" (:func:`decode_page` then words the problem)."""
    at = data.find(_ITEMS_KEY, 0, _HEAD_BYTES)
    try:
        head = _head_decoder.decode(data[:at] + b"}") if at > 0 else None
    except REFUSALS:
        head = None
    try:
        if head is None or head.metadata is None:
            head = _head_decoder.decode(data)
    except REFUSALS:
        return ""
    return (head.metadata.continue_ or "") if head.metadata is not None else ""


def _raw_page(data: bytes, kind: str, api_version: str, converter: Converter) -> tuple[Sequence[Decoded], str]:
    """:func:`decode_page` item by item (each item's own decode, so one broken item is one Unparsed)."""
    try:
        page = _decoded(_page_decoder, data)
    except msgspec.ValidationError as err:
        raise DecodeError(f"not a list: {err}") from None
    token = (page.metadata.continue_ or "") if page.metadata is not None else ""
    return [_one(raw, kind, api_version, converter) for raw in page.items or ()], token
