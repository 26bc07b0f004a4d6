"""Start-up needs no passwd entry and no home directory (issue 11 item 1).

Under containerd, CRI-O or runc the chart's ``runAsUser: 65532`` has no ``/etc/passwd`` entry, so
``getpass.getuser()`` and ``pwd.getpwuid()`` raise KeyError (Docker and podman add an entry and hide this).
Here both are made to raise, ``$HOME`` and the login variables are unset, and the real start-up path runs:
``spreadwatch run`` argument parsing → :func:`run_operator` → kopf's operator (which would otherwise call
``getpass.getuser()`` in ``detect_own_id``) until the probe server answers, then a stop.
"""

from __future__ import annotations

import getpass
import pwd
import socket
import threading
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import kopf
import pytest

from ports import free_port
from spreadwatch.cli import build_parser, operator_config
from spreadwatch.config import OperatorConfig
from spreadwatch.runtime import process as process_module
from spreadwatch.runtime.process import Runtime, run_operator

_LOGIN_VARIABLES = ("HOME", "LOGNAME", "USER", "LNAME", "USERNAME")


def config_of(*argv: str) -> OperatorConfig:
    return operator_config(build_parser().parse_args(["run", *argv]))


def _no_passwd_entry(*_: object) -> NoReturn:
    raise KeyError("getpwuid(): uid not found: 65532")


@pytest.fixture
def no_passwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process looks like UID 65532 under runc: no passwd entry, no $HOME, no login name."""
    monkeypatch.setattr(getpass, "getuser", _no_passwd_entry)
    monkeypatch.setattr(pwd, "getpwuid", _no_passwd_entry)
    monkeypatch.setattr(pwd, "getpwnam", _no_passwd_entry)
    for name in _LOGIN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SPREADWATCH_IDENTITY", raising=False)


@pytest.mark.usefixtures("no_passwd")
@pytest.mark.parametrize(
    ("env", "argv", "expected"),
    [
        pytest.param({"POD_NAME": "spreadwatch-7d9f-abcde"}, (), "spreadwatch-7d9f-abcde", id="downward-api-POD_NAME"),
        pytest.param({"POD_NAME": "pod-a"}, ("--identity", "flag-b"), "flag-b", id="flag-beats-POD_NAME"),
        pytest.param({"SPREADWATCH_IDENTITY": "env-c"}, (), "env-c", id="SPREADWATCH_IDENTITY"),
        pytest.param({}, (), socket.gethostname(), id="no-POD_NAME-host-name"),
    ],
)
def test_identity_comes_from_configuration(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], argv: tuple[str, ...], expected: str
) -> None:
    monkeypatch.delenv("POD_NAME", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert config_of(*argv).leader.identity == expected


def _unused_kubeconfig(path: Path) -> str:
    """A kubeconfig for an API server that refuses connections (nothing listens on the port)."""
    port = free_port()
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return str(path)


@pytest.mark.usefixtures("no_passwd")
def test_run_operator_starts_kopf_with_the_configured_identity(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The real kopf operator starts (its identity is spreadwatch's) and the probe server answers."""
    monkeypatch.setenv("POD_NAME", "spreadwatch-0")
    kubeconfig = _unused_kubeconfig(tmp_path / "kubeconfig")
    # (a named profile: --profile auto would read the API server's version before anything starts)
    argv = ("--kubeconfig", kubeconfig, "--port", "0", "--metrics-port", "0", "--profile", "v1.28")
    cfg = replace(config_of(*argv), host="127.0.0.1")
    seen: dict[str, Any] = {}
    real_operator = kopf.operator

    async def operator(**kwargs: Any) -> None:
        seen.update(kwargs)
        await real_operator(**kwargs)

    monkeypatch.setattr(kopf, "operator", operator)
    runtimes: list[Runtime] = []

    class RecordedRuntime(Runtime):
        """The operator's runtime, remembered so the test can find its probe port."""

        def __init__(self, config: OperatorConfig) -> None:
            super().__init__(config)
            runtimes.append(self)

    monkeypatch.setattr(process_module, "Runtime", RecordedRuntime)
    stop = threading.Event()
    failures: list[BaseException] = []

    def run() -> None:
        try:
            run_operator(cfg, stop)  # type: ignore[arg-type]  # kopf accepts threading.Event too
        except BaseException as err:
            failures.append(err)
            raise

    thread = threading.Thread(target=run, name="operator", daemon=True)
    thread.start()
    port = _wait_for_probe_port(runtimes, thread)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
        assert resp.status == 200
    stop.set()
    thread.join(60)
    assert not thread.is_alive(), "run_operator did not stop within 60 s of the stop flag"
    assert failures == []
    assert seen["identity"] == "spreadwatch-0"


def _wait_for_probe_port(runtimes: list[Runtime], thread: threading.Thread) -> int:
    """The probe server's port once bound; fails if the operator thread ends first (e.g. a KeyError)."""
    bound = threading.Event()
    while not bound.wait(0.05):
        if runtimes and runtimes[0].server.bound_port is not None:
            return runtimes[0].server.bound_port
        assert thread.is_alive(), "run_operator ended before its probe server was up"
    raise AssertionError("unreachable")
