"""Stopping child processes in tests: SIGTERM, a grace period, then SIGKILL.

A test never assumes a process exits quickly: on a busy machine a graceful shutdown may take long, and a
process that ignores SIGTERM must not hang the suite. SIGKILL cannot be ignored, so the final wait is
unbounded (it returns as soon as the kernel has reaped the process).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from dataclasses import dataclass

__all__ = ["Stopped", "stop_process"]


@dataclass(frozen=True)
class Stopped:
    """How a process ended: its exit code (negative: the signal) and whether SIGKILL was needed."""

    returncode: int
    killed: bool


def stop_process(proc: subprocess.Popen[bytes] | subprocess.Popen[str], grace: float = 30.0) -> Stopped:
    """SIGTERM `proc`, wait up to `grace` seconds, then SIGKILL it and wait until it is gone."""
    if proc.poll() is not None:
        return Stopped(proc.returncode, killed=False)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        return Stopped(proc.wait(grace), killed=False)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return Stopped(proc.wait(), killed=True)
