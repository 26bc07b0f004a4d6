"""The score plugins and weights of a scheduler profile (``scoring/score_weights.py``) and explain's Weight line.

Each table row is a ``plugins`` block of a KubeSchedulerConfiguration profile; its id says what it does to the
default profile's weights (kube-scheduler v1.36.4 ``default_plugins.go``: TaintToleration 3, NodeAffinity 2,
NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from spreadwatch.cli import main
from spreadwatch.errors import InputError
from spreadwatch.scoring import get_profile
from spreadwatch.scoring.score_weights import DEFAULT_SCORE_WEIGHTS, score_weights

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = str(ROOT / "examples" / "cluster.yaml")
SPREAD_ONLY = str(ROOT / "hack" / "scheduler" / "config" / "v1.36-spread-only.yaml")
V129, V128 = get_profile("v1.29"), get_profile("v1.28")


def _config(plugins: dict[str, Any] | None, name: str = "default-scheduler") -> dict[str, Any]:
    profile: dict[str, Any] = {"schedulerName": name}
    if plugins is not None:
        profile["plugins"] = plugins
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}  # fmt: skip


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(None, dict(DEFAULT_SCORE_WEIGHTS), id="no-plugins-block=defaults"),
        pytest.param({"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "PodTopologySpread", "weight": 2}]}},
                     {"PodTopologySpread": 2}, id="score-disabled-*+PTS-x2=PTS-only"),
        pytest.param({"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "PodTopologySpread"}]}},
                     {"PodTopologySpread": 1}, id="PTS-without-weight=1"),
        pytest.param({"score": {"disabled": [{"name": "ImageLocality"}, {"name": "NodeResourcesFit"}]}},
                     {k: v for k, v in DEFAULT_SCORE_WEIGHTS.items() if k not in ("ImageLocality", "NodeResourcesFit")},
                     id="two-disabled=five-left"),
        pytest.param({"multiPoint": {"enabled": [{"name": "PodTopologySpread", "weight": 5}, {"name": "NodePorts"}]}},
                     {**DEFAULT_SCORE_WEIGHTS, "PodTopologySpread": 5}, id="multiPoint-PTS-x5,filter-plugin-ignored"),
        pytest.param({"multiPoint": {"disabled": [{"name": "*"}]}, "score": {"enabled": [{"name": "MyScore"}]}},
                     {"MyScore": 1}, id="multiPoint-disabled-*+custom=custom-x1"),
    ],
)  # fmt: skip
def test_weights_of_a_profile(plugins: dict[str, Any] | None, expected: dict[str, int]) -> None:
    weights = score_weights(V129, _config(plugins), "cfg.yaml")
    assert dict(weights.weights) == expected
    assert weights.spread_weight == expected.get("PodTopologySpread")


def test_defaults_without_a_config() -> None:
    v129, v128 = score_weights(V129), score_weights(V128)
    assert (v129.plugin, v129.spread_weight, v129.resource_scored) == ("PodTopologySpread", 2, True)
    assert (v128.plugin, v128.spread_weight) == ("SelectorSpread", 1)
    assert "PodTopologySpread" not in v128.weights
    assert v129.others[0] == ("TaintToleration", 3)  # heaviest first


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(_config(None, "other"), "no profile with schedulerName 'default-scheduler'", id="no-such-profile"),
        pytest.param(_config({"score": {"enabled": [{"weight": 2}]}}), "enabled[0].name: is required", id="no-name"),
        pytest.param(_config({"score": {"enabled": [{"name": "X", "weight": -1}]}}), "non-negative", id="negative"),
        pytest.param(_config({"score": []}), "plugins.score: expected a mapping", id="score-a-list"),
    ],
)  # fmt: skip
def test_bad_plugins_block_is_one_clear_error(config: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        score_weights(V129, config, "cfg.yaml")


def _explain(*extra: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--cluster", CLUSTER, "--profile", "v1.29", "deployment/shop/checkout", *extra], out, err)
    assert (code, err.getvalue()) == (0, "")
    return out.getvalue()


def test_explain_names_the_weight_and_the_resource_scores() -> None:
    out = _explain()
    assert "Weight:      PodTopologySpread x2 in kube-scheduler's default profile" in out
    assert "NodeResourcesFit and NodeResourcesBalancedAllocation score the pod's CPU and memory requests" in out


def test_explain_with_a_spread_only_profile() -> None:
    out = _explain("--scheduler-config", SPREAD_ONLY)
    assert f"Weight:      PodTopologySpread x2, the only score plugin of {SPREAD_ONLY}" in out
    assert "outweigh" not in out
