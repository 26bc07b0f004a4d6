"""PodTopologySpread's Filter alone (index/hard_filter.py): a :class:`HardFilter` over nodes, zones and a
candidate set made here, without a :class:`~spreadwatch.index.SpreadIndex`: the candidates a DoNotSchedule
zone constraint passes, and the workloads a node change dirties."""

from __future__ import annotations

from part_records import parsed, zoned_nodes

from k8s_objects import GA_ZONE, controller, node
from spreadwatch.index.hard_filter import HardFilter
from spreadwatch.index.state import CandidateSet, IndexRecords, NamespaceState, Workload
from spreadwatch.model import Controller, WorkloadKey
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import WorkloadRef, get_profile, representative_pod
from spreadwatch.scoring.topology_filter import plan_filter
from spreadwatch.selectors import Selector

V129 = get_profile("v1.29")
WEB = WorkloadKey("default", "StatefulSet", "web")
_ZONE_SPREAD = {
    "containers": [{"name": "app", "image": "app:1"}],
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": GA_ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ],
}


def _no_default() -> Selector:
    raise AssertionError("the pod's own constraints need no default selector")


class _Index:
    """What a :class:`HardFilter` is given; web's pods: two in zone a (n1, n2), none in zone b (n3)."""

    def __init__(self) -> None:
        self.nodes, self.zones, layout = zoned_nodes((("n1", "a"), ("n2", "a"), ("n3", "b")), V129)
        body = controller(
            "StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, template_spec=_ZONE_SPREAD
        )
        ctrl = parsed(body)
        assert isinstance(ctrl, Controller)
        pod = representative_pod(ctrl, ())[0]
        self.web = Workload(ctrl, WorkloadRef.of(ctrl), pod=pod, counts={"n1": 1, "n2": 1}, counting=True)
        self.web.hard = plan_filter(pod, V129, _no_default)
        self.ns = NamespaceState(workloads={WEB: self.web})
        self.candidates = CandidateSet(frozenset(self.nodes), layout, ctrl.template)
        self.touched: list[WorkloadKey] = []
        records = IndexRecords(V129, ReportOptions(), self.nodes, self.zones, {"default": self.ns}, {})
        self.part = HardFilter(records, lambda w, key: self.touched.append(key))


def test_a_zone_constraint_rejects_the_fuller_zone() -> None:
    index = _Index()
    hard = index.web.hard
    assert hard is not None
    per_term = index.part.hard_counts(index.web, hard)
    assert per_term == [{"n1": 1, "n2": 1}]
    f = index.part.filtered(index.web, index.candidates, (GA_ZONE,), per_term, index.web.counts)
    # zone a: 2 pods, zone b: 0; a pod in zone a makes the skew 3 - 0 > maxSkew 1: only n3 passes
    assert (f.rejected, f.missing) == (2, 0)
    assert [n for n in ("n1", "n2", "n3") if f.passes(n)] == ["n3"]
    facts = index.part.filter_facts(f, index.candidates)
    assert [(e.node, e.pods) for e in facts.filtered_nodes] == [("n1", 1), ("n2", 1)]


def test_a_node_change_dirties_the_workloads_with_hard_constraints() -> None:
    index = _Index()
    old = index.nodes["n3"]
    relabelled = parsed(node("n3", "a", key=GA_ZONE))
    index.part.node_changed(old, relabelled)
    assert index.touched == [WEB]
    index.part.node_changed(relabelled, relabelled)  # (labels and taints unchanged: nothing to do)
    assert index.touched == [WEB]
