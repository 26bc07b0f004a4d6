"""The safety part alone (index/safety.py): a :class:`Safety` over bare namespace states, node zones and
candidate sets made here, without a :class:`~spreadwatch.index.SpreadIndex`: owned pods, budget counts, the
workloads each change dirties, and the forecasts it adds to a report."""

from __future__ import annotations

from part_records import parsed

from k8s_objects import budget, controller, owner, pod
from spreadwatch.index.safety import Safety
from spreadwatch.index.state import CandidateSet, IndexRecords, NamespaceState, Workload
from spreadwatch.model import Controller, Pod, PodDisruptionBudget, WorkloadKey
from spreadwatch.report import CandidateLayout, ReportInput, ReportOptions, build_report
from spreadwatch.scoring import WorkloadRef, ZoneKey, get_profile, representative_pod

ZONES: dict[str, ZoneKey | None] = {"a1": ("", "a"), "a2": ("", "a"), "b1": ("", "b")}
WEB = WorkloadKey("default", "StatefulSet", "web")


def _web_pod(name: str, node: str) -> Pod:
    body = pod(name, {"app": "web"}, node, owners=[owner("StatefulSet", "web")], ready_at="2024-01-01T00:00:00Z")
    record = parsed(body)
    assert isinstance(record, Pod)
    return record


class _Index:
    """What a :class:`Safety` is given: namespaces, zones, ``touch``, candidate sets, ReplicaSets by owner, and
    the room for replacements (none: no prediction's loads, as with the prediction off)."""

    def __init__(self) -> None:
        self.ns = NamespaceState()
        ctrl = parsed(controller("StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=3))
        assert isinstance(ctrl, Controller)
        self.ns.controllers["StatefulSet"] = {"web": ctrl}
        self.web = Workload(ctrl, WorkloadRef.of(ctrl), pod=representative_pod(ctrl, ())[0])
        self.ns.workloads[WEB] = self.web
        self.touched: list[WorkloadKey] = []
        by_zone: dict[ZoneKey | None, list[str]] = {("", "a"): ["a1", "a2"], ("", "b"): ["b1"]}
        self.candidates = CandidateSet(frozenset(ZONES), CandidateLayout(by_zone, {}), ctrl.template)
        self.safety = Safety(
            IndexRecords(get_profile("v1.28"), ReportOptions(), {}, ZONES, {"default": self.ns}, {}),
            lambda w, key: self.touched.append(key),
            lambda w: self.candidates,
            lambda ns, name: [],
            lambda w, candidates: None,
        )

    def add(self, p: Pod) -> None:
        """A pod the index now holds, told to the safety part (as ``SpreadIndex.apply`` does)."""
        self.ns.pods[p.name] = p
        self.safety.pod_changed("default", None, p)

    def take(self) -> list[WorkloadKey]:
        out, self.touched = self.touched, []
        return out


def _pdb(min_available: int) -> PodDisruptionBudget:
    record = parsed(budget("web-pdb", {"matchLabels": {"app": "web"}}, min_available=min_available))
    assert isinstance(record, PodDisruptionBudget)
    return record


def test_pods_are_owned_and_dirty_their_workload() -> None:
    index = _Index()
    pods = [_web_pod("web-0", "a1"), _web_pod("web-1", "a2")]
    for p in pods:
        index.add(p)
    assert index.take() == [WEB, WEB]
    assert index.safety.owned_pods("default", "StatefulSet", "web") == pods
    del index.ns.pods["web-0"]
    index.safety.pod_changed("default", pods[0], None)
    assert index.take() == [WEB]
    assert index.safety.owned_pods("default", "StatefulSet", "web") == pods[1:]


def test_a_budget_counts_its_pods_and_dirties_the_workloads_it_selects() -> None:
    index = _Index()
    index.add(_web_pod("web-0", "a1"))
    index.take()
    index.safety.apply_budget(_pdb(1))
    assert index.take() == [WEB]
    assert (index.safety.budget_count(), index.safety.budget_keys()) == (1, {("default", "web-pdb")})
    index.add(_web_pod("web-1", "b1"))
    assert index.take() == [WEB]  # (its owner's workload, and the budget's: one key, touched once)
    index.safety.remove_budget("default", "web-pdb")
    assert index.take() == [WEB]
    assert index.safety.budget_count() == 0


def test_forecasts_from_the_pods_and_the_budget() -> None:
    index = _Index()
    for name, node in (("web-0", "a1"), ("web-1", "a2"), ("web-2", "b1")):
        index.add(_web_pod(name, node))
    index.safety.apply_budget(_pdb(2))
    web = index.web
    profile = get_profile("v1.28")
    fields = ReportInput(
        web.ref, profile, "app=web", 3, index.candidates.layout, {"a1": 1, "a2": 1, "b1": 1}, ZONES, ReportOptions()
    )
    built = build_report(fields, "", index.candidates.names)
    report = index.safety.with_forecasts(web, built, index.safety.own_forecasts(web, built))
    resilience = report.resilience
    assert resilience is not None
    # three Ready pods, minAvailable 2: one disruption allowed; zone a holds two of them
    assert (resilience.pdb_name, resilience.current_healthy, resilience.disruptions_allowed) == ("web-pdb", 3, 1)
    assert resilience.zone_loss is not None
    assert resilience.zone_loss.worst == "a"
    assert report.scale_down is not None
    assert [c.pod for c in report.scale_down.candidates] == ["web-2"]  # a StatefulSet drops its highest ordinal
