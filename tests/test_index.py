"""The incremental index equals a from-scratch computation after any event stream, for every profile;
and every report derives exactly the scores the reference scorer gives each candidate node."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_objects import GA_ZONE, controller, node, owner, pod, service
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Controller, Node, Pod, Record, Service, WorkloadKey, parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, Profile, get_profile, representative_pod, score_pod, zone_key
from spreadwatch.scoring.topology_filter import compliance
from spreadwatch.snapshot import Snapshot

NAMESPACES = ["a", "b"]
NODES = [f"n{i}" for i in range(5)]
APPS = ["web", "db", "api"]
KINDS = ["Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"]

labels_st = st.fixed_dictionaries(
    {}, optional={"app": st.sampled_from(APPS), "tier": st.sampled_from(["fe", "be"]), "x": st.just("1")}
)
selector_st = st.one_of(
    st.builds(lambda app: {"matchLabels": {"app": app}}, st.sampled_from(APPS)),
    st.builds(
        lambda vals: {"matchExpressions": [{"key": "app", "operator": "In", "values": vals}]},
        st.lists(st.sampled_from(APPS), min_size=1, max_size=2, unique=True),
    ),
    st.just({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
    st.just({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}),
    st.just({"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["db"]}]}),
)


@st.composite
def node_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(NODES))
    zone = draw(st.sampled_from([None, "z1", "z2", "z3"]))
    taints = (
        [{"key": "gpu", "value": "1", "effect": "NoSchedule"}] if draw(st.booleans()) and draw(st.booleans()) else None
    )
    # hostname (mostly there), a custom "rack" key and a "pool" label that nodeSelectors pick (v1.29 domains)
    labels = {"kubernetes.io/hostname": name} if draw(st.integers(0, 4)) < 4 else {}
    if draw(st.integers(0, 3)) < 3:
        labels["rack"] = draw(st.sampled_from(["r1", "r2"]))
    if draw(st.booleans()):
        labels["pool"] = "main"
    return "apply", node(
        name, zone, key=GA_ZONE, labels=labels, taints=taints, unschedulable=draw(st.integers(0, 5)) == 0
    )


_real_selector_st = selector_st.filter(lambda s: "Bogus" not in str(s))
spread_constraint_st = st.fixed_dictionaries(
    {
        "maxSkew": st.integers(1, 3),
        "topologyKey": st.sampled_from([GA_ZONE, "kubernetes.io/hostname", "rack"]),
        "whenUnsatisfiable": st.sampled_from(["ScheduleAnyway", "ScheduleAnyway", "DoNotSchedule"]),
        # mostly a real selector; sometimes {} (counts nothing) or none at all (selects nothing)
        "labelSelector": st.one_of(_real_selector_st, _real_selector_st, _real_selector_st, st.just({}), st.none()),
    },
    optional={
        "matchLabelKeys": st.just(["tier"]),
        "nodeAffinityPolicy": st.sampled_from(["Honor", "Ignore"]),
        "nodeTaintsPolicy": st.sampled_from(["Honor", "Ignore"]),
        "minDomains": st.integers(1, 4),  # (kept on DoNotSchedule constraints only, as the API requires)
    },
).map(
    lambda c: {
        k: v
        for k, v in c.items()
        if v is not None and (k != "minDomains" or c["whenUnsatisfiable"] == "DoNotSchedule")
    }
)


@st.composite
def pod_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    ns = draw(st.sampled_from(NAMESPACES))
    owners = None
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["ReplicaSet", "StatefulSet", "ReplicationController"]))
        owners = [owner(kind, f"{kind.lower()}-{draw(st.integers(0, 2))}")]
    body = pod(
        f"p{draw(st.integers(0, 11))}",
        draw(labels_st),
        draw(st.sampled_from([*NODES, "", "gone"])),
        namespace=ns,
        owners=owners,
        phase=draw(st.sampled_from(["Running", "Running", "Pending", "Succeeded", "Failed"])),
        deleting=draw(st.integers(0, 6)) == 0,
    )
    return "apply", body


@st.composite
def service_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    selector = draw(
        st.one_of(st.none(), st.builds(lambda a: {"app": a}, st.sampled_from(APPS)), st.just({"tier": "fe"}))
    )
    return "apply", service(f"s{draw(st.integers(0, 2))}", selector, draw(st.sampled_from(NAMESPACES)))


@st.composite
def controller_event(draw: st.DrawFn, soft_spread: bool = False) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(KINDS))
    ns = draw(st.sampled_from(NAMESPACES))
    name = f"{kind.lower()}-{draw(st.integers(0, 2))}"
    template = draw(labels_st)
    spec: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    if soft_spread and draw(st.integers(0, 3)) < 3:
        spec["topologySpreadConstraints"] = draw(st.lists(spread_constraint_st, min_size=1, max_size=3))
    elif draw(st.integers(0, 6)) == 0:
        hard = {"maxSkew": 1, "topologyKey": GA_ZONE, "whenUnsatisfiable": "DoNotSchedule"}
        spec["topologySpreadConstraints"] = [hard]
    elif draw(st.integers(0, 3)) == 0:
        spec["topologySpreadConstraints"] = draw(st.lists(spread_constraint_st, min_size=1, max_size=3))
    if draw(st.integers(0, 5)) == 0:
        spec["nodeSelector"] = {"pool": "main"}
    if kind == "ReplicationController":
        selector: Any = draw(st.one_of(st.none(), st.builds(lambda a: {"app": a}, st.sampled_from(APPS))))
    else:
        selector = draw(selector_st)
    owners = None
    if kind == "ReplicaSet" and draw(st.booleans()):
        owners = [owner("Deployment", f"deployment-{draw(st.integers(0, 2))}")]
    annotations = {"deployment.kubernetes.io/revision": str(draw(st.integers(1, 3)))}
    return "apply", controller(
        kind,
        name,
        selector,
        template,
        namespace=ns,
        replicas=draw(st.integers(0, 4)),
        owners=owners,
        annotations=annotations,
        template_spec=spec,
    )


@st.composite
def delete_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(["Pod", "Node", "Service", *KINDS]))
    if kind == "Node":
        return "delete", {"kind": kind, "namespace": "", "name": draw(st.sampled_from(NODES))}
    names = {"Pod": f"p{draw(st.integers(0, 11))}", "Service": f"s{draw(st.integers(0, 2))}"}
    name = names.get(kind, f"{kind.lower()}-{draw(st.integers(0, 2))}")
    return "delete", {"kind": kind, "namespace": draw(st.sampled_from(NAMESPACES)), "name": name}


events_st = st.lists(
    st.one_of(
        node_event(),
        pod_event(),
        pod_event(),
        pod_event(),
        service_event(),
        service_event(),
        controller_event(),
        controller_event(),
        delete_event(),
        st.just(("read", {})),  # build every report mid-stream: cached reports must be invalidated exactly
    ),
    min_size=5,
    max_size=80,
)


@st.composite
def busy_pod_event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A pod that usually counts: namespace a, bound, running, labels the workload selectors pick."""
    labels = draw(st.sampled_from([{"app": "web"}, {"app": "web", "tier": "fe"}, {"tier": "fe"}, {"app": "db"}]))
    body = pod(
        f"q{draw(st.integers(0, 15))}",
        labels,
        draw(st.sampled_from([*NODES, *NODES, "gone"])),
        namespace=draw(st.sampled_from(["a", "a", "a", "b"])),
        phase=draw(st.sampled_from(["Running", "Running", "Running", "Succeeded"])),
        deleting=draw(st.integers(0, 8)) == 8,
    )
    return "apply", body


#: v1.29: most workloads carry their own topologySpreadConstraints (mixed keys, selectors, policies).
soft_spread_events_st = st.lists(
    st.one_of(
        node_event(),
        node_event(),
        pod_event(),
        busy_pod_event(),
        busy_pod_event(),
        busy_pod_event(),
        busy_pod_event(),
        busy_pod_event(),
        service_event(),
        controller_event(soft_spread=True),
        controller_event(soft_spread=True),
        delete_event(),
        st.just(("read", {})),
    ),
    min_size=5,
    max_size=80,
)


#: Node-heavy streams with frequent reads: a node change must invalidate exactly the cached reports it alters.
node_churn_st = st.lists(
    st.one_of(
        node_event(),
        node_event(),
        node_event(),
        pod_event(),
        pod_event(),
        controller_event(),
        controller_event(),
        delete_event(),
        st.just(("read", {})),
        st.just(("read", {})),
    ),
    min_size=10,
    max_size=60,
)


def _key(record: Record) -> tuple[str, str, str]:
    if isinstance(record, Node):
        return ("Node", "", record.name)
    if isinstance(record, Pod):
        return ("Pod", record.namespace, record.name)
    if isinstance(record, Service):
        return ("Service", record.namespace, record.name)
    assert isinstance(record, Controller)
    return (record.kind, record.namespace, record.name)


def _replay(events: list[tuple[str, dict[str, Any]]], profile: Profile) -> tuple[SpreadIndex, Snapshot]:
    index = SpreadIndex(profile, ReportOptions(top_n=2))
    return index, feed(events, index)


def feed(events: list[tuple[str, dict[str, Any]]], index: SpreadIndex) -> Snapshot:
    """Apply, remove and read as ``events`` say; the objects left at the end, as a snapshot."""
    state: dict[tuple[str, str, str], Record] = {}
    for action, body in events:
        if action == "read":
            index.reports()
        elif action == "apply":
            record = parse_object(body)
            assert record is not None
            index.apply(record)
            state[_key(record)] = record
        else:
            index.remove(body["kind"], body["namespace"], body["name"])
            state.pop((body["kind"], body["namespace"], body["name"]), None)
    snapshot = Snapshot()
    for record in state.values():
        snapshot.add(record)
    return snapshot


@pytest.mark.parametrize("profile_name", list(PROFILES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=events_st)
def test_incremental_equals_from_scratch(profile_name: str, events: list[tuple[str, dict[str, Any]]]) -> None:
    profile = get_profile(profile_name)
    index, snapshot = _replay(events, profile)
    fresh = SpreadIndex(profile, ReportOptions(top_n=2))
    fresh.load(snapshot)
    assert index.reports() == fresh.reports()


@pytest.mark.parametrize("profile_name", list(PROFILES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=events_st)
def test_report_scores_match_reference_scorer(profile_name: str, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Every candidate node's score, derived from the sparse report, equals score_pod's for the next pod."""
    profile = get_profile(profile_name)
    index, snapshot = _replay(events, profile)
    for report in index.reports():
        if report.health.value == "Error":
            continue
        ctrl = snapshot.controller(report.workload.key)
        assert ctrl is not None
        next_pod, standin = representative_pod(ctrl, snapshot.controllers_in("ReplicaSet", ctrl.namespace))
        lookup: Any = index  # resolves a Deployment's stand-in ReplicaSet too
        ordered = sorted(snapshot.nodes, key=lambda n: n.name)
        expected = score_pod(next_pod, ordered, snapshot.pods, lookup, profile)
        assert report.candidate_nodes == len(expected.scores)
        zones = {n.name: zone_key(n.labels, profile) for n in snapshot.nodes}
        derived = {name: report.score_of(name, zones[name]) for name in expected.scores}
        assert derived == dict(expected.scores), (report.to_dict(), standin)
        assert report.next_pod_schedulable is bool(expected.scores)
        if report.constraints is None:  # (with DoNotSchedule ones, pods also count on the nodes the Filter rejects)
            assert report.pods == sum(expected.counts.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=soft_spread_events_st)
def test_v129_own_constraints_incremental_equals_from_scratch_and_reference(
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    """PodTopologySpread with the workloads' own soft constraints: incremental == fresh index, and every
    candidate's score derived from the report == the reference scorer's."""
    profile = get_profile("v1.29")
    index, snapshot = _replay(events, profile)
    fresh = SpreadIndex(profile, ReportOptions(top_n=2))
    fresh.load(snapshot)
    assert index.reports() == fresh.reports()
    zones = {n.name: zone_key(n.labels, profile) for n in snapshot.nodes}
    ordered = sorted(snapshot.nodes, key=lambda n: n.name)
    for report in index.reports():
        if report.health.value == "Error":
            continue
        ctrl = snapshot.controller(report.workload.key)
        assert ctrl is not None
        next_pod, _ = representative_pod(ctrl, snapshot.controllers_in("ReplicaSet", ctrl.namespace))
        lookup: Any = index
        expected = score_pod(next_pod, ordered, snapshot.pods, lookup, profile)
        derived = {name: report.score_of(name, zones[name]) for name in expected.scores}
        assert derived == dict(expected.scores), report.to_dict()
        assert dict(report.excluded_nodes) == dict(sorted(Counter(expected.excluded.values()).items()))
        assert report.constraints == (compliance(expected.filter) if expected.filter is not None else None)


@pytest.mark.parametrize("profile_name", ["v1.28", "v1.12", "v1.29"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=node_churn_st)
def test_node_churn_with_cached_reports_equals_from_scratch(
    profile_name: str, events: list[tuple[str, dict[str, Any]]]
) -> None:
    profile = get_profile(profile_name)
    index, snapshot = _replay(events, profile)
    fresh = SpreadIndex(profile, ReportOptions(top_n=2))
    fresh.load(snapshot)
    assert index.reports() == fresh.reports()


def _web_index(*nodes: dict[str, Any]) -> SpreadIndex:
    """ReplicaSet ``web`` (no constraints) and StatefulSet ``gpu`` (tolerates gpu taints) in ns a; one web
    pod on n0 and one gpu pod on n1; every report built (cached)."""
    index = SpreadIndex(get_profile("v1.28"))
    gpu_spec = {"tolerations": [{"key": "gpu", "operator": "Exists"}]}
    objects = [
        *nodes,
        controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a"),
        controller(
            "StatefulSet", "gpu", {"matchLabels": {"app": "gpu"}}, {"app": "gpu"}, namespace="a", template_spec=gpu_spec
        ),
        pod("w0", {"app": "web"}, "n0", namespace="a", owners=[owner("ReplicaSet", "web")]),
        pod("g0", {"app": "gpu"}, "n1", namespace="a", owners=[owner("StatefulSet", "gpu")]),
    ]
    for obj in objects:
        record = parse_object(obj)
        assert record is not None
        index.apply(record)
    index.reports()
    index.take_dirty()
    return index


def _apply(index: SpreadIndex, obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    record = parse_object(obj)
    assert record is not None
    index.apply(record)
    return index.take_dirty()[0]


WEB, GPU = ("a", "ReplicaSet", "web"), ("a", "StatefulSet", "gpu")


def test_node_label_change_that_moves_nothing_dirties_no_workload() -> None:
    index = _web_index(node("n0", "z1", key=GA_ZONE), node("n1", "z2", key=GA_ZONE))
    relabelled = node("n0", "z1", key=GA_ZONE, labels={"team": "x"})  # same zone, same filters
    assert _apply(index, relabelled) == set()


def test_node_zone_change_dirties_and_updates_the_zone_counts() -> None:
    index = _web_index(node("n0", "z1", key=GA_ZONE), node("n1", "z2", key=GA_ZONE))
    assert _apply(index, node("n0", "z2", key=GA_ZONE)) == {WEB, GPU}
    report = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert report is not None
    assert [(z.zone, z.pods, z.candidate_nodes) for z in report.zones] == [("z2", 1, 2)]  # both nodes now in z2


def test_gpu_taint_dirties_only_the_workloads_it_excludes() -> None:
    # gpu tolerates the taint: n1 stays its candidate; web loses n1 (UntoleratedTaint).
    index = _web_index(node("n0", "z1", key=GA_ZONE), node("n1", "z2", key=GA_ZONE))
    tainted = node("n1", "z2", key=GA_ZONE, taints=[{"key": "gpu", "value": "1", "effect": "NoSchedule"}])
    assert _apply(index, tainted) == {WEB}
    web = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert web is not None and web.candidate_nodes == 1 and dict(web.excluded_nodes) == {"UntoleratedTaint": 1}


def test_moving_between_exclusion_reasons_updates_the_counts() -> None:
    # n1: cordoned (Unschedulable) → cordoned is checked first, so adding the taint changes nothing for web;
    # uncordoning while tainted moves it from Unschedulable to UntoleratedTaint.
    taint = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}]
    index = _web_index(node("n0", "z1", key=GA_ZONE), node("n1", "z2", key=GA_ZONE, taints=taint, unschedulable=True))
    web = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert web is not None and dict(web.excluded_nodes) == {"Unschedulable": 1}
    assert WEB in _apply(index, node("n1", "z2", key=GA_ZONE, taints=taint))
    web = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert web is not None and dict(web.excluded_nodes) == {"UntoleratedTaint": 1}


def test_service_added_after_workload_changes_its_selector() -> None:
    """Regression: a Service created after a workload must be merged into that workload's selector."""
    profile = get_profile("v1.28")
    events = [
        ("apply", controller("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a")),
        ("apply", service("s0", {"app": "web"}, "a")),
    ]
    index, snapshot = _replay(events, profile)
    fresh = SpreadIndex(profile)
    fresh.load(snapshot)
    assert index.reports()[0].selector == fresh.reports()[0].selector == "app=web,app=web"


@pytest.mark.parametrize("profile_name", ["v1.28", "v1.12", "v1.29"])
def test_bulk_load_equals_events_with_a_repeated_pod_and_an_empty_service_selector(profile_name: str) -> None:
    """``load`` counts pods in bulk and looks Services up by one selector label; a pod listed twice (the second
    wins) and a Service whose selector is an empty map (it selects every pod of the namespace) give the same
    reports as the same records applied one event at a time."""
    profile = get_profile(profile_name)
    records: list[Record] = [parse_object(node(n, z, key=GA_ZONE)) for n, z in (("n0", "z1"), ("n1", "z2"))]
    records += [
        parse_object(service("all", {"app": "web"}, "a")),
        Service("a", "everything", {}),
        parse_object(pod("p0", {"app": "web"}, "n0", namespace="a")),
        parse_object(pod("p0", {"app": "web"}, "n1", namespace="a")),
        parse_object(pod("p1", {"app": "web"}, "n0", namespace="a")),
        parse_object(controller("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a")),
    ]
    snapshot = Snapshot()
    for record in records:
        snapshot.add(record)
    bulk = SpreadIndex(profile, ReportOptions(top_n=2))
    bulk.load(snapshot)
    events = SpreadIndex(profile, ReportOptions(top_n=2))
    for record in [records[-1], *records[:-1]]:  # the workload first: every pod takes the event path
        events.apply(record)
    assert bulk.reports() == events.reports()
    assert bulk.counts_of(WorkloadKey("a", "ReplicaSet", "rs")) == {"n0": 1, "n1": 1}
    rs = snapshot.controllers[0]
    expected = score_pod(representative_pod(rs)[0], snapshot.nodes, snapshot.pods, snapshot, profile)
    assert bulk.reports()[0].selector == expected.selector_text
