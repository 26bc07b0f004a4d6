"""Expected values for the operator's SpreadReports that do not come from spreadwatch: the real plugins.

The Go oracles of tests/oracle link kube-scheduler's own plugins (v1.28.15 SelectorSpread, v1.36.4
PodTopologySpread with the real NodeUnschedulable, TaintToleration, NodeAffinity and PodTopologySpread
filters). :func:`oracle_expectations` gives each workload's next pod — built from the dump as its controller
would create it: a Deployment's newest ReplicaSet's template with an ownerReference to it, a StatefulSet's
template with its update revision and next ordinal, a ReplicationController's template — to the oracle with
the whole dump, and :func:`check_against_oracle` compares a live report with the answer: the same candidate
nodes (their number, and every excluded node's filter), and every candidate's score derived from the report
(docs/report.md) equal to the plugin's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hack.oracle_client import Oracle, build, cluster_from_objects
from scheduler_helpers import derived_scores

from spreadwatch.scoring import Profile

__all__ = ["Expectation", "check_against_oracle", "next_pod", "oracle_expectations"]


Expectation = dict[str, Any]  # the oracle's result: candidates, scores, filtered, skipped
_REVISION = "deployment.kubernetes.io/revision"
#: the oracles' filter messages (kube-scheduler's reasons) -> the report's excludedNodes reason
_REASONS = (
    ("were unschedulable", "Unschedulable"),
    ("untolerated taint", "UntoleratedTaint"),
    ("node affinity/selector", "NodeAffinity"),
    ("pod topology spread constraints", "PodTopologySpread"),
)


def _owned(obj: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """A pod of the controller ``obj``'s template with ``labels``, controlled by ``obj``."""
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta.get("uid", ""),
           "controller": True}  # fmt: skip
    template = obj["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{meta['name']}-next", "namespace": meta["namespace"], "labels": dict(labels),
                         "ownerReferences": [ref]},
            "spec": template.get("spec") or {}}  # fmt: skip


def next_pod(items: Iterable[Mapping[str, Any]], kind: str, namespace: str, name: str) -> dict[str, Any]:
    """The pod the workload's controller would create next (see the module docstring)."""
    objs = [o for o in items if o["metadata"].get("namespace") == namespace]
    (workload,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    labels = dict(workload["spec"]["template"]["metadata"].get("labels") or {})
    if kind == "Deployment":
        owned = [
            o
            for o in objs
            if o["kind"] == "ReplicaSet"
            and any(r.get("controller") and r["name"] == name for r in o["metadata"].get("ownerReferences", []))
        ]
        newest = max(owned, key=lambda rs: int(rs["metadata"].get("annotations", {}).get(_REVISION, "0")))
        return _owned(newest, newest["spec"]["template"]["metadata"].get("labels") or {})  # fmt: skip
    if kind == "StatefulSet":
        labels["controller-revision-hash"] = (workload.get("status") or {}).get("updateRevision", "")
        labels["statefulset.kubernetes.io/pod-name"] = f"{name}-{workload['spec'].get('replicas', 1)}"
    return _owned(workload, labels)


@contextmanager
def _oracle(which: str) -> Iterator[Oracle]:
    with Oracle(build(which=which)) as o:
        yield o


def oracle_expectations(items: list[dict[str, Any]], workloads: Iterable[tuple[str, str, str]],
                        which: str = "") -> dict[tuple[str, str], Expectation]:  # fmt: skip
    """The oracle's candidates and scores of each workload's next pod (``which``: "" for the v1.28 SelectorSpread
    oracle, "pts" for v1.36 PodTopologySpread), the real filters picking the candidates."""
    cluster = cluster_from_objects(items)
    out = {}
    with _oracle(which) as o:
        for kind, namespace, name in workloads:
            (result,) = o.score(cluster, [next_pod(items, kind, namespace, name)])
            out[(kind, name)] = result
    return out


def check_against_oracle(report: Mapping[str, Any], expected: Expectation, labels: Mapping[str, Mapping[str, str]],
                         profile: Profile) -> None:  # fmt: skip
    """The live report has the oracle's candidates (their number, each excluded node's filter) and every
    candidate's derived score is the plugin's (all 0 when it skips)."""
    name = report["workload"]["name"]
    candidates = expected["candidates"]
    assert report["candidateNodes"] == len(candidates), (name, candidates, report["excludedNodes"])
    reasons = Counter(next((code for phrase, code in _REASONS if phrase in why), why)
                      for why in expected["filtered"].values())  # fmt: skip
    assert dict(report["excludedNodes"]) == dict(reasons), (name, expected["filtered"], report["excludedNodes"])
    assert report["nextPodSchedulable"] is bool(candidates), (name, report)
    derived = derived_scores(report, candidates, labels, profile)
    assert derived == expected["scores"], (name, derived, expected["scores"], report)
    assert report["skipped"] is expected["skipped"] or not candidates, (name, report["skipped"], expected["skipped"])
