"""``roomForReplacements`` with the resource model, in the index: the candidate nodes outside the lost zone (node)
must take the lost Ready replicas, each with the workload's pod template requests, given their free allocatable
and pod number. Checked on a cluster built for it, against a count from the records themselves (every pod's
requests summed per node by ``scoring.node_load``, copies stepped through ``fit_failures``), and the incremental
index against a from-scratch load after event streams that change the node loads (other workloads' pods, node
allocatable), the stale reports refreshed as the writer's cycle does."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.index import SpreadIndex
from spreadwatch.index.loads import NodeLoads
from spreadwatch.model import Node, Pod, PodNeeds, Resources, parse_object
from spreadwatch.report import ReportOptions, SpreadReport
from spreadwatch.report.safety import Loss
from spreadwatch.scoring import get_profile, representative_pod
from spreadwatch.scoring.resource_fit import FitStrategy, fit_copies, fit_failures, node_load
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile
from spreadwatch.snapshot import Snapshot
from test_index import feed

PROFILE = get_profile("v1.29")
NODES = {"n1": "z1", "n2": "z1", "n3": "z2", "n4": "z2", "n5": None}
READY = "2026-01-01T00:00:10Z"


def _node(name: str, zone: str | None, cpu: str = "1", pods: str = "110") -> dict[str, Any]:
    body = node(name, zone, key=GA_ZONE, labels={"kubernetes.io/hostname": name})
    body["status"] = {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods}}
    return body


def _spec(cpu: str | None) -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu, "memory": "64Mi"}} if cpu is not None else {}
    return {"containers": [{"name": "c", "image": "nginx", "resources": resources}]}


def _web(replicas: int = 3, cpu: str | None = "400m") -> dict[str, Any]:
    return controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=replicas,
                      template_spec=_spec(cpu))  # fmt: skip


def _web_pod(name: str, node_name: str, cpu: str | None = "400m") -> dict[str, Any]:
    return pod(name, {"app": "web"}, node_name, owners=[owner("ReplicaSet", "web")], ready_at=READY, spec=_spec(cpu))


def _index(objects: list[dict[str, Any]], prediction: bool = True) -> SpreadIndex:
    index = SpreadIndex(PROFILE, ReportOptions(top_n=2, scheduler=default_scheduler_profile() if prediction else None))
    index.load(Snapshot.from_objects(objects))
    return index


def _losses(index: SpreadIndex) -> tuple[Loss, Loss]:
    (report,) = [r for r in index.reports() if r.workload.name == "web"]
    assert report.resilience is not None and report.resilience.zone_loss is not None
    return report.resilience.zone_loss, report.resilience.node_loss


#: web's 3 Ready replicas: two in zone z1 (n1, n2), one on n3 in z2; each node 1 CPU, web's pods 400m each
_CLUSTER = [
    _node("n1", "z1"), _node("n2", "z1"), _node("n3", "z2"), _web(),
    _web_pod("w0", "n1"), _web_pod("w1", "n2"), _web_pod("w2", "n3"),
]  # fmt: skip


def test_zone_loss_without_room_outside_the_zone() -> None:
    """Zone z1 holds 2 replicas; outside it only n3: 1000m - 400m = 600m free / 400m = 1 copy < 2."""
    zone, node_loss = _losses(_index(_CLUSTER))
    assert (zone.worst, zone.ready_after, zone.room_for_replacements) == ("z1", 1, False)
    # n1's loss: 1 replacement; n2 and n3 take 1 copy each
    assert (node_loss.worst, node_loss.room_for_replacements) == ("n1", True)


def test_zone_loss_with_room_once_a_node_joins_the_other_zone() -> None:
    """n4 joins z2 with 1 CPU free: n3 1 + n4 2 copies = 3 >= 2; the incremental index says so as a fresh load."""
    index = _index(_CLUSTER)
    assert _losses(index)[0].room_for_replacements is False
    added = _node("n4", "z2")
    index.apply(parse_object(added))
    zone, _ = _losses(index)
    assert zone.room_for_replacements is True
    assert _losses(_index([*_CLUSTER, added])) == _losses(index)


def test_another_workloads_pods_take_the_room_and_the_refresh_sees_it() -> None:
    """n4 is filled by another workload's pod (900m): its 100m left take no copy of web's 400m pod. web's own
    state is unchanged, so its report changes only when the stale reports are refreshed (the writer's cycle)."""
    index = _index([*_CLUSTER, _node("n4", "z2")])
    assert _losses(index)[0].room_for_replacements is True
    filler = pod("big", {"app": "db"}, "n4", spec=_spec("900m"))
    index.apply(parse_object(filler))
    index.refresh_predictions()
    assert _losses(index)[0].room_for_replacements is False
    assert _losses(_index([*_CLUSTER, _node("n4", "z2"), filler])) == _losses(index)


def test_the_pod_number_bounds_a_workload_without_requests() -> None:
    """web requests nothing: n3 takes 110 - 1 = 109 copies, but with pods: 1 allocatable, none."""
    cluster = [_node("n1", "z1"), _node("n2", "z1"), _node("n3", "z2", pods="1"), _web(cpu=None),
               _web_pod("w0", "n1", None), _web_pod("w1", "n2", None), _web_pod("w2", "n3", None)]  # fmt: skip
    assert _losses(_index(cluster))[0].room_for_replacements is False
    cluster[2] = _node("n3", "z2", pods="3")
    assert _losses(_index(cluster))[0].room_for_replacements is True


def test_without_the_prediction_any_candidate_node_outside_is_room() -> None:
    zone, _ = _losses(_index(_CLUSTER, prediction=False))
    assert (zone.worst, zone.room_for_replacements) == ("z1", True)


# --- event streams --------------------------------------------------------------------------------------------

_CPU = st.sampled_from(["100m", "250m", "400m", "700m", "700m", None])


@st.composite
def _node_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(list(NODES)))
    cpu, pods = draw(st.sampled_from(["500m", "1", "2"])), draw(st.sampled_from(["1", "2", "3", "110"]))
    body = _node(name, NODES[name], cpu, pods)
    body["spec"]["unschedulable"] = draw(st.integers(0, 7)) == 0
    return "apply", body


@st.composite
def _pod_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """web's pods (Ready or not) and other pods taking room on the nodes."""
    i = draw(st.integers(0, 9))
    where = draw(st.sampled_from([*NODES, *NODES, ""]))
    if draw(st.integers(0, 2)):
        body = _web_pod(f"w{i}", where, draw(_CPU))
        if draw(st.integers(0, 7)) == 0:
            body["status"].pop("conditions")
    else:
        body = pod(f"o{i}", {"app": "db"}, where, spec=_spec(draw(_CPU)))
    body["status"]["phase"] = draw(st.sampled_from(["Running", "Running", "Running", "Succeeded"]))
    return "apply", body


@st.composite
def _delete_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    if draw(st.booleans()):
        return "delete", {"kind": "Node", "namespace": "", "name": draw(st.sampled_from(list(NODES)))}
    name = draw(st.sampled_from([f"w{i}" for i in range(10)] + [f"o{i}" for i in range(10)]))
    return "delete", {"kind": "Pod", "namespace": "default", "name": name}


_events = st.lists(
    st.one_of(
        _node_event(), _node_event(), _node_event(), _pod_event(), _pod_event(), _pod_event(), _pod_event(),
        _delete_event(),
        st.builds(lambda r, c: ("apply", _web(r, c)), st.integers(1, 6), _CPU),
        st.just(("read", {})),
    ),
    min_size=5,
    max_size=60,
)  # fmt: skip


def _expected_room(snapshot: Snapshot, report: SpreadReport, loss: Loss, zone: bool) -> bool:
    """The room counted from the records: per candidate node outside the lost unit (not cordoned: the nodes
    have no taints), copies of web's next pod added one by one while ``fit_failures`` passes the next, on the
    load summed from the pods on the node; enough when they reach web's lost Ready replicas."""
    nodes = {n.name: n for n in snapshot.nodes}
    unit = {n: NODES[n] for n in nodes} if zone else {n: n for n in nodes}
    held = [p for p in snapshot.pods if p.in_node_info]
    web = [p for p in held if p.controller is not None and p.controller.name == "web" and not p.deleting]
    lost = sum(1 for p in web if p.ready_after is not None and unit.get(p.node_name, p.node_name) == loss.worst)
    ctrl = snapshot.controller(report.workload.key)
    assert ctrl is not None
    needs = representative_pod(ctrl)[0].needs
    room = 0
    for name, n in sorted(nodes.items()):
        if n.unschedulable or unit[name] == loss.worst:
            continue
        on = [p.needs for p in held if p.node_name == name]
        while room < lost and not fit_failures(needs, node_load(n.allocatable, on)):
            on.append(needs)
            room += 1
    return room >= lost


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=_events)
def test_incremental_room_equals_a_fresh_load_and_the_records_count(events: list[tuple[str, dict[str, Any]]]) -> None:
    options = ReportOptions(top_n=2, scheduler=default_scheduler_profile())
    index = SpreadIndex(PROFILE, options)
    snapshot = feed(events, index)
    index.refresh_predictions()
    fresh = SpreadIndex(PROFILE, options)
    fresh.load(snapshot)
    got, want = index.reports(), fresh.reports()
    assert [r.resilience for r in got] == [r.resilience for r in want]
    assert got == want
    for report in got:
        r = report.resilience
        if report.workload.name != "web" or r is None:
            continue
        for loss, zone in ((r.zone_loss, True), (r.node_loss, False)):
            if loss is not None:
                event(f"{'zone' if zone else 'node'} room {loss.room_for_replacements}")
                assert loss.room_for_replacements == _expected_room(snapshot, report, loss, zone), (loss, zone)


# --- the copies per node in numpy ------------------------------------------------------------------------------

_AMOUNT = st.sampled_from([0, 0, 1, 3, 100, 250, 1000])
_SCALARS = st.lists(st.tuples(st.sampled_from(["nvidia.com/gpu", "hugepages-2Mi", "example.com/foo"]), _AMOUNT),
                    max_size=2, unique_by=lambda p: p[0]).map(lambda s: tuple(sorted(s)))  # fmt: skip
_RESOURCES = st.builds(Resources, _AMOUNT, _AMOUNT, _AMOUNT, st.just(0), _SCALARS)
_FREE = st.integers(0, 3000)
_ALLOCATABLE = st.builds(Resources, _FREE, _FREE, _FREE, st.integers(0, 6), _SCALARS)


@settings(max_examples=200, deadline=None)
@given(
    allocatable=st.lists(_ALLOCATABLE, min_size=1, max_size=4),
    pods=st.lists(st.tuples(st.integers(0, 4), _RESOURCES), max_size=12),
    requests=_RESOURCES,
    ignored=st.sampled_from([frozenset(), frozenset({"nvidia.com/gpu"}), frozenset({"example.com"})]),
)
def test_the_loads_copies_are_fit_copies_on_every_node(
    allocatable: list[Resources], pods: list[tuple[int, Resources]], requests: Resources, ignored: frozenset[str]
) -> None:
    """NodeLoads.copies (numpy, every slot at once) equals fit_copies node by node; slot 4 never gets a Node
    (its pods wait node-less): 0 copies there."""
    loads = NodeLoads()
    for i, alloc in enumerate(allocatable):
        loads.set_node(f"n{i}", Node(f"n{i}", {}, allocatable=alloc))
    needs_on: dict[int, list[PodNeeds]] = {}
    for k, (i, r) in enumerate(pods):
        p = Pod("default", f"p{k}", {}, node_name=f"n{i}", phase="Running", needs=PodNeeds(r))
        loads.add(p, 1)
        needs_on.setdefault(i, []).append(p.needs)
    strategy = FitStrategy(ignored_resources=ignored & {"nvidia.com/gpu"}, ignored_groups=ignored - {"nvidia.com/gpu"})
    got = loads.copies(requests, strategy)
    for i in range(5):
        slot = loads.slot.get(f"n{i}")
        if i >= len(allocatable):
            assert slot is None or got[slot] == 0
            continue
        want = fit_copies(PodNeeds(requests), node_load(allocatable[i], needs_on.get(i, [])), strategy)
        assert slot is not None and got[slot] == want, i
