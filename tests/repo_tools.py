"""The repository's root, for the tests that read its files.

Its scripts and benchmarks are imported as modules, never loaded by path: pytest puts the root on ``sys.path``
(``pythonpath`` in pyproject.toml), where ``bench/`` and ``hack/`` are namespace packages (``from bench import
soak``, ``from hack import devcluster``, ``from hack.node import localnode``), as ``python -m bench.run`` sees
them.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

__all__ = ["REPO_ROOT"]
