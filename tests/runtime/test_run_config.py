"""``spreadwatch run`` flags/env → OperatorConfig; kopf is configured read-only; live-mode CLI errors."""

from __future__ import annotations

import io

import pytest

from spreadwatch.cli import build_parser, main, operator_config
from spreadwatch.config import LabelRequirement, OperatorConfig, parse_label_requirement
from spreadwatch.errors import InputError


def config_of(*argv: str) -> OperatorConfig:
    return operator_config(build_parser().parse_args(["run", *argv]))


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAME", "spreadwatch-7d9f-abcde")
    cfg = config_of()
    assert cfg.namespaces == ()
    assert cfg.clusterwide
    assert cfg.opt_out == LabelRequirement("spreadwatch.io/ignore", "true")
    assert (cfg.profile, cfg.compare_profile) == ("auto", "auto")  # the cluster's kube-scheduler, the other plugin
    assert (cfg.debounce, cfg.max_writes_per_second, cfg.resync_period) == (1.0, 100.0, 300.0)
    assert cfg.report.window_samples == 16
    assert cfg.write_burst == 200
    assert (cfg.port, cfg.log_format, cfg.kubeconfig) == (8081, "text", None)
    assert (cfg.metrics_port, cfg.metrics_secure, cfg.metrics_cert_dir) == (8443, True, None)
    assert cfg.leader.enabled
    assert cfg.leader.identity == "spreadwatch-7d9f-abcde"
    assert (cfg.leader.lease_duration, cfg.leader.renew_period) == (15.0, 2.0)
    assert (cfg.report.top_n, cfg.report.max_nodes) == (3, 500)


def test_flags() -> None:
    cfg = config_of(
        "-n", "a,b", "-n", "c", "--skip-namespace", "kube-system", "--opt-out-label", "team/skip",
        "--profile", "v1.18", "--debounce", "0.5", "--max-writes-per-second", "5", "--write-burst", "2",
        "--resync-period", "60", "--port", "9090", "--log-format", "json", "--kubeconfig", "/k",
        "--no-leader-elect", "--lease-name", "x", "--identity", "me", "--top-nodes", "5",
        "--max-node-skew", "2", "--no-events",
    )  # fmt: skip
    assert cfg.namespaces == ("a", "b", "c")
    assert not cfg.clusterwide
    assert cfg.skip_namespaces == ("kube-system",)
    assert cfg.opt_out == LabelRequirement("team/skip", None)
    assert (cfg.profile, cfg.debounce, cfg.max_writes_per_second, cfg.write_burst) == ("v1.18", 0.5, 5.0, 2)
    assert (cfg.resync_period, cfg.port, cfg.log_format, cfg.kubeconfig) == (60.0, 9090, "json", "/k")
    assert not cfg.leader.enabled
    assert (cfg.leader.lease_name, cfg.leader.identity) == ("x", "me")
    assert (cfg.report.top_n, cfg.report.thresholds.max_node_skew, cfg.events) == (5, 2, False)


def test_environment_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "NAMESPACE": "x, y",
        "SKIP_NAMESPACE": "z",
        "DEBOUNCE": "2.5",
        "MAX_WRITES_PER_SECOND": "3",
        "PORT": "0",
        "LOG_FORMAT": "json",
        "LEADER_ELECT": "false",
        "OPT_OUT_LABEL": "",
        "KUBECONFIG": "/etc/k",
        "RESYNC_PERIOD": "0",
    }.items():
        monkeypatch.setenv(f"SPREADWATCH_{key}", value)
    cfg = config_of()
    assert (cfg.namespaces, cfg.skip_namespaces) == (("x", "y"), ("z",))
    assert (cfg.debounce, cfg.max_writes_per_second, cfg.port, cfg.log_format) == (2.5, 3.0, 0, "json")
    assert (cfg.leader.enabled, cfg.opt_out, cfg.kubeconfig, cfg.resync_period) == (False, None, "/etc/k", 0.0)
    assert config_of("-n", "only").namespaces == ("only",)  # flags win over the environment


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--debounce", "-1"], {}, "seconds >= 0"),
        (["--max-writes-per-second", "0"], {}, "> 0"),
        (["--port", "70000"], {}, "0-65535"),
        (["--profile", "v0"], {}, "unknown profile"),
        (["-n", "a", "--skip-namespace", "a"], {}, "both watched and skipped"),
        (["--lease-duration", "1", "--renew-period", "2"], {}, "must exceed the renew period"),
        (["--opt-out-label", "bad key=x"], {}, "KEY=VALUE"),
        ([], {"SPREADWATCH_DEBOUNCE": "soon"}, "expected a number"),
        ([], {"SPREADWATCH_LEADER_ELECT": "maybe"}, "expected true or false"),
        (["--log-format", "xml"], {}, "invalid choice"),
    ],
)
def test_bad_run_settings_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], message: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, out, err = run_cli("run", *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err


def test_label_requirement() -> None:
    assert parse_label_requirement("") is None
    req = parse_label_requirement("a/b=c")
    assert req is not None
    assert req.matches({"a/b": "c"})
    assert not req.matches({"a/b": "d"})
    assert str(req) == "a/b=c"
    with pytest.raises(InputError):
        parse_label_requirement("=x")


def test_live_analyze_without_cluster_or_kubeconfig_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    code, out, err = run_cli("analyze")
    assert (code, out) == (2, "")
    assert "required" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = run_cli("explain", "--kubeconfig", "/nonexistent/k", "deploy/a/b")
    assert code == 2
    assert "cannot read kubeconfig /nonexistent/k" in err


def test_live_analyze_unreachable_api_is_one_line(tmp_path: object) -> None:
    from pathlib import Path

    kubeconfig = Path(str(tmp_path)) / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
        "users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
        "current-context: x\n"
    )
    code, out, err = run_cli("analyze", "--kubeconfig", str(kubeconfig))
    assert (code, out) == (2, "")
    assert "cannot list nodes" in err
    assert len(err.strip().splitlines()) == 1


def test_kopf_is_configured_read_only() -> None:
    from handler_fakes import FakeReportApi

    from spreadwatch.runtime.process import Runtime, build_registry, operator_settings

    cfg = OperatorConfig(profile="v1.28", compare_profile="none")  # (auto would ask the API server)
    settings = operator_settings(cfg)
    assert settings.posting.enabled is False
    assert settings.peering.standalone is True
    assert settings.scanning.disabled is True
    assert settings.persistence.finalizer.startswith("spreadwatch.io/")
    registry = build_registry(Runtime(cfg, report_api=FakeReportApi()))
    # no resource handlers at all (the informers watch, not kopf): nothing kopf would keep state for on
    # objects, and no per-object worker either
    for attr in ("_watching", "_changing", "_spawning", "_indexing", "_webhooks"):
        assert not list(getattr(registry, attr).get_all_handlers()), attr
    assert len(list(registry._activities.get_all_handlers())) >= 2  # startup and cleanup (and login)
