"""Python side of the differential oracles' JSON-lines pipe (the Go programs in tests/oracle: the real
kube-scheduler plugins), for the oracle tests and the Go-plugin benchmark (bench/references.py).

    from hack.oracle_client import Oracle
    with Oracle() as oracle:                       # builds (or reuses) the binary
        results = oracle.score(cluster, [pod])     # candidates picked by the filters
        results = oracle.score(cluster, [pod], ["n1", "n2"])

``cluster`` is ``{"nodes": [...], "pods": [...], "services": [...],
"replicationControllers": [...], "replicaSets": [...], "statefulSets": [...]}``
(missing keys mean empty); :func:`cluster_from_objects` builds it from a
mixed list of Kubernetes objects.  Each result is
``{"skipped": bool, "candidates": [...], "scores": {node: int}, "filtered": {node: reason}}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BUILD_SH = Path(__file__).resolve().parent.parent / "tests" / "oracle" / "build.sh"

_KIND_TO_KEY = {
    "Node": "nodes",
    "Pod": "pods",
    "Service": "services",
    "ReplicationController": "replicationControllers",
    "ReplicaSet": "replicaSets",
    "StatefulSet": "statefulSets",
}


class OracleError(RuntimeError):
    """The oracle rejected an input line or died."""


def build(env: dict[str, str] | None = None, which: str = "") -> str:
    """Run build.sh and return the absolute path of the binary.

    ``which``: ``""`` for the v1.28 SelectorSpread oracle, ``"pts"`` for the
    PodTopologySpread one, ``"profile"`` for the whole-profile one.
    ``SPREADWATCH_ORACLE_BIN`` (resp. ``SPREADWATCH_ORACLE_PTS_BIN``,
    ``SPREADWATCH_ORACLE_PROFILE_BIN``) short-circuits the build (use a
    prebuilt binary).  Build logs go to this process's stderr."""
    variable = {"pts": "SPREADWATCH_ORACLE_PTS_BIN", "profile": "SPREADWATCH_ORACLE_PROFILE_BIN"}
    prebuilt = os.environ.get(variable.get(which, "SPREADWATCH_ORACLE_BIN"))
    if prebuilt:
        return str(Path(prebuilt).resolve())
    cmd = ["bash", str(BUILD_SH), *([which] if which else [])]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env)
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise OracleError(f"build.sh printed {len(lines)} lines, expected the binary path: {out.stdout!r}")
    return lines[0].strip()


def cluster_from_objects(objects: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Sort a mixed list of objects (``kind: List`` items are flattened) into the
    oracle's cluster form.  Kinds the oracle does not use are dropped."""
    cluster: dict[str, list[dict[str, Any]]] = {k: [] for k in _KIND_TO_KEY.values()}

    def add(obj: dict[str, Any]) -> None:
        kind = obj.get("kind")
        if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
            for item in obj.get("items") or []:
                add(item)
            return
        key = _KIND_TO_KEY.get(kind)  # type: ignore[arg-type]
        if key is not None:
            cluster[key].append(obj)

    for o in objects:
        add(o)
    return cluster


class Oracle:
    """One long-running spreadwatch-oracle process; not thread-safe."""

    def __init__(self, binary: str | os.PathLike[str] | None = None):
        self.binary = str(binary) if binary is not None else build()
        self.last_elapsed_ns: int = 0
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [self.binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------
    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout:
                proc.stdout.close()
            self._stderr.close()

    def _stderr_text(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode(errors="replace")[-4000:]
        except (OSError, ValueError):
            return ""

    # -- protocol --------------------------------------------------------------
    def request(self, line: dict[str, Any]) -> dict[str, Any]:
        """Send one raw input object, return the raw output object (which may be
        ``{"error": ...}``)."""
        data = json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()
        return json.loads(self.request_bytes(data))

    def request_bytes(self, data: bytes) -> bytes:
        """Send one input line already encoded as JSON (without its newline),
        return the output line undecoded (for callers with their own JSON
        library, e.g. the benchmark)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise OracleError("oracle is closed")
        with self._lock:
            try:
                proc.stdin.write(data + b"\n")
                proc.stdin.flush()
                answer = proc.stdout.readline()
            except BrokenPipeError:
                answer = b""
        if not answer:
            code = proc.poll()
            raise OracleError(f"oracle exited (status {code}); stderr:\n{self._stderr_text()}")
        return answer

    def score(
        self,
        cluster: dict[str, Any],
        incoming: list[dict[str, Any]],
        candidates: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Scores of the real plugin for each incoming pod, in order."""
        line: dict[str, Any] = {"cluster": cluster, "incoming": incoming}
        if candidates is not None:
            line["candidates"] = list(candidates)
        out = self.request(line)
        if "error" in out:
            raise OracleError(out["error"])
        self.last_elapsed_ns = int(out.get("elapsedNs", 0))
        return out["results"]
