"""The repository's own scripts, imported by the tests (hack/ holds scripts, not packages)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[1]

__all__ = ["REPO_ROOT", "load_bench", "load_devcluster", "load_script"]


def load_script(module_name: str, relative_path: str) -> ModuleType:
    """Import the repository's script at `relative_path` once, as module `module_name`."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    path = REPO_ROOT / relative_path
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def load_devcluster() -> ModuleType:
    """Import hack/devcluster.py (the code behind `make dev-cluster`) once, as module ``devcluster``."""
    return load_script("devcluster", "hack/devcluster.py")


def load_bench(name: str) -> ModuleType:
    """Import ``bench.NAME`` (bench/ is a namespace package of the repository root, which goes on ``sys.path``)."""
    root = str(REPO_ROOT)
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module(f"bench.{name}")
