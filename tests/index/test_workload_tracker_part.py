"""Workload tracking alone (index/workloads.py): a :class:`WorkloadTracker` over namespace states kept here,
without a :class:`~spreadwatch.index.SpreadIndex`: a controller becomes a workload with its next pod and
spreading selector, its pods are counted by its part (the pod counts), and the index is told each workload
added, refreshed and dropped."""

from __future__ import annotations

from collections.abc import Mapping

from part_records import parsed

from k8s_objects import controller, pod, service
from spreadwatch.index.state import IndexRecords, NamespaceState, Workload
from spreadwatch.index.workloads import WorkloadTracker
from spreadwatch.model import Controller, WorkloadKey
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile

WEB = WorkloadKey("default", "StatefulSet", "web")


class _Index:
    """What a :class:`WorkloadTracker` is given, and what it tells (recorded)."""

    def __init__(self) -> None:
        self.spaces: dict[str, NamespaceState] = {}
        self.told: list[tuple[str, WorkloadKey]] = []
        records = IndexRecords(get_profile("v1.28"), ReportOptions(), {}, {}, self.spaces, {})
        self.part = WorkloadTracker(
            records, self.ns_of, lambda w, key: None, {}, self.refreshed, self.added, self.dropped
        )

    def ns_of(self, name: str) -> NamespaceState:
        return self.spaces.setdefault(name, NamespaceState())

    def refreshed(self, w: Workload, before: Mapping[str, str] | None) -> None:
        self.told.append(("refreshed", w.ctrl.key))

    def added(self, keys: list[WorkloadKey]) -> None:
        self.told.extend(("added", key) for key in keys)

    def dropped(self, key: WorkloadKey, w: Workload) -> None:
        self.told.append(("dropped", key))


def _web(replicas: int = 2) -> Controller:
    body = controller("StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web", "tier": "front"})
    body["spec"]["replicas"] = replicas
    ctrl = parsed(body)
    assert isinstance(ctrl, Controller)
    return ctrl


def test_a_controller_becomes_a_workload_counting_its_pods() -> None:
    index = _Index()
    index.part.apply_service(parsed(service("web", {"tier": "front"})))
    assert index.part.apply_controller(_web()) is None
    assert index.told == [("added", WEB), ("refreshed", WEB)]
    w = index.spaces["default"].workloads[WEB]
    # v1.28: the Service's selector and the StatefulSet's, merged
    assert (w.counting, w.selector_text) == (True, "app=web,tier=front")
    assert [s.name for s in index.part.services_in("default")] == ["web"]
    assert index.part.controller(WEB) is w.ctrl
    for name, node in (("web-0", "n1"), ("web-1", "n1"), ("other", "n2")):
        labels = {"app": "web", "tier": "front"} if name != "other" else {"tier": "front"}
        index.part.counts.apply_pod(parsed(pod(name, labels, node)))
    assert w.counts == {"n1": 2}


def test_a_change_refreshes_and_a_removal_drops() -> None:
    index = _Index()
    first = _web()
    index.part.apply_controller(first)
    index.told.clear()
    assert index.part.apply_controller(_web(replicas=3)) is first
    assert index.told == [("refreshed", WEB)]
    ns = index.spaces["default"]
    index.part.controller_changed(ns, ns.controllers["StatefulSet"].pop("web"), None)
    assert index.told[-1] == ("dropped", WEB)
    assert WEB not in ns.workloads
