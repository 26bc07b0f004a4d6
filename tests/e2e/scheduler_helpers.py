"""The real kube-scheduler in the e2e suite: its log, one placement at a time, and the check against spreadwatch.

:func:`place_one` is one step of every real-scheduler test: spreadwatch's report of the workload from a fresh
``kubectl get -o json`` dump (the prediction, taken just before), then the workload is scaled up by one, the
scheduler binds the new pod, and :class:`SchedulerLog` reads what each score plugin gave each node for that pod
(``--vmodule=schedule_one=10``: ``"Plugin scored node for pod" pod="ns/name" plugin="P" node="n" score=S``,
the plugin's normalised score times its weight, and ``"Calculated node's final score for pod"`` for every node
it scored, even when no plugin scores). :func:`place_or_pend` is the same step for workloads whose next pod
may stay Pending (PodTopologySpread's Filter): it waits for the binding or for the scheduler's
FailedScheduling event, and takes a single feasible node (the scheduler then scores nothing) as scored.
:func:`derived_scores` derives every candidate's score from the report alone, as docs/report.md promises (a
node listed in ``nodes`` has its score there, any other its zone's ``emptyNodeScore``, or the top-level one
without a zone). Given the scheduler's profile, the report carries the whole profile's prediction and
:func:`place_one` also keeps the reference prediction (every node's plugin scores, the filtered nodes) from
the same dump.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster
from kube_helpers import ControlPlane, wait_for
from kubernetes import client
from kubernetes import config as kube_config

from spreadwatch.analysis import WorkloadFilter, analyze_index, predict_workload
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import Profile
from spreadwatch.scoring.prediction import PodPrediction
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.snapshot import load_snapshot

__all__ = [
    "Placement",
    "SchedulerLog",
    "apply_objects",
    "derived_scores",
    "node_zone",
    "place_one",
    "place_or_pend",
    "workload_report",
]

KINDS = "nodes,namespaces,pods,services,rc,rs,sts,deploy,pv,pvc"
GA_ZONE, GA_REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
_SCORE_LINE = re.compile(
    r'"Plugin scored node for pod" pod="(?P<pod>[^"]+)" plugin="(?P<plugin>[^"]+)" node="(?P<node>[^"]+)" '
    r"score=(?P<score>-?\d+)"
)
_FINAL_LINE = re.compile(
    r'"Calculated node\'s final score for pod" pod="(?P<pod>[^"]+)" node="(?P<node>[^"]+)" score=(?P<score>-?\d+)'
)
_SCALE = {
    "Deployment": ("apps/v1", "deployments"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "ReplicaSet": ("apps/v1", "replicasets"),
    "ReplicationController": ("v1", "replicationcontrollers"),
}


@dataclass(frozen=True)
class SchedulerLog:
    """logs/kube-scheduler.log of a devcluster (appended to by every scheduler started there)."""

    path: Path

    def plugin_scores(self, pod: str) -> dict[str, dict[str, int]]:
        """plugin → node → weighted score the scheduler logged for pod ``ns/name`` (its last attempt). O(log)."""
        out: dict[str, dict[str, int]] = {}
        for match in _SCORE_LINE.finditer(self.path.read_text(errors="replace")):
            if match["pod"] == pod:
                out.setdefault(match["plugin"], {})[match["node"]] = int(match["score"])
        return out

    def final_scores(self, pod: str) -> dict[str, int]:
        """node → total score the scheduler logged for pod ``ns/name``: every node it scored (its last attempt;
        nothing when a single node was feasible, as the scheduler then skips scoring). O(log)."""
        out: dict[str, int] = {}
        for match in _FINAL_LINE.finditer(self.path.read_text(errors="replace")):
            if match["pod"] == pod:
                out[match["node"]] = int(match["score"])
        return out


@dataclass(frozen=True)
class Placement:
    """One scheduled replica: the report just before, the node chosen, the scores logged for its pod."""

    workload: str
    pod: str
    node: str
    report: dict[str, Any]
    derived: dict[str, int]  # candidate → score derived from the report (for the nodes the scheduler scored)
    logged: dict[str, dict[str, int]]  # plugin → node → weighted score from the scheduler's log
    candidates: frozenset[str] = frozenset()  # the report's candidate nodes (place_or_pend)
    scored: frozenset[str] = frozenset()  # the nodes the scheduler scored (place_or_pend; the one feasible node)
    failed: str = ""  # the scheduler's FailedScheduling message for the new pod ("" when none; node "" then)
    predicted: PodPrediction | None = None  # the reference prediction from the same dump (with a scheduler)

    @property
    def in_best_set(self) -> bool:
        return self.derived.get(self.node) == self.report["bestScore"]

    @property
    def in_predicted_set(self) -> bool:
        return self.predicted is not None and self.node in self.predicted.best_nodes

    def logged_by_node(self) -> dict[str, dict[str, int]]:
        """node → plugin → weighted score, as the scheduler logged them."""
        out: dict[str, dict[str, int]] = {}
        for plugin, scores in self.logged.items():
            for node, score in scores.items():
                out.setdefault(node, {})[plugin] = score
        return out


def apply_objects(cp: ControlPlane, objects: Sequence[Mapping[str, Any]]) -> None:
    """``kubectl apply`` a list of manifests (fields the Python client may not know, e.g. matchLabelKeys)."""
    cp.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))


def workload_report(cp: ControlPlane, profile: Profile, namespace: str, kind: str, name: str, tmp: Path,
                    scheduler: SchedulerProfile | None = None,
                    ) -> tuple[dict[str, Any], dict[str, dict[str, str]], PodPrediction | None]:  # fmt: skip
    """spreadwatch's report of one workload on a fresh dump of the cluster (with ``scheduler``: its prediction
    too), every node's labels, and the reference prediction (None without a scheduler)."""
    report, labels, _, predicted = _report_and_candidates(cp, profile, namespace, kind, name, tmp, scheduler)
    return report, labels, predicted


def _report_and_candidates(
    cp: ControlPlane, profile: Profile, namespace: str, kind: str, name: str, tmp: Path,
    scheduler: SchedulerProfile | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, str]], frozenset[str], PodPrediction | None]:  # fmt: skip
    """:func:`workload_report` and the report's candidate nodes by name (the index's candidate layout: after
    PodTopologySpread's Filter for a workload with DoNotSchedule constraints)."""
    dump = tmp / f"dump-{time.monotonic_ns()}.json"
    dump.write_text(cp.kubectl("get", KINDS, "-A", "-o", "json", timeout=120).stdout)
    snapshot = load_snapshot([dump])
    index, reports = analyze_index(snapshot, profile, ReportOptions(scheduler=scheduler), WorkloadFilter([namespace]))
    found = [r for r in reports if r.workload.kind == kind and r.workload.name == name]
    assert len(found) == 1, f"no single report for {kind} {namespace}/{name}: {[r.workload for r in reports]}"
    layout = index.candidate_layout(found[0].workload.key)
    candidates = frozenset(n for names in layout.by_zone.values() for n in names) if layout else frozenset()
    predicted = None
    if scheduler is not None:
        predicted = predict_workload(snapshot, f"{kind}/{namespace}/{name}", scheduler, profile)[1]
    items = json.loads(dump.read_text())["items"]
    labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in items if o["kind"] == "Node"}
    dump.unlink()
    return found[0].to_dict(), labels, candidates, predicted


def node_zone(labels: Mapping[str, str], profile: Profile) -> tuple[str, str] | None:
    """(zone, region) as the profile's reports name a node's zone, None for a zoneless node: the GA zone label
    for PodTopologySpread (v1.29); for SelectorSpread the beta labels when either is present, else the GA ones
    (a region alone is a zone)."""
    if profile.pod_topology_spread:
        return (labels[GA_ZONE], labels.get(GA_REGION, "")) if GA_ZONE in labels else None
    keys = (BETA_ZONE, BETA_REGION) if BETA_ZONE in labels or BETA_REGION in labels else (GA_ZONE, GA_REGION)
    zone, region = labels.get(keys[0], ""), labels.get(keys[1], "")
    return (zone, region) if zone or region else None


def derived_scores(report: Mapping[str, Any], nodes: Sequence[str], labels: Mapping[str, Mapping[str, str]],
                   profile: Profile) -> dict[str, int]:  # fmt: skip
    """The score of each of ``nodes`` derived from the report alone (docs/report.md)."""
    listed = {e["node"]: int(e["score"]) for e in report["nodes"]}
    zones = {(z["zone"], z["region"]): int(z["emptyNodeScore"]) for z in report["zones"]}
    out = {}
    for node in nodes:
        if node in listed:
            out[node] = listed[node]
            continue
        zone = node_zone(labels[node], profile)
        out[node] = int(report["emptyNodeScore"]) if zone is None else zones[zone]
    return out


def _scale(api: client.ApiClient, namespace: str, kind: str, name: str, replicas: int) -> None:
    group_version, plural = _SCALE[kind]
    prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    api.call_api(f"{prefix}/namespaces/{namespace}/{plural}/{name}/scale", "PATCH",
                 header_params={"Content-Type": "application/merge-patch+json"},
                 body={"spec": {"replicas": replicas}}, _preload_content=False)  # fmt: skip


def _bound_pods(api: client.ApiClient, namespace: str, selector: str) -> dict[str, str]:
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector).items
    return {p.metadata.name: p.spec.node_name or "" for p in pods if p.metadata.deletion_timestamp is None}


def place_one(cp: ControlPlane, api: client.ApiClient, log: SchedulerLog, profile: Profile, namespace: str,
              kind: str, name: str, selector: str, tmp: Path,
              scheduler: SchedulerProfile | None = None) -> Placement:  # fmt: skip
    """Predict, scale the workload up by one, wait for the scheduler to bind the new pod, read its scores
    (``scheduler``: the profile it runs, for the whole-profile prediction)."""
    report, labels, predicted = workload_report(cp, profile, namespace, kind, name, tmp, scheduler)
    before = _bound_pods(api, namespace, selector)
    assert all(before.values()), f"unbound pods of {kind} {name} before scaling: {before}"
    _scale(api, namespace, kind, name, len(before) + 1)

    def new_bound() -> tuple[str, str] | None:
        fresh = {p: n for p, n in _bound_pods(api, namespace, selector).items() if p not in before}
        return next(iter(fresh.items())) if fresh and all(fresh.values()) else None

    pod, node = wait_for(new_bound, timeout=120, message=f"the scheduler to bind a new pod of {kind} {name}")
    if predicted is not None and len(predicted.feasible) == 1:  # one feasible node: the scheduler scores nothing
        logged: dict[str, dict[str, int]] = {}
    else:
        logged = wait_for(lambda: log.plugin_scores(f"{namespace}/{pod}") or None, timeout=30,
                          message=f"the scheduler's plugin scores for {namespace}/{pod} in {log.path}")  # fmt: skip
    scored = sorted({n for scores in logged.values() for n in scores})
    return Placement(name, pod, node, report, derived_scores(report, scored, labels, profile), logged,
                     predicted=predicted)


def failed_scheduling(api: client.ApiClient, namespace: str, pod: str) -> str:
    """The message of the newest FailedScheduling event of a pod ("" when none)."""
    events = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={pod}").items
    failed = [e for e in events if e.reason == "FailedScheduling"]
    return failed[-1].message or "FailedScheduling" if failed else ""


def place_or_pend(cp: ControlPlane, api: client.ApiClient, log: SchedulerLog, profile: Profile, namespace: str,
                  kind: str, name: str, selector: str, tmp: Path) -> Placement:  # fmt: skip
    """:func:`place_one` for workloads whose next pod may stay Pending: predict (with the candidate set), scale up
    by one, and wait for the new pod to be bound or for the scheduler's FailedScheduling event about it. A
    bound pod's scored nodes are those of its final-score log lines, or, when the scheduler found one feasible
    node (and so scored none), that node."""
    report, labels, candidates, _ = _report_and_candidates(cp, profile, namespace, kind, name, tmp)
    before = _bound_pods(api, namespace, selector)
    assert all(before.values()), f"unbound pods of {kind} {name} before scaling: {before}"
    _scale(api, namespace, kind, name, len(before) + 1)

    def outcome() -> tuple[str, str, str] | None:
        fresh = {p: n for p, n in _bound_pods(api, namespace, selector).items() if p not in before}
        if not fresh:
            return None
        pod, node = next(iter(fresh.items()))
        failed = failed_scheduling(api, namespace, pod)
        return (pod, node, failed) if node or failed else None

    pod, node, failed = wait_for(outcome, timeout=120,
                                 message=f"the scheduler to bind or refuse a pod of {kind} {name}")  # fmt: skip
    if not node:
        return Placement(name, pod, "", report, {}, {}, candidates, frozenset(), failed)
    if report["candidateNodes"] == 1 and node in candidates:
        scored, logged = frozenset({node}), log.plugin_scores(f"{namespace}/{pod}")  # (no scoring: nothing logged)
    else:
        final = wait_for(lambda: log.final_scores(f"{namespace}/{pod}") or None, timeout=30,
                         message=f"the scheduler's final scores for {namespace}/{pod} in {log.path} (none: it "
                                 f"found one feasible node, {node}, where the report has "
                                 f"{report['candidateNodes']} candidates?)")  # fmt: skip
        scored, logged = frozenset(final), log.plugin_scores(f"{namespace}/{pod}")
    derived = derived_scores(report, sorted(scored & candidates), labels, profile)
    return Placement(name, pod, node, report, derived, logged, candidates, scored, failed)


@contextlib.contextmanager
def scheduler_plane(state_dir: Path) -> Iterator[tuple[ControlPlane, client.ApiClient]]:
    """A private control plane in ``state_dir`` with both kube-scheduler builds at hand (none started), and an
    admin client; the scheduler, the client and the control plane are stopped at the end."""
    env_bin = os.environ.get("SPREADWATCH_CONTROLPLANE_BIN")
    bin_dir = Path(env_bin) if env_bin else state_dir / "bin"
    try:
        if not env_bin:
            devcluster.ensure_tools(bin_dir)
        for version in devcluster.SCHEDULER_VERSIONS:
            devcluster.ensure_scheduler(bin_dir, version)
        started = devcluster.up(state_dir, bin_dir=bin_dir, ports="auto", die_with_parent=True)
    except devcluster.ClusterError as err:
        devcluster.down(state_dir, keep_logs=True)
        pytest.fail(f"control plane did not start: {err}\nlogs: {state_dir / 'logs'}", pytrace=False)
    env = dict(os.environ, KUBECONFIG=str(started.kubeconfig), HOME=str(state_dir / "home"))
    cp = ControlPlane(dir=state_dir, kubeconfig=str(started.kubeconfig), server=started.server, bin_dir=bin_dir,
                      log_dir=started.log_dir, ca_file=started.pki_dir / "ca.crt", env=env)  # fmt: skip
    api = kube_config.new_client_from_config(config_file=cp.kubeconfig)
    try:
        yield cp, api
    finally:
        devcluster.stop_scheduler(state_dir)
        api.close()
        devcluster.down(state_dir, keep_logs=False)
