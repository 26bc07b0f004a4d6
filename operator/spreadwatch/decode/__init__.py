"""Typed decoding of JSON bytes straight into the slim records of :mod:`spreadwatch.model` (msgspec).

``kubectl get -o json`` dumps and the API server's list pages are decoded by msgspec into small Structs that
declare only the fields spreadwatch reads, one shape per kind (``shapes.py``); every other field (container
specs, status conditions, managed fields, ...) is skipped by the decoder in C, never materialised as Python
objects. A file's ``kind: List`` is decoded whole in one pass (:func:`decode_json`: its items a tagged union
on ``kind``), then converted a few thousand items at a time (:func:`decode_json_chunks`), each chunk's
Structs freed once converted; a List msgspec rejects (an item of a kind not read, a wrongly typed field) is
read again as raw slices of the input, one item at a time (:func:`decode_items`). An API list page (500
items of one kind) is decoded in one pass into that kind's page shape (:func:`decode_page`), and read again
item by item only when msgspec rejects it. :class:`Converter` turns the Structs into records.

**Exactness.** msgspec is only trusted when it succeeds. An item it rejects (a wrongly typed field, a
missing name, anything unusual) comes out as :class:`Unparsed` (orjson's dict of it), for
:func:`spreadwatch.model.parse_object`, the reference parser, which either accepts it (msgspec is stricter in
a few harmless places) or raises the same one-line :class:`~spreadwatch.errors.ObjectError` naming the
object and field as ever. So a broken object costs one slow re-read and never hides the others.

**Any bytes** (a watch event's object, a list page, a file): :func:`decode_json`, :func:`decode_json_chunks`,
:func:`decode_items` and :func:`decode_page` raise only :class:`~spreadwatch.errors.DecodeError` (an
InputError: not UTF-8, malformed, nested deeper than about 1,000 levels, a number out of range), and what
they yield as :class:`Unparsed` makes :func:`~spreadwatch.model.parse_object` raise only ObjectError; an
integer beyond its API type (replicas, maxSkew, minDomains: 32 bits; generation: 64) is left to the reference
parser, which names the field. ``tests/test_hostile_input.py`` checks this for any bytes.

Modules: :mod:`~spreadwatch.decode.shapes` (the Structs: the JSON shapes read),
:mod:`~spreadwatch.decode.convert` (:class:`Converter`: Structs → records),
:mod:`~spreadwatch.decode.reading` (documents and list pages → records, the fallback to the reference parser)
and :mod:`~spreadwatch.decode.watch` (the informers' decoding: watch lines and list pages, what the typed path
leaves settled by the reference parser into a record or :class:`Malformed`).

**Adding a field** (e.g. for PodTopologySpread): add one line to the Struct of ``shapes.py`` whose JSON
object holds it —
the attribute named exactly as the JSON key (``nodeName``; ``msgspec.field(name=...)`` when the key is a
Python keyword), typed ``T | None = None`` (a JSON ``null`` reads as absent, as in the reference parser), or in
the frozen hot shapes (pod, workload) ``T = <empty value>`` (a ``null`` there sends the object to the reference
parser) —
and pass it on where :class:`Converter` builds that kind's record (``convert``'s pod loop, ``_node``,
``_workload``, ...). Shapes are per kind (``PodFields``, ``NodeFields``, ``WorkloadFields``, ...); a nested
object is one more Struct. The pod's scheduling fields (``tolerations``, ``nodeSelector``, ``affinity``,
``topologySpreadConstraints``) are ``msgspec.Raw``: their bytes key a cache, and only a miss decodes them
typed in ``Converter._new_template``. The reference parser in ``model/parse.py`` needs the same field (it is the
error path), and ``tests/test_decode.py`` checks that both agree on every field, for any value.

Costs: O(bytes) in C for the skipped fields plus O(kept fields) in Python per item, and O(1) per repeated
sub-object (cache hit); memory: the input bytes plus the Structs of the whole List (about 135 MiB for
150,000 pods) at the end of its one pass, then the records as the Structs are freed (a memory-mapped
file's pages are released behind the conversion, as :func:`decode_json` reports progress).
"""

from __future__ import annotations

from spreadwatch.decode.convert import Converter
from spreadwatch.decode.reading import (
    Decoded,
    DecodeError,
    Unparsed,
    decode_items,
    decode_json,
    decode_json_chunks,
    decode_page,
    page_continue,
)
from spreadwatch.decode.watch import (
    Informed,
    Malformed,
    WatchEvent,
    decode_event,
    decode_list_page,
    list_resource_version,
    settle,
)

__all__ = [
    "Converter",
    "DecodeError",
    "Decoded",
    "Informed",
    "Malformed",
    "Unparsed",
    "WatchEvent",
    "decode_event",
    "decode_items",
    "decode_json",
    "decode_json_chunks",
    "decode_list_page",
    "decode_page",
    "list_resource_version",
    "page_continue",
    "settle",
]
