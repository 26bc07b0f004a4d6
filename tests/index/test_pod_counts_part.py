"""Pod counting alone (index/counting.py): a :class:`PodCounts` over namespace states kept here, without a
:class:`~spreadwatch.index.SpreadIndex`: label groups, a workload's counts by node, the workloads a pod event
dirties, and the counts of a workload added after its pods (bulk load)."""

from __future__ import annotations

from typing import Any

from part_records import parsed

from k8s_objects import controller, pod
from spreadwatch.index.counting import PodCounts
from spreadwatch.index.state import IndexRecords, LabelGroup, NamespaceState, Workload
from spreadwatch.index.workloads import anchors
from spreadwatch.model import Controller, Pod, WorkloadKey
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import SelectorMode, SpreadSelector, WorkloadRef, get_profile
from spreadwatch.selectors import selector_from_set


def _pod(name: str, app: str, node: str, **kw: Any) -> Pod:
    record = parsed(pod(name, {"app": app}, node, **kw))
    assert isinstance(record, Pod)
    return record


def _workload(ns: NamespaceState, app: str) -> Workload:
    """A workload counting the pods labelled ``app``, filed under its anchor as workloads.py files one."""
    ctrl = parsed(controller("StatefulSet", app, {"matchLabels": {"app": app}}, {"app": app}))
    assert isinstance(ctrl, Controller)
    selector = SpreadSelector(SelectorMode.OWNER_MERGED, (selector_from_set({"app": app}),))
    w = Workload(ctrl, WorkloadRef.of(ctrl), selector=selector, counting=True)
    w.anchors = anchors(selector)
    ns.workloads[ctrl.key] = w
    for item in w.anchors or ():
        ns.anchor_index.setdefault(item, set()).add(ctrl.key)
    return w


class _Index:
    """What a :class:`PodCounts` is given: the namespaces (made on demand) and ``touch``."""

    def __init__(self) -> None:
        self.spaces: dict[str, NamespaceState] = {}
        self.touched: list[WorkloadKey] = []
        records = IndexRecords(get_profile("v1.28"), ReportOptions(), {}, {}, self.spaces, {})
        self.part = PodCounts(records, self.ns_of, lambda w, key: self.touched.append(key))

    def ns_of(self, name: str) -> NamespaceState:
        return self.spaces.setdefault(name, NamespaceState())


def test_pod_events_count_for_the_matching_workload() -> None:
    index = _Index()
    web = _workload(index.ns_of("default"), "web")
    index.part.apply_pod(_pod("w1", "web", "n1"))
    index.part.apply_pod(_pod("w2", "web", "n1"))
    index.part.apply_pod(_pod("w3", "web", "n2"))
    index.part.apply_pod(_pod("d1", "db", "n1"))  # another label group: web's counts do not change
    assert web.counts == {"n1": 2, "n2": 1}
    assert index.touched == [web.ctrl.key] * 3
    index.part.apply_pod(_pod("w3", "web", "n2", phase="Succeeded"))  # terminal: no longer counts
    assert web.counts == {"n1": 2}
    ns = index.spaces["default"]
    assert index.part.group_matches(ns, LabelGroup({"app": "web"})) == [web.ctrl.key]
    index.part.shift(ns, ns.pods["w1"], -1)
    assert web.counts == {"n1": 1}


def test_a_workload_added_after_its_pods_is_counted_from_the_groups() -> None:
    index = _Index()
    held: list[Pod] = []
    pods = [_pod("w1", "web", "n1"), _pod("w2", "web", "n2"), _pod("p", "web", ""), _pod("d1", "db", "n1")]
    index.part.count_bulk(pods, held.append)
    index.part.count_bulk([_pod("w1", "web", "n3")], held.append)  # held already: the event path
    assert [p.node_name for p in held] == ["n3"]
    ns = index.spaces["default"]
    web = _workload(ns, "web")
    index.part.count_first(ns, [web])
    assert web.counts == {"n1": 1, "n2": 1}  # (the unbound pod counts nowhere)
    web.counts = {}
    index.part.recount(ns, web)
    assert web.counts == {"n1": 1, "n2": 1}
