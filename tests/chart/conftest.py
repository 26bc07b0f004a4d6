"""Fixtures for the Helm chart tests (helpers in chart_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chart_helpers import Helm, find_helm, helm_env


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """The real helm (fails, never skips, when it is missing and cannot be built)."""
    binary = find_helm(tmp_path_factory.mktemp("tools"))
    return Helm(binary, helm_env(tmp_path_factory.mktemp("helm-home")))
