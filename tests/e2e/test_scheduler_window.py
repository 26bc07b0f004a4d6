"""The scheduler's window against the real kube-scheduler: 300 nodes, so it scores 144 per pod.

A control plane of its own with 300 nodes in zones a/b/c (120/100/80, names in zone order, created before
the scheduler starts so that it meets them in name order, as the model assumes) and kube-scheduler with
spreading as the only score (adaptive percentageOfNodesToScore: 50 − 300/125 = 48 % → 144 nodes),
``--vmodule=schedule_one=10`` so that it logs every scored node: v1.28.15 with SelectorSpread (weight 1,
profile v1.28; its window-local zone sums re-rank nodes, so the model's probabilities are well below 1) and
v1.36.4 with PodTopologySpread (weight 2, profile v1.29; window-local weights and min/max). A ReplicaSet is
scaled up one replica at a time, PLACEMENTS (v1.28) or PLACEMENTS/2 (v1.36) times. Before each step
spreadwatch's index (loaded once from a dump, then fed each bound pod) gives the all-node best nodes and the
window model's exact probability that the next pod lands on one of them. After it:

* the scheduler scored exactly ``nodesScored`` nodes (its window, read from its log);
* spreadwatch's reference scorer on that window (``score --nodes WINDOW``) gives exactly the logged scores
  (÷ the weight), and the chosen node is one of the window's best;
* at the end, the number of placements on an all-node best node is compared with the model's expectation,
  the sum of the per-step probabilities Σp. The spread allowed is the larger of the model's (√Σp(1−p), as
  if the windows were independent) and the one measured on real runs (:data:`MEASURED_RUNS`: the root mean
  square of their deviations from Σp, per placement): the scheduler's start index is not random (it moves
  by the nodes it examined), so its runs may vary more than independent windows would. The test asserts
  Σp ± 3.89 of that spread (99.99 %: a test that failed a run in ten by chance would prove nothing); the
  figures, with the model's 95 % interval, go to build/scheduler-window.json.

The whole-profile prediction (test_whole_profile_prediction_in_the_window): kube-scheduler v1.36.4 with its
default profile (every score plugin) on the same nodes, PLACEMENTS // 5 replicas. Before each step the index's
``prediction`` (equal to the reference's, with its window probability); after it the scheduler scored exactly
``nodesScored`` nodes, the reference prediction scored on that window alone gives every logged plugin score,
and the chosen node is one of the window's predicted best nodes. The placements on an all-node predicted best
node and the model's expectation go to build/scheduler-window.json (the model ignores that TaintToleration,
NodeAffinity, InterPodAffinity and PodTopologySpread normalise over the window: docs/scoring.md §13).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hack import devcluster
from kube_helpers import ControlPlane, create_namespace, create_node, wait_for
from kubernetes import client
from scheduler_helpers import scheduler_plane

from repo_tools import REPO_ROOT
from spreadwatch.analysis import predict_workload
from spreadwatch.index import SpreadIndex
from spreadwatch.model import Pod, WorkloadKey, parse_object
from spreadwatch.profile_args import load_profile, load_scheduler_profile
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import representative_pod, score_pod
from spreadwatch.snapshot import Snapshot, load_snapshot
from spreadwatch.whatif import candidate_scores

pytestmark = pytest.mark.e2e

ZONES = {"a": 120, "b": 100, "c": 80}
#: (placements on a best node, Σp expected) of five real runs of 200 SelectorSpread placements (docs/scoring.md):
#: deviations 2.0, 2.6, −8.3, −0.1 and 11.0, a root mean square of 6.3 — what the model's √Σp(1−p) gives
#: (6.3 to 6.5). Under PodTopologySpread p = 1 at every step: 100 of 100, no spread.
MEASURED_RUNS = {
    "SelectorSpread": ((124, 122.0), (125, 122.4), (112, 120.3), (126, 126.1), (136, 125.0)),
    "PodTopologySpread": ((100, 100.0),),
}
_MEASURED_PLACEMENTS = {"SelectorSpread": 200, "PodTopologySpread": 100}
PLACEMENTS = int(os.environ.get("SPREADWATCH_E2E_WINDOW_PLACEMENTS", "200"))
CONFIGS = REPO_ROOT / "hack" / "scheduler" / "config"
RESULT_FILE = REPO_ROOT / "build" / "scheduler-window.json"
KINDS = "nodes,namespaces,pods,services,rc,rs,sts,deploy"
IMAGE = "registry.invalid/spreadwatch/pause:1.0"
_SCORE_LINE = re.compile(
    r'"Plugin scored node for pod" pod="(?P<pod>[^"]+)" plugin="(?P<plugin>[^"]+)" node="(?P<node>[^"]+)" '
    r"score=(?P<score>-?\d+)"
)


class _Log:
    """kube-scheduler's log, read on from where the last read stopped: pod → node → logged score of ``plugin``."""

    def __init__(self, path: Path, plugin: str) -> None:
        self.path = path
        self.plugin = plugin
        self.offset = 0
        self.scores: dict[str, dict[str, int]] = {}

    def scores_of(self, pod: str) -> dict[str, int] | None:
        with self.path.open("rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        end = chunk.rfind(b"\n") + 1  # complete lines only
        self.offset += end
        for match in _SCORE_LINE.finditer(chunk[:end].decode(errors="replace")):
            if match["plugin"] == self.plugin:
                self.scores.setdefault(match["pod"], {})[match["node"]] = int(match["score"])
        return self.scores.get(pod)


@dataclass
class Cluster:
    cp: ControlPlane
    api: client.ApiClient


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with scheduler_plane(tmp_path_factory.mktemp("windowplane")) as (cp, api):
        names = [(f"w-{z}-{i:03d}", z) for z, count in ZONES.items() for i in range(count)]
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda nz: create_node(api, nz[0], zone=f"zone-{nz[1]}", region="r1"), names))
        yield Cluster(cp, api)


def _replicaset(namespace: str) -> dict[str, Any]:
    labels = {"app": "web"}
    spec = {"containers": [{"name": "app", "image": IMAGE}], "terminationGracePeriodSeconds": 0}
    template = {"metadata": {"labels": labels}, "spec": spec}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": namespace},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": template}}  # fmt: skip


def _pods(core: client.CoreV1Api, namespace: str) -> list[dict[str, Any]]:
    """The namespace's pods as plain JSON objects (the client's model classes are slow to build by the
    hundred, on every poll)."""
    items: list[dict[str, Any]] = json.loads(core.list_namespaced_pod(namespace, _preload_content=False).data)["items"]
    return items


def _scale_up(api: client.ApiClient, namespace: str, replicas: int) -> dict[str, Any]:
    """Scale the ReplicaSet to ``replicas`` and wait until the scheduler has bound its new pod."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    known = {p["metadata"]["name"] for p in _pods(core, namespace)}
    apps.patch_namespaced_replica_set_scale("web", namespace, {"spec": {"replicas": replicas}})

    def bound() -> dict[str, Any] | None:
        fresh = [p for p in _pods(core, namespace) if p["metadata"]["name"] not in known]
        return fresh[0] if fresh and fresh[0]["spec"].get("nodeName") else None

    found: dict[str, Any] = wait_for(bound, timeout=60, interval=0.05, message=f"replica {replicas} to be bound")
    return found


def _logged(log: _Log, pod: str, step: int) -> dict[str, int]:
    """The node → score the scheduler logged for ``pod`` (waiting for its lines)."""
    found: dict[str, int] = wait_for(lambda: log.scores_of(pod), timeout=30, interval=0.05,
                                     message=f"the scheduler's scores of placement {step}")  # fmt: skip
    return found


@pytest.mark.parametrize(
    ("version", "profile_name", "plugin", "weight", "placements"),
    [
        pytest.param("v1.28", "v1.28", "SelectorSpread", 1, PLACEMENTS, id="v1.28.15 SelectorSpread"),
        pytest.param("v1.36", "v1.29", "PodTopologySpread", 2, PLACEMENTS // 2, id="v1.36.4 PodTopologySpread"),
    ],
)
def test_window_model_against_the_real_scheduler(
    cluster: Cluster, tmp_path: Path, version: str, profile_name: str, plugin: str, weight: int, placements: int
) -> None:
    cp, api = cluster.cp, cluster.api
    config = CONFIGS / f"{version}-spread-only.yaml"
    log = _Log(devcluster.start_scheduler(cp.dir, version, config, die_with_parent=True), plugin)
    namespace = create_namespace(api)
    cp.kubectl("apply", "-f", "-", input=json.dumps(_replicaset(namespace)))
    dump = tmp_path / "dump.json"
    dump.write_text(cp.kubectl("get", KINDS, "-A", "-o", "json", timeout=120).stdout)
    snapshot = load_snapshot([dump])
    profile = load_profile(profile_name, str(config))
    index = SpreadIndex(profile, ReportOptions(max_nodes=1000))
    index.load(snapshot)
    key = WorkloadKey(namespace, "ReplicaSet", "web")
    ctrl = snapshot.controller(key)
    assert ctrl is not None
    next_pod, _ = representative_pod(ctrl, ())
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    assert len(nodes) == 300
    pods: list[Pod] = []
    on_best, expected, variance = 0, 0.0, 0.0
    zone_hits, zone_expected = 0, 0.0
    for step in range(1, placements + 1):
        report = index.report_for(key)
        model = index.window_model(key)
        assert report is not None and model is not None
        assert report.nodes_scored == model.size == 144, (report.nodes_scored, model.size)
        odds = model.odds(samples=len(nodes))
        assert odds.exact and odds.best_node is not None and odds.best_zone is not None
        scores = candidate_scores(index, report)
        best = {n for n, s in scores.items() if s == report.best_score}
        best_zones = {n.split("-")[1] for n in best}
        pod = _scale_up(api, namespace, step)
        chosen = pod["spec"]["nodeName"]
        logged = _logged(log, f"{namespace}/{pod['metadata']['name']}", step)
        assert len(logged) == model.size, f"step {step}: the scheduler scored {len(logged)} nodes"
        window = sorted(logged)
        mine = score_pod(next_pod, nodes, [*snapshot.pods, *pods], index, profile, node_names=window)
        assert {n: s * weight for n, s in mine.scores.items()} == logged, f"step {step}: window scores differ"
        assert logged[chosen] == max(logged.values()), f"step {step}: {chosen} is not a best node of its window"
        on_best += chosen in best
        zone_hits += chosen.split("-")[1] in best_zones
        expected += odds.best_node
        variance += odds.best_node * (1.0 - odds.best_node)
        zone_expected += odds.best_zone
        record = parse_object({**pod, "apiVersion": "v1", "kind": "Pod"})
        assert isinstance(record, Pod)
        pods.append(record)
        index.apply(record)
    half = 1.96 * math.sqrt(variance)
    RESULT_FILE.parent.mkdir(exist_ok=True)
    results = json.loads(RESULT_FILE.read_text()) if RESULT_FILE.exists() else {}
    results[f"{version} {plugin}"] = {
        "placements": placements, "nodesScored": 144, "onBestNode": on_best, "expectedOnBestNode": round(expected, 2),
        "interval95": [round(expected - half, 2), round(expected + half, 2)], "inBestZone": zone_hits,
        "expectedInBestZone": round(zone_expected, 2)}  # fmt: skip
    RESULT_FILE.write_text(json.dumps(results, indent=2) + "\n")
    devcluster.stop_scheduler(cp.dir)
    wide = 3.89 * max(math.sqrt(variance), measured_spread(plugin, placements))
    assert abs(on_best - expected) <= wide, (
        f"{on_best} of {placements} placements on a best node; the model expects {expected:.1f} ± {wide:.1f}"
        f" (99.99 % of the model's or the measured spread, the larger; the model's 95 %: ± {half:.1f})"
    )


def measured_spread(plugin: str, placements: int) -> float:
    """The standard deviation of the on-best-node count that real runs of ``plugin`` showed
    (:data:`MEASURED_RUNS`: the root mean square of their deviations from Σp), scaled to ``placements`` (a sum
    of that many steps: √ of the count). O(runs)."""
    runs = MEASURED_RUNS[plugin]
    rms = math.sqrt(sum((hits - want) ** 2 for hits, want in runs) / len(runs))
    return rms * math.sqrt(placements / _MEASURED_PLACEMENTS[plugin])


def _plugin_scores(path: Path, pod: str) -> dict[str, dict[str, int]] | None:
    """node → plugin → weighted score the scheduler logged for ``pod`` (None: no line yet)."""
    out: dict[str, dict[str, int]] = {}
    for match in _SCORE_LINE.finditer(path.read_text(errors="replace")):
        if match["pod"] == pod:
            out.setdefault(match["node"], {})[match["plugin"]] = int(match["score"])
    return out or None


def test_whole_profile_prediction_in_the_window(cluster: Cluster, tmp_path: Path) -> None:
    cp, api = cluster.cp, cluster.api
    config = CONFIGS / "v1.36-default.yaml"
    log = devcluster.start_scheduler(cp.dir, "v1.36", config, die_with_parent=True)
    namespace = create_namespace(api)
    cp.kubectl("apply", "-f", "-", input=json.dumps(_replicaset(namespace)))
    dump = tmp_path / "dump.json"
    dump.write_text(cp.kubectl("get", KINDS, "-A", "-o", "json", timeout=120).stdout)
    snapshot = load_snapshot([dump])
    profile, scheduler = load_profile("v1.29", str(config)), load_scheduler_profile(str(config))
    index = SpreadIndex(profile, ReportOptions(max_nodes=1000, scheduler=scheduler))
    index.load(snapshot)
    key = WorkloadKey(namespace, "ReplicaSet", "web")
    ref = f"ReplicaSet/{namespace}/web"
    pods: list[Pod] = []
    on_best, expected = 0, 0.0
    placements = max(1, PLACEMENTS // 5)
    for step in range(1, placements + 1):
        now = Snapshot()
        now.add_all([*snapshot.nodes, *snapshot.namespaces, *snapshot.services, *snapshot.controllers,
                     *snapshot.claims, *snapshot.volumes, *snapshot.pods, *pods])  # fmt: skip
        report = index.report_for(key)
        assert report is not None and report.prediction is not None
        block = report.prediction
        _, whole = predict_workload(now, ref, scheduler, profile)
        assert (block.best_score, block.best_node_count, block.best_node_probability) == (
            whole.best_score, len(whole.best_nodes), whole.probability), f"step {step}: index != reference"
        assert block.best_node_probability is not None
        pod = _scale_up(api, namespace, step)
        chosen = pod["spec"]["nodeName"]
        name = f"{namespace}/{pod['metadata']['name']}"
        logged = wait_for(partial(_plugin_scores, log, name), timeout=30, interval=0.1,
                          message=f"the scheduler's scores of placement {step}")  # fmt: skip
        assert len(logged) == report.nodes_scored == 144, f"step {step}: the scheduler scored {len(logged)} nodes"
        _, window = predict_workload(now, ref, scheduler, profile, scored=set(logged))
        wrong = {n: (got, dict(window.scores.get(n, {}))) for n, got in logged.items()
                 if got != dict(window.scores.get(n, {}))}  # fmt: skip
        assert not wrong, f"step {step}: node → (logged, predicted on the window): {dict(list(wrong.items())[:5])}"
        assert chosen in window.best_nodes, f"step {step}: {chosen} is not a predicted best node of its window"
        on_best += chosen in whole.best_nodes
        expected += block.best_node_probability
        record = parse_object({**pod, "apiVersion": "v1", "kind": "Pod"})
        assert isinstance(record, Pod)
        pods.append(record)
        index.apply(record)
    RESULT_FILE.parent.mkdir(exist_ok=True)
    results = json.loads(RESULT_FILE.read_text()) if RESULT_FILE.exists() else {}
    results["v1.36 default profile (prediction)"] = {
        "placements": placements, "nodesScored": 144, "onPredictedBestNode": on_best,
        "expectedOnPredictedBestNode": round(expected, 2), "windowScoresExact": True}  # fmt: skip
    RESULT_FILE.write_text(json.dumps(results, indent=2) + "\n")
    devcluster.stop_scheduler(cp.dir)
