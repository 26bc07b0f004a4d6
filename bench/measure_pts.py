"""The envelope figures of one scoring profile, for the v1.28 (SelectorSpread) / v1.29 (PodTopologySpread)
comparison of ``make bench`` and ``make bench-pts`` (issue 14: v1.29 pod event p99 ≤ 1 ms, cold ≤ 1 s).

:func:`profile_figures` measures the cold full computation, the pod event stream and a cordon for one profile;
:func:`figures_from` takes them from measurements already made; :func:`check_exact` compares, on a sample of
workloads, every candidate's score derived from the index's report with the reference scorer
(``score_pod``) and raises on the first difference. Costs: those of measure_cold and measure_events;
check_exact O(sample × pods).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import naive
from bench_results import ColdResult, IncrementalResult, NodeEventResult, ProfileFigures
from measure_cold import fresh_index, measure_cold, measure_node_event
from measure_events import Event, measure_incremental

from spreadwatch.index import SpreadIndex
from spreadwatch.scoring import Profile, get_profile, representative_pod, score_pod, zone_key
from spreadwatch.snapshot import Snapshot

__all__ = ["COMPARED_PROFILES", "ExactnessError", "check_exact", "exactness", "figures_from", "profile_figures"]

COMPARED_PROFILES = ("v1.28", "v1.29")


class ExactnessError(RuntimeError):
    """A report's derived scores differ from the reference scorer's."""


def check_exact(snapshot: Snapshot, index: SpreadIndex, sample: int, seed: int = 3) -> int:
    """Compare the index's reports with ``score_pod`` on ``sample`` random workloads; returns how many were
    checked (workloads whose report is an error are left out)."""
    profile = index.profile
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    zones = {n.name: zone_key(n.labels, profile) for n in nodes}
    workloads = naive.workloads_of(snapshot)
    checked = 0
    for ctrl in random.Random(seed).sample(workloads, min(sample, len(workloads))):
        report = index.report_for(ctrl.key)
        if report is None or report.health.value == "Error":
            continue
        rs = snapshot.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, _ = representative_pod(ctrl, rs)
        expected = score_pod(pod, nodes, snapshot.pods, index, profile)
        derived = {n: report.score_of(n, zones[n]) for n in expected.scores}
        if derived != dict(expected.scores):
            raise ExactnessError(f"{profile.name} report of {ctrl.key} differs from score_pod")
        checked += 1
    return checked


def figures_from(
    profile: str, cold: ColdResult, inc: IncrementalResult, node: NodeEventResult, checked: int | None = None
) -> ProfileFigures:
    """The side-by-side figures out of full measurements."""
    return ProfileFigures(
        profile=profile,
        cold_s=cold.total_s,
        cold_cpu_s=cold.cpu_s,
        reports=cold.reports,
        p50_us=inc.p50_us,
        p99_us=inc.p99_us,
        cpu_p99_us=inc.cpu_p99_us,
        events_per_s=inc.events_per_s,
        cordon_s=node.cordon_s,
        cordon_dirty=node.dirty,
        checked=checked,
    )


def exactness(snapshot: Snapshot, name: str, sample: int) -> int | None:
    """Workloads of profile ``name`` checked against ``score_pod`` (None for v1.28: the Go plugin and the naive
    algorithm check it)."""
    return None if name == "v1.28" else check_exact(snapshot, fresh_index(snapshot, get_profile(name)), sample)


def profile_figures(
    snapshot: Snapshot, name: str, stream: Sequence[Event], repeats: int, sample: int
) -> ProfileFigures:
    """Cold (median of ``repeats``), the event stream (median of ``repeats`` replays), a cordon and, for any
    profile but v1.28 (checked against the Go plugin instead), exactness on ``sample`` workloads."""
    profile: Profile = get_profile(name)
    cold = measure_cold(snapshot, profile, repeats, what_if=False)
    inc = measure_incremental(snapshot, profile, stream, repeats, what_if=False)
    node = measure_node_event(snapshot, profile)
    return figures_from(name, cold, inc, node, exactness(snapshot, name, sample))
