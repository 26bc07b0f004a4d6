"""Profile v1.29 in the incremental index, on seeded random clusters that always exercise PodTopologySpread:
own soft and hard (DoNotSchedule, minDomains) constraints with different selectors per constraint,
hostname/zone/custom keys, inclusion policies, matchLabelKeys, nodes without zone or hostname labels, node
selectors, taints, terminating and terminal pods. Every report's candidates (after PodTopologySpread's
Filter), excluded counts, compliance and derived scores must equal the reference scorer's, and a stream of
updates and deletions applied incrementally must give the same reports as a fresh index."""

from __future__ import annotations

import gc
import random
from collections import Counter
from typing import Any

import pytest

from k8s_objects import GA_ZONE, controller, node, pod, service
from spreadwatch.errors import SelectorError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import WorkloadKey, parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import exclusion_reason, get_profile, representative_pod, score_pod, zone_key
from spreadwatch.scoring.topology import count_pods, plan_spread
from spreadwatch.scoring.topology_filter import compliance
from spreadwatch.scoring.topology_groups import group_candidates, score_groups
from spreadwatch.snapshot import Snapshot, paused_gc

HOST = "kubernetes.io/hostname"
LABEL_SETS = [{"app": "web"}, {"app": "web", "tier": "fe"}, {"tier": "fe"}, {"app": "db", "tier": "be"}, {"app": "db"}]
SELECTORS: list[dict[str, Any] | None] = [
    {"matchLabels": {"app": "web"}},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
    {},
    None,
]


def _node(r: random.Random, i: int) -> dict[str, Any]:
    labels = {} if r.random() < 0.1 else {HOST: f"n{i}"}
    if r.random() < 0.8:
        labels["rack"] = r.choice(["r1", "r2", "r3"])
    if r.random() < 0.5:
        labels["pool"] = "main"
    zone = r.choice([None, "z1", "z2", "z3", "z3"])
    taints = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}] if r.random() < 0.15 else None
    return node(f"n{i}", zone, key=GA_ZONE, labels=labels, taints=taints, unschedulable=r.random() < 0.1)


def _constraint(r: random.Random) -> dict[str, Any]:
    c: dict[str, Any] = {
        "maxSkew": r.randint(1, 5),
        "topologyKey": r.choice([GA_ZONE, HOST, "rack"]),
        "whenUnsatisfiable": "ScheduleAnyway" if r.random() < 0.6 else "DoNotSchedule",
    }
    if c["whenUnsatisfiable"] == "DoNotSchedule" and r.random() < 0.3:
        c["minDomains"] = r.randint(1, 4)
    selector = r.choice(SELECTORS)
    if selector is not None:
        c["labelSelector"] = selector
    if r.random() < 0.2:
        c["matchLabelKeys"] = ["tier"]
    if r.random() < 0.3:
        c["nodeAffinityPolicy"] = r.choice(["Honor", "Ignore"])
    if r.random() < 0.3:
        c["nodeTaintsPolicy"] = r.choice(["Honor", "Ignore"])
    return c


def _workload(r: random.Random, i: int) -> dict[str, Any]:
    labels = dict(r.choice(LABEL_SETS))
    spec: dict[str, Any] = {}
    if r.random() < 0.75:
        spec["topologySpreadConstraints"] = [_constraint(r) for _ in range(r.randint(1, 3))]
    if r.random() < 0.2:
        spec["nodeSelector"] = {"pool": "main"}
    if r.random() < 0.2:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    kind = r.choice(["ReplicaSet", "StatefulSet", "ReplicationController"])
    selector: Any = dict(labels) if kind == "ReplicationController" else {"matchLabels": dict(labels)}
    return controller(kind, f"w{i}", selector, labels, namespace="a", template_spec=spec)


def _pod(r: random.Random, i: int, nodes: int) -> dict[str, Any]:
    return pod(
        f"p{i}",
        dict(r.choice(LABEL_SETS)),
        r.choice([f"n{j}" for j in range(nodes)] + ["", "gone"]),
        namespace=r.choice(["a", "a", "a", "b"]),
        phase=r.choice(["Running", "Running", "Running", "Pending", "Succeeded", "Failed"]),
        deleting=r.random() < 0.1,
    )


def _events(seed: int) -> list[dict[str, Any]]:
    r = random.Random(seed)
    n = r.randint(3, 9)
    objects = [_node(r, i) for i in range(n)]
    objects += [_workload(r, i) for i in range(r.randint(2, 6))]
    objects += [service("s0", {"app": "web"}, "a")] if r.random() < 0.5 else []
    objects += [_pod(r, i, n) for i in range(r.randint(5, 40))]
    r.shuffle(objects)
    # updates: relabel some nodes, move/relabel some pods, delete a few (kind "delete")
    for _ in range(r.randint(0, 15)):
        choice = r.random()
        if choice < 0.3:
            objects.append(_node(r, r.randrange(n)))
        elif choice < 0.8:
            objects.append(_pod(r, r.randrange(40), n))
        else:
            objects.append({"kind": "delete", "target": r.choice(["Pod", "Node"]), "index": r.randrange(n)})
    return objects


def _replay(events: list[dict[str, Any]]) -> tuple[SpreadIndex, Snapshot]:
    index = SpreadIndex(get_profile("v1.29"), ReportOptions(top_n=2))
    state: dict[tuple[str, str, str], Any] = {}
    for i, body in enumerate(events):
        if body["kind"] == "delete":
            kind, name = body["target"], f"{'p' if body['target'] == 'Pod' else 'n'}{body['index']}"
            namespace = "a" if kind == "Pod" else ""
            index.remove(kind, namespace, name)
            state.pop((kind, namespace, name), None)
        else:
            record = parse_object(body)
            assert record is not None
            index.apply(record)
            namespace = getattr(record, "namespace", "") if body["kind"] != "Node" else ""
            state[(body["kind"], namespace, record.name)] = record
        if i % 7 == 0:
            index.reports()  # cached reports must be invalidated exactly
    snapshot = Snapshot()
    for record in state.values():
        snapshot.add(record)
    return index, snapshot


@pytest.mark.parametrize("seed", range(120))
def test_v129_index_equals_fresh_and_reference(seed: int) -> None:
    profile = get_profile("v1.29")
    index, snapshot = _replay(_events(seed))
    fresh = SpreadIndex(profile, ReportOptions(top_n=2))
    fresh.load(snapshot)
    reports = index.reports()
    assert reports == fresh.reports()
    ordered = sorted(snapshot.nodes, key=lambda n: n.name)
    zones = {n.name: zone_key(n.labels, profile) for n in snapshot.nodes}
    for report in reports:
        ctrl = snapshot.controller(report.workload.key)
        assert ctrl is not None
        next_pod, _ = representative_pod(ctrl, ())
        expected = score_pod(next_pod, ordered, snapshot.pods, snapshot, profile)
        derived = {name: report.score_of(name, zones[name]) for name in expected.scores}
        assert derived == dict(expected.scores), report.to_dict()
        layout = index.candidate_layout(report.workload.key)
        assert layout is not None
        listed = sorted(name for names in layout.by_zone.values() for name in names)
        assert listed == sorted(n.name for n in expected.candidates), report.to_dict()
        assert report.candidate_nodes == len(expected.candidates)
        assert dict(report.excluded_nodes) == dict(sorted(Counter(expected.excluded.values()).items()))
        assert report.next_pod_schedulable is bool(expected.candidates)
        assert report.constraints == (compliance(expected.filter) if expected.filter is not None else None)
        assert {e.node for e in report.filtered_nodes or ()} <= set(expected.rejected)
        shown = [report.empty_node_score, *(z.empty_node_score for z in report.zones), *(n.score for n in report.nodes)]
        assert all(0 <= s <= 100 for s in shown), report.to_dict()  # the CRD's bounds


def test_relabelling_an_excluded_node_with_pods_moves_its_pods_between_domains() -> None:
    """x is tainted (never a candidate) but its 2 pods count in its zone (nodeTaintsPolicy Ignore): moving it
    from z2 to z1 must dirty the cached report. Before: z1=1, z2=2 -> n1 raw 1*log4=1.39->1, n2 2.77->3:
    n1 100*(4-1)//3=100, n2 33. After: z1=3, z2=0 -> n1 4.16->4, n2 0: n1 0, n2 100."""
    taint = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}]
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": GA_ZONE,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    }
    objects = [
        node("n1", "z1", key=GA_ZONE),
        node("n2", "z2", key=GA_ZONE),
        node("x", "z2", key=GA_ZONE, taints=taint),
        controller(
            "ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, namespace="a", template_spec=spread
        ),
        pod("p1", {"app": "web"}, "n1", namespace="a"),
        pod("p2", {"app": "web"}, "x", namespace="a"),
        pod("p3", {"app": "web"}, "x", namespace="a"),
    ]
    index = SpreadIndex(get_profile("v1.29"))
    for body in objects:
        record = parse_object(body)
        assert record is not None
        index.apply(record)
    before = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert before is not None
    assert {n.node: n.score for n in before.nodes} == {"n1": 100, "n2": 33}
    index.take_dirty()
    moved = parse_object(node("x", "z1", key=GA_ZONE, taints=taint))
    assert moved is not None
    index.apply(moved)
    assert ("a", "ReplicaSet", "web") in index.take_dirty()[0]
    after = index.report_for(WorkloadKey("a", "ReplicaSet", "web"))
    assert after is not None
    assert {n.node: n.score for n in after.nodes} == {"n1": 0, "n2": 100}


@pytest.mark.parametrize("seed", range(40))
def test_grouped_scores_one_count_map_equal_per_term_maps(seed: int) -> None:
    """``score_groups`` with one count map for every term (``shared``, the index's usual path) gives the same
    numbers as the per-term path handed equal but separate maps (candidates and non-candidates with pods)."""
    profile = get_profile("v1.29")
    _, snapshot = _replay(_events(seed))
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    node_of = {n.name: n for n in nodes}
    zone_of = {n.name: zone_key(n.labels, profile) for n in nodes}
    compared = 0
    for ctrl in snapshot.controllers:
        next_pod, _ = representative_pod(ctrl, ())
        try:
            plan = plan_spread(next_pod, snapshot, profile)
        except SelectorError:
            continue
        if plan.skip_reason:
            continue
        keys = tuple(t.topology_key for t in plan.terms)
        groups = group_candidates([n for n in nodes if exclusion_reason(n, next_pod.template) is None], keys, zone_of)
        one = count_pods(plan.terms[:1], next_pod.namespace, snapshot.pods)[0]
        shared = score_groups(plan, next_pod.template, groups, [one] * len(plan.terms), node_of, shared=True)
        apart = score_groups(plan, next_pod.template, groups, [dict(one) for _ in plan.terms], node_of)
        for scores in (shared, apart):
            assert set(scores.busy) == {name for name in one if name in groups.group_of}
        assert {n: shared.raws[g][k] for n, g, k in shared.rows} == {n: apart.raws[g][k] for n, g, k in apart.rows}
        assert (shared.min_raw, shared.max_raw, shared.domains) == (apart.min_raw, apart.max_raw, apart.domains)
        assert list(shared.group_raw) == list(apart.group_raw)
        assert list(shared.group_pods) == list(apart.group_pods)
        assert (dict(shared.busy), dict(shared.pods)) == (dict(apart.busy), dict(apart.pods))
        compared += 1
    assert compared or not snapshot.controllers


def _shared_groups_cluster(seed: int) -> Snapshot:
    """Many system-default workloads on one candidate set (so on the same candidate groups): nodes in three
    zones and zoneless ones, a few with pods of several workloads, often among each zone's first names."""
    r = random.Random(seed)
    n = r.randint(3, 10)
    snapshot = Snapshot()
    objects = [
        node(f"n{i:02d}", r.choice([None, "z1", "z2", "z3"]), key=GA_ZONE, labels={HOST: f"n{i:02d}"}) for i in range(n)
    ]
    for w in range(r.randint(5, 25)):
        labels = {"app": f"w{w}"}
        objects.append(controller("ReplicaSet", f"w{w}", {"matchLabels": labels}, labels, namespace="a"))
        spread = r.choice([2, 4, n])  # pods on the first nodes only, or anywhere
        for p in range(r.randint(0, 8)):
            objects.append(pod(f"w{w}-{p}", labels, f"n{r.randrange(min(n, spread)):02d}", namespace="a"))
    for body in objects:
        record = parse_object(body)
        assert record is not None
        snapshot.add(record)
    return snapshot


@pytest.mark.parametrize("top_n", [0, 1, 3])
@pytest.mark.parametrize("seed", range(40))
def test_v129_reports_from_shared_memos_equal_cold_ones(seed: int, top_n: int) -> None:
    """The per-group levels and zone-level parts memoized on the candidate groups are shared by workloads with
    the same pods per group: the reports built in one index in either order (each on the memos the ones
    before it filled) equal each workload's report built first, in an index of its own (cold memos)."""
    profile = get_profile("v1.29")
    snapshot = _shared_groups_cluster(seed) if seed % 2 else _replay(_events(seed))[1]
    warm = SpreadIndex(profile, ReportOptions(top_n=top_n))
    warm.load(snapshot)
    first = {r.workload.key: r for r in warm.reports()}
    backwards = SpreadIndex(profile, ReportOptions(top_n=top_n))
    backwards.load(snapshot)
    assert {key: backwards.report_for(key) for key in reversed(first)} == first
    ordered = sorted(snapshot.nodes, key=lambda n: n.name)
    for key, report in first.items():
        cold = SpreadIndex(profile, ReportOptions(top_n=top_n))
        cold.load(snapshot)
        assert cold.report_for(key) == report, key
        ctrl = snapshot.controller(key)
        assert ctrl is not None
        next_pod, _ = representative_pod(ctrl, ())
        expected = score_pod(next_pod, ordered, snapshot.pods, snapshot, profile).scores
        if report.skipped or not expected:
            continue
        best = max(expected.values())
        best_names = sorted(name for name, score in expected.items() if score == best)
        assert (report.best_score, report.worst_score) == (best, min(expected.values())), key
        assert (report.best_nodes, report.best_node_count) == (tuple(best_names[:top_n]), len(best_names)), key
        assert all(expected[e.node] == e.score for e in report.nodes), key



def _memo_sizes(index: SpreadIndex) -> list[tuple[int, int, int]]:
    """Per candidate groups of the index: its levels, shared entries and zone-level parts."""
    groups = index._topo_groups.values()
    return [(len(g.levels), len(g.memo), sum(len(level.memo) for level in g.levels.values())) for g in groups]


def _forget_reports(index: SpreadIndex) -> None:
    for ns in index._ns.values():
        for w in ns.workloads.values():
            w.report = None


@pytest.mark.parametrize("seed", range(20))
def test_v129_memos_grow_only_while_the_gc_is_paused(seed: int) -> None:
    """Reports built one by one with the GC paused fill the memos and equal cold ones (in reverse order);
    rebuilt with the GC running (as incremental rebuilds are), on those memos or on none, they only read
    them: no memo grows, the reports are the same."""
    profile = get_profile("v1.29")
    snapshot = _shared_groups_cluster(seed) if seed % 2 else _replay(_events(seed))[1]
    cold = SpreadIndex(profile, ReportOptions(top_n=2))
    cold.load(snapshot)
    expected = {r.workload.key: r for r in cold.reports()}
    index = SpreadIndex(profile, ReportOptions(top_n=2))
    index.load(snapshot)
    assert gc.isenabled()
    assert {key: index.report_for(key) for key in reversed(expected)} == expected
    assert all(sizes == (0, 0, 0) for sizes in _memo_sizes(index))
    _forget_reports(index)
    with paused_gc():
        assert {key: index.report_for(key) for key in reversed(expected)} == expected
    filled = _memo_sizes(index)
    # (reports on candidates PodTopologySpread's Filter cut down are built on views: their memos die with them)
    shared = [r for r in expected.values() if "PodTopologySpread" not in r.excluded_nodes and not r.skipped]
    assert any(levels for levels, _, _ in filled) or not any(r.nodes for r in shared)
    _forget_reports(index)
    assert {key: index.report_for(key) for key in expected} == expected
    assert _memo_sizes(index) == filled
