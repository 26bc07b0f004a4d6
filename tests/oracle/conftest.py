"""Fixtures for the differential oracle tests (see README.md)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# gen.py and edge_cases.py are plain modules next to the tests; make them
# importable whatever pytest's import mode is (the client of the oracles'
# pipe is hack/oracle_client.py, shared with the Go-plugin benchmark).
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "oracle: differential test against the real kube-scheduler SelectorSpread and PodTopologySpread "
        "plugins (builds tests/oracle and tests/oracle/pts with Go on first use)",
    )


@pytest.fixture(scope="session")
def oracle():
    """One spreadwatch-oracle process for the whole session."""
    from hack.oracle_client import Oracle, build

    if not os.environ.get("SPREADWATCH_ORACLE_BIN") and shutil.which("go") is None:
        pytest.fail("no Go toolchain on PATH to build tests/oracle (or set SPREADWATCH_ORACLE_BIN to a built binary)")
    binary = build()
    with Oracle(binary) as o:
        yield o


@pytest.fixture(scope="session")
def pts_oracle():
    """One spreadwatch-oracle-pts process (PodTopologySpread, k8s v1.36) for the whole session."""
    from hack.oracle_client import Oracle, build

    if not os.environ.get("SPREADWATCH_ORACLE_PTS_BIN") and shutil.which("go") is None:
        pytest.fail("no Go toolchain on PATH to build tests/oracle/pts (or set SPREADWATCH_ORACLE_PTS_BIN)")
    binary = build(which="pts")
    with Oracle(binary) as o:
        yield o


@pytest.fixture(scope="session")
def profile_oracle():
    """One spreadwatch-oracle-profile process (the whole kube-scheduler v1.36 framework) for the session."""
    from hack.oracle_client import Oracle, build

    if not os.environ.get("SPREADWATCH_ORACLE_PROFILE_BIN") and shutil.which("go") is None:
        pytest.fail("no Go toolchain on PATH to build tests/oracle/profile (or set SPREADWATCH_ORACLE_PROFILE_BIN)")
    binary = build(which="profile")
    with Oracle(binary) as o:
        yield o
