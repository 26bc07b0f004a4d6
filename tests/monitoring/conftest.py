"""Monitoring tests: the Grafana dashboard, the alert rules (promtool) and both against a real Prometheus.

Tests marked ``prometheus`` need Debian's ``prometheus`` package (``prometheus`` and ``promtool`` on PATH):
``make prometheus-tools`` installs it (``make test`` does so first). They start their own Prometheus on a free
loopback port with a temporary storage directory and never use a system service.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monitoring_helpers import require_binary


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "prometheus: needs prometheus/promtool from Debian's prometheus package (make prometheus-tools)"
    )


@pytest.fixture(scope="session")
def promtool() -> str:
    try:
        return require_binary("promtool")
    except FileNotFoundError as err:
        pytest.fail(str(err), pytrace=False)


@pytest.fixture(scope="session")
def prometheus_bin() -> str:
    try:
        return require_binary("prometheus")
    except FileNotFoundError as err:
        pytest.fail(str(err), pytrace=False)
