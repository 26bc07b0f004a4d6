"""Snapshot input: what ``kubectl get nodes,pods,services,rc,rs,sts,deploy -A -o yaml|json`` prints.

Accepted: a JSON or YAML file (multi-document YAML too), ``kind: List`` / ``*List`` documents (their
``items`` are flattened), and directories of such files (``*.yaml``, ``*.yml``, ``*.json``, recursively, in
name order). Namespaced objects without a namespace get ``default``, as kubectl does.

**JSON is the fast format** (``kubectl get -o json``): :func:`load_snapshot` decodes it straight from the
file's bytes into records with msgspec (:mod:`spreadwatch.decode`: the whole List in one typed pass, only the
fields read materialised, then converted and added a few thousand records at a time), in a fraction of the
CPU time of merely ``json.load``-ing it (150,000 pods: docs/benchmarks.md). The file is memory-mapped
and its pages are released behind the conversion. YAML goes through libyaml's C loader (when available) into dicts, then
:func:`~spreadwatch.model.parse_object`: about 40 times slower than JSON; take big dumps with ``-o json``.

Errors: a missing/unreadable path or malformed document raises SnapshotError; a malformed object raises
ObjectError naming the object and field.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from spreadwatch.decode import Decoded, DecodeError, Unparsed, decode_json_chunks
from spreadwatch.errors import SnapshotError
from spreadwatch.model import Controller, Namespace, Node, Pod, Record, Service, WorkloadKey, parse_object

__all__ = ["Snapshot", "iter_documents", "iter_records", "load_snapshot", "paused_gc", "read_documents"]

_SUFFIXES = (".yaml", ".yml", ".json")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large acyclic structures (parsed JSON, records).

    Parsing a 150,000-pod dump allocates millions of containers; without this, CPython's generational GC
    rescans them repeatedly and more than doubles the time. Reference counting still frees everything.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # Move what survived (records, mostly long-lived) out of the collected generations: otherwise the
            # first collections after re-enabling rescan all of it (about 0.2 s for 150,000 pods). Frozen
            # objects are still freed by reference counting; only cyclic garbage among them would linger.
            gc.freeze()
            gc.enable()


def _flatten(doc: Any, source: str) -> Iterator[Mapping[str, Any]]:
    if doc is None:
        return
    if not isinstance(doc, Mapping):
        raise SnapshotError(f"{source}: expected Kubernetes objects (mappings), found a {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise SnapshotError(f"{source}: {kind}.items must be a list")
        for item in items:
            yield from _flatten(item, source)
        return
    yield doc


def _parse_text(data: bytes, source: str) -> Iterator[Any]:
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            raise SnapshotError(f"{source}: malformed JSON: {err}") from None
        yield from (doc if isinstance(doc, list) else [doc])
        return
    import yaml  # noqa: PLC0415 - only YAML input needs it (JSON, the fast format, does not)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SnapshotError(f"{source}: not UTF-8 text: {err}") from None
    try:
        yield from yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SnapshotError(f"{source}: malformed YAML{where}: {problem}") from None


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    return [path]


def iter_documents(paths: Iterable[str | Path]) -> Iterator[Mapping[str, Any]]:
    """Yield every Kubernetes object in the given files/directories ("-" reads stdin)."""
    for raw in paths:
        if str(raw) == "-":
            yield from (o for d in _parse_text(sys.stdin.buffer.read(), "<stdin>") for o in _flatten(d, "<stdin>"))
            continue
        path = Path(raw)
        if not path.exists():
            raise SnapshotError(f"cannot read {path}: no such file or directory")
        for file in _files(path):
            try:
                data = file.read_bytes()
            except OSError as err:
                raise SnapshotError(f"cannot read {file}: {err.strerror or err}") from None
            for doc in _parse_text(data, str(file)):
                yield from _flatten(doc, str(file))


def _record_chunks(chunks: Iterator[list[Decoded]], source: str) -> Iterator[list[Record | None]]:
    """Records of the typed decoder, a chunk at a time; what it leaves (``Unparsed``) goes through
    ``parse_object`` (in order: the first malformed object raises ObjectError)."""
    try:
        for chunk in chunks:
            if Unparsed in set(map(type, chunk)):  # (rare: one C pass to tell)
                yield [
                    record
                    for item in chunk
                    for record in (
                        (parse_object(obj) for obj in _flatten(item.value, source))
                        if isinstance(item, Unparsed)
                        else (item,)
                    )
                ]
            else:
                yield chunk  # type: ignore[misc]  # (no Unparsed in it: records and None)
    except DecodeError as err:
        raise SnapshotError(f"{source}: malformed JSON: {err}") from None


def _parsed_chunks(data: bytes, source: str) -> Iterator[list[Record | None]]:
    """Records of a YAML (or stdin) document through the reference parser, one object per chunk."""
    for doc in _parse_text(data, source):
        for obj in _flatten(doc, source):
            yield [parse_object(obj)]


def _file_chunks(file: Path) -> Iterator[list[Record | None]]:
    """Records of one file: JSON memory-mapped and decoded typed, pages released as decoded; YAML as before."""
    try:
        with file.open("rb") as f:
            is_json = _is_json(f.read(4096))
            if is_json and file.stat().st_size > 0:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            else:
                is_json = False
                data = file.read_bytes()
    except OSError as err:
        raise SnapshotError(f"cannot read {file}: {err.strerror or err}") from None
    if not is_json:
        yield from _parsed_chunks(data, str(file))
        return

    def release(decoded: int) -> None:
        # Decoded pages are never read again: drop them from this process (they stay in the page cache).
        mapped.madvise(mmap.MADV_DONTNEED, 0, decoded - decoded % mmap.PAGESIZE)

    # The mapping is unmapped when the last view of it goes (the decoder's raw items hold views).
    yield from _record_chunks(decode_json_chunks(memoryview(mapped), release), str(file))


def _is_json(head: bytes) -> bool:
    return head.lstrip()[:1] in (b"{", b"[")


def _chunks(paths: Iterable[str | Path]) -> Iterator[list[Record | None]]:
    """:func:`iter_records` a chunk (a list of up to a few thousand records) at a time."""
    for raw in paths:
        if str(raw) == "-":
            data = sys.stdin.buffer.read()
            if _is_json(data[:4096]):
                yield from _record_chunks(decode_json_chunks(data), "<stdin>")
            else:
                yield from _parsed_chunks(data, "<stdin>")
            continue
        path = Path(raw)
        if not path.exists():
            raise SnapshotError(f"cannot read {path}: no such file or directory")
        for file in _files(path):
            yield from _file_chunks(file)


def iter_records(paths: Iterable[str | Path]) -> Iterator[Record | None]:
    """The record of every object in the given files/directories ("-" reads stdin); None for unused kinds.

    Raises SnapshotError (unreadable, malformed) or ObjectError (the first malformed object).
    """
    for chunk in _chunks(paths):
        yield from chunk


def read_documents(paths: Iterable[str | Path]) -> list[Mapping[str, Any]]:
    """All objects of :func:`iter_documents` as a list."""
    with paused_gc():
        return list(iter_documents(paths))


@dataclass(slots=True)
class Snapshot:
    """Records of one snapshot, grouped for look-ups (implements ``scoring.ClusterLookup``)."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    controllers: list[Controller] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    ignored: int = 0
    _services_by_ns: dict[str, list[Service]] = field(default_factory=dict)
    _controllers_by_key: dict[tuple[str, str], list[Controller]] = field(default_factory=dict)
    _controller_by_key: dict[WorkloadKey, Controller] = field(default_factory=dict)

    def add_all(self, records: Iterable[Record | None]) -> None:
        """:meth:`add` each record (pods, nearly all of them, without the method call); O(records)."""
        add, add_pod, pod = self.add, self.pods.append, Pod
        for record in records:
            if type(record) is pod:
                add_pod(record)
            else:
                add(record)

    def add(self, record: Record | None) -> None:
        """Add one record; O(1)."""
        if isinstance(record, Pod):
            self.pods.append(record)
        elif isinstance(record, Node):
            self.nodes.append(record)
        elif isinstance(record, Service):
            self.services.append(record)
            self._services_by_ns.setdefault(record.namespace, []).append(record)
        elif isinstance(record, Controller):
            self.controllers.append(record)
            self._controllers_by_key.setdefault((record.kind, record.namespace), []).append(record)
            self._controller_by_key[record.key] = record
        elif isinstance(record, Namespace):
            self.namespaces.append(record)
        else:
            self.ignored += 1

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]]) -> Snapshot:
        """Parse API objects (raises ObjectError on the first malformed one). GC paused: O(objects)."""
        snap = cls()
        with paused_gc():
            for obj in objects:
                snap.add(parse_object(obj))
        return snap

    @classmethod
    def from_decoded(cls, items: Iterable[Decoded]) -> Snapshot:
        """Records of the typed decoder (e.g. a live listing's pages); what it leaves (:class:`Unparsed`) goes
        through ``parse_object``, which raises ObjectError on the first malformed object. GC paused: O(items)."""
        snap = cls()
        with paused_gc():
            for item in items:
                snap.add(parse_object(item.value) if isinstance(item, Unparsed) else item)
        return snap

    def services_in(self, namespace: str) -> list[Service]:
        return self._services_by_ns.get(namespace, [])

    def controllers_in(self, kind: str, namespace: str) -> list[Controller]:
        return self._controllers_by_key.get((kind, namespace), [])

    def controller(self, key: WorkloadKey) -> Controller | None:
        return self._controller_by_key.get(key)


def load_snapshot(paths: Iterable[str | Path]) -> Snapshot:
    """Read and parse a snapshot from files/directories (objects are parsed as they are read; JSON typed)."""
    snap = Snapshot()
    with paused_gc():
        for chunk in _chunks(paths):
            snap.add_all(chunk)
    return snap
