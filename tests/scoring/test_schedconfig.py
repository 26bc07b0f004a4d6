"""--scheduler-config: PodTopologySpreadArgs of a KubeSchedulerConfiguration, as kube-scheduler reads them."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.cli import main
from spreadwatch.errors import InputError
from spreadwatch.scoring.profiles import SYSTEM_DEFAULT_CONSTRAINTS
from spreadwatch.scoring.schedconfig import default_constraints_from_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _config(args: dict[str, Any] | None, name: str = "default-scheduler") -> dict[str, Any]:
    profile: dict[str, Any] = {"schedulerName": name}
    if args is not None:
        profile["pluginConfig"] = [
            {"name": "NodeResourcesFit", "args": {}},
            {"name": "PodTopologySpread", "args": args},
        ]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def _c(key: str, skew: int, action: str = "ScheduleAnyway") -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": action}


def test_no_args_and_system_mean_system_defaults() -> None:
    for doc in (_config(None), _config({"defaultingType": "System"}), {**_config(None), "profiles": None}):
        got = default_constraints_from_config(doc, "f.yaml")
        assert (got.system, got.constraints) == (True, SYSTEM_DEFAULT_CONSTRAINTS.constraints)


def test_list_constraints_in_order() -> None:
    got = default_constraints_from_config(
        _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 1), _c(HOST, 3, "DoNotSchedule")]}), "f"
    )
    assert got.system is False
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in got.constraints] == [
        (ZONE, 1, "ScheduleAnyway"),
        (HOST, 3, "DoNotSchedule"),
    ]


def test_profile_chosen_by_scheduler_name() -> None:
    doc = _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 1)]})
    doc["profiles"].insert(0, {"schedulerName": "other"})
    assert default_constraints_from_config(doc, "f").system is False
    assert default_constraints_from_config(doc, "f", "other").system is True


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({"kind": "Pod"}, "expected kind KubeSchedulerConfiguration", id="wrong kind"),
        pytest.param(
            {**_config(None), "apiVersion": "kubescheduler.config.k8s.io/v1beta2"}, "apiVersion", id="old apiVersion"
        ),
        pytest.param(_config(None, "mine"), "no profile with schedulerName 'default-scheduler'", id="no profile"),
        pytest.param(_config({"defaultingType": "Custom"}), "must be System or List", id="bad defaultingType"),
        pytest.param(
            _config({"defaultingType": "System", "defaultConstraints": [_c(ZONE, 1)]}),
            "must be empty when defaultingType is System",
            id="System with constraints",
        ),
        pytest.param(
            _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 0)]}), "maxSkew", id="maxSkew 0"
        ),
        pytest.param(
            _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 1, "Maybe")]}),
            "whenUnsatisfiable",
            id="bad action",
        ),
        pytest.param(
            _config({"defaultingType": "List", "defaultConstraints": [{**_c(ZONE, 1), "labelSelector": {}}]}),
            "must not define a selector",
            id="selector in defaults",
        ),
        pytest.param(
            _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 1), _c(ZONE, 2)]}),
            "duplicate",
            id="duplicate key/action",
        ),
        pytest.param({**_config(None), "profiles": "x"}, "profiles: expected a list", id="profiles not a list"),
        pytest.param(
            {
                **_config(None),
                "profiles": [
                    {"schedulerName": "default-scheduler"},
                    _config(
                        {"defaultingType": "List", "defaultConstraints": [{**_c(ZONE, 1), "labelSelector": {}}]},
                        "other",
                    )["profiles"][0],
                ],
            },
            "profiles\\[1\\].*must not define a selector",
            id="an invalid other profile fails the whole file, as in kube-scheduler",
        ),
        pytest.param(
            {**_config(None), "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "duplicate profile",
            id="duplicate schedulerName",
        ),
    ],
)
def test_bad_config_is_one_clear_error(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        default_constraints_from_config(doc, "f.yaml")


def _score(tmp_path: Path, config: dict[str, Any] | str) -> tuple[int, str, str]:
    path = tmp_path / "sched.yaml"
    path.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "score",
            "--cluster",
            str(EXAMPLES / "cluster.yaml"),
            "--pod",
            str(EXAMPLES / "pod.yaml"),
            "--profile",
            "v1.29",
            "--scheduler-config",
            str(path),
            "-o",
            "json",
        ],
        out,
        err,
    )
    return code, out.getvalue(), err.getvalue()


def test_cli_aks_style_zone_skew_1(tmp_path: Path) -> None:
    """List defaults zone maxSkew 1 + hostname 3: node-legacy lacks the GA zone key -> ignored (0); 5 nodes
    hostname w=log7=1.946, zones a,b,c w=log5=1.609; raw a 0+0+2=2, b1 3*1.609+0+3*1.946+2=12.66->13,
    b2 4.83+2=6.83->7, c1 1.609+1.946+2=5.56->6; min2 max13: a 100*13//13=100, b1 100*2//13=15,
    b2 100*8//13=61, c1 100*9//13=69."""
    code, out, err = _score(
        tmp_path, _config({"defaultingType": "List", "defaultConstraints": [_c(ZONE, 1), _c(HOST, 3)]})
    )
    assert (code, err) == (0, "")
    assert yaml.safe_load(out)["scores"] == {
        "node-a1": 100,
        "node-a2": 100,
        "node-b1": 15,
        "node-b2": 61,
        "node-c1": 69,
        "node-legacy": 0,
    }


def test_cli_empty_list_means_no_default_spreading(tmp_path: Path) -> None:
    code, out, _ = _score(tmp_path, _config({"defaultingType": "List"}))
    data = yaml.safe_load(out)
    assert (code, data["skipped"], set(data["scores"].values())) == (0, True, {0})


def test_cli_bad_config_exit_2_one_line(tmp_path: Path) -> None:
    code, out, err = _score(tmp_path, "kind: [unclosed\n")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "malformed YAML" in err
