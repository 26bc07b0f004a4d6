"""Offline analysis: scores and reports from a snapshot (``spreadwatch score|analyze|explain``).

``analyze`` feeds the snapshot into the same :class:`~spreadwatch.index.SpreadIndex` the operator keeps,
so offline and live reports are computed by one code path. ``score_objects`` scores one incoming pod
directly (the reference path of kube-scheduler's plugin).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from spreadwatch.errors import WorkloadNotFoundError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import WORKLOAD_KINDS, Controller, Pod, WorkloadKey, parse_pod
from spreadwatch.report import Health, ReportOptions, SpreadReport
from spreadwatch.scoring import (
    DEFAULT_PROFILE,
    PodScores,
    Profile,
    get_profile,
    representative_pod,
    score_pod,
)
from spreadwatch.scoring.next_pod import next_claims
from spreadwatch.scoring.prediction import PodPrediction, predict_pod
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.scoring.window import WindowOdds, nodes_to_score
from spreadwatch.selectors import Selector
from spreadwatch.snapshot import Snapshot

__all__ = [
    "WorkloadExplanation",
    "WorkloadFilter",
    "analyze_index",
    "explain_workload",
    "find_workload",
    "predict_incoming",
    "predict_workload",
    "score_objects",
]


def score_objects(
    objects: Sequence[Mapping[str, Any]],
    pod: Mapping[str, Any],
    *,
    profile: str | Profile = DEFAULT_PROFILE,
    nodes: Sequence[str] | None = None,
) -> PodScores:
    """Score the incoming ``pod`` against a cluster given as API objects.

    With ``nodes`` exactly those nodes are the candidates, in that order, unfiltered; otherwise the
    scheduler's label/taint filters choose them (in snapshot order).
    """
    prof = profile if isinstance(profile, Profile) else get_profile(profile)
    snap = Snapshot.from_objects(objects)
    return score_pod(parse_pod(pod), snap.nodes, snap.pods, snap, prof, nodes)


@dataclass(frozen=True, slots=True)
class WorkloadFilter:
    """Which workloads a command reports (``-n``/``-l``): those in ``namespaces`` (empty: all) whose labels
    match ``selector`` (None: all)."""

    namespaces: Sequence[str] = ()
    selector: Selector | None = None

    def select(self, snapshot: Snapshot, reports: list[SpreadReport]) -> list[SpreadReport]:
        """The reports of the workloads kept. O(reports + controllers)."""
        if self.namespaces:
            wanted = set(self.namespaces)
            reports = [r for r in reports if r.workload.namespace in wanted]
        if self.selector is not None:
            selector = self.selector
            labels = {c.key: c.labels for c in snapshot.controllers}
            reports = [r for r in reports if selector.matches(labels.get(r.workload.key, {}))]
        return reports


def analyze_index(
    snapshot: Snapshot, profile: Profile, options: ReportOptions | None = None, only: WorkloadFilter | None = None
) -> tuple[SpreadIndex, list[SpreadReport]]:
    """The loaded index and the report of every workload in the snapshot that ``only`` keeps (default: all),
    sorted by namespace, kind and name. O(objects + workloads × candidate nodes)."""
    index = SpreadIndex(profile, options or ReportOptions())
    index.load(snapshot)
    reports = index.reports()
    return index, (only.select(snapshot, reports) if only is not None else reports)


_KIND_ALIASES = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "replicationcontroller": "ReplicationController",
    "replicationcontrollers": "ReplicationController",
    "rc": "ReplicationController",
}


def find_workload(snapshot: Snapshot, ref: str) -> Controller:
    """Resolve ``KIND/NAMESPACE/NAME`` (kind case-insensitive, kubectl short names accepted)."""
    parts = ref.split("/")
    if len(parts) != 3 or not all(parts):
        raise WorkloadNotFoundError(f"workload {ref!r}: expected KIND/NAMESPACE/NAME, e.g. deployment/default/web")
    kind = _KIND_ALIASES.get(parts[0].lower())
    if kind is None:
        raise WorkloadNotFoundError(f"workload {ref!r}: kind must be one of {', '.join(WORKLOAD_KINDS)}")
    ctrl = snapshot.controller(WorkloadKey(parts[1], kind, parts[2]))
    if ctrl is None:
        raise WorkloadNotFoundError(f"workload {ref!r}: no {kind} {parts[1]}/{parts[2]} in the snapshot")
    return ctrl


@dataclass(frozen=True, slots=True)
class WorkloadExplanation:
    """Everything ``explain`` prints: the workload, its next pod's scores and its report."""

    workload: Controller
    scores: PodScores | None
    report: SpreadReport
    window: WindowOdds | None = None  # the scheduler's window for the next pod (None: not scored)
    all_nodes: int = 0  # nodes in the cluster (the window's n)
    percentage: int = 0  # percentageOfNodesToScore in effect (0: adaptive)


#: window starts ``explain`` averages at least (every start, exactly, in clusters up to this many nodes)
EXPLAIN_WINDOW_SAMPLES: Final = 1000


def explain_workload(
    snapshot: Snapshot, ref: str, profile: Profile, options: ReportOptions | None = None
) -> WorkloadExplanation:
    """Score the workload's next pod node by node, and build its report."""
    ctrl = find_workload(snapshot, ref)
    opts = options or ReportOptions()
    index = SpreadIndex(profile, opts)
    index.load(snapshot)
    report = index.report_for(ctrl.key)
    if report is None:  # a ReplicaSet owned by a Deployment: explain it as its own pods' spread
        report = index.report_of_controller(ctrl)
    scores: PodScores | None = None
    if ctrl.selector_error is None and report.health is not Health.ERROR:
        replicasets = snapshot.controllers_in("ReplicaSet", ctrl.namespace)
        pod, _ = representative_pod(ctrl, replicasets)
        # the index is the lookup: it also resolves a Deployment's stand-in ReplicaSet by name
        scores = score_pod(pod, snapshot.nodes, snapshot.pods, index, profile)
    model = index.window_model(ctrl.key)
    window = model.odds(max(opts.window_samples, EXPLAIN_WINDOW_SAMPLES)) if model is not None else None
    percentage = profile.score_percentage if opts.score_percentage is None else opts.score_percentage
    return WorkloadExplanation(ctrl, scores, report, window, len(snapshot.nodes), percentage)


def _window(snapshot: Snapshot, spread: Profile, percentage: int | None) -> int:
    """Nodes the scheduler scores per pod in the snapshot (``percentage``: an override of the profile's)."""
    return nodes_to_score(len(snapshot.nodes), spread.score_percentage if percentage is None else percentage)


def predict_incoming(
    snapshot: Snapshot, pod: Pod, scheduler: SchedulerProfile, spread: Profile, new_claims: Sequence[str] = (),
    percentage: int | None = None,
) -> PodPrediction:  # fmt: skip
    """kube-scheduler's whole profile for an incoming pod over the snapshot (the reference path:
    ``scoring/prediction.py``; ``percentage``: percentageOfNodesToScore, default the profile's).
    O(pods × terms + nodes × plugins)."""
    window = _window(snapshot, spread, percentage)
    return predict_pod(pod, snapshot.nodes, snapshot.pods, snapshot, scheduler, spread, new_claims, window)


def predict_workload(
    snapshot: Snapshot, ref: str, scheduler: SchedulerProfile, spread: Profile, percentage: int | None = None,
    scored: Collection[str] | None = None,
) -> tuple[Controller, PodPrediction]:  # fmt: skip
    """The whole profile's prediction for a workload's next pod (``KIND/NAMESPACE/NAME``), on the reference
    path: its representative pod, and for a StatefulSet the claims its controller creates for it (``scored``:
    score only these feasible nodes, the scheduler's window)."""
    ctrl = find_workload(snapshot, ref)
    if ctrl.selector_error is not None:
        return ctrl, PodPrediction((), {}, {}, {}, error=f"InvalidSelector: {ctrl.selector_error}")
    pod, standin = representative_pod(ctrl, snapshot.controllers_in("ReplicaSet", ctrl.namespace))
    cluster: Any = snapshot
    if standin is not None and snapshot.controller(standin.key) is None:
        cluster = _WithStandin(snapshot, standin)
    window = _window(snapshot, spread, percentage)
    return ctrl, predict_pod(pod, snapshot.nodes, snapshot.pods, cluster, scheduler, spread, next_claims(ctrl),
                             window, scored)  # fmt: skip


class _WithStandin:
    """A snapshot that also finds a Deployment's stand-in ReplicaSet (no ReplicaSet of it is in the snapshot)."""

    def __init__(self, snapshot: Snapshot, standin: Controller) -> None:
        self._snapshot = snapshot
        self._standin = standin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._snapshot, name)

    def controllers_in(self, kind: str, namespace: str) -> list[Controller]:
        found = self._snapshot.controllers_in(kind, namespace)
        if kind == "ReplicaSet" and namespace == self._standin.namespace:
            return [*found, self._standin]
        return found

    def controller(self, key: WorkloadKey) -> Controller | None:
        return self._standin if key == self._standin.key else self._snapshot.controller(key)
