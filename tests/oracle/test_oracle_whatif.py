"""``simulate --add``'s steps against the real plugins: every step's candidates and scores are the oracle's for
the cluster with the earlier simulated replicas bound, and the replica ``simulate`` marks Pending is the first
for which the real filters leave no node.

Each seed takes gen_pts.py's cluster and incoming pod, turns the pod into the template of a ReplicaSet ``whatif``
(label ``app=whatif`` added; its pods are the ReplicaSet's, as the controller makes them), and scales it up by
``STEPS`` replicas: under ``v1.29`` against the v1.36.4 PodTopologySpread oracle (its real NodeUnschedulable,
TaintToleration, NodeAffinity and PodTopologySpread filters pick the candidates: DoNotSchedule constraints and
minDomains included), under ``v1.28`` against the v1.28.15 SelectorSpread oracle. The expected values come from
the plugins only; spreadwatch's ``simulate`` picks the first best node by name, and the oracle is then asked
about the next replica with that pod bound.

    SPREADWATCH_ORACLE_WHATIF_CASES=400 pytest -m oracle tests/oracle/test_oracle_whatif.py
"""

from __future__ import annotations

import copy
import os
from typing import Any

import gen
import gen_pts
import pytest
from hack.oracle_client import cluster_from_objects
from test_oracle_pts_differential import api_refuses

pytestmark = pytest.mark.oracle

N_CASES = int(os.environ.get("SPREADWATCH_ORACLE_WHATIF_CASES", "200"))
STEPS = 4
APP = {"app": "whatif"}


def _replicaset(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ReplicaSet ``whatif`` with the case's incoming pod as its template, and its next pod."""
    incoming = case["incoming"][0]
    namespace = incoming["metadata"].get("namespace") or "default"
    labels = {**(incoming["metadata"].get("labels") or {}), **APP}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "whatif", "namespace": namespace, "uid": "uid-whatif"},
          "spec": {"replicas": 0, "selector": {"matchLabels": APP},
                   "template": {"metadata": {"labels": labels}, "spec": copy.deepcopy(incoming["spec"])}}}  # fmt: skip
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "whatif", "uid": "uid-whatif", "controller": True}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "whatif-next", "namespace": namespace, "labels": labels, "ownerReferences": [ref]},
           "spec": copy.deepcopy(incoming["spec"])}  # fmt: skip
    return rs, pod


def _bound(pod: dict[str, Any], i: int, node: str) -> dict[str, Any]:
    out = copy.deepcopy(pod)
    out["metadata"]["name"] = f"whatif-sim-{i}"
    out["spec"]["nodeName"] = node
    out["status"] = {"phase": "Running"}
    return out


def _check(oracle: Any, seed: int, profile_name: str) -> int:
    """Simulate STEPS replicas of the seed's workload and compare every step with the oracle. Returns the steps
    compared (0 for a pod the API server would refuse)."""
    from spreadwatch.scoring import get_profile
    from spreadwatch.snapshot import Snapshot
    from spreadwatch.whatif import PendingStep, PlacementStep, simulate_add

    case = gen_pts.generate(seed)
    if api_refuses(case):
        return 0
    rs, pod = _replicaset(case)
    objects = [*gen.objects_of(case["cluster"]), rs]
    namespace = rs["metadata"]["namespace"]
    sim = simulate_add(Snapshot.from_objects(objects), f"replicaset/{namespace}/whatif", get_profile(profile_name),
                       STEPS)  # fmt: skip
    bound: list[dict[str, Any]] = []
    for step in sim.steps:
        (want,) = oracle.score(cluster_from_objects([*objects, *bound]), [pod])
        where = f"seed {seed} {profile_name} step {step.step}"
        if isinstance(step, PendingStep):
            assert want["candidates"] == [], (where, want)  # no node passes the real filters either
            assert sim.pending is step
            break
        assert isinstance(step, PlacementStep)
        assert dict(step.scores) == want["scores"], (where, dict(step.scores), want)
        bound.append(_bound(pod, step.step, step.node))
    else:
        # all replicas placed: the real filters left a node for each
        assert sim.pending is None
    return len(sim.steps)


@pytest.mark.parametrize("seed", range(N_CASES), ids=lambda s: f"seed{s}")
def test_v129_simulate_steps_are_the_real_plugin_s(pts_oracle: Any, seed: int) -> None:
    _check(pts_oracle, seed, "v1.29")


@pytest.mark.parametrize("seed", range(N_CASES // 2), ids=lambda s: f"seed{s}")
def test_v128_simulate_steps_are_the_real_plugin_s(oracle: Any, seed: int) -> None:
    _check(oracle, seed, "v1.28")
