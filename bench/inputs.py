"""The inputs measures share at one scale: bench/synth.py's cluster as objects, records, dumps, an event stream.

:func:`cluster` returns the :class:`Cluster` of a scale, built on first use and kept until another scale is
asked for (the runner measures scale by scale, so each scale's cluster is generated once per run). Dumps are
written lazily into a temporary directory removed with the cluster (or at the interpreter's exit). Costs:
generation O(objects); a dump O(objects) time and its size on disk.
"""

from __future__ import annotations

import atexit
import gc
import re
import shutil
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson
from bench.events import Event, make_event_stream

from bench import synth
from spreadwatch.snapshot import Snapshot, paused_gc

__all__ = ["DUMP_FORMATS", "Cluster", "cluster", "release"]

#: dump formats: compact JSON, 2-space indented (bench/synth.py's), 4-space (as ``kubectl get -o json`` prints)
DUMP_FORMATS = ("compact", "indent2", "indent4")


class Cluster:
    """One scale's synthetic cluster (seed 1) and what is derived from it, each built on first use."""

    def __init__(self, scale: float, seed: int = 1) -> None:
        self.scale, self.seed = scale, seed
        self.objects: list[dict[str, Any]] = synth.generate(scale, seed)
        self._dir = Path(tempfile.mkdtemp(prefix=f"spreadwatch-bench-{scale}-"))
        atexit.register(self.close)
        self._dumps: dict[str, Path] = {}
        self._streams: dict[int, list[Event]] = {}

    @cached_property
    def snapshot(self) -> Snapshot:
        """The objects as records (``Snapshot.from_objects``, GC paused)."""
        with paused_gc():
            return Snapshot.from_objects(self.objects)

    def stream(self, events: int) -> list[Event]:
        """The deterministic pod event stream of ``events`` events on this cluster (bench/events.py)."""
        if events not in self._streams:
            self._streams[events] = make_event_stream(self.snapshot, events)
        return self._streams[events]

    def dump(self, fmt: str = "indent2") -> Path:
        """The cluster as a ``kind: List`` JSON file in format ``fmt`` (one of :data:`DUMP_FORMATS`)."""
        if fmt not in self._dumps:
            data = orjson.dumps(synth.as_list(self.objects), option=0 if fmt == "compact" else orjson.OPT_INDENT_2)
            if fmt == "indent4":
                data = re.sub(rb"\n( +)", lambda m: b"\n" + m.group(1) * 2, data)
            path = self._dir / f"cluster-{fmt}.json"
            path.write_bytes(data)
            self._dumps[fmt] = path
        return self._dumps[fmt]

    def path(self, name: str) -> Path:
        """A scratch file in this cluster's temporary directory."""
        return self._dir / name

    def close(self) -> None:
        """Remove the dumps and scratch files (idempotent)."""
        shutil.rmtree(self._dir, ignore_errors=True)
        atexit.unregister(self.close)


_current: Cluster | None = None


def cluster(scale: float, seed: int = 1) -> Cluster:
    """The cluster of ``scale``: the one in use if it is that scale, else a new one (the old one is dropped)."""
    global _current  # noqa: PLW0603 - one cluster at a time: a scale-1.0 cluster holds gigabytes
    if _current is None or (_current.scale, _current.seed) != (scale, seed):
        release()
        _current = Cluster(scale, seed)
    return _current


def release() -> None:
    """Drop the cluster in use, if any (its dumps removed, its records freed): a caller done with it."""
    global _current  # noqa: PLW0603
    if _current is not None:
        _current.close()
    _current = None
    gc.collect()
