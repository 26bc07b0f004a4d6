"""hack/image/lock.py imported by the tests, and reading an OCI image-layout archive (build/spreadwatch.oci.tar)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hack.image import lock

REPO_ROOT = Path(__file__).resolve().parents[2]
OCI_ARCHIVE = REPO_ROOT / "build" / "spreadwatch.oci.tar"

__all__ = ["OCI_ARCHIVE", "REPO_ROOT", "OciArchive", "load_lock"]


def load_lock() -> ModuleType:
    """hack/image/lock.py (behind `make image-lock`)."""
    return lock


class OciArchive:
    """An OCI image-layout tar with one image: its index, manifest, config and layer member names."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with tarfile.open(path) as tar:
            self.index: dict[str, Any] = json.load(_member(tar, "index.json"))
            [entry] = self.index["manifests"]
            self.ref_name: str = entry.get("annotations", {}).get("org.opencontainers.image.ref.name", "")
            self.digest: str = entry["digest"]
            self.manifest: dict[str, Any] = json.load(_member(tar, _blob(self.digest)))
            self.config: dict[str, Any] = json.load(_member(tar, _blob(self.manifest["config"]["digest"])))
            self._layers = [layer["digest"] for layer in self.manifest["layers"]]

    def layer_files(self, index: int) -> dict[str, tarfile.TarInfo]:
        """{path: TarInfo} of one layer (gzip or plain tar), paths without a leading ``./`` or ``/``."""
        with tarfile.open(self.path) as outer:
            blob = _member(outer, _blob(self._layers[index]))
            with tarfile.open(fileobj=blob, mode="r:*") as layer:
                return {m.name.lstrip("./"): m for m in layer.getmembers()}

    def read_layer_files(self, index: int, paths: list[str], size: int = -1) -> dict[str, bytes]:
        """{path: the first ``size`` bytes (all: -1)} of regular files in one layer."""
        wanted = set(paths)
        found: dict[str, bytes] = {}
        with tarfile.open(self.path) as outer:
            blob = _member(outer, _blob(self._layers[index]))
            with tarfile.open(fileobj=blob, mode="r:*") as layer:
                for member in layer:
                    name = member.name.lstrip("./")
                    if name in wanted and member.isfile():
                        found[name] = _member(layer, member.name).read(size)
        missing = wanted - set(found)
        if missing:
            raise FileNotFoundError(f"not regular files in layer {index}: {sorted(missing)[:5]}")
        return found

    @property
    def layer_count(self) -> int:
        return len(self._layers)


def _blob(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    return f"blobs/{algorithm}/{hexdigest}"


def _member(tar: tarfile.TarFile, name: str) -> Any:
    f = tar.extractfile(name)
    if f is None:
        raise FileNotFoundError(f"{name} is not a file in the archive")
    return f
