"""``spreadwatch run``'s secure-metrics flags and their environment defaults → OperatorConfig."""

from __future__ import annotations

import io

import pytest

from spreadwatch.cli import build_parser, main, operator_config
from spreadwatch.config import OperatorConfig


def config_of(*argv: str) -> OperatorConfig:
    return operator_config(build_parser().parse_args(["run", *argv]))


def metrics_settings(cfg: OperatorConfig) -> tuple[int, int, bool, str | None]:
    return cfg.port, cfg.metrics_port, cfg.metrics_secure, cfg.metrics_cert_dir


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        ([], {}, (8081, 8443, True, None)),
        (["--metrics-secure"], {}, (8081, 8443, True, None)),
        (["--metrics-secure=true"], {}, (8081, 8443, True, None)),
        (["--metrics-secure=false"], {}, (8081, 8443, False, None)),
        (["--metrics-secure", "false"], {}, (8081, 8443, False, None)),
        (["--metrics-secure=0"], {}, (8081, 8443, False, None)),
        (["--metrics-secure=OFF"], {}, (8081, 8443, False, None)),
        (["--no-metrics-secure"], {}, (8081, 8443, False, None)),
        (["--no-metrics-secure", "--metrics-secure"], {}, (8081, 8443, True, None)),  # the last one wins
        (["--metrics-secure=false", "--metrics-secure=yes"], {}, (8081, 8443, True, None)),
        (["--port", "9000", "--metrics-port", "9443"], {}, (9000, 9443, True, None)),
        (["--metrics-cert-dir", "/certs"], {}, (8081, 8443, True, "/certs")),
        ([], {"METRICS_SECURE": "false"}, (8081, 8443, False, None)),
        ([], {"METRICS_PORT": "9999", "PORT": "9998"}, (9998, 9999, True, None)),
        ([], {"METRICS_CERT_DIR": "/etc/tls"}, (8081, 8443, True, "/etc/tls")),
        (["--metrics-secure"], {"METRICS_SECURE": "false"}, (8081, 8443, True, None)),  # a flag beats the env
        (["--port", "0", "--metrics-port", "0"], {}, (0, 0, True, None)),  # both ephemeral: allowed
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_metrics_flags(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], expected: tuple[object, ...]
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(f"SPREADWATCH_{key}", value)
    assert metrics_settings(config_of(*argv)) == expected


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--metrics-secure=maybe"], {}, "expected true or false, got 'maybe'"),
        (["--metrics-port", "70000"], {}, "expected a port 0-65535"),
        (["--metrics-port", "8081"], {}, "the probe port and the metrics port must differ, both are 8081"),
        (["--no-metrics-secure", "--metrics-cert-dir", "/c"], {}, "needs secure metrics"),
        ([], {"SPREADWATCH_METRICS_SECURE": "perhaps"}, "SPREADWATCH_METRICS_SECURE='perhaps'"),
        ([], {"SPREADWATCH_METRICS_PORT": "https"}, "SPREADWATCH_METRICS_PORT='https': expected an integer"),
    ],
)
def test_bad_metrics_settings_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], message: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", *argv], out, err) == 2
    assert out.getvalue() == ""
    assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
    assert message in err.getvalue()
