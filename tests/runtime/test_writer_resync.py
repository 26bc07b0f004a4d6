"""The writer's resync and budget: the first resync as the leader checks every workload (skipping reports
whose listed digest matches), later ones only what differs from what this replica wrote or is missing; when
more workloads are due than the bucket allows, material changes (new report, health, best nodes) go first.
On a manual clock with the in-memory report API."""

from __future__ import annotations

import pytest
from handler_fakes import Pipeline, deployment, ev, pipeline, pod_of, run, web_cluster

from spreadwatch.model import WorkloadKey
from spreadwatch.runtime.writing.status import content_digest
from spreadwatch.runtime.writing.store import DIGEST_ANNOTATION
from spreadwatch.runtime.writing.writer import MATERIAL_AFTER


def _three(p: Pipeline) -> None:
    """web, api and db: one Balanced Deployment each (pods on node-a1, node-b1, node-c1)."""
    for name in ("web", "api", "db"):
        p.feed(*web_cluster(name=name))
    p.settle()


def _resync(p: Pipeline) -> int:
    """One resync alone (no writes): the workloads it left pending."""
    run(p.writer.resync())
    return p.writer.pending


def test_a_later_resync_with_nothing_changed_requeues_nothing() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    writes, checked = len(p.api.writes()), p.writer.stats.skipped_unchanged
    assert p.writer.stats.resyncs == 1
    assert _resync(p) == 0
    p.clock.advance(61)
    p.settle()  # the periodic resync in a cycle
    assert p.writer.stats.resyncs == 3
    assert len(p.api.writes()) == writes
    assert p.writer.stats.skipped_unchanged == checked  # not even rebuilt and compared


def test_a_later_resync_requeues_reports_that_differ_or_are_missing() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    web = p.api.objects[("shop", "deployment-web")]["spec"]["workloadRef"]
    p.api.put("shop", "deployment-web", web, {"health": "Balanced", "pods": 99})  # another writer's report
    del p.api.objects[("shop", "deployment-api")]  # kubectl delete spreadreport
    writes = len(p.api.writes())
    assert _resync(p) == 2  # db's report is what this replica wrote: not queued
    p.settle()
    assert sorted(c.name for c in p.api.writes()[writes:]) == ["deployment-api", "deployment-web"]
    assert p.report("shop", "deployment-web")["pods"] == 3
    assert p.report("shop", "deployment-api")["pods"] == 3
    assert _resync(p) == 0  # all current again


def test_a_report_pointing_at_another_owner_is_requeued() -> None:
    p = pipeline(resync_period=60.0)
    _three(p)
    obj = p.api.objects[("shop", "deployment-db")]
    obj["spec"]["workloadRef"]["uid"] = "uid-of-an-older-db"  # same status and digest, another owner
    assert _resync(p) == 1
    p.settle()
    assert p.api.objects[("shop", "deployment-db")]["spec"]["workloadRef"]["uid"] == "uid-db"


def test_the_first_resync_of_each_leadership_checks_every_workload() -> None:
    first = pipeline()
    _three(first)
    second = pipeline()  # a new leader (a restart) over the same reports
    second.api = second.writer.store.api = first.api  # type: ignore[assignment]
    for name in ("web", "api", "db"):
        second.feed(*web_cluster(name=name))
    second.writer.collect()
    second.writer.debouncer.clear()  # only what the resync queues
    writes = len(first.api.writes())
    assert _resync(second) == 3  # every live workload, however its report looks
    second.settle()
    assert len(first.api.writes()) == writes  # each skipped: the listed digest matches the computed status
    assert second.writer.stats.skipped_unchanged == 3
    assert _resync(second) == 0
    second.leader = False
    second.step()  # a standby forgets
    second.leader = True
    assert _resync(second) == 3  # leading again: check everything once more


def test_a_new_leader_keeps_the_last_placement_its_predecessor_wrote() -> None:
    """lastPlacement is what the writing replica saw happen: a new leader that has seen no binding since keeps
    the listed one (no rewrite without it), and keeps it in its own next write."""
    first = pipeline()
    _three(first)
    stored = first.api.objects[("shop", "deployment-web")]
    placement = {"pod": "web-abc-9", "node": "node-b1", "outcome": "best_node", "time": "2026-11-25T00:00:00Z",
                 "consecutiveMisses": 0}  # fmt: skip
    stored["status"]["lastPlacement"] = placement  # (as the first leader wrote it after a binding)
    stored["metadata"]["annotations"][DIGEST_ANNOTATION] = content_digest(stored["status"]).hex()
    second = pipeline()
    second.api = second.writer.store.api = first.api  # type: ignore[assignment]
    for name in ("web", "api", "db"):
        second.feed(*web_cluster(name=name))
    writes = len(first.api.writes())
    second.settle()
    assert len(first.api.writes()) == writes  # nothing rewritten: the placement is part of what is kept
    second.feed(ev("MODIFIED", deployment("web", generation=2)))  # a real change: one write, placement kept
    second.settle()
    assert [c.name for c in first.api.writes()[writes:]] == ["deployment-web"]
    assert first.api.status("shop", "deployment-web")["lastPlacement"] == placement


# --- material changes first ---------------------------------------------------------------------------


def _changes(p: Pipeline) -> None:
    """Three due workloads, oldest first: web and api with a count-only change (their generation), db with a
    material one (all its pods on one node: another health and other best nodes)."""
    p.feed(ev("MODIFIED", deployment("web", generation=2)))
    p.clock.advance(0.1)
    p.feed(ev("MODIFIED", deployment("api", generation=2)))
    p.clock.advance(0.1)
    p.feed(*[ev("ADDED", pod_of("db", 10 + i, "node-a1")) for i in range(6)])
    p.clock.advance(p.writer.debounce + 0.01)


@pytest.mark.parametrize(
    ("rate", "web_age", "order"),
    [
        pytest.param(1.0, 0.0, ["db", "web", "api"], id="1 write/s, 3 due: material first"),
        pytest.param(100.0, 0.0, ["web", "api", "db"], id="100 writes/s, 3 due: oldest first"),
        # the age of web's change when the cycle runs (api's is 0.1 s less): at MATERIAL_AFTER (5 s) or more
        # a count-only change counts as material (newer material changes never starve it), oldest first
        pytest.param(1.0, MATERIAL_AFTER + 0.15, ["web", "api", "db"], id="1 write/s, web 5.15 s, api 5.05 s"),
        pytest.param(1.0, MATERIAL_AFTER + 0.05, ["web", "db", "api"], id="1 write/s, web 5.05 s, api 4.95 s"),
    ],
)
def test_material_changes_go_first_only_when_the_bucket_is_short(rate: float, web_age: float, order: list[str]) -> None:
    p = pipeline(max_writes_per_second=rate, write_burst=1)
    p.writer.max_in_flight = 1
    _three(p)
    p.clock.advance(10)  # the bucket refilled (to its burst of 1)
    _changes(p)
    if web_age:  # _changes and settle() each advance the clock by debounce + 0.01 s: web's change 0.2 s before
        p.clock.advance(web_age - 0.2 - 2 * (p.writer.debounce + 0.01))
    keys = {n: WorkloadKey("shop", "Deployment", n) for n in ("web", "api", "db")}
    store = p.writer.store
    material = {n: store.is_material(k, p.index.report_for(k)) for n, k in keys.items()}  # type: ignore[arg-type]
    assert material == {"web": False, "api": False, "db": True}
    writes = len(p.api.writes("apply"))
    p.settle()
    assert [c.name for c in p.api.writes("apply")[writes:]] == [f"deployment-{n}" for n in order]
    assert p.report("shop", "deployment-db")["health"] != "Balanced"
    assert p.report("shop", "deployment-web")["observedGeneration"] == 2


def test_a_new_report_is_material() -> None:
    p = pipeline()
    p.feed(*web_cluster())
    key = WorkloadKey("shop", "Deployment", "web")
    report = p.index.report_for(key)
    assert report is not None
    assert p.writer.store.is_material(key, report)
    p.settle()
    assert not p.writer.store.is_material(key, report)
