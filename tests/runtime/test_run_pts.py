"""`spreadwatch run` with profile v1.29: --scheduler-config, --scheduler-name and --compare-profile reach the
operator's index (flags and environment), and bad values are one line, exit 2."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from handler_fakes import FakeReportApi

from spreadwatch.cli import build_parser, main, operator_config
from spreadwatch.runtime.process import Runtime

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: zonal
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
"""


def test_runtime_index_gets_the_profile_defaults_and_the_comparison(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(CONFIG)
    args = build_parser().parse_args(
        [
            "run",
            "--profile",
            "v1.29",
            "--scheduler-config",
            str(path),
            "--scheduler-name",
            "zonal",
            "--compare-profile",
            "v1.28",
        ]
    )
    runtime = Runtime(operator_config(args), report_api=FakeReportApi())
    index = runtime.index
    assert index.profile.name == "v1.29" and index.profile.default_constraints.system is False
    (constraint,) = index.profile.default_constraints.constraints
    assert (constraint.topology_key, constraint.max_skew) == ("topology.kubernetes.io/zone", 1)
    # v1.28 counts the pods of v1.29's default constraints: the index scores it from its own counts
    assert index.compared is not None and index.compared.name == "v1.28" and index.shadow is None


def test_compare_profile_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPREADWATCH_COMPARE_PROFILE", "v1.29")
    config = operator_config(build_parser().parse_args(["run"]))
    assert (config.profile, config.compare_profile) == ("auto", "v1.29")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--compare-profile", "v2"], "unknown --compare-profile 'v2'", id="unknown compare profile"),
        pytest.param(
            ["--profile", "v9"],
            "unknown profile 'v9': choose one of v1.28, v1.29, v1.18, v1.16, v1.12 or auto",
            id="unknown profile: the names and auto",
        ),
        pytest.param(["--scheduler-config", "/nonexistent.yaml"], "cannot read /nonexistent.yaml", id="no file"),
    ],
)
def test_bad_pts_run_flags_are_one_line_and_exit_2(argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "--profile", "v1.29", *argv], out, err)
    assert (code, out.getvalue()) == (2, "")
    assert message in err.getvalue() and err.getvalue().count("\n") == 1
