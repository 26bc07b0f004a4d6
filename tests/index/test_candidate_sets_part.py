"""The candidate sets alone (index/candidates.py): a :class:`CandidateSets` over nodes and zones kept here,
without a :class:`~spreadwatch.index.SpreadIndex`: one set per scheduling-constraint signature, the filters'
exclusions counted, and a node change dropping only the sets it alters and dirtying their workloads."""

from __future__ import annotations

from typing import Any

from part_records import parsed

from k8s_objects import GA_ZONE, controller, node
from spreadwatch.index.candidates import CandidateSets
from spreadwatch.index.state import IndexRecords, NamespaceState, Workload
from spreadwatch.model import Controller, Node, WorkloadKey
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import WorkloadRef, ZoneKey, get_profile, representative_pod, zone_key

V128 = get_profile("v1.28")
_TAINT = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]


def _workload(name: str, sig: int, node_selector: dict[str, str] | None = None) -> Workload:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "app:1"}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    ctrl = parsed(controller("StatefulSet", name, {"matchLabels": {"app": name}}, {"app": name}, template_spec=spec))
    assert isinstance(ctrl, Controller)
    return Workload(ctrl, WorkloadRef.of(ctrl), pod=representative_pod(ctrl, ())[0], sig=sig)


class _Index:
    """What a :class:`CandidateSets` is given: nodes and zones (kept here, as the index keeps them), a
    namespace with two workloads of two signatures, and ``touch``."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.zones: dict[str, ZoneKey | None] = {}
        self.web, self.db = _workload("web", 0), _workload("db", 1, {"disk": "ssd"})
        self.ns = NamespaceState(workloads={w.ctrl.key: w for w in (self.web, self.db)})
        self.touched: list[WorkloadKey] = []
        records = IndexRecords(V128, ReportOptions(), self.nodes, self.zones, {"default": self.ns}, {})
        self.part = CandidateSets(records, lambda w, key: self.touched.append(key))
        for body in (
            node("n1", "a", key=GA_ZONE, labels={"disk": "ssd"}),
            node("n2", "a", key=GA_ZONE),
            node("n3", "b", key=GA_ZONE, labels={"disk": "ssd"}, taints=_TAINT),
        ):
            self.set(parsed(body))

    def set(self, n: Node) -> None:
        """A node added or changed, as the index takes it: its record and zone, then the part told."""
        old, old_zone = self.nodes.get(n.name), self.zones.get(n.name)
        self.nodes[n.name], self.zones[n.name] = n, zone_key(n.labels, V128)
        self.part.node_changed(old, old_zone, n)


def test_one_set_per_signature_with_the_exclusions() -> None:
    index = _Index()
    web, db = index.part.of(index.web), index.part.of(index.db)
    assert index.part.of(index.web) is web  # cached
    assert (sorted(web.names), dict(web.layout.excluded)) == (["n1", "n2"], {"UntoleratedTaint": 1})
    assert (sorted(db.names), dict(db.layout.excluded)) == (["n1"], {"NodeAffinity": 1, "UntoleratedTaint": 1})
    assert len(index.part) == 2


def test_a_node_change_drops_only_the_sets_it_alters() -> None:
    index = _Index()
    web, db = index.part.of(index.web), index.part.of(index.db)
    index.touched.clear()
    index.set(parsed(node("n2", "a", key=GA_ZONE, labels={"disk": "ssd"})))  # n2 joins db's set, stays in web's
    assert index.touched == [index.db.ctrl.key]
    assert index.part.of(index.web) is web
    assert index.part.of(index.db) is not db
    assert sorted(index.part.of(index.db).names) == ["n1", "n2"]
    web, db = index.part.of(index.web), index.part.of(index.db)
    index.touched.clear()
    index.set(parsed(node("n1", "a", key=GA_ZONE, labels={"disk": "ssd", "team": "x"})))  # a label no filter reads
    assert index.touched == []
    assert index.part.of(index.web) is web
    assert index.part.of(index.db) is db
    index.set(parsed(node("n4", "b", key=GA_ZONE)))  # a new node: in web's set, and one more excluded from db's
    assert sorted(index.touched) == sorted([index.web.ctrl.key, index.db.ctrl.key])
    assert sorted(index.part.of(index.web).names) == ["n1", "n2", "n4"]
    assert dict(index.part.of(index.db).layout.excluded) == {"NodeAffinity": 1, "UntoleratedTaint": 1}
