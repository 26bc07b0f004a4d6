"""The prediction part alone (index/predicting.py): a :class:`Predictor` over nodes, zones and a candidate set
made here, without a :class:`~spreadwatch.index.SpreadIndex`: what it keeps current event by event (the
prediction epoch, storage, namespaces) and the prediction it adds to a report (NodeResourcesFit's exclusions,
the least allocated node best)."""

from __future__ import annotations

from typing import Any

import pytest
from part_records import parsed

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.index import predicting
from spreadwatch.index.predicting import Predictor
from spreadwatch.index.state import CandidateSet, IndexRecords, NamespaceState, Workload
from spreadwatch.model import Controller, Node, Pod
from spreadwatch.report import CandidateLayout, ReportInput, ReportOptions, SpreadReport, build_report
from spreadwatch.scoring import WorkloadRef, ZoneKey, get_profile, representative_pod, zone_key
from spreadwatch.scoring.resource_fit import NODE_RESOURCES_FIT
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile
from spreadwatch.scoring.topology_groups import group_candidates

V129 = get_profile("v1.29")
OPTIONS = ReportOptions(scheduler=default_scheduler_profile())
_CPU = {"requests": {"cpu": "3"}}  # of a node's 4


def _node(name: str, zone: str) -> Node:
    body = node(name, zone, key=GA_ZONE)
    body["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    record = parsed(body)
    assert isinstance(record, Node)
    return record


def _spec() -> dict[str, Any]:
    return {"containers": [{"name": "app", "image": "app:1", "resources": _CPU}]}


class _Index:
    """What a :class:`Predictor` is given: nodes, zones, namespaces, candidate groups and callables."""

    def __init__(self) -> None:
        self.nodes = {n.name: n for n in (_node("n1", "a"), _node("n2", "b"))}
        self.zones: dict[str, ZoneKey | None] = {name: zone_key(n.labels, V129) for name, n in self.nodes.items()}
        self.namespaces: dict[str, NamespaceState] = {}
        by_zone: dict[ZoneKey | None, list[str]] = {self.zones["n1"]: ["n1"], self.zones["n2"]: ["n2"]}
        ctrl = parsed(
            controller("StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, template_spec=_spec())
        )
        assert isinstance(ctrl, Controller)
        self.candidates = CandidateSet(frozenset(self.nodes), CandidateLayout(by_zone, {}), ctrl.template)
        self.web = Workload(ctrl, WorkloadRef.of(ctrl), pod=representative_pod(ctrl, ())[0], selector_text="app=web")
        self.part = Predictor(
            IndexRecords(V129, OPTIONS, self.nodes, self.zones, self.namespaces, {}),
            lambda w: self.candidates,
            lambda: len(self.nodes),
            lambda w: [],
            lambda: tuple(sorted(self.nodes)),
        )
        for n in self.nodes.values():
            self.part.node_applied(None, n)

    def add(self, p: Pod) -> None:
        """A pod the index now holds, told to the prediction part (as ``SpreadIndex.apply`` does)."""
        self.namespaces.setdefault(p.namespace, NamespaceState()).pods[p.name] = p
        self.part.pod_changed(None, p)

    def report(self) -> SpreadReport:
        fields = ReportInput(self.web.ref, V129, "app=web", 1, self.candidates.layout, {}, self.zones, OPTIONS)
        return build_report(fields, "", self.candidates.names)


def _busy_pod() -> Pod:
    record = parsed(pod("db-0", {"app": "db"}, "n1", owners=[owner("StatefulSet", "db")], spec=_spec()))
    assert isinstance(record, Pod)
    return record


def test_every_change_a_prediction_reads_bumps_the_epoch() -> None:
    index = _Index()
    epoch = index.part.prediction_epoch
    index.add(_busy_pod())
    assert index.part.prediction_epoch == epoch + 1
    index.part.namespace_seen("default", {"team": "a"})
    claim = parsed(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"]},
        }
    )
    index.part.apply_storage(claim)
    assert index.part.prediction_epoch == epoch + 3
    assert index.part.storage_keys("PersistentVolumeClaim") == {("default", "data")}
    assert index.part.remove_storage("PersistentVolumeClaim", "default", "data")
    assert not index.part.remove_storage("Pod", "default", "db-0")  # (not storage)
    assert index.part.storage_keys("Pod") is None


def test_the_prediction_excludes_a_node_without_room() -> None:
    index = _Index()
    index.add(_busy_pod())  # 3 of n1's 4 CPUs requested: the next 3-CPU pod fits n2 only
    report = index.part.with_prediction(index.web, index.report())
    prediction = report.prediction
    assert prediction is not None
    assert prediction.best_nodes == ("n2",)
    assert dict(prediction.excluded_nodes) == {NODE_RESOURCES_FIT: 1}
    assert index.part.predicted_outcome(index.web, report, "n2") == "best_node"
    assert index.part.predicted_placements["best_node"] == 1


def test_no_scheduler_profile_no_prediction() -> None:
    index = _Index()
    part = Predictor(
        IndexRecords(V129, ReportOptions(), index.nodes, index.zones, index.namespaces, {}),
        lambda w: index.candidates,
        lambda: 2,
        lambda w: [],
        lambda: ("n1", "n2"),
    )
    epoch = part.prediction_epoch
    part.pod_changed(None, _busy_pod())
    assert (part.prediction_epoch, part.stale_predictions()) == (epoch, set())
    assert part.with_prediction(index.web, index.report()).prediction is None


def test_a_load_change_leaves_no_cache_entry_of_the_loads_before() -> None:
    """The caches keyed by the loads (shape tables, resource vectors, copies, rooms) hold only entries made at
    the current loads once a prediction after a pod event has run: an older epoch's entry is never read again
    (it held ~0.5 MiB a shape table at 5,000 nodes until 64 had piled up). The prediction is the one of a part
    that saw both pods from the start."""
    index = _Index()
    small = {"containers": [{"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "1"}}}]}
    ctrl = parsed(controller("StatefulSet", "api", {"matchLabels": {"app": "api"}}, {"app": "api"},
                             template_spec=small))  # fmt: skip
    api = Workload(ctrl, WorkloadRef.of(ctrl), pod=representative_pod(ctrl, ())[0], selector_text="app=api")
    index.part.with_prediction(api, index.report())  # (another request shape: entries of its own)
    index.part.with_prediction(index.web, index.report())
    index.add(_busy_pod())
    after = index.part.with_prediction(index.web, index.report()).prediction
    part = index.part
    current = (part._node_epoch, part._loads.version, len(part._loads))  # (private: what the caches compare)
    for cache in (part._tables, part._resource_vectors, part._copies, part._rooms):
        assert all(entry[0] == current for entry in cache.values())
    assert part._tables and part._resource_vectors
    fresh = _Index()
    fresh.add(_busy_pod())
    assert after == fresh.part.with_prediction(fresh.web, fresh.report()).prediction


@pytest.mark.parametrize(
    ("held", "entry", "limit", "kept"),
    [
        pytest.param({"a": (1, "x")}, (1, "y"), 4, {"a", "b"}, id="same-epoch:kept"),
        pytest.param({"a": (1, "x")}, (2, "y"), 4, {"b"}, id="epoch-moved:older-dropped"),
        pytest.param({"a": (1, "x"), "c": (1, "z")}, (1, "y"), 2, {"b"}, id="limit-2-held:all-dropped"),
        pytest.param({}, (7, "y"), 1, {"b"}, id="empty:stored"),
    ],
)
def test_put_keeps_one_epoch_and_at_most_limit_entries(
    held: dict[str, tuple[int, str]], entry: tuple[int, str], limit: int, kept: set[str]
) -> None:
    cache = dict(held)
    predicting._put(cache, "b", entry, limit)
    assert set(cache) == kept and cache["b"] == entry


def test_a_groups_slot_vector_is_never_another_groups_object_s() -> None:
    """The slot vectors are cached by ``id(groups)``: an entry left by groups object that is gone, under an id
    reused by a new one, is not returned for it."""
    index = _Index()
    part = index.part
    nodes = list(index.nodes.values())
    both = group_candidates(nodes, (GA_ZONE,), index.zones)  # two groups: slot of n1 → 0, n2 → 1
    only_n2 = group_candidates(nodes[1:], (GA_ZONE,), index.zones)  # one group: n1 in none (1), n2 → 0
    expected = part._group_slots(only_n2).tolist()
    part._group_slot_cache.clear()
    epoch = (part._node_epoch, len(part._loads))
    part._group_slot_cache[id(only_n2)] = (epoch, both, part._group_slots(both))  # (as if both's id were reused)
    assert part._group_slots(only_n2).tolist() == expected != part._group_slots(both).tolist()
