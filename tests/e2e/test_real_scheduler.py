"""spreadwatch's predictions against the real kube-scheduler binaries, one replica at a time.

A control plane of its own (hack/devcluster.py, auto ports) runs kube-scheduler v1.36.4 or v1.28.15
(hack/scheduler/build.sh, cached like the control plane) with a configuration from hack/scheduler/config and
``--vmodule=schedule_one=10``. The cluster mixes what the filters and the spreading plugins read differently:
zoned nodes, a node with the GA and the beta labels, one with only the beta zone label, one without zone, a
cordoned node, a tainted node, and a node that the workloads with a nodeSelector exclude. A Service spans a
Deployment and a ReplicationController; a StatefulSet (Parallel) has a nodeSelector; a Deployment has its own
ScheduleAnyway constraints (matchLabelKeys, node inclusion policies), with pods pinned by hand on the excluded
and the tainted node.

Each step scales one workload up by one. Just before, spreadwatch reports on a fresh dump (the prediction);
the scheduler then binds the new pod. With spreading as the only score the chosen node must be in the
report's best set, and every node the scheduler scored must be a candidate whose score derived from the
report equals the plugin's logged score ÷ its weight. Under kube-scheduler's default profile (every score
plugin, pods requesting resources, three nodes partly filled by another namespace) the spreading part of every
score must still match exactly, while the share of placements in the best set is a measured figure, written to
build/scheduler-default-profile.json (docs/scoring.md §10; ``make bench FIGURES=scheduler-default-profile`` runs
this test to put it in docs/benchmarks.md). Clusters stay under 100 nodes: the scheduler scores every feasible
node.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster
from kube_helpers import ControlPlane, create_namespace, create_node, delete_namespace, unique_name
from kubernetes import client
from scheduler_helpers import Placement, SchedulerLog, apply_objects, place_one, place_or_pend, scheduler_plane

from repo_tools import REPO_ROOT
from spreadwatch.profile_args import load_profile
from spreadwatch.scoring import Profile

pytestmark = pytest.mark.e2e

IMAGE = "registry.invalid/spreadwatch/pause:1.0"
SCHEDULER_CONFIGS = REPO_ROOT / "hack" / "scheduler" / "config"
# bench/scheduler_agreement.py (docs/benchmarks.md's `scheduler-default-profile` figure) names a file of its own
AGREEMENT_FILE = Path(
    os.environ.get("SPREADWATCH_AGREEMENT_FILE") or REPO_ROOT / "build" / "scheduler-default-profile.json"
)
POOL = "spreadwatch.io/pool"
#: the hard-constraint test's figures (placements, candidate sets compared, Pending forecasts)
RESULTS = REPO_ROOT / "build" / "scheduler-hard-constraints.json"
ROUNDS = int(os.environ.get("SPREADWATCH_E2E_SCHEDULER_ROUNDS", "8"))


@dataclass
class Cluster:
    cp: ControlPlane
    api: client.ApiClient
    nodes: dict[str, str]  # role → node name
    tmp: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A control plane for the scheduler tests (no scheduler yet) and eleven nodes by role."""
    with scheduler_plane(tmp_path_factory.mktemp("schedplane")) as (cp, api):
        yield from _nodes_by_role(cp, api, tmp_path_factory)


def _nodes_by_role(cp: ControlPlane, api: client.ApiClient,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:  # fmt: skip
    general = {POOL: "general"}
    specs: dict[str, dict[str, Any]] = {
        "a1": {"zone": "zone-a", "labels": general},
        "a2": {"zone": "zone-a", "labels": general},
        "a3": {"zone": "zone-a", "labels": general},
        "b1": {"zone": "zone-b", "labels": general},
        "b2": {"zone": "zone-b", "labels": general},
        "c1": {"zone": "zone-c", "legacy_labels": True, "labels": general},
        "beta": {"zone": "zone-b", "legacy_labels": True, "modern_labels": False, "labels": general},
        "nozone": {"labels": general},
        "cordoned": {"zone": "zone-a", "unschedulable": True, "labels": general},
        "tainted": {"zone": "zone-c", "taints": [("dedicated", "infra", "NoSchedule")], "labels": general},
        "gpu": {"zone": "zone-b", "labels": {POOL: "gpu"}},
    }
    prefix = unique_name("rs")
    nodes = {role: create_node(api, f"{prefix}-{role}", region="r1" if "zone" in kw else None, **kw).metadata.name
             for role, kw in specs.items()}  # fmt: skip
    yield Cluster(cp, api, nodes, tmp_path_factory.mktemp("dumps"))


def _template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": IMAGE}
    if "resources" in spec:
        container["resources"] = spec.pop("resources")
    return {"metadata": {"labels": labels},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0, **spec}}  # fmt: skip


def _pod(name: str, namespace: str, labels: dict[str, str], node: str, **spec: Any) -> dict[str, Any]:
    """A pod bound by hand (spec.nodeName): no scheduler involved."""
    template = _template(labels, nodeName=node, **spec)
    return {"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
            "metadata": {"name": name, "namespace": namespace, "labels": labels}}  # fmt: skip


def _workloads(namespace: str, own_constraints: bool, resources: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every workload at 0 replicas, the Services, and the pods pinned by hand (see the module docstring)."""
    extra = {"resources": resources} if resources else {}
    meta = lambda name: {"name": name, "namespace": namespace}  # noqa: E731
    web, legacy, db = {"app": "web", "tier": "front"}, {"app": "web-legacy", "tier": "front"}, {"app": "db"}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("front"),
         "spec": {"selector": {"tier": "front"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("db"),
         "spec": {"selector": db, "clusterIP": "None", "ports": [{"port": 5432}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("web"),
         "spec": {"replicas": 0, "selector": {"matchLabels": web}, "template": _template(web, **extra)}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": meta("web-legacy"),
         "spec": {"replicas": 0, "selector": legacy, "template": _template(legacy, **extra)}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("db"),
         "spec": {"replicas": 0, "serviceName": "db", "podManagementPolicy": "Parallel",
                  "selector": {"matchLabels": db},
                  "template": _template(db, nodeSelector={POOL: "general"}, **extra)}},
    ]  # fmt: skip
    if own_constraints:
        own = {"app": "own"}
        constraints = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": own}, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": own}, "matchLabelKeys": ["pod-template-hash"]},
        ]  # fmt: skip
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("own"), "spec": {
            "replicas": 0, "selector": {"matchLabels": own},
            "template": _template(own, nodeSelector={POOL: "general"}, topologySpreadConstraints=constraints,
                                  **extra)}})  # fmt: skip
    return objects


def _pinned(namespace: str, nodes: dict[str, str]) -> list[dict[str, Any]]:
    """Pods bound by hand (spec.nodeName) with the own-constraint Deployment's label: on the node its
    nodeSelector excludes (counted: nodeAffinityPolicy Ignore) and on the tainted node (not counted:
    nodeTaintsPolicy Honor), two on b1 (bad spread the scheduler has to work around)."""
    where = {"own-pin-gpu": nodes["gpu"], "own-pin-tainted": nodes["tainted"], "own-pin-b1-0": nodes["b1"],
             "own-pin-b1-1": nodes["b1"]}  # fmt: skip
    return [_pod(name, namespace, {"app": "own"}, node) for name, node in where.items()]


STEPS = (("Deployment", "web", "app=web"), ("ReplicationController", "web-legacy", "app=web-legacy"),
         ("StatefulSet", "db", "app=db"), ("Deployment", "own", "app=own,pod-template-hash"))  # fmt: skip


def _run_placements(cluster: Cluster, version: str, config: str, profile: Profile, own: bool,
                    resources: dict[str, Any] | None = None) -> tuple[str, list[Placement]]:  # fmt: skip
    namespace = create_namespace(cluster.api)
    try:
        # Everything exists before the scheduler starts: its first listing already holds the pinned pods.
        apply_objects(cluster.cp, _workloads(namespace, own, resources))
        if own:
            apply_objects(cluster.cp, _pinned(namespace, cluster.nodes))
        log = SchedulerLog(devcluster.start_scheduler(cluster.cp.dir, version, SCHEDULER_CONFIGS / config,
                                                      die_with_parent=True))  # fmt: skip
        steps = [s for s in STEPS if own or s[1] != "own"]
        placements = [place_one(cluster.cp, cluster.api, log, profile, namespace, kind, name, selector, cluster.tmp)
                      for _ in range(ROUNDS) for kind, name, selector in steps]  # fmt: skip
    finally:
        devcluster.stop_scheduler(cluster.cp.dir)
        delete_namespace(cluster.api, namespace)
    return namespace, placements


def _check_exact(placements: list[Placement], plugin: str, weight: int) -> None:
    """Every scored node is a candidate with the logged score ÷ weight; the chosen node is a best node."""
    for p in placements:
        assert p.report["health"] != "Error", p.report
        scores = p.logged.get(plugin)
        assert scores is not None and set(p.logged) == {plugin}, (p.pod, sorted(p.logged))
        assert len(scores) == p.report["candidateNodes"], (p.pod, sorted(scores), p.report["excludedNodes"])
        wrong = {n: (s, p.derived[n]) for n, s in scores.items() if s % weight or s // weight != p.derived[n]}
        assert not wrong, f"{p.pod}: node → (logged, spreadwatch ×{weight}): {wrong}\nreport: {p.report}"
        assert p.in_best_set, (f"{p.pod} went to {p.node} (score {p.derived[p.node]}), not to a best node "
                               f"({p.report['bestNodes']}, {p.report['bestScore']})")  # fmt: skip


def test_v129_pod_topology_spread_system_defaults(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4, PodTopologySpread (system defaults) the only score: profile v1.29 exactly."""
    _, placements = _run_placements(cluster, "v1.36", "v1.36-spread-only.yaml", load_profile("v1.29", None), True)
    assert len(placements) == 4 * ROUNDS
    _check_exact(placements, "PodTopologySpread", 2)
    # The pods landed on more than one zone and never on an excluded node.
    chosen = {p.node for p in placements}
    excluded = {cluster.nodes[r] for r in ("cordoned", "tainted")}
    assert not chosen & excluded and len(chosen) > 3, sorted(chosen)


def test_v129_pod_topology_spread_list_defaults(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4 with `List` default constraints; spreadwatch reads the same file."""
    config = SCHEDULER_CONFIGS / "v1.36-spread-only-list.yaml"
    _, placements = _run_placements(cluster, "v1.36", config.name, load_profile("v1.29", str(config)), True)
    _check_exact(placements, "PodTopologySpread", 2)
    # List constraints ignore the nodes without a GA zone label: score 0, never chosen.
    zoneless = {cluster.nodes["beta"], cluster.nodes["nozone"]}
    assert not {p.node for p in placements} & zoneless
    assert all(p.derived[n] == 0 for p in placements if p.workload != "own" for n in zoneless)


def test_v128_selector_spread(cluster: Cluster) -> None:
    """kube-scheduler v1.28.15, SelectorSpread the only score (v1beta3): profile v1.28 exactly. The pods with
    their own constraints are skipped by both: every node scores 0."""
    _, placements = _run_placements(cluster, "v1.28", "v1.28-spread-only.yaml", load_profile("v1.28", None), True)
    assert len(placements) == 4 * ROUNDS
    _check_exact(placements, "SelectorSpread", 1)
    skipped = [p for p in placements if p.workload == "own"]
    assert skipped and all(p.report["skipped"] and set(p.logged["SelectorSpread"].values()) == {0} for p in skipped)


def test_default_profile_agreement(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4's default profile, pods requesting resources, three nodes partly filled by another
    namespace: PodTopologySpread's part of every score still matches exactly; the share of placements in the
    report's best set is measured and written to build/scheduler-default-profile.json."""
    filler = create_namespace(cluster.api)
    try:
        pins = [_pod(f"filler-{i}", filler, {"app": "filler"}, cluster.nodes[role],
                     resources={"requests": {"cpu": "2", "memory": "8Gi"}})
                for i, role in enumerate(("a1", "b1", "c1"))]  # fmt: skip
        apply_objects(cluster.cp, pins)
        requests = {"requests": {"cpu": "250m", "memory": "512Mi"}}
        _, placements = _run_placements(cluster, "v1.36", "v1.36-default.yaml", load_profile("v1.29", None),
                                        True, requests)  # fmt: skip
    finally:
        delete_namespace(cluster.api, filler)
    for p in placements:
        spread = p.logged.get("PodTopologySpread", {})
        assert spread and len(spread) == p.report["candidateNodes"], (p.pod, sorted(p.logged))
        wrong = {n: (s, p.derived[n]) for n, s in spread.items() if s % 2 or s // 2 != p.derived[n]}
        assert not wrong, f"{p.pod}: PodTopologySpread node → (logged, spreadwatch ×2): {wrong}"
    in_best = sum(p.in_best_set for p in placements)
    misses = [{"pod": p.pod, "chosen": p.node, "chosenSpreadScore": p.derived[p.node],
               "bestNodes": p.report["bestNodes"], "bestScore": p.report["bestScore"],
               "logged": {n: {k: v[n] for k, v in sorted(p.logged.items())}
                          for n in sorted({p.node, *p.report["bestNodes"]})}}
              for p in placements if not p.in_best_set]  # fmt: skip
    AGREEMENT_FILE.parent.mkdir(parents=True, exist_ok=True)
    AGREEMENT_FILE.write_text(json.dumps({
        "scheduler": "kube-scheduler v1.36.4, hack/scheduler/config/v1.36-default.yaml",
        "cluster": "11 nodes (3 partly filled: 2 CPU, 8 GiB of 4, 16 GiB requested by another namespace); "
                   "pods request 250m CPU, 512 MiB",
        "placements": len(placements), "inBestSet": in_best, "share": round(in_best / len(placements), 3),
        "spreadScoresExact": True, "plugins": sorted(placements[0].logged), "misses": misses,
    }, indent=2) + "\n")  # fmt: skip
    assert len(placements) == 4 * ROUNDS


# -- PodTopologySpread's Filter: DoNotSchedule constraints, minDomains, the replica that stays Pending ------------

HARD_ROUNDS = int(os.environ.get("SPREADWATCH_E2E_HARD_ROUNDS", "5"))
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _constraint(key: str, action: str, app: str, max_skew: int = 1, **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action,
            "labelSelector": {"matchLabels": {"app": app}}, **extra}  # fmt: skip


def _hard_workloads(namespace: str) -> list[dict[str, Any]]:
    """The issue's four hard-constraint workloads and a minDomains one, at 0 replicas (see the test)."""
    meta = lambda name: {"name": name, "namespace": namespace}  # noqa: E731

    def deployment(name: str, constraints: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
        labels = {"app": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name), "spec": {
            "replicas": 0, "selector": {"matchLabels": labels},
            "template": _template(labels, topologySpreadConstraints=constraints, **spec)}}  # fmt: skip

    tolerate = [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]
    hz2 = {"app": "hz2"}
    return [
        deployment("hz", [_constraint(ZONE, "DoNotSchedule", "hz"),
                          _constraint(HOST, "ScheduleAnyway", "hz", nodeAffinityPolicy="Ignore")]),
        deployment("hh", [_constraint(HOST, "DoNotSchedule", "hh"), _constraint(ZONE, "ScheduleAnyway", "hh")]),
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("hz2"),
         "spec": {"selector": hz2, "clusterIP": "None", "ports": [{"port": 80}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("hz2"), "spec": {
            "replicas": 0, "serviceName": "hz2", "podManagementPolicy": "Parallel", "selector": {"matchLabels": hz2},
            "template": _template(hz2, tolerations=tolerate,
                                  topologySpreadConstraints=[_constraint(ZONE, "DoNotSchedule", "hz2", 2)])}},
        deployment("ht", [_constraint(ZONE, "DoNotSchedule", "ht", nodeAffinityPolicy="Honor",
                                      nodeTaintsPolicy="Honor"),
                          _constraint(HOST, "ScheduleAnyway", "ht", 2)], nodeSelector={POOL: "general"}),
        deployment("md", [_constraint(ZONE, "DoNotSchedule", "md", minDomains=4)]),
    ]  # fmt: skip


def _hard_pins(namespace: str, nodes: dict[str, str]) -> list[dict[str, Any]]:
    """The uneven start, pods bound by hand (label pinned=true, left out of the steps' selectors): hz 2 on a1 and
    1 on b1 (only zone-c passes: one candidate); hh 2 on a1 (a1 over maxSkew); hz2 3 on a2 (zone-a over maxSkew
    2); ht 1 on gpu (nodeSelector: uncounted), 2 on tainted (nodeTaintsPolicy Honor: uncounted), 1 on b1; md 1
    on a3 (minDomains 4 > 3 zones: each zone takes one pod, the fourth stays Pending)."""
    where = {"hz": ("a1", "a1", "b1"), "hh": ("a1", "a1"), "hz2": ("a2", "a2", "a2"),
             "ht": ("gpu", "tainted", "tainted", "b1"), "md": ("a3",)}  # fmt: skip
    return [_pod(f"{app}-pin-{i}", namespace, {"app": app, "pinned": "true"}, nodes[role])
            for app, roles in where.items() for i, role in enumerate(roles)]  # fmt: skip


HARD_STEPS = (("Deployment", "hz", "app=hz,!pinned"), ("Deployment", "hh", "app=hh,!pinned"),
              ("StatefulSet", "hz2", "app=hz2,!pinned"), ("Deployment", "ht", "app=ht,!pinned"))  # fmt: skip


def _check_filtered(p: Placement) -> None:
    """One step against the real scheduler: Pending forecast == FailedScheduling; else the scheduler scored
    exactly the report's candidates (one feasible node: it scores none), each candidate's score derived from the
    report equals the logged PodTopologySpread score ÷ 2 (all 0 when it skips: no ScheduleAnyway constraint),
    and the chosen node is a best node."""
    report = p.report
    assert report["health"] != "Error", report
    if p.failed:
        assert report["nextPodSchedulable"] is False and report["health"] == "Unschedulable", (p.failed, report)
        assert not p.node and report["candidateNodes"] == 0 and not p.candidates, report
        return
    assert report["nextPodSchedulable"] is True, (p.pod, p.node, report)
    assert p.scored == p.candidates, (p.pod, sorted(p.scored), sorted(p.candidates), report["excludedNodes"])
    assert len(p.candidates) == report["candidateNodes"]
    spread = p.logged.get("PodTopologySpread")
    if spread is None:  # PreScore skipped (only DoNotSchedule constraints), or one feasible node: nothing scored
        assert report["skipped"] or len(p.scored) == 1, (p.pod, report)
        assert set(p.derived.values()) <= ({0} if report["skipped"] else set(range(101))), p.derived
    else:
        wrong = {n: (s, p.derived[n]) for n, s in spread.items() if s % 2 or s // 2 != p.derived[n]}
        assert not wrong and set(spread) == p.scored, f"{p.pod}: node → (logged, spreadwatch ×2): {wrong}\n{report}"
    assert p.in_best_set, f"{p.pod} went to {p.node}, not to a best node ({report['bestNodes']}, {report['bestScore']})"


def test_v129_hard_constraints_and_the_pending_replica(cluster: Cluster) -> None:
    """kube-scheduler v1.36.4, PodTopologySpread the only score, every default filter on: workloads with their own
    DoNotSchedule constraints — hard zone + soft hostname, hard hostname + soft zone, a StatefulSet with hard zone
    maxSkew 2 tolerating the taint, hard zone with nodeAffinityPolicy/nodeTaintsPolicy Honor on a nodeSelector
    subset — from an uneven start, one replica at a time; then minDomains 4 over 3 zones until the scheduler
    leaves a pod Pending. Every step: the report's candidates are the nodes the scheduler scored, its scores the
    logged ones ÷ 2, the pod on a best node, and a Pending forecast exactly when the scheduler reports
    FailedScheduling."""
    namespace = create_namespace(cluster.api)
    profile = load_profile("v1.29", None)
    try:
        apply_objects(cluster.cp, [*_hard_workloads(namespace), *_hard_pins(namespace, cluster.nodes)])
        log = SchedulerLog(devcluster.start_scheduler(cluster.cp.dir, "v1.36", SCHEDULER_CONFIGS /
                                                      "v1.36-spread-only.yaml", die_with_parent=True))  # fmt: skip

        def step(kind: str, name: str, selector: str) -> Placement:
            return place_or_pend(cluster.cp, cluster.api, log, profile, namespace, kind, name, selector, cluster.tmp)

        placements = [step(*s) for _ in range(HARD_ROUNDS) for s in HARD_STEPS]
        minimum = [step("Deployment", "md", "app=md,!pinned") for _ in range(3)]  # zones b and c, then Pending
    finally:
        devcluster.stop_scheduler(cluster.cp.dir)
        delete_namespace(cluster.api, namespace)
    for p in [*placements, *minimum]:
        _check_filtered(p)
    assert not any(p.failed for p in placements), [p.failed for p in placements]
    assert [bool(p.failed) for p in minimum] == [False, False, True], [(p.node, p.failed) for p in minimum]
    # What the filter did, by construction (docs/scoring.md §12): hz's first replica had one candidate (zone-c's c1)
    first = placements[0]
    assert first.report["candidateNodes"] == 1 and first.node == cluster.nodes["c1"], first.report
    rejected = {n for p in placements for n in cluster.nodes.values() if n not in p.candidates}
    assert {cluster.nodes["beta"], cluster.nodes["nozone"]} <= rejected  # no GA zone label: missing key
    assert any(p.report.get("filteredNodes") for p in placements)
    hz2 = [p for p in placements if p.workload == "hz2"]
    assert any(cluster.nodes["tainted"] in p.candidates for p in hz2), [sorted(p.candidates) for p in hz2]
    zones = {cluster.nodes[r]: z for r, z in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("b2", "b"),
                                              ("gpu", "b"), ("c1", "c"), ("tainted", "c"))}  # fmt: skip
    assert {zones.get(p.node) for p in minimum[:2]} == {"b", "c"}, [p.node for p in minimum]
    (pending,) = [p for p in minimum if p.failed]
    assert pending.report["unschedulablePlugin"] == "PodTopologySpread", pending.report
    assert "didn't match pod topology spread constraints" in pending.failed, pending.failed
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "scheduler": "kube-scheduler v1.36.4, hack/scheduler/config/v1.36-spread-only.yaml",
        "placements": sum(1 for p in [*placements, *minimum] if p.node),
        "pending": sum(1 for p in minimum if p.failed),
        "candidateSetsEqual": sum(1 for p in [*placements, *minimum] if p.node and p.scored == p.candidates),
        "scoresCompared": sum(len(p.derived) for p in [*placements, *minimum]),
        "singleFeasibleNode": sum(1 for p in [*placements, *minimum] if p.node and len(p.scored) == 1),
    }, indent=2) + "\n")  # fmt: skip
