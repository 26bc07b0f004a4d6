"""The repository's own scripts, imported by the tests (hack/ holds scripts, not packages)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[1]


def load_devcluster() -> ModuleType:
    """Import hack/devcluster.py (the code behind `make dev-cluster`) once, as module ``devcluster``."""
    if "devcluster" in sys.modules:
        return sys.modules["devcluster"]
    path = REPO_ROOT / "hack" / "devcluster.py"
    spec = importlib.util.spec_from_file_location("devcluster", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["devcluster"] = module
    spec.loader.exec_module(module)
    return module
