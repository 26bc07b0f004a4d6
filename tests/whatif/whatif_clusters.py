"""Small random clusters for the what-if property tests, and from-scratch reference computations.

The references never touch the incremental index: they rebuild a :class:`Snapshot` from API objects and
score with ``scoring.score_pod`` (the reference path), or load a fresh index for a report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from k8s_objects import controller, node, owner, pod, service
from spreadwatch.analysis import analyze_index
from spreadwatch.model import Pod, WorkloadKey
from spreadwatch.report import ReportOptions, SpreadReport
from spreadwatch.scoring import Profile, representative_pod, score_pod
from spreadwatch.snapshot import Snapshot

NS = "default"
KINDS = ("ReplicaSet", "Deployment", "StatefulSet", "ReplicationController")
REFS = {
    "ReplicaSet": "replicaset/default/web",
    "Deployment": "deployment/default/web",
    "StatefulSet": "statefulset/default/web",
    "ReplicationController": "rc/default/web",
}

_KIND_OF = {
    "replicaset": "ReplicaSet",
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "rc": "ReplicationController",
}


@dataclass(frozen=True)
class Cluster:
    kind: str
    objects: list[dict[str, Any]]

    @property
    def ref(self) -> str:
        return REFS[self.kind]

    def snapshot(self, extra: Sequence[dict[str, Any]] = ()) -> Snapshot:
        return Snapshot.from_objects([*self.objects, *extra])


def _workload_objects(kind: str, placements: Sequence[str]) -> list[dict[str, Any]]:
    labels = {"app": "web"}
    if kind == "Deployment":
        rs_labels = {"app": "web", "pod-template-hash": "abc"}
        objs = [
            controller("Deployment", "web", {"matchLabels": labels}, labels, replicas=len(placements)),
            controller(
                "ReplicaSet",
                "web-abc",
                {"matchLabels": rs_labels},
                rs_labels,
                replicas=len(placements),
                owners=[owner("Deployment", "web")],
                annotations={"deployment.kubernetes.io/revision": "1"},
            ),
        ]
        owners, pod_labels = [owner("ReplicaSet", "web-abc")], rs_labels
    elif kind == "ReplicationController":
        objs = [controller(kind, "web", labels, labels, replicas=len(placements))]
        owners, pod_labels = [owner(kind, "web")], labels
    else:
        objs = [controller(kind, "web", {"matchLabels": labels}, labels, replicas=len(placements))]
        owners, pod_labels = [owner(kind, "web")], labels
    for i, where in enumerate(placements):
        extra = {"statefulset.kubernetes.io/pod-name": f"web-{i}"} if kind == "StatefulSet" else {}
        objs.append(pod(f"web-{i}", {**pod_labels, **extra}, where, owners=owners))
    return objs


@st.composite
def clusters(draw: st.DrawFn, max_nodes: int = 6, max_pods: int = 6) -> Cluster:
    """Nodes in up to three zones (some without a zone, some cordoned), one workload ``web`` of any kind
    with pods on them, pods of another app, and maybe a Service selecting ``web``."""
    n_nodes = draw(st.integers(1, max_nodes))
    objects: list[dict[str, Any]] = []
    names = [f"n{i}" for i in range(n_nodes)]
    for name in names:
        zone = draw(st.sampled_from([None, "za", "zb", "zc"]))
        objects.append(node(name, zone, unschedulable=draw(st.integers(0, 5)) == 0))
    kind = draw(st.sampled_from(KINDS))
    placements = draw(st.lists(st.sampled_from(names), max_size=max_pods))
    objects += _workload_objects(kind, placements)
    for i, where in enumerate(draw(st.lists(st.sampled_from(names), max_size=3))):
        objects.append(pod(f"db-{i}", {"app": "db"}, where))
    if draw(st.booleans()):
        objects.append(service("web", {"app": "web"}))
    return Cluster(kind, objects)


def next_pod(snap: Snapshot, ref: str) -> Pod:
    k, ns, name = ref.split("/")
    ctrl = snap.controller(WorkloadKey(ns, _KIND_OF[k], name))
    assert ctrl is not None
    return representative_pod(ctrl, snap.controllers_in("ReplicaSet", ns))[0]


def bound_copy(template: Pod, name: str, node_name: str, ready_at: str | None = None) -> dict[str, Any]:
    """An API object of a replica like ``template`` bound to ``node_name`` (Ready since ``ready_at``, if given)."""
    owners = []
    if template.controller is not None:
        c = template.controller
        owners = [{"apiVersion": c.api_version, "kind": c.kind, "name": c.name, "uid": c.uid, "controller": True}]
    return pod(name, dict(template.labels), node_name, namespace=template.namespace, owners=owners, ready_at=ready_at)


def scratch_scores(snap: Snapshot, ref: str, profile: Profile) -> dict[str, int]:
    """Every candidate's score for the workload's next pod, from scratch (``score_pod``)."""
    result = score_pod(next_pod(snap, ref), snap.nodes, snap.pods, snap, profile)
    return dict(result.scores)


def spread_view(report: SpreadReport) -> dict[str, Any]:
    """A report's JSON form without its safety forecasts: the pods a simulation binds and the copies a scratch
    cluster binds differ in name, uid and times, which the scale-down ranking reads (the forecasts have their
    own proofs: tests/controllers, tests/report/test_forecast.py)."""
    out = report.to_dict()
    out.pop("scaleDown", None)
    out.pop("resilience", None)
    return out


def scratch_report(snap: Snapshot, ref: str, profile: Profile, options: ReportOptions | None = None) -> SpreadReport:
    """The workload's report from a freshly loaded index."""
    _, ns, name = ref.split("/")
    for report in analyze_index(snap, profile, options)[1]:
        if report.workload.namespace == ns and report.workload.name == name:
            return report
    raise AssertionError(f"{ref} has no report")
