"""The index's records and its state: what every part of :class:`~spreadwatch.index.SpreadIndex` reads.

:class:`IndexState` holds the cluster as the index keeps it (per namespace: pods, label groups, Services,
controllers, workloads and their anchor index; nodes, zones and the candidate groups) and the few
helpers every concern shares. The public API (:mod:`~spreadwatch.index.spread_index`) extends it; the
index's parts (workload tracking, pod counts, candidate sets, the Filter, report building, prediction,
comparison, safety, loading) are given what they read of it, :class:`IndexRecords` (:mod:`spreadwatch.index`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from spreadwatch.model import Controller, LabelMap, Node, Pod, PodTemplate, Service, WorkloadKey
from spreadwatch.report import CandidateLayout, Placement, ReportOptions, SpreadReport
from spreadwatch.report.forecast import Budget
from spreadwatch.report.safety import ScaleDown
from spreadwatch.scoring import Profile, SpreadSelector, WorkloadRef, ZoneKey
from spreadwatch.scoring.topology import SpreadPlan
from spreadwatch.scoring.topology_filter import FilterPlan, FilterState
from spreadwatch.scoring.topology_groups import CandidateGroups

__all__ = [
    "CandidateSet",
    "FilteredCandidates",
    "GroupsKey",
    "IndexRecords",
    "IndexSizes",
    "IndexState",
    "KeptParts",
    "LabelGroup",
    "LabelKey",
    "NamespaceState",
    "OwnForecasts",
    "Workload",
    "template_of",
]

LabelKey = LabelMap  # (an interned label map is its own key: hashed by content)


@dataclass(slots=True)
class LabelGroup:
    labels: Mapping[str, str]
    nodes: dict[str, int] = field(default_factory=dict)
    matches: list[WorkloadKey] | None = None
    epoch: int = -1  # the namespace epoch ``matches`` was computed at


class OwnForecasts(NamedTuple):
    """The safety forecasts' parts made from a workload's own pods and budgets alone (none reads the node
    loads): its budget, its next scale-down, the notes on bad input (index/safety.py)."""

    budget: Budget | None
    scale_down: ScaleDown | None
    notes: tuple[str, ...]


class KeptParts(NamedTuple):
    """What a refresh of a workload's stale prediction reuses from its last full build, none of it read from
    the node loads the prediction follows: the report before its prediction and forecasts (spreading, window,
    comparison), and its :class:`OwnForecasts` (None: an Error report has none)."""

    base: SpreadReport
    own: OwnForecasts | None


@dataclass(slots=True)
class Workload:
    ctrl: Controller
    ref: WorkloadRef
    pod: Pod | None = None
    standin: Controller | None = None
    selector: SpreadSelector | None = None
    skip: str = ""
    error: str = ""
    anchors: tuple[tuple[str, str], ...] | None = ()  # None: no anchor, tested against every new label set
    counts: dict[str, int] = field(default_factory=dict)
    report: SpreadReport | None = None
    selector_text: str = ""
    sig: int = -1  # id of the scheduling-constraint signature (candidate sets are cached per signature)
    plan: SpreadPlan | None = None  # PodTopologySpread (v1.29): the scoring constraints
    #: v1.29: the DoNotSchedule constraints (None: PodTopologySpread's Filter passes every node)
    hard: FilterPlan | None = None
    #: v1.29 with ``hard``: the candidates the Filter passed when the report was last built (index/hard_filter.py)
    filtered: FilteredCandidates | None = None
    multi: bool = False  # v1.29: the constraints count pods with different selectors
    plan_error: bool = False  # v1.29: ``error`` is the pod's own constraints' (a SelectorSpread profile skips it)
    compared: tuple[SpreadReport, SpreadReport, SpreadReport] | None = None  # (own, other, with comparison)
    #: the report ``report_for`` last returned (kept while the workload is dirty: what the operator's /metrics
    #: reads, never building one; ``SpreadIndex.published_report``)
    published: SpreadReport | None = None
    #: what a refresh of a stale prediction reuses from the last full build (None: the next build is full)
    kept: KeptParts | None = None
    #: the operator's check of the last new binding of one of its pods (``SpreadIndex.check_placement``)
    placement: Placement | None = None
    #: whether pods can count for this workload at all: no skip reason, no error, a non-empty selector (set with
    #: them, by :meth:`~spreadwatch.index.workloads.WorkloadTracking._prepare`; read on every pod event)
    counting: bool = False


@dataclass(slots=True)
class NamespaceState:
    pods: dict[str, Pod] = field(default_factory=dict)
    groups: dict[LabelKey, LabelGroup] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    controllers: dict[str, dict[str, Controller]] = field(default_factory=dict)
    workloads: dict[WorkloadKey, Workload] = field(default_factory=dict)
    anchor_index: dict[tuple[str, str], set[WorkloadKey]] = field(default_factory=dict)
    unanchored: set[WorkloadKey] = field(default_factory=set)
    #: anchor label -> the groups having it: an entry for exactly the keys of ``anchor_index``
    group_index: dict[tuple[str, str], set[LabelKey]] = field(default_factory=dict)
    epoch: int = 0  # bumped whenever a workload selector changes: invalidates every group's ``matches``
    labels: Mapping[str, str] = field(default_factory=dict)
    #: one ``(key, value)`` of each Service's selector -> the Services indexed under it (a pod can be selected
    #: only by Services indexed under one of its labels)
    services_by_label: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    service_order: dict[str, int] = field(default_factory=dict)  # Service name -> its position in ``services``
    service_seq: int = 0
    #: ReplicaSets by their controller's name (None: stale after a ReplicaSet change, rebuilt on demand)
    replicasets_by_owner: dict[str, list[Controller]] | None = None


@dataclass(frozen=True, slots=True)
class CandidateSet:
    names: frozenset[str]
    layout: CandidateLayout
    template: PodTemplate  # the constraints it was computed for (a node change re-checks one node against it)


class FilteredCandidates(NamedTuple):
    """A workload's candidates after PodTopologySpread's Filter (v1.29, DoNotSchedule constraints): the
    PreFilter state, the candidate groups and layout it passes (views of the shared ones, or those when it
    rejects nothing), how many candidates of the other filters it rejects (``missing``: for a missing key),
    and the counts the report's pods come from (its first constraint's, node -> pods, any node)."""

    state: FilterState
    groups: CandidateGroups
    layout: CandidateLayout
    rejected: int
    missing: int
    counts: Mapping[str, int]

    def passes(self, node: str) -> bool:
        """Whether ``node`` is a candidate the Filter passes. O(1)."""
        return self.groups.group_of.get(node) is not None


#: v1.29: the key of a candidate set's candidate groups: (signature id, scoring keys, hard keys it is split by)
GroupsKey = tuple[int, tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class IndexRecords:
    """What the index's parts read of its state (:mod:`spreadwatch.index`): the profile and options, the nodes,
    their zones and the namespaces — read, never written — and the candidate groups per candidate set, which
    a part fills as a report would (``group_candidates``). Views of the index's own dictionaries: current as
    they are. O(1)."""

    profile: Profile
    options: ReportOptions
    nodes: Mapping[str, Node]
    zones: Mapping[str, ZoneKey | None]
    namespaces: Mapping[str, NamespaceState]
    topo_groups: dict[GroupsKey, CandidateGroups]


@dataclass(frozen=True, slots=True)
class IndexSizes:
    """Object counts, for self-metrics."""

    nodes: int
    pods: int
    services: int
    controllers: int
    workloads: int
    label_groups: int
    candidate_sets: int


def template_of(w: Workload) -> PodTemplate:
    """The pod template a workload is scheduled with: its next pod's, else its controller's. O(1)."""
    return w.pod.template if w.pod is not None else w.ctrl.template


class IndexState:
    """The index's state (see the module docstring) and the helpers all its parts use. O(1) to create."""

    def __init__(self, profile: Profile, options: ReportOptions | None = None) -> None:
        self.profile = profile
        self.options = options or ReportOptions()
        self._ns: dict[str, NamespaceState] = {}
        self._nodes: dict[str, Node] = {}
        self._zones: dict[str, ZoneKey | None] = {}
        #: v1.29, per candidate set (signature id), scoring keys (and the hard constraints' keys it is split by)
        self._topo_groups: dict[GroupsKey, CandidateGroups] = {}
        self._sig_ids: dict[tuple[object, ...], int] = {}  # constraint signature -> small int (cheap to hash)
        self._dirty: set[WorkloadKey] = set()
        self._removed: set[WorkloadKey] = set()
        #: what the parts read of all this (the dictionaries above are never reassigned)
        self._records = IndexRecords(self.profile, self.options, self._nodes, self._zones, self._ns, self._topo_groups)

    def _ns_of(self, name: str) -> NamespaceState:
        ns = self._ns.get(name)
        if ns is None:
            ns = self._ns[name] = NamespaceState()
        return ns

    def _touch(self, w: Workload, key: WorkloadKey) -> None:
        w.report = None
        w.kept = None
        self._dirty.add(key)

