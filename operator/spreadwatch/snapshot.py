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
ObjectError naming the file, the object and the field. A path whose objects are all of kinds not read raises
SnapshotError; one with some has a note (:attr:`Snapshot.notes`: how many of which kinds were skipped).

**Hostile input, bounded work.** JSON that is not UTF-8, is malformed or nests deeper than the decoders'
limit (about 1,000 levels) is one SnapshotError (:mod:`spreadwatch.decode`); YAML is refused the same way
(libyaml stops at 1,000 levels as written), and a YAML document with aliases is checked before it is
constructed: an alias inside its own anchor, aliases adding more than :data:`MAX_ALIAS_EXPANSION` nodes and more
than :data:`MAX_ALIAS_RATIO` times the document's own, or
nesting deeper than :data:`MAX_YAML_DEPTH` once expanded is refused in O(distinct nodes), never walked.
Lists in Lists are flattened iteratively (any depth).
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from spreadwatch.decode import Decoded, DecodeError, Unparsed, decode_json_chunks
from spreadwatch.errors import ObjectError, SnapshotError
from spreadwatch.model import (
    WORKLOAD_KINDS,
    Controller,
    Namespace,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    Record,
    Service,
    WorkloadKey,
    parse_object,
)

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_ALIAS_RATIO",
    "MAX_YAML_DEPTH",
    "Snapshot",
    "iter_documents",
    "iter_records",
    "load_snapshot",
    "paused_gc",
    "read_documents",
]

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


#: Kinds read into records; any other kind is skipped (and said so, see :class:`_Tally`).
_READ_KINDS: Final = frozenset(
    {"Pod", "Node", "Service", "Namespace", "PersistentVolumeClaim", "PersistentVolume", *WORKLOAD_KINDS}
)
#: YAML aliases may add to a document at most this many nodes, or :data:`MAX_ALIAS_RATIO` times its own
#: distinct nodes where that is more: the work stays linear in the input (a billion-laughs document is
#: refused before it is walked) while a PyYAML dump, whose repeated maps (one spec shared by thousands of
#: pods) are anchors and aliases, is read. Nothing may nest deeper than :data:`MAX_YAML_DEPTH` once expanded.
MAX_ALIAS_EXPANSION: Final = 100_000
MAX_ALIAS_RATIO: Final = 10
MAX_YAML_DEPTH: Final = 1_000  # (libyaml's own limit for nesting written out)
_SHOWN_KINDS: Final = 5  # kinds named in a note; the rest are counted
_END: Final = object()  # (an exhausted iterator)


@dataclass(slots=True)
class _Tally:
    """What one input path (a file, a directory, stdin) held: objects read, objects skipped by kind."""

    source: str
    read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def count(self, obj: Mapping[str, Any], record: object) -> None:
        """Count one object and what it gave (a record, or None for a kind not read). O(1)."""
        if record is not None:
            self.read += 1
        else:
            kind = obj.get("kind")
            self.skipped[kind[:40] if isinstance(kind, str) and kind else '""'] += 1

    def note(self) -> str | None:
        """The note on skipped objects (None: nothing skipped); SnapshotError when nothing was read but some
        objects were skipped (every object of the file would vanish without a word). O(kinds)."""
        if not self.skipped:
            return None
        total = sum(self.skipped.values())
        shown = self.skipped.most_common(_SHOWN_KINDS)
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in shown)
        if len(self.skipped) > len(shown):
            kinds += f" and {len(self.skipped) - len(shown)} more kinds"
        objects = f"{total} object{'s' if total != 1 else ''}"
        if not self.read:
            raise SnapshotError(
                f"{self.source}: nothing spreadwatch reads (kinds {', '.join(sorted(_READ_KINDS))}): "
                f"{objects} of other kinds: {kinds}"
            )
        return f"{self.source}: skipped {objects} of kinds spreadwatch does not read: {kinds}"


def _flatten(doc: Any, source: str) -> Iterator[Mapping[str, Any]]:
    """The objects of one document, a ``*List``'s items (Lists in Lists too) flattened, in order. Iterative:
    any nesting of Lists, O(objects)."""
    stack = [iter((doc,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        if item is None:
            continue
        if not isinstance(item, Mapping):
            raise SnapshotError(f"{source}: expected Kubernetes objects (mappings), found a {type(item).__name__}")
        kind = item.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in item:
            items = item.get("items")
            if items is not None and not isinstance(items, list):
                raise SnapshotError(f"{source}: {kind[:40]}.items must be a list, found a {type(items).__name__}")
            stack.append(iter(items or ()))
            continue
        yield item


def _yaml_nodes(node: Any) -> list[Any]:
    """The child nodes of a composed YAML node (a mapping's keys and values). O(children)."""
    if isinstance(node.value, list):
        return [n for entry in node.value for n in (entry if isinstance(entry, tuple) else (entry,))]
    return []


def _check_aliases(root: Any) -> str | None:
    """Why a composed YAML document with aliases is refused (None: it is not): an alias inside its own
    anchor, an expansion adding more than both :data:`MAX_ALIAS_EXPANSION` nodes and :data:`MAX_ALIAS_RATIO`
    times the distinct nodes, or deeper than :data:`MAX_YAML_DEPTH` levels. Each
    distinct node once, iteratively (shared nodes memoised): O(distinct nodes), never the expansion."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            entered.discard(key)
            kids = _yaml_nodes(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[key] > len(size) + max(MAX_ALIAS_EXPANSION, MAX_ALIAS_RATIO * len(size)):
                return (
                    f"its aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes and more than "
                    f"{MAX_ALIAS_RATIO} times its own"
                )
            if depth[key] > MAX_YAML_DEPTH:
                return f"it nests deeper than {MAX_YAML_DEPTH:,} levels once its aliases are expanded"
            continue
        if key in size:
            continue
        if key in entered:
            return "an alias refers to a node that contains it"
        entered.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in _yaml_nodes(node) if id(kid) not in size)
    return None


def _load_yaml(text: str, source: str, aliases: bool) -> Iterator[Any]:
    """The documents of a YAML text (libyaml's C loader when available); with ``aliases`` (the text may hold
    some) each composed document is checked by :func:`_check_aliases` before it is constructed."""
    import yaml  # noqa: PLC0415 - only YAML input needs it (JSON, the fast format, does not)

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            why = _check_aliases(node) if aliases and node is not None else None
            if why is not None:
                raise SnapshotError(f"{source}: YAML document refused: {why}")
            yield loader.construct_document(node)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SnapshotError(f"{source}: malformed YAML{where}: {problem}") from None
    except (ValueError, OverflowError) as err:  # a scalar Python cannot hold: an int of > 4,300 digits, ...
        raise SnapshotError(f"{source}: unreadable YAML value: {str(err).splitlines()[0][:120]}") from None
    except RecursionError:
        raise SnapshotError(f"{source}: YAML document refused: it nests too deeply") from None
    finally:
        loader.dispose()


def _parse_text(data: bytes, source: str) -> Iterator[Any]:
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            raise SnapshotError(f"{source}: malformed JSON: {err}") from None
        yield from (doc if isinstance(doc, list) else [doc])
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SnapshotError(f"{source}: not UTF-8 text: {err}") from None
    yield from _load_yaml(text, source, "&" in text and "*" in text)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    return [path]


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as err:
        raise SnapshotError(f"cannot read {file}: {err.strerror or err}") from None


def _path_objects(raw: str | Path) -> Iterator[Mapping[str, Any]]:
    """The objects of one input path ("-": stdin). O(bytes)."""
    if str(raw) == "-":
        yield from (o for d in _parse_text(sys.stdin.buffer.read(), "<stdin>") for o in _flatten(d, "<stdin>"))
        return
    path = Path(raw)
    if not path.exists():
        raise SnapshotError(f"cannot read {path}: no such file or directory")
    for file in _files(path):
        for doc in _parse_text(_read(file), str(file)):
            yield from _flatten(doc, str(file))


def iter_documents(paths: Iterable[str | Path]) -> Iterator[Mapping[str, Any]]:
    """Yield every Kubernetes object in the given files/directories ("-" reads stdin)."""
    for raw in paths:
        yield from _path_objects(raw)


def _record_chunks(chunks: Iterator[list[Decoded]], source: str, tally: _Tally) -> Iterator[list[Record | None]]:
    """Records of the typed decoder, a chunk at a time; what it leaves (``Unparsed``) goes through
    ``parse_object`` (in order: the first malformed object raises ObjectError)."""
    try:
        for chunk in chunks:
            if Unparsed in set(map(type, chunk)):  # (rare: one C pass to tell)
                out: list[Record | None] = []
                for item in chunk:
                    if isinstance(item, Unparsed):
                        out.extend(_parsed(_flatten(item.value, source), source, tally))
                    else:
                        tally.read += item is not None
                        out.append(item)
                yield out
            else:
                tally.read += len(chunk) - chunk.count(None)
                yield chunk  # type: ignore[misc]  # (no Unparsed in it: records and None)
    except DecodeError as err:
        raise SnapshotError(f"{source}: malformed JSON: {err}") from None


def _parsed(objects: Iterable[Mapping[str, Any]], source: str, tally: _Tally) -> Iterator[Record | None]:
    """``parse_object`` of each object, counted; an ObjectError names the file too. O(objects)."""
    for obj in objects:
        try:
            record = parse_object(obj)
        except ObjectError as err:
            raise ObjectError(f"{source}: {err.ref}", err.path, err.problem) from None
        tally.count(obj, record)
        yield record


def _parsed_chunks(data: bytes, source: str, tally: _Tally) -> Iterator[list[Record | None]]:
    """Records of a YAML (or stdin) document through the reference parser, one object per chunk."""
    for doc in _parse_text(data, source):
        for record in _parsed(_flatten(doc, source), source, tally):
            yield [record]


def _file_chunks(file: Path, tally: _Tally) -> Iterator[list[Record | None]]:
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
        yield from _parsed_chunks(data, str(file), tally)
        return

    def release(decoded: int) -> None:
        # Decoded pages are never read again: drop them from this process (they stay in the page cache).
        mapped.madvise(mmap.MADV_DONTNEED, 0, decoded - decoded % mmap.PAGESIZE)

    # The mapping is unmapped when the last view of it goes (the decoder's raw items hold views).
    yield from _record_chunks(decode_json_chunks(memoryview(mapped), release), str(file), tally)


def _is_json(head: bytes) -> bool:
    return head.lstrip()[:1] in (b"{", b"[")


def _chunks(paths: Iterable[str | Path], notes: list[str]) -> Iterator[list[Record | None]]:
    """:func:`iter_records` a chunk (a list of up to a few thousand records) at a time; each path's note
    (kinds skipped) appended to ``notes``, SnapshotError for a path of which nothing was read."""
    for raw in paths:
        if str(raw) == "-":
            tally = _Tally("<stdin>")
            data = sys.stdin.buffer.read()
            if _is_json(data[:4096]):
                yield from _record_chunks(decode_json_chunks(data), "<stdin>", tally)
            else:
                yield from _parsed_chunks(data, "<stdin>", tally)
        else:
            path = Path(raw)
            if not path.exists():
                raise SnapshotError(f"cannot read {path}: no such file or directory")
            tally = _Tally(str(path))
            for file in _files(path):
                yield from _file_chunks(file, tally)
        if note := tally.note():
            notes.append(note)


def iter_records(paths: Iterable[str | Path], notes: list[str] | None = None) -> Iterator[Record | None]:
    """The record of every object in the given files/directories ("-" reads stdin); None for unused kinds.

    Raises SnapshotError (unreadable, malformed, nothing read from a path whose objects are all of other
    kinds) or ObjectError (the first malformed object); ``notes`` gets a line per path with skipped kinds.
    """
    for chunk in _chunks(paths, [] if notes is None else notes):
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
    claims: list[PersistentVolumeClaim] = field(default_factory=list)
    volumes: list[PersistentVolume] = field(default_factory=list)
    ignored: int = 0
    notes: list[str] = field(default_factory=list)  # one line per input path with objects of kinds not read
    server_version: str = ""  # the API server's gitVersion, when read from the live cluster for --profile auto
    _services_by_ns: dict[str, list[Service]] = field(default_factory=dict)
    _controllers_by_key: dict[tuple[str, str], list[Controller]] = field(default_factory=dict)
    _controller_by_key: dict[WorkloadKey, Controller] = field(default_factory=dict)
    _claims: dict[tuple[str, str], PersistentVolumeClaim] | None = None
    _volumes: dict[str, PersistentVolume] | None = None

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
        elif isinstance(record, PersistentVolumeClaim):
            self.claims.append(record)
        elif isinstance(record, PersistentVolume):
            self.volumes.append(record)
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

    def namespace_labels_map(self) -> dict[str, Mapping[str, str]]:
        """Every Namespace's labels by name (the last one read wins). O(namespaces)."""
        return {ns.name: ns.labels for ns in self.namespaces}

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A PersistentVolumeClaim by namespace and name (indexed on first use). O(1)."""
        if self._claims is None:
            self._claims = {(c.namespace, c.name): c for c in self.claims}
        return self._claims.get((namespace, name))

    def volume(self, name: str) -> PersistentVolume | None:
        """A PersistentVolume by name (indexed on first use). O(1)."""
        if self._volumes is None:
            self._volumes = {v.name: v for v in self.volumes}
        return self._volumes.get(name)


def load_snapshot(paths: Iterable[str | Path]) -> Snapshot:
    """Read and parse a snapshot from files/directories (objects are parsed as they are read; JSON typed).

    A path all of whose objects are of kinds not read raises SnapshotError; one with some has a line in
    ``notes`` (how many objects of which kinds were skipped)."""
    snap = Snapshot()
    with paused_gc():
        for chunk in _chunks(paths, snap.notes):
            snap.add_all(chunk)
    return snap
