"""Exposition of the workload/zone/node families for the fixture cluster (metrics_fixture.py)."""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator
from typing import Any

import pytest
from metrics_fixture import BAD, CACHE, DB, SOLO, SPREAD, index
from prometheus_client import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families as parse_text

from spreadwatch.metrics import (
    MetricsOptions,
    WorkloadCollector,
    chunks,
    freeze,
    gzipped,
    registry_for,
    render,
    wants_gzip,
)
from spreadwatch.metrics import workloads as workloads_module
from spreadwatch.metrics.families import HEALTH_STATES, escape_label_value
from spreadwatch.model import WorkloadKey

Sample = tuple[str, tuple[tuple[str, str], ...], float]

# shop/StatefulSet/db: pods on node-a1 (2) and node-b1 (1); candidates a1, a2 (z-a), b1 (z-b), x (no zone).
# maxNode = 2, zone sums z-a = 2, z-b = 1, maxZone = 2; node part = 100*(2-c)/2, zone part = 100*(2-Z)/2,
# score = int(node*(1-2/3) + zone*2/3), or int(node) on the zoneless node-x:
#   a1: node 0,   zone 0  -> 0          a2: node 100, zone 0  -> int(33.33) = 33
#   b1: node 50,  zone 50 -> int(50.0) = 50      x: node 100 -> 100
# best 100, worst 0; node skew 2 - 0 = 2 (empty candidates exist); zone skew 2 - 1 = 1 -> Imbalanced.
# zone_score: z-a int(0) = 0, z-b int(50) = 50; empty-node score: z-a = a2's 33, z-b = int(100/3 + 50*2/3) = 66.
# 4 nodes (< 100): the scheduler scores all 4, so the next replica is on a best node with probability 1.0.
# Default node series: node_pods on a1 (2) and b1 (1); node_score on the 3 best: x 100, b1 50, a2 33.
# Safety: no db pod is Ready (no conditions), so nothing is left after any loss and the one-Ready-replica budget
# fails already (0 tolerated); its scale-down deletes db-2 (the highest ordinal) from b1: z-a 2, z-b 0, skew 2.
DB_LABELS = 'namespace="shop",kind="StatefulSet",workload="db"'
EXPECTED_DB = f"""\
# HELP spreadwatch_workload_pods Matching pods of the workload on its candidate nodes.
# TYPE spreadwatch_workload_pods gauge
spreadwatch_workload_pods{{{DB_LABELS}}} 3
# HELP spreadwatch_workload_replicas Desired replicas of the workload.
# TYPE spreadwatch_workload_replicas gauge
spreadwatch_workload_replicas{{{DB_LABELS}}} 3
# HELP spreadwatch_workload_candidate_nodes Nodes that pass the workload's taint, unschedulable and affinity filters.
# TYPE spreadwatch_workload_candidate_nodes gauge
spreadwatch_workload_candidate_nodes{{{DB_LABELS}}} 4
# HELP spreadwatch_workload_best_node_score SelectorSpread score of the best candidate node for the next replica \
(0-100; 0-10 for v1.12/v1.16).
# TYPE spreadwatch_workload_best_node_score gauge
spreadwatch_workload_best_node_score{{{DB_LABELS}}} 100
# HELP spreadwatch_workload_worst_node_score SelectorSpread score of the worst candidate node for the next replica \
(0-100; 0-10 for v1.12/v1.16).
# TYPE spreadwatch_workload_worst_node_score gauge
spreadwatch_workload_worst_node_score{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_node_skew Max minus min matching pods over the candidate nodes.
# TYPE spreadwatch_workload_node_skew gauge
spreadwatch_workload_node_skew{{{DB_LABELS}}} 2
# HELP spreadwatch_workload_zone_skew Max minus min matching pods over the candidate zones.
# TYPE spreadwatch_workload_zone_skew gauge
spreadwatch_workload_zone_skew{{{DB_LABELS}}} 1
# HELP spreadwatch_workload_nodes_scored Nodes kube-scheduler scores for the next replica (numFeasibleNodesToFind; \
at most the candidate nodes).
# TYPE spreadwatch_workload_nodes_scored gauge
spreadwatch_workload_nodes_scored{{{DB_LABELS}}} 4
# HELP spreadwatch_workload_health Spread health: 1 for the current state, 0 for the others.
# TYPE spreadwatch_workload_health gauge
spreadwatch_workload_health{{{DB_LABELS},state="Balanced"}} 0
spreadwatch_workload_health{{{DB_LABELS},state="Imbalanced"}} 1
spreadwatch_workload_health{{{DB_LABELS},state="SinglePointOfFailure"}} 0
spreadwatch_workload_health{{{DB_LABELS},state="Unschedulable"}} 0
spreadwatch_workload_health{{{DB_LABELS},state="ZoneOutageUnsafe"}} 0
spreadwatch_workload_health{{{DB_LABELS},state="Skipped"}} 0
spreadwatch_workload_health{{{DB_LABELS},state="Error"}} 0
# HELP spreadwatch_workload_next_pod_schedulable 1 when some node passes the filters for the workload's next \
replica, 0 when it would stay Pending (health Unschedulable: e.g. DoNotSchedule topology spread constraints); no \
sample for Error.
# TYPE spreadwatch_workload_next_pod_schedulable gauge
spreadwatch_workload_next_pod_schedulable{{{DB_LABELS}}} 1
# HELP spreadwatch_workload_skipped 1 when the profile skips the workload (topologySpreadConstraints), else 0.
# TYPE spreadwatch_workload_skipped gauge
spreadwatch_workload_skipped{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_best_node_probability Probability (0-1) that the next replica lands on one of the best \
nodes, the scheduler's window start uniformly random (--window-samples; no sample without it when the window is \
partial).
# TYPE spreadwatch_workload_best_node_probability gauge
spreadwatch_workload_best_node_probability{{{DB_LABELS}}} 1.0
# HELP spreadwatch_workload_best_zone_probability Probability (0-1) that the next replica lands in a best node's \
zone (as best_node_probability).
# TYPE spreadwatch_workload_best_zone_probability gauge
spreadwatch_workload_best_zone_probability{{{DB_LABELS}}} 1.0
# HELP spreadwatch_workload_zone_loss_ready_replicas Ready replicas of the workload left after losing its worst \
zone (no sample without zones).
# TYPE spreadwatch_workload_zone_loss_ready_replicas gauge
spreadwatch_workload_zone_loss_ready_replicas{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_node_loss_ready_replicas Ready replicas of the workload left after losing its worst node.
# TYPE spreadwatch_workload_node_loss_ready_replicas gauge
spreadwatch_workload_node_loss_ready_replicas{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_zone_losses_tolerated Zones that can be lost at once within the workload's budget (its \
PodDisruptionBudget, else one Ready replica); 0 when the worst one breaks it (no sample without zones).
# TYPE spreadwatch_workload_zone_losses_tolerated gauge
spreadwatch_workload_zone_losses_tolerated{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_node_losses_tolerated Nodes that can be lost at once within the workload's budget (its \
PodDisruptionBudget, else one Ready replica); 0 when the worst one breaks it.
# TYPE spreadwatch_workload_node_losses_tolerated gauge
spreadwatch_workload_node_losses_tolerated{{{DB_LABELS}}} 0
# HELP spreadwatch_workload_scale_down_zone_skew Zone skew after the next scale-down by one replica, the worst over \
the pods it may delete (no sample when it would delete none).
# TYPE spreadwatch_workload_scale_down_zone_skew gauge
spreadwatch_workload_scale_down_zone_skew{{{DB_LABELS}}} 2
# HELP spreadwatch_workload_zone_pods Matching pods of the workload in the zone.
# TYPE spreadwatch_workload_zone_pods gauge
spreadwatch_workload_zone_pods{{{DB_LABELS},zone="z-a",region="r1"}} 2
spreadwatch_workload_zone_pods{{{DB_LABELS},zone="z-b",region="r1"}} 1
# HELP spreadwatch_workload_zone_candidate_nodes Candidate nodes of the workload in the zone.
# TYPE spreadwatch_workload_zone_candidate_nodes gauge
spreadwatch_workload_zone_candidate_nodes{{{DB_LABELS},zone="z-a",region="r1"}} 2
spreadwatch_workload_zone_candidate_nodes{{{DB_LABELS},zone="z-b",region="r1"}} 1
# HELP spreadwatch_workload_zone_score The zone's input to the score: SelectorSpread profiles, the zone component \
before weighting, truncated (0-100); v1.29, the zone's matching-pod count (unbounded).
# TYPE spreadwatch_workload_zone_score gauge
spreadwatch_workload_zone_score{{{DB_LABELS},zone="z-a",region="r1"}} 0
spreadwatch_workload_zone_score{{{DB_LABELS},zone="z-b",region="r1"}} 50
# HELP spreadwatch_workload_zone_empty_node_score SelectorSpread score of a candidate node in the zone without \
matching pods.
# TYPE spreadwatch_workload_zone_empty_node_score gauge
spreadwatch_workload_zone_empty_node_score{{{DB_LABELS},zone="z-a",region="r1"}} 33
spreadwatch_workload_zone_empty_node_score{{{DB_LABELS},zone="z-b",region="r1"}} 66
# HELP spreadwatch_workload_node_score SelectorSpread score of the candidate node for the next replica.
# TYPE spreadwatch_workload_node_score gauge
spreadwatch_workload_node_score{{{DB_LABELS},node="node-x",zone="",region=""}} 100
spreadwatch_workload_node_score{{{DB_LABELS},node="node-b1",zone="z-b",region="r1"}} 50
spreadwatch_workload_node_score{{{DB_LABELS},node="node-a2",zone="z-a",region="r1"}} 33
# HELP spreadwatch_workload_node_pods Matching pods of the workload on the candidate node.
# TYPE spreadwatch_workload_node_pods gauge
spreadwatch_workload_node_pods{{{DB_LABELS},node="node-b1",zone="z-b",region="r1"}} 1
spreadwatch_workload_node_pods{{{DB_LABELS},node="node-a1",zone="z-a",region="r1"}} 2
"""


def samples(text: str, openmetrics: bool = False) -> list[Sample]:
    parse = parse_openmetrics if openmetrics else parse_text
    return sorted((s.name, tuple(sorted(s.labels.items())), s.value) for f in parse(text) for s in f.samples)


def test_db_exposition_text_equals_the_worked_example() -> None:
    idx = index()
    text = "".join(WorkloadCollector(idx, MetricsOptions(), workloads={DB}).view().render_text())
    assert text == EXPECTED_DB
    report = idx.report_for(WorkloadKey("shop", "StatefulSet", "db"))
    assert report is not None
    # the worked example is the report's own numbers
    assert (report.pods, report.best_score, report.worst_score, report.node_skew, report.zone_skew) == (3, 100, 0, 2, 1)
    assert [(z.zone, z.zone_score, z.empty_node_score) for z in report.zones] == [("z-a", 0, 33), ("z-b", 50, 66)]


def test_openmetrics_variant_has_the_same_samples_and_no_eof_inside() -> None:
    view = WorkloadCollector(index(), MetricsOptions(), workloads={DB}).view()
    om = "".join(view.render_text(openmetrics=True)) + "# EOF\n"
    assert samples(om, openmetrics=True) == samples(EXPECTED_DB)
    assert om.count("# EOF") == 1


@pytest.mark.parametrize("mode", ["default", "none", "all"])
def test_fast_renderer_equals_prometheus_client_formatting(mode: str) -> None:
    registry = registry_for(index(), MetricsOptions(node_series=mode))  # type: ignore[arg-type]
    fast_text = render(freeze(registry)).decode()
    assert samples(fast_text) == samples(generate_latest(registry).decode())
    fast_om = render(freeze(registry), openmetrics=True).decode()
    assert fast_om.endswith("\n# EOF\n")
    assert samples(fast_om, True) == samples(generate_openmetrics(registry).decode(), True)
    assert samples(fast_om, True) == samples(fast_text)
    help_and_types = {line for line in fast_text.splitlines() if line.startswith("#")}
    assert help_and_types == {line for line in generate_latest(registry).decode().splitlines() if line.startswith("#")}


def _health(text: str) -> dict[tuple[str, str, str], dict[str, float]]:
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for name, labels, value in samples(text):
        if name == "spreadwatch_workload_health":
            d = dict(labels)
            out.setdefault((d["namespace"], d["kind"], d["workload"]), {})[d["state"]] = value
    return out


def test_health_is_one_hot_over_all_five_states() -> None:
    idx = index()
    health = _health(render(registry_for(idx, MetricsOptions())).decode())
    expected = {
        DB: "Imbalanced",
        CACHE: "SinglePointOfFailure",
        SPREAD: "Skipped",
        BAD: "Error",
        SOLO: "Balanced",
    }
    assert set(health) == set(expected)
    for key, state in expected.items():
        report = idx.report_for(key)
        assert report is not None and report.health.value == state
        assert health[key] == {s: (1.0 if s == state else 0.0) for s in HEALTH_STATES}


def test_values_follow_the_reports_for_every_workload() -> None:
    idx = index()
    got: dict[tuple[str, Any], float] = {}
    for name, labels, value in samples(render(registry_for(idx, MetricsOptions())).decode()):
        got[(name, labels)] = value
    for report in idx.reports():
        w = report.workload
        base = (("kind", w.kind), ("namespace", w.namespace), ("workload", w.name))
        assert got[("spreadwatch_workload_pods", base)] == report.pods
        assert got[("spreadwatch_workload_replicas", base)] == report.replicas
        assert got[("spreadwatch_workload_candidate_nodes", base)] == report.candidate_nodes
        assert got[("spreadwatch_workload_skipped", base)] == (1 if report.skipped else 0)
        if report.next_pod_schedulable is not None:
            assert got[("spreadwatch_workload_next_pod_schedulable", base)] == int(report.next_pod_schedulable)
        for zone in report.zones:
            zl = tuple(sorted((*base, ("zone", zone.zone), ("region", zone.region))))
            assert got[("spreadwatch_workload_zone_pods", zl)] == zone.pods
            assert got[("spreadwatch_workload_zone_candidate_nodes", zl)] == zone.candidate_nodes


def test_build_info_and_label_escaping() -> None:
    text = render(registry_for(index("v1.16"), MetricsOptions(node_series="none"))).decode()
    (info,) = [s for s in samples(text) if s[0] == "spreadwatch_build_info"]
    assert dict(info[1])["profile"] == "v1.16" and info[2] == 1.0
    assert escape_label_value('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    assert escape_label_value("plain") == "plain"


def test_a_frozen_view_does_not_see_later_changes() -> None:
    idx = index()
    registry = registry_for(idx, MetricsOptions())
    frozen = freeze(registry)
    from k8s_objects import owner, pod
    from spreadwatch.model import parse_object

    new_pod = pod("db-3", {"app": "db"}, "node-a2", namespace="shop", owners=[owner("StatefulSet", "db")])
    idx.apply(parse_object(new_pod))
    key = ("spreadwatch_workload_pods", (("kind", "StatefulSet"), ("namespace", "shop"), ("workload", "db")))
    before = {(n, lab): v for n, lab, v in samples(render(frozen).decode())}
    after = {(n, lab): v for n, lab, v in samples(render(freeze(registry)).decode())}
    assert before[key] == 3
    assert after[key] == 4


@pytest.mark.parametrize(("compare", "prediction"), [(None, False), ("v1.29", False), (None, True)],
                         ids=["one-profile", "compared", "prediction"])  # fmt: skip
def test_the_operators_scrape_reads_the_reports_as_built_and_builds_none(compare: str | None, prediction: bool) -> None:
    # as_built (the operator's registry): the writer builds each changed report; a scrape never does
    idx = index(compare=compare, prediction=prediction)
    as_built = registry_for(idx, MetricsOptions(), as_built=True)
    pods = ("spreadwatch_workload_pods", (("kind", "StatefulSet"), ("namespace", "shop"), ("workload", "db")))

    def scraped() -> dict[tuple[str, Any], float]:
        return {(n, lab): v for n, lab, v in samples(render(as_built).decode())}

    assert not any(name.startswith("spreadwatch_workload_") for name, _ in scraped())  # nothing built yet
    assert not idx.report_is_current(DB)
    idx.reports()
    assert render(as_built) == render(registry_for(idx, MetricsOptions()))  # built: the same exposition
    from k8s_objects import owner, pod
    from spreadwatch.model import parse_object

    new_pod = pod("db-3", {"app": "db"}, "node-a2", namespace="shop", owners=[owner("StatefulSet", "db")])
    idx.apply(parse_object(new_pod))
    assert scraped()[pods] == 3  # the report as last built ...
    assert not idx.report_is_current(DB)  # ... and the scrape built none
    idx.report_for(DB)  # (the writer, after the debounce)
    assert scraped()[pods] == 4


@pytest.mark.parametrize("openmetrics", [False, True])
def test_chunks_are_the_exposition_in_pieces_of_about_the_size_asked(
    openmetrics: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server streams these: each piece is made when taken and holds about ``size`` bytes (it ends at the
    first block of the collectors' text that reaches the size), never the whole text; joined, they are
    ``render``'s text. (One workload a block here: the fixture is small.)"""
    monkeypatch.setattr(workloads_module, "_BLOCK", 1)
    registry = freeze(registry_for(index(), MetricsOptions(node_series="all")))
    whole = render(registry, openmetrics=openmetrics)
    blocks = [b for c in registry.collectors() if hasattr(c, "render_text") for b in c.render_text(openmetrics)]
    longest = max(len(b.encode()) for b in blocks)
    pieces = list(chunks(registry, openmetrics=openmetrics, size=256))
    assert b"".join(pieces) == whole
    assert len(pieces) >= len(whole) // (256 + longest)  # many pieces, not one text
    assert all(len(piece) < 256 + longest for piece in pieces)


def test_render_text_blocks_are_one_family_of_up_to_block_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each piece of ``render_text`` is a family's header, or lines of that family only, of at most
    ``_BLOCK`` workloads, in the order ``render`` writes them."""
    monkeypatch.setattr(workloads_module, "_BLOCK", 2)
    view = WorkloadCollector(index(), MetricsOptions(node_series="all")).view()
    blocks = list(view.render_text())
    assert len(view.rows) > 2  # several blocks per family
    family = ""
    for block in blocks:
        if block.startswith("# HELP"):
            family = block.split()[2]
            continue
        lines = block.splitlines()
        assert {line.split("{")[0] for line in lines} <= {family}
        workloads = {tuple(line.split("{")[1].split(",")[:3]) for line in lines}
        assert len(workloads) <= 2, block
    monkeypatch.undo()
    assert "".join(blocks) == "".join(
        WorkloadCollector(index(), MetricsOptions(node_series="all")).view().render_text()
    )


def test_gzipped_is_one_gzip_stream_of_the_exposition() -> None:
    """What ``/metrics`` sends a client that accepts gzip: decompressed, exactly the text."""
    registry = freeze(registry_for(index(), MetricsOptions(node_series="all")))
    assert gzip.decompress(b"".join(gzipped(chunks(registry, size=64)))) == render(registry)
    assert gzip.decompress(b"".join(gzipped([]))) == b""


def test_gzipped_takes_its_input_as_it_goes_in_pieces_of_about_the_size_asked() -> None:
    """Each piece is made when taken, from as few input pieces as reach ``size`` bytes of gzip: the whole
    input is never held. (Random hex: zlib emits a deflate block, tens of KiB, at a time.)"""
    rng = random.Random(7)
    text = [rng.randbytes(2048).hex().encode() for _ in range(256)]  # 1 MiB
    taken = 0

    def source() -> Iterator[bytes]:
        nonlocal taken
        for piece in text:
            taken += 1
            yield piece

    out = gzipped(source(), size=8192)
    first = next(out)
    assert taken < len(text)  # made before the input ran out
    rest = list(out)
    assert gzip.decompress(first + b"".join(rest)) == b"".join(text)
    assert len(rest) > 4
    assert all(8192 <= len(piece) < 8192 + 64 * 1024 for piece in [first, *rest[:-1]])


@pytest.mark.parametrize(
    ("accept_encoding", "wanted"),
    [
        ("gzip", True),  # what Prometheus sends
        ("gzip, deflate", True),
        ("deflate, GZIP;q=0.5", True),
        ("*", True),
        ("identity", False),
        ("", False),
        ("gzip;q=0", False),  # refused explicitly
        ("gzip;q=0.0", False),
        ("gzip;q=nonsense", False),
        ("x-gzip", False),
    ],
)
def test_wants_gzip(accept_encoding: str, wanted: bool) -> None:
    assert wants_gzip(accept_encoding) is wanted
