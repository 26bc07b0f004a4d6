"""The scheduler profile the prediction runs (scoring/scheduler_profile.py): kube-scheduler v1.36.4's default
profile, and what a KubeSchedulerConfiguration changes. The Go oracle (tests/oracle/profile) checks random
configurations against the real framework; these are the cases named in docs/scoring.md §12."""

from __future__ import annotations

from typing import Any

import pytest

from spreadwatch.errors import InputError
from spreadwatch.scoring.resource_fit import LEAST_ALLOCATED, MOST_ALLOCATED
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile, scheduler_profile


def _config(profile: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", **profile}]}  # fmt: skip


def test_the_default_profile() -> None:
    p = default_scheduler_profile()
    assert p.filters == ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                         "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                         "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
                         "NodeDeclaredFeatures")  # fmt: skip
    assert dict(p.weights) == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                               "PodTopologySpread": 2, "InterPodAffinity": 2, "DynamicResources": 2,
                               "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}  # fmt: skip
    assert p.fit.type == LEAST_ALLOCATED and p.fit.resources == (("cpu", 1), ("memory", 1))
    assert p.hard_pod_affinity_weight == 1 and not p.unmodelled


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}, {"NodeResourcesFit": 5},
                     id="score-weight-overrides-multiPoint"),
        pytest.param({"multiPoint": {"enabled": [{"name": "PodTopologySpread"}]}}, {"PodTopologySpread": 1},
                     id="weight-left-out-is-1"),
        pytest.param({"score": {"disabled": [{"name": "ImageLocality"}]}}, {"ImageLocality": None},
                     id="score-disabled"),
    ],
)
def test_weights_from_a_configuration(plugins: dict[str, Any], expected: dict[str, int | None]) -> None:
    weights = scheduler_profile(_config({"plugins": plugins}), "cfg").weights
    for name, weight in expected.items():
        assert weights.get(name) == weight, (name, dict(weights))


def test_plugin_args() -> None:
    p = scheduler_profile(_config({"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated",
                                                                  "resources": [{"name": "cpu", "weight": 2}]}}},
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": True}},
    ]}), "cfg")  # fmt: skip
    assert p.fit.type == MOST_ALLOCATED and p.fit.resources == (("cpu", 2),)
    assert p.hard_pod_affinity_weight == 5 and p.ignore_existing_preferred


def test_an_out_of_tree_plugin_is_unmodelled() -> None:
    p = scheduler_profile(_config({"plugins": {"score": {"enabled": [{"name": "MyScore", "weight": 3}]}}}), "cfg")
    assert p.unmodelled == ("MyScore",)


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        pytest.param({"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]},
                     "hardPodAffinityWeight", id="hardPodAffinityWeight-above-100"),
        pytest.param({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "Cheapest", "resources": [{"name": "cpu", "weight": 1}]}}}]}, "Cheapest",
            id="unknown-strategy"),
        pytest.param({"plugins": "all"}, "plugins", id="plugins-not-a-mapping"),
    ],
)
def test_a_configuration_kube_scheduler_refuses_is_one_error(profile: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        scheduler_profile(_config(profile), "cfg")
