"""kube-scheduler's own unit-test tables of the whole profile's plugins (tests/data/upstream/, see its README).

Each case runs the reference prediction path (``scoring/prediction.py``) with a scheduler profile of the one
plugin under test (no filter, the plugin's args from the case) on exactly the upstream nodes and pods, and
must give upstream's expected scores (0-100, the plugin's weight 1), its PreScore skip, or its PreScore error
(the prediction refuses the template). The ids carry the
plugin, the upstream test function and case name, and the expected scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.model import parse_pod
from spreadwatch.profile_args import load_profile
from spreadwatch.scoring.prediction import predict_pod
from spreadwatch.scoring.scheduler_profile import scheduler_profile
from spreadwatch.snapshot import Snapshot

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"
TABLES = ("noderesources.yaml", "tainttoleration.yaml", "imagelocality.yaml", "nodeaffinity.yaml")


def _pod(name: str, containers: list[dict[str, str]], node: str = "") -> dict[str, Any]:
    """st.MakePod(): one container per requests map (``{}``: no requests), bound to ``node``."""
    spec: dict[str, Any] = {"containers": [
        {"name": f"con{i}", "image": "pause", **({"resources": {"requests": dict(r)}} if r else {})}
        for i, r in enumerate(containers)
    ]}  # fmt: skip
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _node(name: str, capacity: dict[str, str]) -> dict[str, Any]:
    status = {"capacity": dict(capacity), "allocatable": dict(capacity)} if capacity else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def _spec_node(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A ``node_specs`` entry: labels, taints and status images as the upstream case sets them."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": spec.get("labels", {})},
            "spec": {"taints": spec.get("taints", [])}, "status": {"images": spec.get("images", [])}}  # fmt: skip


def _spec_pod(spec: dict[str, Any]) -> dict[str, Any]:
    """A ``pod_spec`` incoming pod (one container when the case gives none)."""
    full = {"containers": [{"name": "con0", "image": "pause"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "incoming", "namespace": "default"}, "spec": full}


def _profile(plugin: str, args: dict[str, Any]) -> Any:
    """A scheduler profile with ``plugin`` as its only score plugin (weight 1), its args, and no filter."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
        "plugins": {"multiPoint": {"disabled": [{"name": "*"}]}, "score": {"enabled": [{"name": plugin, "weight": 1}]}},
        "pluginConfig": [{"name": plugin, "args": args}] if args else [],
    }]}  # fmt: skip
    return scheduler_profile(config, "table")


def _cases() -> list[Any]:
    params = []
    for table in TABLES:
        doc = yaml.safe_load((DATA / table).read_text())
        for i, case in enumerate(doc["cases"]):
            plugin = case.get("plugin", doc["plugin"])
            expected = case["expected"]
            shown = expected if isinstance(expected, str) else ",".join(f"{n}={s}" for n, s in expected.items())
            params.append(pytest.param(plugin, case, id=f"{plugin}-{i:02d}-{case['test']}-{case['name']}-> {shown}"))
    return params


@pytest.mark.parametrize(("plugin", "case"), _cases())
def test_upstream_score_case(plugin: str, case: dict[str, Any]) -> None:
    if "node_specs" in case:
        names, nodes = list(case["node_specs"]), [_spec_node(n, s) for n, s in case["node_specs"].items()]
    else:
        names, nodes = list(case["nodes"]), [_node(n, c) for n, c in case["nodes"].items()]
    existing = [_pod(f"existing{i}", e["containers"], e["node"]) for i, e in enumerate(case.get("existing", []))]
    snapshot = Snapshot.from_objects([*nodes, *existing])
    pod = parse_pod(_spec_pod(case["pod_spec"]) if "pod_spec" in case else _pod("incoming", case["pod"]))
    prediction = predict_pod(pod, snapshot.nodes, snapshot.pods, snapshot, _profile(plugin, case["args"]),
                             load_profile("v1.29", None))  # fmt: skip
    if case["expected"] == "error":  # (upstream's PreScore fails: the prediction refuses the template)
        assert prediction.error.startswith("Invalid"), prediction
        return
    assert not prediction.error and set(prediction.feasible) == set(names)
    if case["expected"] == "skip":
        assert plugin not in prediction.plugins
        return
    assert {n: prediction.scores[n][plugin] for n in names} == case["expected"]


def test_every_table_case_is_run() -> None:
    assert len(_cases()) >= 60
