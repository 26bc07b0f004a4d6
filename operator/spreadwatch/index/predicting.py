"""The whole scheduler profile's prediction of each workload's next pod, from the index's incremental state.

:class:`Predictor` adds kube-scheduler's other plugins to each report (the reference path is
``scoring/prediction.py``; a property test keeps the two equal). It is one part of
:class:`~spreadwatch.index.SpreadIndex`, told of each change by it, and keeps, event by event:

* :class:`~spreadwatch.index.loads.NodeLoads`: per node allocatable and the summed requests of the pods the
  scheduler's cache holds there, as numpy arrays by node slot;
* :class:`~spreadwatch.index.images.NodeImages`: the image names of the nodes and their sizes;
* :class:`~spreadwatch.index.affinity_pods.AffinityPods`: the pods with pod affinity terms, anchored;
* PersistentVolumeClaims, PersistentVolumes, which Namespaces exist, and the pods nominated to a node.

A workload's prediction is computed with its report, over every node at once in vector arithmetic: the
spreading candidates (NodeUnschedulable, TaintToleration, NodeAffinity, as the report has them), then NodePorts,
NodeResourcesFit, VolumeBinding, VolumeZone and InterPodAffinity as masks in the profile's order (each excluded
node counted under the first that rejects it); then every score plugin's normalised score times its weight on
the feasible nodes, PodTopologySpread from the spreading groups (regrouped only when the other filters leave
out some candidates). Per report O(nodes) in numpy (a few dozen vector operations on arrays of a few thousand)
plus O(busy nodes + matching affinity groups) in Python; per-pod vectors (taint counts, preferred node
affinity, label codes) are cached until a node changes.

**Freshness.** A workload's own changes dirty its report (and so its prediction) as ever. Other workloads'
pods change the loads every prediction reads: each change bumps :attr:`Predictor.prediction_epoch`,
and :meth:`stale_predictions` hands the writer a bounded batch of workloads whose prediction is older, in
turn, each call (the writer collects once a cycle, about every second): a prediction lags the cluster by at
most the time to go round every workload in batches. Such a rebuild is a refresh: the façade keeps from the
last full build everything the node loads do not change (the spreading report, its comparison, the forecasts'
own parts: ``state.KeptParts``) and redoes only the prediction and the room for replacements (a third of a full
build's cost). ``analyze`` builds every report from one state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from types import MappingProxyType
from typing import Final, TypeVar, cast

import msgspec
import numpy as np
import numpy.typing as npt

from spreadwatch.index.affinity_pods import AffinityPods
from spreadwatch.index.images import NodeImages
from spreadwatch.index.loads import Int64s, NodeLoads, needs_key
from spreadwatch.index.prediction_tables import HEAD, ShapeTable, split_classes
from spreadwatch.index.state import CandidateSet, FilteredCandidates, IndexRecords, Workload, template_of
from spreadwatch.model import (
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodTemplate,
    WorkloadKey,
)
from spreadwatch.model.spec_fields import is_scalar_resource
from spreadwatch.report import (
    PLACEMENT_OUTCOMES,
    Outcome,
    SpreadReport,
    classify_placement,
    error_report,
)
from spreadwatch.report.forecast import RoomCounts
from spreadwatch.report.prediction import PredictedNode, Prediction
from spreadwatch.scoring import ZoneKey
from spreadwatch.scoring.candidates import exclusion_reason, node_term_matches
from spreadwatch.scoring.filtered_groups import GroupOfView
from spreadwatch.scoring.image_locality import IMAGE_LOCALITY
from spreadwatch.scoring.next_pod import next_claims
from spreadwatch.scoring.node_affinity_score import NODE_AFFINITY, preferred_node_score
from spreadwatch.scoring.node_ports import NODE_PORTS, ports_conflict
from spreadwatch.scoring.pod_affinity import INTER_POD_AFFINITY, AffinityTerm, IncomingTerms, incoming_terms, term_of
from spreadwatch.scoring.prediction import (
    DYNAMIC_RESOURCES,
    NODE_UNSCHEDULABLE,
    POD_TOPOLOGY_SPREAD,
    node_affinity_names,
    partial_reasons,
    template_error,
)
from spreadwatch.scoring.prediction_window import few_hit_probability, hit_probability, prefix_gaps
from spreadwatch.scoring.resource_fit import (
    BALANCED_ALLOCATION,
    MAX_NODE_SCORE,
    MOST_ALLOCATED,
    NODE_RESOURCES_FIT,
    REQUESTED_TO_CAPACITY_RATIO,
    balanced_skips,
    fit_terms,
    pod_request,
)
from spreadwatch.scoring.scheduler_profile import SchedulerProfile
from spreadwatch.scoring.taint_score import TAINT_TOLERATION, intolerable_taints, prefer_no_schedule_tolerations
from spreadwatch.scoring.topology_groups import CandidateGroups, GroupScores, group_candidates, score_groups
from spreadwatch.scoring.volumes import VOLUME_BINDING, VOLUME_RESTRICTIONS, VOLUME_ZONE, VolumePlan, plan_volumes

__all__ = ["Predictor"]

Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]
#: the spreading candidate reasons as the filter plugins that give them
_PLUGIN_OF_REASON: Final = {
    "Unschedulable": NODE_UNSCHEDULABLE,
    "UntoleratedTaint": TAINT_TOLERATION,
    "NodeAffinity": NODE_AFFINITY,
}
_CACHE_LIMIT: Final = 2048  # entries of each per-pod vector cache (cleared when full)
_TABLE_LIMIT: Final = 64  # shape tables kept (cleared when full; ~0.5 MiB each at 5,000 nodes)
#: feasible sets' PodTopologySpread groups, and groups' slot vectors, kept (cleared when full; ~40-80 KB each at
#: 5,000 nodes). Their own tables, not the per-node vectors' (2,048, kept until a node changes): under churn the
#: feasible sets change with the loads; 4,000 pod events left 442 there, ~6 MiB at scale 0.3.
_GROUPS_CACHE: Final = 64
_PROBABILITY_DIGITS: Final = 4  # as the spreading report's probabilities
_ROOM_CACHE: Final = 256  # entries of each room cache (cleared when full; a copies vector ~8 bytes a node)
_FEW_BEST: Final = 16  # best nodes up to which the window's probability is computed in Python
#: workloads whose stale prediction one call of :meth:`Predictor.stale_predictions` hands over
REFRESH_BATCH: Final = 200


#: equal breakdowns, pairs, listed nodes and excluded counts: one object (cleared when large)
_SHARED: dict[object, object] = {}
_SHARED_LIMIT: Final = 50_000  # (an entry and its object: ~100-300 bytes; 200,000 allowed tens of MiB in a long churn)


_T = TypeVar("_T")
_K = TypeVar("_K")
_E = TypeVar("_E", bound=tuple[object, ...])


def _shared(value: _T) -> _T:
    """``value``, or the equal one met before (a report's prediction keeps few distinct parts). O(size)."""
    found = _SHARED.get(value)
    if found is not None:
        return found  # type: ignore[return-value]
    if len(_SHARED) >= _SHARED_LIMIT:
        _SHARED.clear()
    _SHARED[value] = value
    return value


def _shared_breakdown(plugins: tuple[str, ...], values: tuple[int, ...]) -> tuple[tuple[str, int], ...]:
    """A node's (plugin, weighted score) pairs, shared by equal content. O(1) when met before, else O(plugins)."""
    key = ("breakdown", plugins, values)
    found = _SHARED.get(key)
    if found is None:
        found = _shared(tuple([_shared(pair) for pair in zip(plugins, values, strict=True)]))
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        _SHARED[key] = found
    return found  # type: ignore[return-value]


def _shared_counts(counts: dict[str, int]) -> Mapping[str, int]:
    """Excluded-node counts, shared by equal content (read-only). O(plugins)."""
    key = tuple(counts.items())
    found = _SHARED.get(("counts", key))
    if found is None:
        found = MappingProxyType(counts)
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        _SHARED[("counts", key)] = found
    return found  # type: ignore[return-value]


def _put(cache: dict[_K, _E], key: _K, entry: _E, limit: int) -> None:
    """Store ``entry`` (a tuple whose first item is the epoch it was made at) under ``key`` in one of the
    per-epoch caches. Epochs never recur (node changes, load versions and slots only grow), so an entry of
    another epoch can never be read again: all are dropped when the epoch moves (at the envelope a stale shape
    table holds ~0.5 MiB, a copies vector 40 KB), and all when ``limit`` are held. Every entry shares one
    epoch, so the first tells. O(1) amortised."""
    if cache and (len(cache) >= limit or next(iter(cache.values()))[0] != entry[0]):
        cache.clear()
    cache[key] = entry


def _go_half(values: Int64s) -> Int64s:
    """Go's ``x / 2`` on int64 (truncated toward zero), elementwise."""
    return np.where(values >= 0, values // 2, -((-values) // 2))


class Predictor:
    """Reports with the whole profile's prediction (see the module docstring). O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`); ``candidate_set`` (a workload's
    candidate set), ``window_size`` (nodes the scheduler scores per pod), ``term_counts`` (v1.29, per constraint,
    node -> matching pods) and ``node_order`` (the scheduler's node order). The index tells it each change after its
    own state took it.
    """

    def __init__(
        self,
        records: IndexRecords,
        candidate_set: Callable[[Workload], CandidateSet],
        window_size: Callable[[], int],
        term_counts: Callable[[Workload], list[dict[str, int]]],
        node_order: Callable[[], tuple[str, ...]],
    ) -> None:
        self.profile, self.options = records.profile, records.options
        self._nodes, self._zones, self._ns = records.nodes, records.zones, records.namespaces
        self._topo_groups = records.topo_groups
        self._candidate_set, self._window_size = candidate_set, window_size
        self._term_counts, self._node_order = term_counts, node_order
        self._loads = NodeLoads()
        self._images = NodeImages()
        self._affinity = AffinityPods()
        self._claims: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self._volumes: dict[str, PersistentVolume] = {}
        self._namespace_records: dict[str, dict[str, str] | object] = {}
        self._nominated: set[tuple[str, str]] = set()
        scheduler = self.options.scheduler
        #: the profile predicted with (None: no prediction; only the PodTopologySpread profile v1.29 has one)
        self.scheduler: SchedulerProfile | None = scheduler if self.profile.pod_topology_spread else None
        #: placements checked against the prediction, by outcome (``predicted_outcome``)
        self.predicted_placements: dict[str, int] = dict.fromkeys(PLACEMENT_OUTCOMES, 0)
        #: bumped whenever something every prediction reads changes (loads, nodes, volumes, nominations)
        self.prediction_epoch = 0
        self._node_epoch = 0  # bumped on node changes: the per-node vector caches compare it
        self._built_epoch: dict[WorkloadKey, int] = {}
        self._refresh_turn: list[WorkloadKey] = []
        self._vectors: dict[tuple[object, ...], tuple[tuple[int, int], object]] = {}
        self._tables: dict[tuple[object, ...], tuple[tuple[int, int, int], CandidateSet, ShapeTable]] = {}
        self._resource_vectors: dict[tuple[object, ...], tuple[tuple[int, int, int], tuple[Int64s, Int64s | None]]] = {}
        #: per (topology keys, feasible set): PodTopologySpread's groups of those nodes and each slot's group
        self._feasible_group_cache: dict[tuple[object, ...], tuple[tuple[int, int],
                                                                   tuple[CandidateGroups, Int64s]]] = {}  # fmt: skip
        #: per groups object (by id, the object kept): each slot's group
        self._group_slot_cache: dict[int, tuple[tuple[int, int], CandidateGroups, Int64s]] = {}
        #: per representative pod (kept: its id is not reused while cached), its plan and skip: its shape table's key
        self._shape_keys: dict[int, tuple[Pod, object, str, tuple[str, ...] | None, object, tuple[object, ...]]] = {}
        #: the workload whose report is being built, its candidate groups and PodTopologySpread scores
        self._report_scores: tuple[Workload, CandidateGroups, GroupScores] | None = None
        #: the copies of a pod each node takes, per (requests, fit args), at (node epoch, loads version, slots)
        self._copies: dict[tuple[object, ...], tuple[tuple[int, int, int], Int64s]] = {}
        #: the room per (candidate set, requests, fit args): its epoch, the set (ids are reused), the counts
        self._rooms: dict[tuple[object, ...], tuple[tuple[int, int, int], CandidateSet, RoomCounts]] = {}

    # --- events -------------------------------------------------------------------------------------------

    def _bump(self) -> None:
        self.prediction_epoch += 1

    def node_applied(self, old: Node | None, node: Node) -> None:
        """A node added or changed (``old``: its previous record). O(1) unless what a prediction reads of it
        changed."""
        if self.scheduler is None:  # (no prediction: none of its state is kept)
            return
        if old is None or (old.labels, old.taints, old.unschedulable, old.allocatable, old.images) != (
            node.labels, node.taints, node.unschedulable, node.allocatable, node.images,
        ):  # fmt: skip
            self._loads.set_node(node.name, node)
            self._images.node_changed(old, node)
            if old is None:
                self._images.count_changed()
            self._node_epoch += 1
            self._bump()

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A node's change (``new`` None: ``old`` removed; additions and changes: :meth:`node_applied`)."""
        if new is None and old is not None and self.scheduler is not None:
            self._loads.set_node(old.name, None)
            self._images.node_changed(old, None)
            self._images.count_changed()
            self._node_epoch += 1
            self._bump()

    def pod_changed(self, old: Pod | None, new: Pod | None) -> None:
        """A pod added or changed (``old``: its previous record), or deleted (``new`` None): the loads, the
        affinity groups, the nominations. O(1)."""
        if self.scheduler is None:
            return
        if old is not None and new is not None and (
            old.node_name, old.phase, old.deleting, old.needs, old.labels, old.template, old.nominated
        ) == (new.node_name, new.phase, new.deleting, new.needs, new.labels, new.template, new.nominated):
            return
        self._loads.pod_changed(old, new)
        self._affinity.pod_changed(old, new)
        for pod, keep in ((old, False), (new, True)):
            if pod is not None:
                key = (pod.namespace, pod.name)
                if keep and pod.nominated and not pod.node_name:
                    self._nominated.add(key)
                else:
                    self._nominated.discard(key)
        self._bump()

    def pods_loaded(self, pods: Sequence[Pod]) -> None:
        """Every pod of a fresh load, in bulk (the label groups took them without the event path)."""
        if self.scheduler is None:
            return
        self._loads.add_all(pods)
        self._affinity.add_all(pods)
        self._nominated.update((p.namespace, p.name) for p in pods if p.nominated and not p.node_name)
        self._bump()

    def apply_storage(self, record: PersistentVolumeClaim | PersistentVolume) -> None:
        """A claim or volume added or changed. O(1)."""
        if isinstance(record, PersistentVolumeClaim):
            self._claims[(record.namespace, record.name)] = record
        else:
            self._volumes[record.name] = record
        self._bump()

    def remove_storage(self, kind: str, namespace: str, name: str) -> bool:
        """A claim or volume deleted; False for another kind. O(1)."""
        if kind == "PersistentVolumeClaim":
            self._claims.pop((namespace, name), None)
        elif kind == "PersistentVolume":
            self._volumes.pop(name, None)
        else:
            return False
        self._bump()
        return True

    def namespace_seen(self, name: str, labels: Mapping[str, str] | None) -> None:
        """A Namespace added or changed (``labels``), or deleted (None). O(1)."""
        if labels is None:
            self._namespace_records.pop(name, None)
        else:
            self._namespace_records[name] = dict(labels)
        self._bump()

    def storage_keys(self, kind: str) -> set[tuple[str, str]] | None:
        """``object_keys`` of claims and volumes (None for another kind). O(records)."""
        if kind == "PersistentVolumeClaim":
            return set(self._claims)
        if kind == "PersistentVolume":
            return {("", name) for name in self._volumes}
        return None

    # --- freshness ----------------------------------------------------------------------------------------

    def stale_predictions(self, limit: int = REFRESH_BATCH) -> set[WorkloadKey]:
        """Up to ``limit`` workloads whose report's prediction was built before the last change every
        prediction reads, in turn (the writer rebuilds them; an unchanged report is not written). O(limit)
        amortised: the turn is a list of every workload, refilled when used up."""
        if self.scheduler is None:
            return set()
        out: set[WorkloadKey] = set()
        epoch, built = self.prediction_epoch, self._built_epoch
        checked = 0
        while len(out) < limit and checked < 4 * limit:
            if not self._refresh_turn:
                self._refresh_turn = [k for ns in self._ns.values() for k in ns.workloads]
                if not self._refresh_turn:
                    break
            key = self._refresh_turn.pop()
            checked += 1
            ns = self._ns.get(key.namespace)
            w = ns.workloads.get(key) if ns is not None else None
            if w is None:
                built.pop(key, None)  # (a workload gone: its entry too)
            elif w.report is not None and built.get(key, -1) < epoch:
                w.report = None
                out.add(key)
        return out

    def refresh_predictions(self) -> None:
        """Rebuild every report whose prediction is stale (tests, what-if). O(stale reports)."""
        epoch = self.prediction_epoch
        for ns in self._ns.values():
            for key, w in ns.workloads.items():
                if self._built_epoch.get(key, -1) < epoch:
                    w.report = None

    # --- building ---------------------------------------------------------------------------------------

    def topology_scored(self, w: Workload, groups: CandidateGroups, scores: GroupScores) -> None:
        """What the report's building scored the workload's pod with (PodTopologySpread: its candidate groups
        and scores), read by :meth:`with_prediction` right after. O(1)."""
        if self.scheduler is not None:
            self._report_scores = (w, groups, scores)

    def with_prediction(self, w: Workload, report: SpreadReport) -> SpreadReport:
        """The workload's report with its prediction (the report's building's scores, if any, reused). O(n) in
        numpy (module docstring)."""
        try:
            return self._with_prediction(w, report)
        finally:
            self._report_scores = None

    def _with_prediction(self, w: Workload, report: SpreadReport) -> SpreadReport:
        if self.scheduler is None or w.pod is None:
            return report
        self._built_epoch[w.ctrl.key] = self.prediction_epoch
        if w.error:
            return report
        error = template_error(w.pod)
        if error:  # a template the API server would refuse: the workload's report is Error, with that reason
            return error_report(w.ref, self.profile.name, w.ctrl.replicas, error)
        prediction = self._predict(w, self.scheduler)
        if not report.skipped and prediction.best_nodes:
            candidates = self._candidate_set(w).names
            zones = self._zones
            listed = report.best_nodes  # (a listed best node agrees; else the scores decide)
            agrees = any(name in listed for name in prediction.best_nodes) or any(
                classify_placement(report, name, zones.get(name), name in candidates) is Outcome.BEST_NODE
                for name in prediction.best_nodes)  # fmt: skip
            if not agrees:
                prediction = msgspec.structs.replace(prediction, spreading_agrees=False)
        return msgspec.structs.replace(report, prediction=prediction)

    # --- the placement check ------------------------------------------------------------------------------

    def predicted_outcome(self, w: Workload, report: SpreadReport, node: str) -> str:
        """A binding to ``node`` judged against the report's prediction: ``best_node`` (one of its best
        nodes), ``best_zone`` (a zone holding one of its listed best nodes), ``other``; "" without a
        prediction. Counted in :attr:`predicted_placements`. O(listed nodes); a prediction rebuilt with every
        best node listed when it has more than the report lists and ``node`` is not among them (rare)."""
        p = report.prediction
        if p is None or self.scheduler is None or not p.best_nodes:
            return ""
        best = node in p.best_nodes
        if not best and p.best_node_count > len(p.best_nodes):
            full = self._predict(w, self.scheduler, top_n=p.best_node_count)
            best = node in full.best_nodes
        zones = self._zones
        if best:
            outcome = Outcome.BEST_NODE
        elif (zone := zones.get(node)) is not None and any(zones.get(n) == zone for n in p.best_nodes):
            outcome = Outcome.BEST_ZONE
        else:
            outcome = Outcome.OTHER
        self.predicted_placements[outcome.value] += 1
        return outcome.value

    def room_counts(self, w: Workload, candidates: CandidateSet) -> RoomCounts | None:
        """The copies of the workload's next pod its candidate nodes take, per zone and per node, from the loads
        this prediction keeps: the room for the replacements in the resilience
        :class:`~spreadwatch.index.safety.Safety` forecasts (None without them — the prediction off, or a
        scheduler profile without NodeResourcesFit's Filter — or without a next pod). Cached per (candidate
        set, requests) until a load or a node changes: the workloads of a stale batch share them. O(1) cached,
        else O(slots) in numpy (:meth:`NodeLoads.copies`, cached per requests) + O(candidate nodes) in numpy
        (their slots cached per candidate set)."""
        sched = self.scheduler
        if sched is None or w.pod is None or NODE_RESOURCES_FIT not in sched.filters:
            return None
        loads = self._loads
        epoch = (self._node_epoch, loads.version, len(loads))
        requests = w.pod.needs.requests
        key = (id(candidates), requests, sched.fit)
        found = self._rooms.get(key)
        if found is not None and found[0] == epoch and found[1] is candidates:
            return found[2]
        shape = (requests, sched.fit)
        held = self._copies.get(shape)
        if held is None or held[0] != epoch:
            held = (epoch, loads.copies(requests, sched.fit))
            _put(self._copies, shape, held, _ROOM_CACHE)
        copies = held[1]
        by_zone = {z: int(copies[slots].sum()) for z, slots in self._zone_slots(candidates).items()}
        slot, names = loads.slot, candidates.names

        def on_node(name: str) -> int:
            return int(copies[slot[name]]) if name in names else 0

        room = RoomCounts(by_zone, on_node)
        _put(self._rooms, key, (epoch, candidates, room), _ROOM_CACHE)
        return room

    def _zone_slots(self, candidates: CandidateSet) -> Mapping[ZoneKey | None, Int64s]:
        """The load slots of a candidate set's nodes per zone. Cached per candidate set until a node changes.
        O(candidate nodes) when new."""
        slot = self._loads.slot

        def make() -> tuple[CandidateSet, dict[ZoneKey | None, Int64s]]:
            by_zone = candidates.layout.by_zone
            return candidates, {z: np.array([slot[n] for n in names], dtype=np.int64) for z, names in by_zone.items()}

        found = cast("tuple[CandidateSet, dict[ZoneKey | None, Int64s]]",
                     self._cached(("room-slots", id(candidates)), make))  # fmt: skip
        if found[0] is not candidates:  # (another set at a reused id)
            found = make()
        return found[1]

    def _cached(self, key: tuple[object, ...], make: Callable[[], object]) -> object:
        """A per-node vector or table, made by ``make`` unless cached since the last node change (and with as
        many slots: a pod on a node not met adds one). O(1) cached."""
        epoch = (self._node_epoch, len(self._loads))
        found = self._vectors.get(key)
        if found is not None and found[0] == epoch:
            return found[1]
        value = make()
        _put(self._vectors, key, (epoch, value), _CACHE_LIMIT)
        return value

    def _slot_nodes(self) -> list[Node | None]:
        """Each slot's Node record (None: a node-less slot). Cached until a node changes. O(slots)."""
        nodes = self._nodes
        return self._cached(("slot-nodes",),
                            lambda: [nodes.get(name) for name in self._loads.names])  # type: ignore[return-value]

    def _name_rank(self) -> Int64s:
        """Each slot's rank in name order (ties between equal totals are listed by name). Cached. O(n log n)."""

        def make() -> Int64s:
            names = self._loads.names
            rank = np.empty(len(names), dtype=np.int64)
            rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
            return rank

        return self._cached(("rank",), make)  # type: ignore[return-value]

    def _label_codes(self, key: str) -> tuple[npt.NDArray[np.int32], dict[str, int]]:
        """Per slot a code of the node's value of label ``key`` (-1: no such label or no node). Cached."""

        def make() -> tuple[npt.NDArray[np.int32], dict[str, int]]:
            codes = np.full(len(self._loads), -1, dtype=np.int32)
            values: dict[str, int] = {}
            for i, node in enumerate(self._slot_nodes()):
                if node is not None:
                    value = node.labels.get(key)
                    if value is not None:
                        codes[i] = values.setdefault(value, len(values))
            return codes, values

        return self._cached(("codes", key), make)  # type: ignore[return-value]

    def _candidate_mask(self, candidates: CandidateSet) -> Bools:
        """The spreading candidates as a mask over slots. Cached per candidate set. O(slots)."""
        slot = self._loads.slot

        def make() -> Bools:
            mask = np.zeros(len(self._loads), dtype=np.bool_)
            mask[[slot[name] for name in candidates.names]] = True
            return mask

        return self._cached(("candidates", id(candidates)), make)  # type: ignore[return-value]

    def _present_candidates(self, candidates: CandidateSet) -> Bools:
        """The spreading candidates that are nodes as a mask over slots (read-only). Cached. O(slots) when new."""
        present = self._loads.present

        def make() -> Bools:
            mask = self._candidate_mask(candidates) & present[: len(self._loads)]
            mask.flags.writeable = False
            return mask

        return self._cached(("present-candidates", id(candidates)), make)  # type: ignore[return-value]

    def _nodes_mask(self, names: Iterable[str]) -> Bools:
        mask = np.zeros(len(self._loads), dtype=np.bool_)
        slot = self._loads.slot
        mask[[slot[n] for n in names if n in slot]] = True
        return mask

    def _predict(self, w: Workload, sched: SchedulerProfile, top_n: int | None = None) -> Prediction:
        """The prediction of ``w``'s next pod (see the module docstring; ``top_n``: nodes listed, default the
        reports')."""
        if top_n is None:
            top_n = self.options.top_n
        pod = w.pod
        assert pod is not None
        template, needs = pod.template, pod.needs
        plan = plan_volumes(pod.namespace, needs.claims, next_claims(w.ctrl),
                            lambda ns, name: self._claims.get((ns, name)), self._volumes.get)  # fmt: skip
        reasons = list(self.options.prediction_partial)
        reasons += partial_reasons(pod, sched, plan)
        if self._nominated:
            reasons.append(f"NominatedPods: {len(self._nominated)} pod(s) nominated to a node by preemption "
                           "take its resources first")  # fmt: skip
        loads = self._loads
        n = len(loads)
        rejected = plan.rejecting(sched.filters)
        if rejected:  # a PreFilter rejects every node before any filter runs
            return Prediction(excluded_nodes={rejected: len(self._nodes)}, partial_reasons=tuple(reasons))
        candidates = self._candidate_set(w)
        cand = self._present_candidates(candidates)
        excluded: dict[str, int] = {}
        for reason, count in candidates.layout.excluded.items():
            plugin = _PLUGIN_OF_REASON[reason]
            excluded[plugin] = excluded.get(plugin, 0) + count
        names_allowed = node_affinity_names(template)
        if names_allowed is not None:
            excluded = self._matchfield_exclusions(template, names_allowed)
            cand = cand & self._nodes_mask(names_allowed)
        if sched.added_required is not None:
            added = self._cached(("added",), lambda: self._added_mask(sched))
            dropped = int(np.count_nonzero(cand & ~added))  # type: ignore[operator]
            if dropped:
                excluded[NODE_AFFINITY] = excluded.get(NODE_AFFINITY, 0) + dropped
            cand = cand & added  # type: ignore[operator]
        if names_allowed is None and w.hard is None and self._alike(pod, sched, plan):
            return self._predict_alike(w, pod, sched, candidates, cand, excluded, tuple(reasons), top_n)
        feasible = self._filters(w, pod, sched, plan, cand, excluded)
        count = int(np.count_nonzero(feasible))
        excluded_nodes = _shared_counts(dict(sorted((k, v) for k, v in excluded.items() if v)))
        if count == 0:
            return Prediction(excluded_nodes=excluded_nodes, partial_reasons=tuple(reasons))
        per_plugin = self._scores(w, pod, sched, feasible, candidates)
        totals = np.zeros(n, dtype=np.int64)
        weights = sched.weights
        for plugin, values in per_plugin.items():
            totals += values * weights[plugin]
        totals = np.where(feasible, totals, -1)
        best = int(totals.max())
        best_slots = np.flatnonzero(totals == best)
        rank = self._name_rank()[:n]
        names = loads.names
        best_names = [names[i] for i in best_slots[np.argsort(rank[best_slots])][:top_n]]
        listed = self._top(totals, rank, top_n)
        plugins = tuple(per_plugin)
        nodes = tuple(
            _shared(PredictedNode(names[i], int(totals[i]), _shared_breakdown(
                plugins, tuple([int(v[i]) * weights[p] for p, v in per_plugin.items()]))))
            for i in listed
        )  # fmt: skip
        probability = self._probability(feasible, best_slots, count)
        return Prediction(best, tuple(best_names), len(best_slots), count, nodes, excluded_nodes, probability,
                          tuple(reasons))  # fmt: skip

    # --- the window -----------------------------------------------------------------------------------------

    def _positions(self) -> Int64s:
        """Each slot's position in the scheduler's node order (-1: a node-less slot). Cached. O(n)."""

        def make() -> Int64s:
            order = self._node_order()
            pos = np.full(len(self._loads), -1, dtype=np.int64)
            slot = self._loads.slot
            pos[[slot[name] for name in order]] = np.arange(len(order), dtype=np.int64)
            return pos

        return self._cached(("positions",), make)  # type: ignore[return-value]

    def _probability(self, feasible: Bools, best_slots: Int64s, count: int) -> float | None:
        """The chance the scheduler's window holds a best node (:mod:`~spreadwatch.scoring.prediction_window`):
        1 when it scores every feasible node. O(n) in numpy otherwise."""
        window = self._window_size()
        if window >= count:
            return 1.0
        pos = self._positions()[: len(feasible)]
        positions = np.sort(pos[feasible])
        odds = hit_probability(positions, prefix_gaps(positions, len(self._nodes)), pos[best_slots],
                               len(self._nodes), window)  # fmt: skip
        return None if odds is None else round(odds, _PROBABILITY_DIGITS)

    # --- nodes that score alike -------------------------------------------------------------------------------

    def _alike(self, pod: Pod, sched: SchedulerProfile, plan: VolumePlan) -> bool:
        """Whether the pod's prediction can be read from a :class:`ShapeTable`: no filter beyond the spreading
        ones and NodeResourcesFit applies (no host ports, no claim that pins it), and no score beyond the
        table's classes and its own nodes (no preferred node affinity, no pod affinity either way). O(labels)."""
        template = pod.template
        if pod.needs.host_ports or plan.affinities or plan.topologies or plan.rwop:
            return False
        if template.preferred_node_terms is not None or sched.added_preferred or template.has_pod_affinity:
            return False
        return not self._affinity.selecting(pod.labels)

    def _spread_keys(self, w: Workload, sched: SchedulerProfile) -> tuple[str, ...] | None:
        """The topology keys PodTopologySpread scores the workload's pod by (None: its PreScore skips)."""
        plan = w.plan
        if POD_TOPOLOGY_SPREAD not in sched.weights or plan is None or w.skip or plan.skip_reason:
            return None
        return tuple([t.topology_key for t in plan.terms])

    def _shape_table(
        self, w: Workload, pod: Pod, sched: SchedulerProfile, candidates: CandidateSet, cand: Bools
    ) -> ShapeTable:
        """The :class:`ShapeTable` of the workload's candidates and pod, cached until the loads or the nodes
        change. O(n) in numpy + O(feasible) to group them when new."""
        memo = self._shape_keys.get(id(pod))
        if memo is not None and memo[0] is pod and memo[1] is w.plan and memo[2] == w.skip:
            _, _, _, keys, tolerations, shape = memo
        else:
            keys = self._spread_keys(w, sched)
            tolerations = prefer_no_schedule_tolerations(pod.template)
            shape = needs_key(pod.needs)
            if len(self._shape_keys) >= _CACHE_LIMIT:
                self._shape_keys.clear()
            self._shape_keys[id(pod)] = (pod, w.plan, w.skip, keys, tolerations, shape)
        key = (id(candidates), shape, keys, tolerations)
        epoch = (self._node_epoch, self._loads.version, len(self._loads))
        found = self._tables.get(key)
        if found is not None and found[0] == epoch and found[1] is candidates:
            return found[2]
        table = self._new_table(w, pod, sched, candidates, cand, keys, tolerations)
        _put(self._tables, key, (epoch, candidates, table), _TABLE_LIMIT)
        return table

    def _new_table(
        self, w: Workload, pod: Pod, sched: SchedulerProfile, candidates: CandidateSet, cand: Bools,
        keys: tuple[str, ...] | None, tolerations: object,
    ) -> ShapeTable:  # fmt: skip
        n = len(self._loads)
        weights = sched.weights
        fit_ok = self._fit_mask(pod, sched)
        feasible = cand & fit_ok
        fit_scores, balanced_scores = self._resource_scores(pod, sched)
        fit = fit_scores if NODE_RESOURCES_FIT in weights else None
        balanced = balanced_scores if BALANCED_ALLOCATION in weights else None
        base = np.zeros(n, dtype=np.int64)
        if fit is not None:
            base += fit * weights[NODE_RESOURCES_FIT]
        if balanced is not None:
            base += balanced * weights[BALANCED_ALLOCATION]
        taint = self._taint_raw(pod.template) if TAINT_TOLERATION in weights else np.zeros(n, dtype=np.int64)
        if keys is not None and np.array_equal(feasible, self._present_candidates(candidates)):
            report_groups = self._report_groups(w, candidates, keys)  # (its report's scores apply)
            groups: CandidateGroups | None = report_groups
            group_of = self._group_slots(report_groups)
        else:
            groups, group_of = self._feasible_groups(feasible, keys)
        failed = int(np.count_nonzero(cand & ~fit_ok))
        top = int(taint[feasible].max(initial=0))
        table = ShapeTable(feasible, int(np.count_nonzero(feasible)), failed, fit, balanced, base, groups, group_of,
                           taint, top)  # fmt: skip
        split_classes(table, self._name_rank()[:n])
        return table

    def _feasible_groups(self, feasible: Bools, keys: tuple[str, ...] | None) -> tuple[CandidateGroups | None, Int64s]:
        """PodTopologySpread's groups of the feasible nodes and each slot's group (0 without keys), cached by the
        feasible set itself: a pod event rarely changes which nodes fit, though it changes the loads. O(n)
        to look up; O(feasible × keys) when new."""
        n = len(feasible)
        if keys is None:
            return None, np.zeros(n, dtype=np.int64)
        key = (keys, np.packbits(feasible).tobytes(), n)
        epoch = (self._node_epoch, len(self._loads))
        found = self._feasible_group_cache.get(key)
        if found is not None and found[0] == epoch:
            return found[1]
        names = self._loads.names
        chosen = sorted(names[i] for i in np.flatnonzero(feasible).tolist())
        groups = group_candidates((self._nodes[name] for name in chosen), keys, self._zones)
        group_of = np.zeros(n, dtype=np.int64)
        slot = self._loads.slot
        for g, members in enumerate(groups.names):
            group_of[[slot[name] for name in members]] = g
        _put(self._feasible_group_cache, key, (epoch, (groups, group_of)), _GROUPS_CACHE)
        return groups, group_of

    def _predict_alike(
        self, w: Workload, pod: Pod, sched: SchedulerProfile, candidates: CandidateSet, cand: Bools,
        excluded: dict[str, int], reasons: tuple[str, ...], top_n: int,
    ) -> Prediction:  # fmt: skip
        """The prediction from the workload's :class:`ShapeTable`: its own nodes (those with its pods, those with
        its images) scored one by one, every other feasible node through its class. O(classes × top_n + own
        nodes), plus O(best nodes) for the window when the scheduler scores only some."""
        table = self._shape_table(w, pod, sched, candidates, cand)
        if table.fit_failed:
            excluded[NODE_RESOURCES_FIT] = excluded.get(NODE_RESOURCES_FIT, 0) + table.fit_failed
        excluded_nodes = _shared_counts(dict(sorted((k, v) for k, v in excluded.items() if v)))
        if table.count == 0:
            return Prediction(excluded_nodes=excluded_nodes, partial_reasons=reasons)
        weights = sched.weights
        slot_of = self._loads.slot
        spread = None
        if table.groups is not None:
            found = self._report_scores
            if found is not None and found[0] is w and found[1] is table.groups:
                spread = found[2]  # (the report's own: every candidate is feasible)
            else:
                spread = self._group_scores(w, table.groups)
        plugins = tuple([p for p, _ in sched.scores if p in (TAINT_TOLERATION, DYNAMIC_RESOURCES, IMAGE_LOCALITY) or (
            p == NODE_RESOURCES_FIT and table.fit is not None) or (
            p == BALANCED_ALLOCATION and table.balanced is not None) or (
            p == POD_TOPOLOGY_SPREAD and spread is not None)])  # fmt: skip
        w_taint = weights[TAINT_TOLERATION] if TAINT_TOLERATION in plugins else 0
        w_spread = weights[POD_TOPOLOGY_SPREAD] if spread is not None else 0
        w_image = weights[IMAGE_LOCALITY] if IMAGE_LOCALITY in plugins else 0
        top = table.taint_top
        taint_scores = [MAX_NODE_SCORE if top == 0 else MAX_NODE_SCORE - (MAX_NODE_SCORE * t) // top
                        for t in range(top + 1)]  # fmt: skip
        group_score: list[int] = [0] * max(1, len(table.groups.names) if table.groups is not None else 1)
        own: dict[int, int] = {}  # own node slot -> its PodTopologySpread score
        if spread is not None:
            group_score = [spread.normalized(raw) for raw in spread.group_raw]
            low, high = spread.min_raw, spread.max_raw  # (GroupScores.normalized, inlined: once per own node)
            for (name, _, _), raw in zip(spread.rows, spread.row_raw, strict=True):
                own[slot_of[name]] = (0 if raw is None else MAX_NODE_SCORE if high == 0
                                      else MAX_NODE_SCORE * (high + low - raw) // high)  # fmt: skip
        image_of = self._images.scores(pod.needs)
        image: dict[int, int] = {}
        own_slots: Set[int] = own.keys()
        if image_of:
            feasible = table.feasible_list
            image = {i: score for name, score in image_of.items() if feasible[i := slot_of[name]]}
            own_slots = own.keys() | image.keys()
        base, group_of, taint = table.base_list, table.group_list, table.taint_list
        rank: list[int] = self._cached(("rank-list",), lambda: self._name_rank().tolist())  # type: ignore[assignment]
        # (-total, name rank, slot): sorted highest total first, ties by name
        scored = [(-(base[i] + w_spread * (own[i] if i in own else group_score[group_of[i]])
                     + w_taint * taint_scores[taint[i]] + w_image * image.get(i, 0)), rank[i], i)
                  for i in own_slots]  # fmt: skip
        own_best = -min(scored)[0] if scored else None
        width = max(top_n, 1)
        heads: list[tuple[int, int, int]] = []  # (class, its best total, the base of its first non-own node)
        for c, (g, t) in enumerate(table.keys):
            constant = w_spread * group_score[g] + w_taint * taint_scores[t]
            taken = 0
            for i, b in zip(table.head_slots[c], table.head_bases[c], strict=True):
                if i in own_slots:
                    continue
                if not taken:
                    heads.append((c, b + constant, b))
                scored.append((-(b + constant), rank[i], i))
                taken += 1
                if taken == width:
                    break
            else:
                if len(table.head_slots[c]) < len(table.slots[c]):
                    for i, b in self._class_rest(table, c, own_slots, width - taken):
                        if not taken:
                            heads.append((c, b + constant, b))
                        scored.append((-(b + constant), rank[i], i))
                        taken += 1
        best = max(t for _, t, _ in heads) if heads else own_best
        if own_best is not None and best is not None:
            best = max(best, own_best)
        assert best is not None
        best_own = [i for t, _, i in scored[: len(own_slots)] if t == -best]
        best_count = len(best_own)
        best_candidates = list(best_own)
        tie_runs: list[tuple[Int64s, list[int]]] = []  # per class at the best: its run and own nodes in it
        tie_key: list[tuple[int, int, tuple[int, ...]]] = []  # (class, base, own nodes in its run): what decides them
        for c, t, b in heads:
            if t != best:
                continue
            run = self._tie_run(table, c, b)
            g, tt = table.keys[c]
            inside = [i for i in own_slots if base[i] == b and group_of[i] == g and taint[i] == tt]
            tie_runs.append((run, inside))
            tie_key.append((c, b, tuple(inside)))
            best_count += len(run) - len(inside)
            best_candidates += [i for i in run[: max(top_n, 0) + len(inside)].tolist() if i not in own_slots]
        names = self._loads.names
        best_names = [names[i] for i in sorted(best_candidates, key=rank.__getitem__)[:top_n]]
        listed = sorted(scored)[: max(top_n, 0)]
        # (equal listed nodes of many workloads: one object)
        nodes = tuple(_shared(PredictedNode(names[i], -t, self._breakdown(i, plugins, table, weights, own, group_score,
                                                                          image, taint_scores)))
                      for t, _, i in listed)  # fmt: skip
        probability: float | None = 1.0
        window = self._window_size()
        if window < table.count:
            odds_key = (tuple(best_own), tuple(tie_key), window)
            if odds_key in table.odds:  # (workloads whose best nodes are one class's head share it)
                probability = table.odds[odds_key]
            else:
                probability = table.odds[odds_key] = self._table_probability(table, best_own, tie_runs, window)
        return Prediction(best, tuple(best_names), best_count, table.count, nodes, excluded_nodes, probability,
                          reasons)  # fmt: skip

    def _table_probability(
        self, table: ShapeTable, best_own: list[int], tie_runs: list[tuple[Int64s, list[int]]], window: int
    ) -> float | None:
        """The window's probability from the table's feasible positions (built once per table). O(best
        nodes) in numpy."""
        if table.positions is None:
            pos = self._positions()[: len(table.feasible)]
            table.positions = np.sort(pos[table.feasible])
            table.prefix = prefix_gaps(table.positions, len(self._nodes))
            table.positions_list, table.prefix_list = table.positions.tolist(), table.prefix.tolist()
        assert table.prefix is not None
        positions = self._positions()
        if len(best_own) + sum(len(run) for run, _ in tie_runs) <= _FEW_BEST:
            position_list: list[int] = self._cached(("positions-list",), positions.tolist)  # type: ignore[assignment]
            best = [*best_own, *(i for run, inside in tie_runs for i in run.tolist() if i not in inside)]
            odds = few_hit_probability(table.positions_list, table.prefix_list, [position_list[i] for i in best],
                                       len(self._nodes), window)  # fmt: skip
        else:
            runs = [run[~np.isin(run, inside)] if inside else run for run, inside in tie_runs]
            best_slots = np.concatenate([np.array(best_own, dtype=np.int64), *runs])
            odds = hit_probability(table.positions, table.prefix, positions[best_slots], len(self._nodes), window)
        return None if odds is None else round(odds, _PROBABILITY_DIGITS)

    @staticmethod
    def _class_rest(table: ShapeTable, c: int, own: Set[int], wanted: int) -> Iterable[tuple[int, int]]:
        """Up to ``wanted`` (slot, base) of class ``c`` past its head, own nodes skipped (a class whose head
        is mostly own nodes). O(nodes read)."""
        start = len(table.head_slots[c])
        slots, bases = table.slots[c], table.bases[c]
        step = max(wanted, HEAD)
        while start < len(slots) and wanted > 0:
            for i, b in zip(slots[start : start + step].tolist(), bases[start : start + step].tolist(), strict=True):
                if i not in own:
                    yield i, b
                    wanted -= 1
                    if not wanted:
                        return
            start += step

    @staticmethod
    def _tie_run(table: ShapeTable, c: int, base: int) -> Int64s:
        """The slots of class ``c`` with this base, in name order (the class is sorted by base, then name)."""
        if base == table.head_bases[c][0]:
            return table.slots[c][: table.ties[c]]
        run: Int64s = table.slots[c][table.bases[c] == base]
        return run

    def _breakdown(
        self, i: int, plugins: tuple[str, ...], table: ShapeTable, weights: Mapping[str, int], own: Mapping[int, int],
        group_score: list[int], image: Mapping[int, int], taint_scores: list[int],
    ) -> tuple[tuple[str, int], ...]:  # fmt: skip
        """Each running plugin's weighted score on slot ``i`` (a listed node), kept in the table per (slot, spread
        score, image score): the rest is the table's. O(1) when kept, else O(plugins)."""
        spread_value = 0
        if POD_TOPOLOGY_SPREAD in plugins:
            spread_value = own[i] if i in own else group_score[table.group_list[i]]
        key = (i, spread_value, image.get(i, 0))
        found = table.breakdowns.get(key)
        if found is not None:
            return found
        out = []
        for plugin in plugins:
            if plugin == TAINT_TOLERATION:
                value = taint_scores[table.taint_list[i]]
            elif plugin == NODE_RESOURCES_FIT:
                value = table.fit_list[i]
            elif plugin == BALANCED_ALLOCATION:
                value = table.balanced_list[i]
            elif plugin == POD_TOPOLOGY_SPREAD:
                value = spread_value
            elif plugin == IMAGE_LOCALITY:
                value = image.get(i, 0)
            else:
                value = 0
            out.append(value * weights[plugin])
        found = table.breakdowns[key] = _shared_breakdown(plugins, tuple(out))
        return found

    @staticmethod
    def _top(totals: Int64s, rank: Int64s, top_n: int) -> list[int]:
        """The ``top_n`` slots by total (highest first), ties by name. O(n) in numpy + O(ties log top_n)."""
        if top_n <= 0:
            return []
        feasible = int(np.count_nonzero(totals >= 0))
        k = min(top_n, feasible)
        order = np.argpartition(-totals, k - 1)[:k]
        threshold = int(totals[order].min())
        above = np.flatnonzero(totals > threshold)
        ties = np.flatnonzero(totals == threshold)
        need = k - len(above)
        if need < len(ties):
            ties = ties[np.argpartition(rank[ties], need - 1)[:need]] if need > 0 else ties[:0]
        chosen = [*above.tolist(), *ties.tolist()]
        return sorted(chosen, key=lambda i: (-int(totals[i]), int(rank[i])))

    def _added_mask(self, sched: SchedulerProfile) -> Bools:
        terms = sched.added_required or ()
        mask = np.zeros(len(self._loads), dtype=np.bool_)
        for i, node in enumerate(self._slot_nodes()):
            if node is not None and any(node_term_matches(t, node) for t in terms):
                mask[i] = True
        return mask

    def _matchfield_exclusions(self, template: PodTemplate, allowed: frozenset[str]) -> dict[str, int]:
        """The excluded counts when NodeAffinity's PreFilter names the nodes (``metadata.name`` In): every
        other node is excluded under NodeAffinity, those named by the first filter failing them. O(nodes)."""
        excluded: dict[str, int] = {}
        for node in self._nodes.values():
            if node.name not in allowed:
                plugin: str | None = NODE_AFFINITY
            else:
                reason = exclusion_reason(node, template)
                plugin = _PLUGIN_OF_REASON[reason] if reason is not None else None
            if plugin is not None:
                excluded[plugin] = excluded.get(plugin, 0) + 1
        return excluded

    # --- filters ------------------------------------------------------------------------------------------

    def _fit_mask(self, pod: Pod, sched: SchedulerProfile) -> Bools:
        """NodeResourcesFit's Filter over every slot (the resources ``fit_terms`` says it checks). O(n) in numpy."""
        loads, n = self._loads, len(self._loads)
        ok = loads.pods[:n] + 1 <= loads.alloc_pods[:n]
        for name, amount in fit_terms(pod.needs.requests, sched.fit):
            capacity, used = loads.amounts(name)
            ok &= amount <= capacity - used
        return ok

    def _filters(
        self, w: Workload, pod: Pod, sched: SchedulerProfile, plan: VolumePlan, cand: Bools, excluded: dict[str, int]
    ) -> Bools:
        """The filters after the spreading ones, in the profile's order: the feasible mask (excluded nodes
        counted per plugin in ``excluded``). O(n) in numpy."""
        remaining = cand.copy()
        nodes = self._slot_nodes()
        for plugin in sched.filters:
            if plugin == NODE_PORTS and pod.needs.host_ports:
                mask = np.ones_like(remaining)
                for node_name, used in self._loads.ports.items():
                    if ports_conflict(pod.needs.host_ports, used):
                        mask[self._loads.slot[node_name]] = False
            elif plugin == NODE_RESOURCES_FIT:
                mask = self._fit_mask(pod, sched)
            elif plugin == VOLUME_RESTRICTIONS and plan.rwop and self._claim_in_use(pod.namespace, plan.rwop):
                mask = np.zeros_like(remaining)
            elif plugin == VOLUME_BINDING and plan.affinities:
                mask = np.array([node is not None and plan.binding_passes(node) for node in nodes], dtype=np.bool_)
            elif plugin == VOLUME_ZONE and plan.has_claims and plan.topologies:
                mask = np.array([node is not None and plan.zone_passes(node.labels) for node in nodes], dtype=np.bool_)
            elif plugin == INTER_POD_AFFINITY:
                mask = self._affinity_filter(w, pod)
            elif plugin == POD_TOPOLOGY_SPREAD and w.filtered is not None:  # (the report's Filter, index/hard_filter)
                mask = self._filter_mask(w.filtered, self._candidate_set(w))
            else:
                continue
            failed = int(np.count_nonzero(remaining & ~mask))
            if failed:
                excluded[plugin] = excluded.get(plugin, 0) + failed
                remaining &= mask
        return remaining

    def _filter_mask(self, f: FilteredCandidates, candidates: CandidateSet) -> Bools:
        """PodTopologySpread's Filter as the report applied it (index/hard_filter.py) over slots: the candidates
        of the groups it keeps, minus the single nodes it removes. O(n) in numpy + O(removed nodes); the
        groups' slots once per candidate groups and node change."""
        if not f.rejected:  # (it passes every candidate)
            return self._candidate_mask(candidates)
        view = f.groups.group_of
        assert isinstance(view, GroupOfView)
        base = view.base
        n = len(self._loads)

        def make() -> tuple[Mapping[str, int], Int64s]:
            slot = self._loads.slot
            of = np.full(n, -1, dtype=np.int64)
            members = list(base.items())
            of[[slot[name] for name, _ in members]] = [g for _, g in members]
            return base, of

        found = cast("tuple[Mapping[str, int], Int64s]", self._cached(("filter-groups", id(base)), make))
        if found[0] is not base:  # (another map at a reused id)
            found = make()
        kept = np.array([*view.kept, False], dtype=np.bool_)
        mask: Bools = kept[found[1]]
        if view.removed:
            slot = self._loads.slot
            mask[[slot[name] for name in view.removed]] = False
        return mask

    def _claim_in_use(self, namespace: str, claims: Iterable[str]) -> bool:
        """Whether a pod the scheduler's cache holds (on a node) uses one of these claims of ``namespace``
        (VolumeRestrictions' ReadWriteOncePod check). O(pods of the namespace): only for such claims."""
        ns = self._ns.get(namespace)
        if ns is None:
            return False
        wanted, nodes = set(claims), self._nodes
        return any(p.in_node_info and p.node_name in nodes and not wanted.isdisjoint(p.needs.claims)
                   for p in ns.pods.values())  # fmt: skip

    # --- InterPodAffinity ---------------------------------------------------------------------------------

    def _namespace_labels(self) -> Mapping[str, Mapping[str, str]]:
        return self._namespace_records  # type: ignore[return-value]

    def _incoming(self, pod: Pod) -> IncomingTerms:
        return incoming_terms(pod, self._namespace_labels())

    def _matching_groups(self, term: AffinityTerm) -> Iterable[tuple[str, Mapping[str, str], Mapping[str, int]]]:
        """(namespace, labels, node → count) of the cached pods ``term`` selects: the label groups of the
        namespaces it selects, and the pods being deleted. O(groups of those namespaces)."""
        if term.namespace_selector.empty:
            namespaces: Iterable[str] = list(self._ns)
        else:
            namespaces = [ns for ns in term.namespaces if ns in self._ns]
        for ns_name in namespaces:
            ns = self._ns[ns_name]
            for group in ns.groups.values():
                if term.matches(ns_name, group.labels, None):
                    yield ns_name, group.labels, group.nodes
            for labels, node in self._affinity.deleting(ns_name).values():
                if term.matches(ns_name, labels, None):
                    yield ns_name, labels, {node: 1}

    def _affinity_state(
        self, pod: Pod, terms: IncomingTerms
    ) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int], dict[tuple[str, str], int], bool]:
        """InterPodAffinity's PreFilter counts from the index: (existing pods' anti-affinity, the pod's
        affinity, its anti-affinity) per (key, value), and whether the pod matches its own affinity terms.
        O(matching groups × their nodes)."""
        existing: dict[tuple[str, str], int] = {}
        affinity: dict[tuple[str, str], int] = {}
        anti: dict[tuple[str, str], int] = {}
        nodes = self._nodes
        ns_labels = self._namespace_records.get(pod.namespace)
        for group in self._affinity.selecting(pod.labels):
            for raw in group.template.required_anti_affinity:
                term = term_of(raw, group.namespace)
                if term.matches(pod.namespace, pod.labels, ns_labels):  # type: ignore[arg-type]
                    _count_nodes(existing, term.topology_key, group.nodes, nodes)
        if terms.required:
            first, rest = terms.required[0], terms.required[1:]
            for ns_name, labels, on in self._matching_groups(first):
                if all(t.matches(ns_name, labels, None) for t in rest):
                    for t in terms.required:
                        _count_nodes(affinity, t.topology_key, on, nodes)
        for t in terms.required_anti:
            for _, _, on in self._matching_groups(t):
                _count_nodes(anti, t.topology_key, on, nodes)
        self_match = bool(terms.required) and all(t.matches(pod.namespace, pod.labels, None) for t in terms.required)
        return existing, affinity, anti, self_match

    def _pairs_mask(self, pairs: Mapping[tuple[str, str], int], keys: Iterable[str]) -> Bools:
        """The slots whose value of one of ``keys`` is a pair counted above 0. O(n) per key."""
        mask = np.zeros(len(self._loads), dtype=np.bool_)
        for key in keys:
            codes, values = self._label_codes(key)
            hit = np.zeros(len(values) + 1, dtype=np.bool_)
            for (k, v), c in pairs.items():
                if k == key and c > 0 and v in values:
                    hit[values[v]] = True
            mask |= hit[codes]
        return mask

    def _affinity_filter(self, w: Workload, pod: Pod) -> Bools:
        """InterPodAffinity's Filter over every slot. O(n) in numpy when anything is to check."""
        n = len(self._loads)
        terms = self._incoming(pod)
        existing, affinity, anti, self_match = self._affinity_state(pod, terms)
        ok = np.ones(n, dtype=np.bool_)
        if not existing and not terms.required and not terms.required_anti:
            return ok
        if terms.required:
            exists = np.ones(n, dtype=np.bool_)
            for t in terms.required:
                codes, _ = self._label_codes(t.topology_key)
                ok &= codes >= 0
                exists &= self._pairs_mask({p: c for p, c in affinity.items() if p[0] == t.topology_key},
                                           (t.topology_key,))  # fmt: skip
            if not (not affinity and self_match):
                ok &= exists
        if anti:
            ok &= ~self._pairs_mask(anti, {t.topology_key for t in terms.required_anti})
        if existing:
            ok &= ~self._pairs_mask(existing, {k for k, _ in existing})
        return ok

    def _affinity_raw(self, pod: Pod, terms: IncomingTerms, sched: SchedulerProfile) -> Int64s | None:
        """InterPodAffinity's PreScore and Score: the raw score per slot; None when PreScore skips.
        O(matching groups × nodes) + O(n) per topology key in numpy."""
        if sched.ignore_existing_preferred and not terms.has_preferred:
            return None
        scores: dict[str, dict[str, int]] = {}
        nodes = self._nodes
        ns_labels = self._namespace_records.get(pod.namespace)
        hard = sched.hard_pod_affinity_weight
        for group in self._affinity.selecting(pod.labels):
            matched: list[tuple[str, int]] = []
            template = group.template
            if hard > 0:
                matched += [(t.topology_key, hard) for x in template.required_affinity
                            if (t := term_of(x, group.namespace)).matches(pod.namespace, pod.labels, ns_labels)]  # type: ignore[arg-type]  # fmt: skip
            for sign, listed in ((1, template.preferred_affinity), (-1, template.preferred_anti_affinity)):
                for x in listed:
                    t = term_of(x.term, group.namespace, x.weight)
                    if t.matches(pod.namespace, pod.labels, ns_labels):  # type: ignore[arg-type]
                        matched.append((t.topology_key, sign * x.weight))
            for key, amount in matched:
                _add_nodes(scores, key, amount, group.nodes, nodes)
        for sign, listed_terms in ((1, terms.preferred), (-1, terms.preferred_anti)):
            for t in listed_terms:
                for _, _, on in self._matching_groups(t):
                    _add_nodes(scores, t.topology_key, sign * t.weight, on, nodes)
        if not scores:
            return None
        raw = np.zeros(len(self._loads), dtype=np.int64)
        for key, by_value in scores.items():
            codes, values = self._label_codes(key)
            lut = np.zeros(len(values) + 1, dtype=np.int64)
            for value, amount in by_value.items():
                code = values.get(value)
                if code is not None:
                    lut[code] = amount
            raw += lut[codes]
        return raw

    # --- scores -------------------------------------------------------------------------------------------

    def _scores(
        self, w: Workload, pod: Pod, sched: SchedulerProfile, feasible: Bools, candidates: CandidateSet
    ) -> dict[str, Int64s]:
        """Each score plugin that runs → its normalised score per slot (0 outside ``feasible``)."""
        out: dict[str, Int64s] = {}
        n = len(self._loads)
        template, needs = pod.template, pod.needs
        for plugin, _ in sched.scores:
            if plugin == TAINT_TOLERATION:
                raw = self._taint_raw(template)
                top = int(raw[feasible].max(initial=0))
                out[plugin] = np.full(n, MAX_NODE_SCORE, dtype=np.int64) if top == 0 else (
                    MAX_NODE_SCORE - (MAX_NODE_SCORE * raw) // top)  # fmt: skip
            elif plugin == NODE_AFFINITY:
                if template.preferred_node_terms is None and not sched.added_preferred:
                    continue
                raw = self._preferred_raw(template, sched)
                top = int(raw[feasible].max(initial=0))
                out[plugin] = raw if top <= 0 else _go_div(MAX_NODE_SCORE * raw, top)
            elif plugin == NODE_RESOURCES_FIT:
                out[plugin] = self._resource_scores(pod, sched)[0]
            elif plugin == POD_TOPOLOGY_SPREAD:
                spread = self._spread_scores(w, feasible, candidates)
                if spread is not None:
                    out[plugin] = spread
            elif plugin == INTER_POD_AFFINITY:
                raw_ipa = self._affinity_raw(pod, self._incoming(pod), sched)
                if raw_ipa is not None:
                    out[plugin] = _min_max(raw_ipa, feasible)
            elif plugin == DYNAMIC_RESOURCES:
                out[plugin] = np.zeros(n, dtype=np.int64)
            elif plugin == BALANCED_ALLOCATION:
                balanced = self._resource_scores(pod, sched)[1]
                if balanced is not None:
                    out[plugin] = balanced
            elif plugin == IMAGE_LOCALITY:
                image = np.zeros(n, dtype=np.int64)
                slot = self._loads.slot
                for node, score in self._images.scores(needs).items():
                    image[slot[node]] = score
                out[plugin] = image
        return {p: np.where(feasible, v, 0) for p, v in out.items()}

    def _taint_raw(self, template: PodTemplate) -> Int64s:
        tolerations = prefer_no_schedule_tolerations(template)

        def make() -> Int64s:
            raw = np.zeros(len(self._loads), dtype=np.int64)
            for i, node in enumerate(self._slot_nodes()):
                if node is not None and node.taints:
                    raw[i] = intolerable_taints(node.taints, tolerations)
            return raw

        return self._cached(("taints", tolerations), make)  # type: ignore[return-value]

    def _preferred_raw(self, template: PodTemplate, sched: SchedulerProfile) -> Int64s:
        terms = (*sched.added_preferred, *(template.preferred_node_terms or ()))

        def make() -> Int64s:
            raw = np.zeros(len(self._loads), dtype=np.int64)
            for i, node in enumerate(self._slot_nodes()):
                if node is not None:
                    raw[i] = preferred_node_score(terms, node)
            return raw

        return self._cached(("preferred", terms), make)  # type: ignore[return-value]

    def _columns(
        self, pod: Pod, resources: Iterable[tuple[str, int]], fit: bool
    ) -> Iterator[tuple[int, int, Int64s, Int64s, Bools]]:
        """Per resource a score reads (a scalar one the pod does not request skipped): its weight, the pod's
        request, each slot's capacity and use, and whether the slot has it: NodeResourcesFit's (``fit``) with
        the non-zero CPU and memory defaults in the request and the slots' use, BalancedAllocation's plain in
        both. O(n) per resource."""
        for name, weight in resources:
            request = pod_request(pod.needs, name, non_zero=fit)
            if request == 0 and is_scalar_resource(name):
                continue
            capacity, used = self._loads.amounts(name, use_requested=not fit)
            yield weight, request, capacity, used, capacity > 0

    def _resource_scores(self, pod: Pod, sched: SchedulerProfile) -> tuple[Int64s, Int64s | None]:
        """NodeResourcesFit's and NodeResourcesBalancedAllocation's scores per slot (None: its PreScore skips
        the pod), cached per request shape until a load or a node changes. O(n × resources) in numpy when
        new."""
        key = ("resources", needs_key(pod.needs))
        epoch = (self._node_epoch, self._loads.version, len(self._loads))
        found = self._resource_vectors.get(key)
        if found is not None and found[0] == epoch:
            return found[1]
        balanced = None if balanced_skips(pod.needs, sched.balanced_resources) else self._balanced_scores(pod, sched)
        value = (self._fit_scores(pod, sched), balanced)
        _put(self._resource_vectors, key, (epoch, value), _TABLE_LIMIT)
        return value

    def _fit_scores(self, pod: Pod, sched: SchedulerProfile) -> Int64s:
        """NodeResourcesFit's score per slot under the strategy, in int64 as upstream. O(n × resources)."""
        n = len(self._loads)
        strategy = sched.fit
        total = np.zeros(n, dtype=np.int64)
        weights = np.zeros(n, dtype=np.int64)
        for weight, request, capacity, used, has in self._columns(pod, strategy.resources, fit=True):
            requested = used + request
            safe = np.where(has, capacity, 1)
            if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
                utilization = np.where(requested > capacity, 100, (requested * 100) // safe)
                score = _broken_linear(strategy.shape, utilization)
                counted = has & (score > 0)
            elif strategy.type == MOST_ALLOCATED:
                score = (np.minimum(requested, capacity) * MAX_NODE_SCORE) // safe
                counted = has
            else:
                score = np.where(requested > capacity, 0, ((capacity - requested) * MAX_NODE_SCORE) // safe)
                counted = has
            total += np.where(counted, score * weight, 0)
            weights += np.where(counted, weight, 0)
        safe_weights = np.where(weights > 0, weights, 1)
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:  # math.Round(float64(total) / float64(weights))
            return np.where(weights > 0, (2 * total + safe_weights) // (2 * safe_weights), 0)
        return np.where(weights > 0, total // safe_weights, 0)

    def _balanced_scores(self, pod: Pod, sched: SchedulerProfile) -> Int64s:
        """NodeResourcesBalancedAllocation's score per slot: float64 in upstream's order. O(n × resources)."""
        n = len(self._loads)
        with_pod: list[tuple[Bools, Floats]] = []
        without: list[tuple[Bools, Floats]] = []
        for _, request, capacity, used, has in self._columns(pod, sched.balanced_resources, fit=False):
            cap = np.where(has, capacity, 1).astype(np.float64)
            with_pod.append((has, np.minimum((used + request).astype(np.float64) / cap, 1.0)))
            without.append((has, np.minimum(used.astype(np.float64) / cap, 1.0)))
        score = _balance(with_pod, n) - _balance(without, n)
        return MAX_NODE_SCORE // 2 + _go_half(MAX_NODE_SCORE // 2 + score)

    def _spread_scores(self, w: Workload, feasible: Bools, candidates: CandidateSet) -> Int64s | None:
        """PodTopologySpread's score per slot over the feasible nodes (None: PreScore skips). The spreading
        groups when every candidate is feasible, else the feasible nodes regrouped. O(groups + busy) + O(n)."""
        plan = w.plan
        if plan is None or w.skip or plan.skip_reason:
            return None
        keys = tuple([t.topology_key for t in plan.terms])
        groups: CandidateGroups
        if np.array_equal(feasible, self._present_candidates(candidates)):
            groups = self._report_groups(w, candidates, keys)
        else:
            found_groups, _ = self._feasible_groups(feasible, keys)
            assert found_groups is not None
            groups = found_groups
        return self._spread_vector(groups, self._group_scores(w, groups))

    def _report_groups(self, w: Workload, candidates: CandidateSet, keys: tuple[str, ...]) -> CandidateGroups:
        """The spreading report's candidate groups (made as the report makes them when missing). O(1) cached."""
        found = self._topo_groups.get((w.sig, keys, ()))
        if found is None:
            nodes = (self._nodes[name] for name in candidates.names)
            found = self._topo_groups[(w.sig, keys, ())] = group_candidates(nodes, keys, self._zones)
        return found

    def _group_slots(self, groups: CandidateGroups) -> Int64s:
        """Each slot's group in ``groups`` (the number of groups: none). Cached per groups object (kept in the
        entry: an id is only reused once its object is gone) until a node changes. O(slots) when new."""
        n = len(self._loads)
        epoch = (self._node_epoch, n)
        found = self._group_slot_cache.get(id(groups))
        if found is not None and found[0] == epoch and found[1] is groups:
            return found[2]
        slot = self._loads.slot
        of = np.full(n, len(groups.names), dtype=np.int64)
        for g, names in enumerate(groups.names):
            of[[slot[name] for name in names]] = g
        _put(self._group_slot_cache, id(groups), (epoch, groups, of), _GROUPS_CACHE)
        return of

    def _group_scores(self, w: Workload, groups: CandidateGroups) -> GroupScores:
        """PodTopologySpread's scores of the workload's pod over these (feasible) node groups. O(busy nodes)."""
        plan = w.plan
        assert plan is not None
        template = template_of(w)
        # (no memo: these groups are the feasible nodes of one request shape; their levels rarely repeat, since
        # pods on nodes that do not fit count as outside ones: keeping them cost 16 MiB at scale 1.0 for ~6,000
        # levels and saved little)
        if w.multi:
            return score_groups(plan, template, groups, self._term_counts(w), self._nodes, keep=False)
        per_term = [w.counts if w.counting else {}] * len(plan.terms)
        return score_groups(plan, template, groups, per_term, self._nodes, shared=True, keep=False)

    def _spread_vector(self, groups: CandidateGroups, scores: GroupScores) -> Int64s:
        slot = self._loads.slot
        group_of = self._group_slots(groups)
        empty = np.array([*(scores.normalized(raw) for raw in scores.group_raw), 0], dtype=np.int64)
        out: Int64s = empty[group_of]
        for (name, _, _), raw in zip(scores.rows, scores.row_raw, strict=True):
            out[slot[name]] = scores.normalized(raw)
        return out


def _count_nodes(counts: dict[tuple[str, str], int], key: str, on: Mapping[str, int],
                 nodes: Mapping[str, Node]) -> None:  # fmt: skip
    for name, c in on.items():
        node = nodes.get(name)
        if node is not None:
            value = node.labels.get(key)
            if value is not None:
                pair = (key, value)
                counts[pair] = counts.get(pair, 0) + c


def _add_nodes(scores: dict[str, dict[str, int]], key: str, amount: int, on: Mapping[str, int],
               nodes: Mapping[str, Node]) -> None:  # fmt: skip
    for name, c in on.items():
        node = nodes.get(name)
        if node is not None and node.labels:
            value = node.labels.get(key)
            if value is not None:
                by_value = scores.setdefault(key, {})
                by_value[value] = by_value.get(value, 0) + amount * c


def _go_div(a: Int64s, b: int) -> Int64s:
    """Go's ``a / b`` elementwise (truncated toward zero), ``b`` > 0."""
    return np.where(a >= 0, a // b, -((-a) // b))


def _min_max(raw: Int64s, feasible: Bools) -> Int64s:
    """InterPodAffinity's NormalizeScore over the feasible slots: float64 as upstream, truncated."""
    values = raw[feasible]
    low, high = int(values.min()), int(values.max())
    if high - low <= 0:
        return np.zeros_like(raw)
    scaled = 100.0 * ((raw - low).astype(np.float64) / float(high - low))
    return np.trunc(scaled).astype(np.int64)


def _broken_linear(shape: Sequence[tuple[int, int]], p: Int64s) -> Int64s:
    """``BuildBrokenLinearFunction`` elementwise over points (utilization, score 0-10 → 0-100)."""
    points = [(u, s * (MAX_NODE_SCORE // 10)) for u, s in shape]
    out = np.full(p.shape, points[-1][1], dtype=np.int64)
    done = np.zeros(p.shape, dtype=np.bool_)
    for i, (u, s) in enumerate(points):
        here = ~done & (p <= u)
        if i == 0:
            value = np.full(p.shape, s, dtype=np.int64)
        else:
            u0, s0 = points[i - 1]
            value = s0 + _go_div_array((s - s0) * (p - u0), u - u0)
        out = np.where(here, value, out)
        done |= here
    return out


def _go_div_array(a: Int64s, b: int) -> Int64s:
    if b < 0:
        return _go_div(-a, -b)
    return _go_div(a, b)


def _balance(fractions: list[tuple[Bools, Floats]], n: int) -> Int64s:
    """``balancedResourceScore`` per slot over the resources each slot has (allocatable > 0): float64 in
    upstream's order, truncated."""
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for has, fraction in fractions:
        total = np.where(has, total + fraction, total)
        first = np.where(has & (count == 0), fraction, first)
        second = np.where(has & (count == 1), fraction, second)
        count += has
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    if any(True for _ in fractions[2:]):
        mean = total / np.where(count > 0, count, 1).astype(np.float64)
        squares = np.zeros(n, dtype=np.float64)
        for has, fraction in fractions:
            squares = np.where(has, squares + (fraction - mean) * (fraction - mean), squares)
        many = np.sqrt(squares / np.where(count > 0, count, 1).astype(np.float64))
        std = np.where(count > 2, many, std)
    return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

