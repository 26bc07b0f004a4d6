"""summary: health counts, the worst workloads, zones, and best-node-set changes between profiles, checked
against the example snapshot and against from-scratch scoring (``explain_workload``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whatif_clusters import Cluster, clusters

from spreadwatch.analysis import WorkloadFilter, explain_workload
from spreadwatch.report import Health
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.selectors import parse_selector
from spreadwatch.snapshot import Snapshot, load_snapshot
from spreadwatch.whatif import BASELINE_PROFILE, COMPARED_PROFILE, summarize_cluster

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster.yaml"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
GA_ZONE = "topology.kubernetes.io/zone"


def test_health_counts_and_worst_first() -> None:
    """The README's analyze table: 2 SinglePointOfFailure, 1 Imbalanced, 1 Error, 1 Skipped, 3 Balanced."""
    summary = summarize_cluster(load_snapshot([EXAMPLE]), get_profile("v1.28"), worst=4)
    assert summary.workloads == 8
    assert dict(summary.health) == {
        "Unschedulable": 0,
        "SinglePointOfFailure": 2,
        "ZoneOutageUnsafe": 0,
        "Imbalanced": 1,
        "Error": 1,
        "Skipped": 1,
        "Balanced": 3,
    }
    # SPOF first (cache: zone skew 2, node skew 2 before postgres: 2, 1), then Imbalanced, then Error
    assert [r.workload.name for r in summary.worst] == ["cache", "postgres", "checkout", "broken"]
    assert all(r.health is not Health.BALANCED for r in summary.worst)


def test_zones_count_nodes_candidates_and_pods() -> None:
    snap = load_snapshot([EXAMPLE])
    summary = summarize_cluster(snap, get_profile("v1.28"))
    zone_of = {n.name: n.labels.get(BETA_ZONE) or n.labels.get(GA_ZONE, "") for n in snap.nodes}
    for z in summary.zones:
        names = [n for n, zone in zone_of.items() if zone == z.zone]
        assert z.nodes == len(names)
        free = [n for n in snap.nodes if n.name in names and not n.unschedulable and not n.taints]
        assert z.candidate_nodes == len(free)
        assert z.pods == sum(1 for p in snap.pods if p.node_name in names and p.counts)
    assert sum(z.nodes for z in summary.zones) == len(snap.nodes)


def _explicit_changes(snap: Snapshot, profile: str) -> tuple[int, int]:
    """(workloads scored, workloads whose best node set differs from v1.28's), from ``explain_workload``."""
    changed = scored = 0
    for ctrl in snap.controllers:
        if ctrl.kind == "ReplicaSet" and ctrl.controller is not None:
            continue  # a Deployment's ReplicaSet: the Deployment is the workload
        ref = f"{ctrl.kind}/{ctrl.namespace}/{ctrl.name}"
        sets = []
        for name in (BASELINE_PROFILE, profile):
            scores = explain_workload(snap, ref, get_profile(name)).scores
            if scores is None:  # invalid selector: Error under every profile
                break
            best = max(scores.scores.values(), default=0)
            sets.append({n for n, s in scores.scores.items() if s == best})
        else:
            scored += 1
            changed += sets[0] != sets[1]
    return scored, changed


def test_best_node_set_changes_match_from_scratch_scores() -> None:
    snap = load_snapshot([EXAMPLE])
    summary = summarize_cluster(snap, get_profile("v1.28"))
    assert [c.profile for c in summary.changes] == [p for p in PROFILES if p != BASELINE_PROFILE]
    for change in summary.changes:
        assert (change.workloads, change.changed) == _explicit_changes(snap, change.profile), change.profile
    v116 = next(c for c in summary.changes if c.profile == "v1.16")
    assert v116.changed > 0  # v1.16 reads only the beta zone labels: some example nodes lose their zone


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster=clusters(), ga=st.lists(st.booleans(), min_size=6, max_size=6))
def test_compressed_comparison_equals_explicit_sets(cluster: Cluster, ga: list[bool]) -> None:
    """Zones under beta or GA labels per node (v1.16/v1.12 read only beta ones): the summary's compressed
    comparison counts exactly the workloads whose explicit best node sets differ."""
    objects = []
    for obj in cluster.objects:
        zone = obj["metadata"].get("labels", {}).get(BETA_ZONE) if obj["kind"] == "Node" else None
        if zone is not None and ga[int(obj["metadata"]["name"][1:])]:
            objects.append({**obj, "metadata": {**obj["metadata"], "labels": {GA_ZONE: zone}}})
        else:
            objects.append(obj)
    snap = Snapshot.from_objects(objects)
    for change in summarize_cluster(snap, get_profile("v1.28")).changes:
        assert (change.workloads, change.changed) == _explicit_changes(snap, change.profile), change.profile


def test_compared_profile_is_reported_or_its_absence_noted() -> None:
    summary = summarize_cluster(load_snapshot([EXAMPLE]), get_profile("v1.28"))
    rows = [c.profile for c in summary.changes]
    if COMPARED_PROFILE in PROFILES:
        assert COMPARED_PROFILE in rows and not summary.notes
    else:
        assert COMPARED_PROFILE not in rows
        assert summary.notes == (
            "profile v1.29 (PodTopologySpread) is not registered in this build: no v1.28 -> v1.29 comparison",
        )


def test_namespace_and_selector_filters() -> None:
    snap = load_snapshot([EXAMPLE])
    shop = summarize_cluster(snap, get_profile("v1.28"), only=WorkloadFilter(["shop"]), worst=10)
    assert shop.workloads == 4 and {r.workload.namespace for r in shop.worst} == {"shop"}
    assert sum(z.pods for z in shop.zones) == sum(1 for p in snap.pods if p.namespace == "shop" and p.counts)
    web = summarize_cluster(snap, get_profile("v1.28"), only=WorkloadFilter(selector=parse_selector("app=checkout")))
    assert web.workloads == 1 and web.health["Imbalanced"] == 1
    assert summarize_cluster(snap, get_profile("v1.28"), worst=0).worst == ()
