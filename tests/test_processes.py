"""tests/processes.py: SIGTERM, a grace period, then SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys

from processes import stop_process

_IGNORES_TERM = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(600)"  # noqa: E501
_EXITS_ON_TERM = "import sys, time; print('ready', flush=True); time.sleep(600)"


def _started(code: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"  # its signal disposition is set: no race with our SIGTERM
    return proc


def test_a_process_that_honours_sigterm_is_not_killed() -> None:
    proc = _started(_EXITS_ON_TERM)
    stopped = stop_process(proc, grace=600)  # returns when it exits, long before the grace
    assert stopped.returncode == -signal.SIGTERM
    assert not stopped.killed


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    proc = _started(_IGNORES_TERM)
    stopped = stop_process(proc, grace=0.2)
    assert stopped.returncode == -signal.SIGKILL
    assert stopped.killed
    assert proc.poll() == -signal.SIGKILL


def test_an_exited_process_is_left_alone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert stop_process(proc) == stop_process(proc)
    assert stop_process(proc).returncode == 0
