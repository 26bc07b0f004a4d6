"""The operator at the envelope on a real API server, as the chart runs it (``make bench-envelope``).

    .venv/bin/python bench/envelope.py --scale 1.0 --out build/envelope.json      # ~15 min load, ~10 GiB
    .venv/bin/python bench/envelope.py --scale 0.02 --churn-seconds 20 --burst 10 --resync-period 5  # e2e size

1. A private control plane (hack/devcluster.py: free ports, a temp dir, kube-controller-manager without the
   workload controllers, so nothing but this harness adds, scales or deletes pods), the CRD, and a cluster
   shaped like ``bench/synth.py`` at ``--scale`` (1.0: 5,000 nodes, 1,000 namespaces, 10,000 workloads with
   their Services, ~150,000 bound pods) created through the API by ``--threads`` threads, ownerReferences
   pointing at the owners' real uids.
2. The expected reports: a :class:`SpreadIndex` loaded from the live listing (``kube.iter_cluster_records``,
   what ``spreadwatch analyze`` reads) with the operator's profile and report settings. Then the floor of the
   start on the same, loaded API server (``bench/envelope_figures.py``: the bytes of every list the operator
   makes at its start, as it makes them, in its page size; the faster of two) and the API server's memory
   and age.
3. ``spreadwatch run`` with exactly the args and environment of the chart's Deployment rendered from its
   default values (``helm template``; only the ports, the bind address and the kubeconfig differ; with
   ``--resync-period`` given, that too, as the chart's ``extraArgs`` would), sampled
   every second: ``/healthz`` and ``/readyz`` with the kubelet's 1 s timeout, RSS and CPU from /proc;
   ``/metrics`` every 10 s with a bearer token, 10 s timeout, gzip (as Prometheus asks), and once a minute
   without gzip. Probes and scrapes are made by curl, a process of its own (as the kubelet and Prometheus
   are), in threads of their own (a probe is made while a scrape runs): the harness's own threads never
   stretch the times. A watch on SpreadReports compares each
   report's content (the status without conditions and timestamps) with the expected one.
4. Churn, each change applied to the harness's index too, so the expected report of every workload it
   touches is known: ``--churn-rate`` pod events/s for ``--churn-seconds`` as rollouts in 20 workloads
   (delete a pod, create one on another node), the same rate scattered over every workload, then a burst of
   ``--burst`` Deployments scaled +2. Latency of a change = the time until the report shows a state at or
   after it. A workload's changes are made one at a time, so the harness sees them in the API's order. Each
   phase lasts ``--churn-seconds``: with the chart's resync period (300 s) and 330 s a phase, a periodic
   resync runs inside each, so the freshness figures include them. At each phase's start and end the
   operator's own figures are read (``/statusz``, ``/metrics``): report writes per second inside its resyncs
   and outside them, the resyncs' seconds, pages and bytes, and the distribution of its writes' latency.
5. At the end ``--sample`` reports are compared with ``spreadwatch analyze`` of a ``kubectl get -o json``
   dump, and the operator is stopped (SIGTERM, then SIGKILL).

The result (JSON) holds every figure ``docs/benchmarks.md`` shows for the envelope; ``tests/e2e/
test_envelope.py`` runs the same harness small and asserts behaviour only.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import urllib3
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # (also run as a script: bench/envelope.py)

from bench.envelope_figures import (  # noqa: E402
    OperatorView,
    apiserver_state,
    list_floor,
    operator_start,
    operator_view,
    phase_figures,
    scrape_shares,
    sum_phases,
)
from bench.soak_cluster import free_port, stop_process  # noqa: E402
from hack import devcluster  # noqa: E402
from kubernetes import client  # noqa: E402
from kubernetes import config as kube_config  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

from bench import synth  # noqa: E402
from spreadwatch.cli import build_parser  # noqa: E402
from spreadwatch.cli.run_config import operator_config  # noqa: E402
from spreadwatch.index import SpreadIndex  # noqa: E402
from spreadwatch.kube import iter_cluster_records, server_version  # noqa: E402
from spreadwatch.model import WorkloadKey, parse_object  # noqa: E402
from spreadwatch.profile_args import operator_profiles, operator_report_options  # noqa: E402
from spreadwatch.resources import CLUSTER_RESOURCES, SPREAD_REPORTS  # noqa: E402
from spreadwatch.snapshot import Snapshot  # noqa: E402

__all__ = ["main", "measure"]

CRD = ROOT / "crds" / f"{SPREAD_REPORTS.full_name}.yaml"
CHART = ROOT / "charts" / "spreadwatch"
RELEASE, RELEASE_NS = "spreadwatch", "spreadwatch"
_PATHS = {r.kind: r for r in CLUSTER_RESOURCES}
_ENTRYPOINT = ("spreadwatch", "run")  # the Dockerfile's ENTRYPOINT (tests/chart/test_dockerfile.py checks it)
_STATUS_EXTRA = frozenset({"conditions", "observedGeneration", "lastUpdateTime", "lastPlacement"})
_PHASES = (
    ("Service", "Deployment", "StatefulSet", "ReplicationController", "PodDisruptionBudget"),
    ("ReplicaSet",),
    ("Pod",),
)


def _content(status: dict[str, Any]) -> bytes:
    """A report's content: its status without conditions, observedGeneration, lastUpdateTime and
    lastPlacement (what the operator saw happen, not what the cluster's state determines), and without its
    prediction (:func:`_prediction`)."""
    return orjson.dumps(
        {k: v for k, v in status.items() if k not in _STATUS_EXTRA and k != "prediction"}, option=orjson.OPT_SORT_KEYS
    )


def _prediction(status: dict[str, Any]) -> bytes:
    """A report's prediction. Every pod event changes the node loads every prediction reads, so under churn
    the operator refreshes stale predictions in turn (a batch per writer cycle), not at once: a change's
    latency is measured on :func:`_content`, and the predictions are compared where the cluster is still
    (the start, and after the churn: ``predictions_current_s``)."""
    return orjson.dumps(status.get("prediction"), option=orjson.OPT_SORT_KEYS)


# --------------------------------------------------------------------------------------------- the chart


def chart_command(helm: Path, kubeconfig: str, port: int, metrics_port: int) -> tuple[list[str], dict[str, str]]:
    """``spreadwatch run`` with the args and env of the chart's Deployment (default values), for a local
    process: the probe/metrics ports, the bind address and the kubeconfig replaced."""
    rendered = subprocess.run(
        [str(helm), "template", RELEASE, str(CHART), "--namespace", RELEASE_NS],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    deployment = next(d for d in yaml.safe_load_all(rendered) if d and d.get("kind") == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = [a for a in container["args"] if not a.startswith(("--port=", "--metrics-port=", "--bind-address="))]
    args += [f"--port={port}", f"--metrics-port={metrics_port}", "--bind-address=127.0.0.1"]
    args.append(f"--kubeconfig={kubeconfig}")
    env = {"POD_NAME": "spreadwatch-envelope-0", "POD_NAMESPACE": RELEASE_NS}
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = str(item["value"])
    limits = container.get("resources", {}).get("limits", {})
    env["_MEMORY_LIMIT"] = str(limits.get("memory", ""))
    entrypoint = container.get("command") or _ENTRYPOINT  # (the chart keeps the image's)
    return [str(ROOT / ".venv" / "bin" / "spreadwatch"), *entrypoint[1:], *args], env


def _mib(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1.0, "Gi": 1024.0}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[: -len(suffix)]) * factor
    return float(quantity) / (1 << 20) if quantity else 0.0


# ------------------------------------------------------------------------------------------------ load


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation")}  # fmt: skip
    out = {**obj, "metadata": meta}
    out.pop("status", None)
    if obj["kind"] == "Service":  # headless: 10,000 Services need no IP (SelectorSpread reads the selector only)
        out["spec"] = {**{k: v for k, v in obj["spec"].items() if k != "clusterIPs"}, "clusterIP": "None"}
    return out


class Loader:
    """Creates objects through the API (raw JSON requests, ``threads`` at once); owners' real uids replace
    the synthetic ones in ownerReferences. ``created`` receives each server answer (pods: the index)."""

    def __init__(self, api: client.ApiClient, threads: int) -> None:
        self.api = api
        self.pool = ThreadPoolExecutor(threads)
        self.uids: dict[tuple[str, str, str], str] = {}
        self.requests = 0
        token = api.configuration.api_key.get("authorization", "")
        self._auth = {"Authorization": token} if token else {}

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind, meta = obj["kind"], obj["metadata"]
        namespace = meta.get("namespace")
        refs = meta.get("ownerReferences") or []
        for ref in refs:
            ref["uid"] = self.uids.get((namespace or "", ref["kind"], ref["name"]), ref["uid"])
        resource = _PATHS[kind]
        body = orjson.dumps(_strip(obj))
        url = self.api.configuration.host + resource.path(namespace if resource.namespaced else None)
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self._auth}
        for attempt in range(8):
            response = self.api.rest_client.pool_manager.request("POST", url, body=body, headers=headers,
                                                                 timeout=120.0)  # fmt: skip
            if response.status < 300 or response.status == 409:
                break
            if response.status not in (429, 500, 503, 504) or attempt == 7:
                raise RuntimeError(f"create {kind} {namespace}/{meta['name']}: HTTP {response.status}: "
                                   f"{response.data[:300]!r}")  # fmt: skip
            time.sleep(0.2 * 2**attempt)
        self.requests += 1
        created: dict[str, Any] = orjson.loads(response.data) if response.status < 300 else obj
        self.uids[(namespace or "", kind, meta["name"])] = created["metadata"].get("uid", "")
        return created

    def create_all(self, objs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(self.pool.map(self.create, objs))


def load_cluster(loader: Loader, scale: float, seed: int) -> dict[str, int]:
    """Create the synthetic cluster; returns counts by kind. Objects are generated namespace by namespace
    (``synth.iter_objects``), each namespace's in dependency order (workloads, their ReplicaSets, pods)."""
    counts: dict[str, int] = {}
    batch: list[dict[str, Any]] = []
    namespace: str | None = None

    def flush() -> None:
        for phase in _PHASES:
            loader.create_all([o for o in batch if o["kind"] in phase])
        for obj in batch:
            counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
        batch.clear()

    cluster_scoped: list[dict[str, Any]] = []
    for obj in synth.iter_objects(scale, seed):
        if obj["kind"] in ("Node", "Namespace"):
            cluster_scoped.append(obj)
            if len(cluster_scoped) >= 500:
                loader.create_all(cluster_scoped)
                for o in cluster_scoped:
                    counts[o["kind"]] = counts.get(o["kind"], 0) + 1
                cluster_scoped.clear()
            continue
        if cluster_scoped:
            loader.create_all(cluster_scoped)
            for o in cluster_scoped:
                counts[o["kind"]] = counts.get(o["kind"], 0) + 1
            cluster_scoped.clear()
        ns = obj["metadata"].get("namespace")
        if ns != namespace and batch:
            flush()
        namespace = ns
        batch.append(obj)
    if batch:
        flush()
    return counts


# ------------------------------------------------------------------------------------------ expectation


@dataclass
class Expectation:
    """What each workload's report must show, and the changes not yet seen in it (thread-safe)."""

    index: SpreadIndex
    expected: dict[WorkloadKey, bytes] = field(default_factory=dict)
    predicted: dict[WorkloadKey, bytes] = field(default_factory=dict)  # each report's prediction (:func:`_prediction`)
    correct_at: dict[WorkloadKey, float] = field(default_factory=dict)  # first time the report was right
    pending: dict[WorkloadKey, list[tuple[float, bytes]]] = field(default_factory=dict)
    shown: dict[WorkloadKey, bytes] = field(default_factory=dict)  # what each report showed last
    shown_prediction: dict[WorkloadKey, bytes] = field(default_factory=dict)
    latencies: list[tuple[float, float]] = field(default_factory=list)  # (change made at, seconds to its report)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fill(self) -> None:
        """Expected contents of every workload (after the load)."""
        self.index.take_dirty()
        for report in self.index.reports():
            w, status = report.workload, _status_dict(report)
            key = WorkloadKey(w.namespace, w.kind, w.name)
            self.expected[key], self.predicted[key] = _content(status), _prediction(status)

    def refresh_predictions(self) -> None:
        """Every prediction rebuilt on the index's current loads (the cluster still: after the churn)."""
        with self.lock:
            self.index.refresh_predictions()
            self.index.take_dirty(stale=False)
            for report in self.index.reports():
                w = report.workload
                self.predicted[WorkloadKey(w.namespace, w.kind, w.name)] = _prediction(_status_dict(report))

    def predictions_current(self) -> bool:
        """Whether every report shows the prediction of the index's current loads."""
        with self.lock:
            return all(self.shown_prediction.get(k) == p for k, p in self.predicted.items())

    def changed(self, at: float) -> None:
        """The harness changed the cluster at ``at`` (already applied to the index): the reports of the
        workloads it touched (their predictions made stale by the new loads are left to
        :meth:`refresh_predictions`, as the operator leaves them to its writer's cycles)."""
        dirty, removed = self.index.take_dirty(stale=False)
        with self.lock:
            for key in dirty:
                report = self.index.report_for(key)
                if report is None:
                    continue
                status = _status_dict(report)
                content, self.predicted[key] = _content(status), _prediction(status)
                if content == self.expected.get(key):
                    continue
                self.expected[key] = content
                waiting = self.pending.setdefault(key, [])
                if content == self.shown.get(key):  # back to what the report shows: nothing to write
                    self.latencies.extend((t, at - t) for t, _ in waiting)
                    waiting.clear()
                else:
                    waiting.append((at, content))
            for key in removed:
                self.expected.pop(key, None)
                self.predicted.pop(key, None)

    def observed(self, key: WorkloadKey, status: dict[str, Any], at: float) -> None:
        content, prediction = _content(status), _prediction(status)
        with self.lock:
            self.shown[key], self.shown_prediction[key] = content, prediction
            if content == self.expected.get(key) and prediction == self.predicted.get(key):
                self.correct_at.setdefault(key, at)
            waiting = self.pending.get(key)
            if not waiting:
                return
            matched = max((i for i, (_, c) in enumerate(waiting) if c == content), default=None)
            if matched is None:
                return
            self.latencies.extend((t, at - t) for t, _ in waiting[: matched + 1])
            del waiting[: matched + 1]

    def all_correct(self) -> bool:
        with self.lock:
            return all(k in self.correct_at for k in self.expected)

    def unresolved(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.pending.values())

    def unresolved_keys(self) -> list[WorkloadKey]:
        with self.lock:
            return sorted(k for k, v in self.pending.items() if v)


def _status_dict(report: Any) -> dict[str, Any]:
    return dict(report.to_dict())


def _key_of(report: dict[str, Any]) -> WorkloadKey | None:
    ref = (report.get("spec") or {}).get("workloadRef") or {}
    if not ref.get("kind") or not ref.get("name"):
        return None
    return WorkloadKey(report["metadata"]["namespace"], ref["kind"], ref["name"])


def watch_reports(
    api: client.ApiClient, expectation: Expectation, stop: threading.Event, writes: dict[str, int]
) -> None:
    """Watch SpreadReports (from the current list) and tell the expectation what each shows."""
    path = SPREAD_REPORTS.path()
    version = ""
    while not stop.is_set():
        try:
            if not version:
                listed = orjson.loads(
                    api.call_api(
                        path, "GET", auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True
                    ).data
                )
                now = time.monotonic()
                for item in listed.get("items") or []:
                    key = _key_of(item)
                    if key is not None:
                        expectation.observed(key, item.get("status") or {}, now)
                version = listed["metadata"]["resourceVersion"]
            response = api.call_api(path, "GET", query_params=[("watch", "1"), ("resourceVersion", version),
                                                               ("timeoutSeconds", "60")],
                                    auth_settings=["BearerToken"], _preload_content=False,
                                    _return_http_data_only=True, _request_timeout=(10, 90))  # fmt: skip
            for line in response:
                if stop.is_set():
                    break
                event = orjson.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    version = ""
                    break
                version = obj.get("metadata", {}).get("resourceVersion", version)
                writes[event.get("type", "")] = writes.get(event.get("type", ""), 0) + 1
                key = _key_of(obj)
                if key is not None and event.get("type") in ("ADDED", "MODIFIED"):
                    expectation.observed(key, obj.get("status") or {}, time.monotonic())
        except (ApiException, OSError, ValueError, urllib3.exceptions.HTTPError):
            if not stop.is_set():
                time.sleep(1)
                version = ""


# -------------------------------------------------------------------------------------------- sampling


@dataclass
class Samples:
    rss_mib: list[tuple[float, float]] = field(default_factory=list)
    probe_ms: dict[str, list[float]] = field(default_factory=lambda: {"healthz": [], "readyz": []})
    probe_failures: dict[str, int] = field(default_factory=lambda: {"healthz": 0, "readyz": 0})
    liveness_failures_in_a_row: int = 0
    restarts_a_kubelet_would_make: int = 0
    scrape_s: list[float] = field(default_factory=list)
    # each gzip scrape: (began, s after the operator's start; the operator's CPU seconds during it; the share of
    # the machine's CPU time busy during it, every process; the CPU seconds of etcd and the API server during it;
    # the harness's own, its threads' churn, expectations and report watch)
    scrape_at: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    scrape_failures: int = 0
    scrape_identity_s: list[float] = field(default_factory=list)  # the same scrape without gzip, once a minute
    scrape_gzip_bytes: int = 0  # of the last scrape, as sent
    scrape_text_bytes: int = 0
    oldest_pending_s: list[tuple[float, float]] = field(default_factory=list)  # (t, the gauge) of each scrape
    in_flight_limit: list[tuple[float, float]] = field(default_factory=list)  # (t, the gauge) of each scrape
    ready_at: float | None = None
    cpu_s: float = 0.0
    peak_rss_mib: float = 0.0


def _curl(url: str, timeout: float, *options: str, out: str = "/dev/null") -> tuple[int, float, int]:
    """(HTTP status or 0, seconds, bytes received) of one GET by curl, a process of its own, so the harness's
    threads (and its GIL) are not part of the time: curl's ``time_total``, from the connection to the last
    byte, the whole request within ``timeout``. The body goes to ``out``."""
    args = ["curl", "-sk", "--max-time", str(timeout), "-o", out, "-w", "%{http_code} %{time_total} %{size_download}"]
    try:
        done = subprocess.run([*args, *options, url], capture_output=True, text=True, timeout=timeout + 30, check=False)
        code, took, received = done.stdout.split()
        return int(code), float(took), int(received)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return 0, timeout, 0


def _probe(url: str, timeout: float) -> tuple[int, float]:
    """(HTTP status or 0, seconds) of one probe as the kubelet makes it: the whole request within ``timeout``."""
    code, took, _ = _curl(url, timeout)
    return code, took


MIB = 1024 * 1024
#: What Prometheus sends (v2/v3 scrape manager): OpenMetrics first, gzip.
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)


def _scrape(url: str, token: str, timeout: float, gzip: bool = True) -> tuple[int, float, int, bytes]:
    """(HTTP status or 0, seconds, bytes sent, text) of one scrape as Prometheus makes it (:func:`_curl`)."""
    out = Path(tempfile.mkstemp(prefix="spreadwatch-scrape-")[1])
    try:
        headers = ["-H", f"Authorization: Bearer {token}", "-H", f"Accept: {PROMETHEUS_ACCEPT}"]
        if gzip:
            headers += ["-H", "Accept-Encoding: gzip"]  # and decompressed below, as Prometheus does
        code, took, sent = _curl(url, timeout, *headers, out=str(out))
        body = out.read_bytes()
        if gzip and body[:2] == b"\x1f\x8b":
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        return code, took, sent, body
    except (OSError, zlib.error):
        return 0, timeout, 0, b""
    finally:
        out.unlink(missing_ok=True)


def _gauge(exposition: bytes, name: bytes) -> float | None:
    """The value of an unlabelled sample ``name`` in a Prometheus text exposition, if present."""
    for line in exposition.splitlines():
        if line.startswith(name + b" "):
            return float(line.split()[1])
    return None


def _proc(pid: int) -> tuple[float, float, float]:
    """(RSS MiB, peak RSS MiB, CPU seconds) of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith("Vm")}
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return int(fields["VmRSS"]) / 1024, int(fields["VmHWM"]) / 1024, cpu


def _cpu_s(pid: int) -> float:
    """A process's CPU seconds so far (0 once it is gone)."""
    try:
        return _proc(pid)[2]
    except OSError:
        return 0.0


def _machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of every CPU since boot (/proc/stat: idle and iowait are not busy)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(ticks[:8])  # (guest time is counted inside user and nice already)
    return total - ticks[3] - ticks[4], total


def _busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the machine's CPU time that was busy between two :func:`_machine_jiffies`."""
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


def sample_process(pid: int, port: int, samples: Samples, stop: threading.Event, started: float) -> None:
    """Probes every second (1 s for the whole request, as the kubelet's timeoutSeconds; 3 liveness failures in
    a row = one kubelet restart; failures count once the probe has answered 200), RSS and CPU every second.
    Scrapes are :func:`sample_scrapes`' own thread: a kubelet probes while Prometheus scrapes."""
    answered: set[str] = set()
    while not stop.wait(1.0):
        with contextlib.suppress(OSError):
            rss, peak, cpu = _proc(pid)
            samples.rss_mib.append((time.monotonic() - started, rss))
            samples.peak_rss_mib, samples.cpu_s = peak, cpu
        for path in ("healthz", "readyz"):
            code, took = _probe(f"http://127.0.0.1:{port}/{path}", 1.0)
            samples.probe_ms[path].append(took * 1000)
            if code == 200:
                answered.add(path)
                if path == "readyz" and samples.ready_at is None:
                    samples.ready_at = time.monotonic() - started
            if path not in answered:
                continue  # starting (the process binds its port; not ready yet): the kubelet waits too
            if code != 200:
                samples.probe_failures[path] += 1
            if path == "healthz":
                samples.liveness_failures_in_a_row = samples.liveness_failures_in_a_row + 1 if code != 200 else 0
                if samples.liveness_failures_in_a_row == 3:
                    samples.restarts_a_kubelet_would_make += 1


def sample_scrapes(
    pid: int,
    metrics_port: int,
    token: str,
    samples: Samples,
    stop: threading.Event,
    started: float,
    control_plane: Sequence[int] = (),
) -> None:
    """/metrics every 10 s as Prometheus scrapes it (10 s timeout; gzip; the next one 10 s after this one
    began, or at once when it took longer) and once a minute without gzip; for each gzip scrape the CPU
    seconds of the operator, of ``control_plane`` (etcd, the API server) and of the harness meanwhile."""
    url = f"https://127.0.0.1:{metrics_port}/metrics"
    tick = 0
    due = time.monotonic() + 10.0
    harness = os.getpid()

    def cpus() -> tuple[float, float, float]:
        return _cpu_s(pid), sum(_cpu_s(p) for p in control_plane), _cpu_s(harness)

    while not stop.wait(max(0.0, due - time.monotonic())):
        tick += 1
        due = time.monotonic() + 10.0
        began, before, machine_before = time.monotonic() - started, cpus(), _machine_jiffies()
        code, took, sent, body = _scrape(url, token, 10.0)
        after, busy = cpus(), _busy(machine_before, _machine_jiffies())
        samples.scrape_s.append(took)
        samples.scrape_at.append((began, after[0] - before[0], busy, after[1] - before[1], after[2] - before[2]))
        samples.scrape_gzip_bytes, samples.scrape_text_bytes = sent, len(body)
        if code != 200:
            samples.scrape_failures += 1
        if tick % 6 == 0:
            code, took, _, _ = _scrape(url, token, 10.0, gzip=False)
            samples.scrape_identity_s.append(took)
            if code != 200:
                samples.scrape_failures += 1
        for series, name in ((samples.oldest_pending_s, b"spreadwatch_oldest_pending_seconds"),
                             (samples.in_flight_limit, b"spreadwatch_writes_in_flight_limit")):  # fmt: skip
            value = _gauge(body, name)
            if value is not None:
                series.append((time.monotonic() - started, value))


# ----------------------------------------------------------------------------------------------- churn


class Churn:
    """Pod changes through the API by ``workers`` threads, each change applied to the harness's index and
    expectation at once (under one lock: the API calls run in parallel, the index sees one change at a time)."""

    def __init__(self, api: client.ApiClient, loader: Loader, expectation: Expectation, seed: int,
                 workers: int = 8) -> None:  # fmt: skip
        self.core = client.CoreV1Api(api)
        self.loader = loader
        self.expectation = expectation
        self.random = random.Random(seed)
        self.workers = workers
        self.events = 0
        self.lock = threading.Lock()
        self._names = itertools.count()
        self._run = os.urandom(3).hex()  # in new pods' names: a run on a reused cluster never meets an old name
        self.nodes = sorted(n for _, n in expectation.index.object_keys("Node"))
        self.pods: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._changing: dict[tuple[str, str], threading.Lock] = {}  # one change at a time per workload

    def pods_of(self, namespace: str, app: str) -> list[dict[str, Any]]:
        """The workload's bound pods as the harness knows them (listed once)."""
        key = (namespace, app)
        with self.lock:
            known = self.pods.get(key)
        if known is None:
            listed = self.core.list_namespaced_pod(namespace, label_selector=f"app={app}", _preload_content=False)
            bound = [p for p in orjson.loads(listed.data)["items"] if p["spec"].get("nodeName")]
            with self.lock:
                known = self.pods.setdefault(key, bound)
        return known

    def apply(self, obj: dict[str, Any] | None, removed: tuple[str, str] | None, kind: str = "Pod") -> None:
        """One event the harness made (a pod by default): into its index, then the expectation."""
        with self.lock:
            index = self.expectation.index
            if removed is not None:
                index.remove(kind, *removed)
            if obj is not None:
                obj.setdefault("kind", kind)
                obj.setdefault("apiVersion", _PATHS[kind].api_version)
                record = parse_object(obj)
                if record is not None:
                    index.apply(record)
            self.expectation.changed(time.monotonic())
            self.events += 1

    def add_pod(self, namespace: str, template: dict[str, Any], prefix: str) -> None:
        """A copy of ``template`` bound to a random node."""
        with self.lock:
            name = f"{prefix}-{self._run}{next(self._names):06d}"
            node = self.random.choice(self.nodes)
        new = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": template["metadata"].get("labels") or {},
                         "ownerReferences": template["metadata"].get("ownerReferences") or []},
            "spec": {**template["spec"], "nodeName": node},
        }  # fmt: skip
        created = self.loader.create(new)
        with self.lock:
            self.pods.setdefault((namespace, prefix.rsplit("-", 1)[0]), []).append(created)
        self.apply(created, None)

    def replace_pod(self, namespace: str, app: str) -> None:
        """A rollout step: one of the workload's bound pods deleted, a copy created on another node."""
        pods = self.pods_of(namespace, app)
        with self.lock:
            if not pods:
                return
            old = pods.pop(self.random.randrange(len(pods)))
        self.core.delete_namespaced_pod(old["metadata"]["name"], namespace, grace_period_seconds=0,
                                        _preload_content=False)  # fmt: skip
        self.apply(None, (namespace, old["metadata"]["name"]))
        self.add_pod(namespace, old, f"{app}-churn")

    def run(self, workloads: Sequence[tuple[str, str]], rate: float, seconds: float) -> float:
        """``rate`` pod events/s (a replacement is two) for ``seconds`` over ``workloads``, paced on one
        shared schedule. Returns the rate achieved (events/s).

        A workload's changes are made one at a time (the workers run in parallel across workloads): the order
        in which the harness applies a workload's changes to its own index is then the order the API server
        committed them, which the operator's watch sees. With two changes of one workload in flight at once,
        the harness may apply them in the other order, and a report built between them (correct for the
        API's sequence) shows a state the harness never had: its change would count as unreported until
        the workload's next write, up to a max-delay later (the rollouts' p99 of 6.0-6.4 s in two runs)."""
        started, before = time.monotonic(), self.events
        deadline, step = started + seconds, 2.0 / rate
        slots = itertools.count()

        def work() -> None:
            while True:
                with self.lock:
                    at = started + next(slots) * step
                    namespace, app = self.random.choice(workloads)
                if at >= deadline:
                    return
                pause = at - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                with self.lock:
                    changing = self._changing.setdefault((namespace, app), threading.Lock())
                with changing, contextlib.suppress(ApiException):
                    self.replace_pod(namespace, app)

        threads = [threading.Thread(target=work, daemon=True) for _ in range(self.workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return (self.events - before) / max(1e-9, time.monotonic() - started)


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _latency(values: Sequence[float]) -> dict[str, float]:
    return {"count": len(values), "p50_s": _percentile(values, 0.5), "p99_s": _percentile(values, 0.99),
            "max_s": max(values, default=0.0)}  # fmt: skip


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        time.sleep(0.5)
    return time.monotonic() - started


# --------------------------------------------------------------------------------------------- measure


def measure(
    scale: float = 1.0,
    seed: int = 1,
    threads: int = 16,
    churn_rate: float = 100.0,
    churn_seconds: float = 330.0,
    burst: int = 200,
    sample: int = 20,
    report_timeout: float = 1800.0,
    cluster_dir: str = "",
    resync_period: float | None = None,
    operator_args: str = "",
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the whole envelope benchmark (see the module docstring); returns the figures (with ``error`` and
    the figures measured before it when a step fails).

    ``resync_period``: the operator's ``--resync-period`` (None: the chart's, 300 s; the small e2e run gives a
    few seconds so that resyncs fall inside its short churn).

    ``operator_args``: more ``spreadwatch run`` arguments after the chart's (e.g. ``--no-prediction``); the
    expected reports follow them.

    ``cluster_dir``: keep the loaded control plane running in that directory, and reuse it when a run with the
    same scale and seed loaded it there: the ~15 min load is skipped, the SpreadReports (and the CRD) are
    deleted and made anew, and the cluster is as the previous run's churn left it (``make dev-cluster-down
    DEV_CLUSTER_DIR=...`` ends it). Empty: a temporary control plane, torn down at the end."""
    result: dict[str, Any] = {"scale": scale, "seed": seed}
    with contextlib.ExitStack() as scope:
        state = Path(cluster_dir) if cluster_dir else Path(scope.enter_context(
            tempfile.TemporaryDirectory(prefix="spreadwatch-envelope-")))  # fmt: skip
        state.mkdir(parents=True, exist_ok=True)
        bin_dir = state / "bin"
        devcluster.ensure_tools(bin_dir)
        cluster = devcluster.up(state, bin_dir=bin_dir, ports="auto", die_with_parent=not cluster_dir,
                                  workload_controllers=False)  # fmt: skip
        proc: subprocess.Popen[bytes] | None = None
        stop = threading.Event()
        try:
            kubeconfig = str(cluster.kubeconfig)
            kubectl = [str(bin_dir / "kubectl"), f"--kubeconfig={kubeconfig}"]
            api = kube_config.new_client_from_config(config_file=kubeconfig)
            api.configuration.connection_pool_maxsize = threads + 8
            loader = Loader(api, threads)
            marker = state / "envelope-loaded.json"
            loaded = orjson.loads(marker.read_bytes()) if cluster_dir and marker.is_file() else {}
            if loaded.get("scale") == scale and loaded.get("seed") == seed:
                subprocess.run([*kubectl, "delete", "-f", str(CRD), "--wait=true"], check=True, capture_output=True)
                subprocess.run([*kubectl, "apply", "-f", str(CRD)], check=True, capture_output=True)
                subprocess.run([*kubectl, "wait", "--for=condition=Established", "-f", str(CRD)], check=True,
                               capture_output=True)  # fmt: skip
                result["load"] = {**loaded["load"], "reused": True}
                loaded_by = loaded.get("apiserver_pid")
                log(f"reusing the cluster loaded in {state}: {loaded['load']['objects']}")
            else:
                subprocess.run([*kubectl, "apply", "-f", str(CRD)], check=True, capture_output=True)
                subprocess.run([*kubectl, "create", "namespace", RELEASE_NS], check=True, capture_output=True)
                loaded_by = cluster.pids.get("kube-apiserver")
                started = time.monotonic()
                counts = load_cluster(loader, scale, seed)
                took = time.monotonic() - started
                result["load"] = {"seconds": round(took, 1), "objects": counts,
                                  "requests_per_s": round(loader.requests / took, 1)}  # fmt: skip
                if cluster_dir:
                    marker.write_bytes(orjson.dumps({"scale": scale, "seed": seed, "load": result["load"],
                                                     "apiserver_pid": cluster.pids.get("kube-apiserver")}))  # fmt: skip
                log(f"loaded {sum(counts.values()):,} objects in {result['load']['seconds']:.0f}s: {counts}")

            port, metrics_port = free_port(), free_port()
            command, env = chart_command(bin_dir / "helm", kubeconfig, port, metrics_port)
            if resync_period is not None:
                command.append(f"--resync-period={resync_period:g}")
            command += shlex.split(operator_args)  # (after the chart's args: these win)
            limit_mib = _mib(env.pop("_MEMORY_LIMIT"))
            config = operator_config(build_parser().parse_args(command[1:]))
            profile, compared, _ = operator_profiles(config, lambda: server_version(api))  # (auto: as the operator)
            index = SpreadIndex(profile, operator_report_options(config), compared)
            index.load(Snapshot.from_decoded(item for _, item in iter_cluster_records(api)))
            expectation = Expectation(index)
            expectation.fill()
            result["workloads"] = len(expectation.expected)
            token = subprocess.run([*kubectl, "create", "token", "default", "-n", "default"], check=True,
                                   capture_output=True, text=True).stdout.strip()  # fmt: skip
            subprocess.run([*kubectl, "delete", "clusterrolebinding", "envelope-metrics", "--ignore-not-found"],
                           check=True, capture_output=True)  # fmt: skip
            subprocess.run([*kubectl, "create", "clusterrolebinding", "envelope-metrics",
                            "--clusterrole=cluster-admin", "--serviceaccount=default:default"],
                           check=True, capture_output=True)  # fmt: skip
            result["apiserver"] = apiserver_state(cluster.pids.get("kube-apiserver"), loaded_by)
            result["start_floor"] = floor = list_floor(api)
            log(f"the start's floor: {floor['seconds']}s ({floor['mib']} MiB in {floor['pages']} pages); "
                f"API server {result['apiserver']}")  # fmt: skip

            writes: dict[str, int] = {}
            watcher = threading.Thread(target=watch_reports, args=(api, expectation, stop, writes), daemon=True)
            watcher.start()
            log_path = state / "operator.log"
            with open(log_path, "wb") as out:
                launched = time.time()
                proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})
            started = time.monotonic()
            samples = Samples()
            control_plane = [p for name in ("etcd", "kube-apiserver") if (p := cluster.pids.get(name)) is not None]
            scraping = (proc.pid, metrics_port, token, samples, stop, started, control_plane)
            samplers = [
                threading.Thread(target=sample_process, args=(proc.pid, port, samples, stop, started), daemon=True),
                threading.Thread(target=sample_scrapes, args=scraping, daemon=True),
            ]
            for sampler in samplers:
                sampler.start()
            all_correct = _wait(expectation.all_correct, report_timeout, "every workload's report correct")
            result["every_report_correct_s"] = round(all_correct, 1)
            # at a small scale every report can be right before the next probe tick: wait for that probe's 200
            _wait(lambda: samples.ready_at is not None, report_timeout, "a /readyz probe answering 200")
            result["ready_probe_s"] = samples.ready_at  # the first /readyz 200 of the probes every second
            result["rss_at_ready_mib"] = _rss_at(samples, samples.ready_at)
            start = operator_start(log_path, launched)
            result["ready_s"] = ready = start["ready_s"] if start["ready_s"] is not None else samples.ready_at
            result["listed_s"] = listed = start["listed_s"]
            if ready is not None:
                result["ready_over_floor"] = round(ready / floor["seconds"], 2)
            if listed is not None:
                result["listed_over_floor"] = round(listed / floor["seconds"], 2)
            log(f"ready after {ready}s (the operator listed in {listed}s; floor {floor['seconds']}s); every "
                f"report correct after {all_correct:.0f}s")  # fmt: skip
            url = f"https://127.0.0.1:{metrics_port}/metrics"

            def view() -> OperatorView:
                return operator_view(port, lambda: _scrape(url, token, 30.0)[3])

            churn = Churn(api, loader, expectation, seed)
            keys = sorted(expectation.expected)
            apps = sorted({(k.namespace, k.name) for k in keys})  # (synth: every workload's pods have app=<name>)
            rollouts = random.Random(seed).sample(apps, min(20, len(apps)))
            phases: dict[str, Any] = {}
            views: list[tuple[OperatorView, OperatorView]] = []
            for name, targets in (("rollouts", rollouts), ("scattered", apps)):
                expectation.latencies.clear()
                began = time.monotonic() - started
                before = view()
                achieved = churn.run(targets, churn_rate, churn_seconds)
                after = view()
                views.append((before, after))
                try:
                    settle = _wait(lambda: expectation.unresolved() == 0, 120 + churn_seconds, f"{name} reported")
                except TimeoutError:
                    log(f"{name}: changes never reported for {expectation.unresolved_keys()[:10]}")
                    raise
                changes = list(expectation.latencies)
                phases[name] = {**_latency([lat for _, lat in changes]), "started_s": round(began, 1),
                                "settled_after_s": round(settle, 1),
                                "events_per_s": round(achieved, 1),
                                "oldest_pending_max_s": _max_since(samples.oldest_pending_s, began),
                                "in_flight_limit_max": _max_since(samples.in_flight_limit, began),
                                **phase_figures(before, after, changes, after.at - before.at)}  # fmt: skip
                log(f"{name}: { {k: v for k, v in phases[name].items() if k not in ('write_latency', 'lag')} }")
            result["resync"] = sum_phases([phases["rollouts"], phases["scattered"]], views[0][0], views[-1][1])
            log(f"resyncs in the churn: {result['resync']}")
            expectation.latencies.clear()
            began = time.monotonic() - started
            deployments = [k for k in keys if k.kind == "Deployment"][:burst]
            _scale_deployments(api, churn, deployments)
            _wait(lambda: expectation.unresolved() == 0, 600, "burst reported")
            phases["burst"] = {**_latency([lat for _, lat in expectation.latencies]), "started_s": round(began, 1),
                               "oldest_pending_max_s": _max_since(samples.oldest_pending_s, began)}  # fmt: skip
            log(f"burst: {phases['burst']}")
            result["churn"] = phases
            expectation.refresh_predictions()  # (the cluster still: every prediction settles)
            current = _wait(expectation.predictions_current, report_timeout, "every report's prediction current")
            result["predictions_current_s"] = round(current, 1)
            log(f"every report's prediction current {current:.0f}s after the churn")
            rss_now = _proc(proc.pid)[0]
            result["rss_after_churn_mib"] = round(rss_now, 1)
            stop.set()
            for sampler in samplers:  # (each curl is bounded by its own timeout: the threads end, and their
                sampler.join()  # samples are complete before they are read)
            result.update({
                "memory_limit_mib": limit_mib,
                "rss_imports_mib": _imports_rss(command[0]),
                "peak_rss_mib": round(samples.peak_rss_mib, 1),
                **_rss_course(samples.rss_mib),
                "cpu_s": round(samples.cpu_s, 1),
                "probe_failures": samples.probe_failures,
                "probe_p99_ms": {k: round(_percentile(v, 0.99), 1) for k, v in samples.probe_ms.items()},
                "probe_max_ms": {k: round(max(v, default=0.0), 1) for k, v in samples.probe_ms.items()},
                "restarts_a_kubelet_would_make": samples.restarts_a_kubelet_would_make,
                "scrapes": len(samples.scrape_s), "scrape_failures": samples.scrape_failures,
                "scrape_max_s": round(max(samples.scrape_s, default=0.0), 2),
                "scrape_p50_s": round(_percentile(samples.scrape_s, 0.5), 2),
                **_scrape_course(samples),
                "scrape_identity_max_s": round(max(samples.scrape_identity_s, default=0.0), 2),
                "scrape_identity_p50_s": round(_percentile(samples.scrape_identity_s, 0.5), 2),
                "scrape_mib": round(samples.scrape_text_bytes / MIB, 1),
                "scrape_gzip_mib": round(samples.scrape_gzip_bytes / MIB, 2),
                "report_events": writes,
                "api_writes": _api_writes(port),
            })  # fmt: skip
            result["sampled_exact"] = _compare_sample(kubectl, command, state, keys, sample, index.profile.name)
        except Exception as err:  # the figures measured so far stay in the result, beside what failed
            result["error"] = f"{type(err).__name__}: {err}"
            log(f"failed: {result['error']}")
        finally:
            stop.set()
            if proc is not None:
                result["operator_exit"] = stop_process(proc)
            if not cluster_dir:
                devcluster.down(state, keep_logs=False)
    return result


def _scrape_course(samples: Samples) -> dict[str, Any]:
    """Every gzip scrape as [began (s after the operator's start), seconds, the operator's CPU seconds meanwhile,
    the machine's busy share meanwhile, etcd's and the API server's CPU seconds meanwhile, the harness's]: the
    phases' ``started_s`` tell in which each fell, the CPU whether the operator had a core to format it on (a
    scrape's own CPU is the metrics figure's render time) and who had the machine. With :func:`scrape_shares`."""
    course = [[round(at), round(took, 2), *(round(x, 2) for x in rest)]
              for took, (at, *rest) in zip(samples.scrape_s, samples.scrape_at, strict=True)]  # fmt: skip
    return {"scrape_course": course, **scrape_shares(course)}


def _rss_course(rss: Sequence[tuple[float, float]], every: int = 10) -> dict[str, Any]:
    """The largest RSS sampled (MiB) and when (seconds after the operator's start: the phases' ``started_s``
    tell in which), and every ``every``-th sample (the peak RSS is the kernel's high-water mark, which also
    catches what the 1 s sampling misses)."""
    if not rss:
        return {}
    at, top = max(rss, key=lambda sample: sample[1])
    return {"rss_sampled_max": {"mib": round(top, 1), "at_s": round(at, 1)},
            "rss_course": [[round(t), round(r, 1)] for t, r in rss[::every]]}  # fmt: skip


def _rss_at(samples: Samples, at: float | None) -> float | None:
    if at is None:
        return None
    return next((round(r, 1) for t, r in samples.rss_mib if t >= at), None)


def _imports_rss(spreadwatch: str) -> float:
    """RSS (MiB) of a process of the operator's interpreter that imports what ``spreadwatch run`` imports and
    holds no data: the floor under every RSS figure."""
    python = str(Path(spreadwatch).with_name("python"))
    code = ("import spreadwatch.cli, spreadwatch.runtime.process, pathlib; "
            "print(pathlib.Path('/proc/self/status').read_text().split('VmRSS:')[1].split()[0])")  # fmt: skip
    return round(int(subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout) / 1024, 1)


def _max_since(series: Sequence[tuple[float, float]], since: float) -> float | None:
    """The largest value of a sampled series (t, value) from ``since`` on (None: no sample since)."""
    return max((v for t, v in series if t >= since), default=None)


def _api_writes(port: int) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(f"http://127.0.0.1:{port}/statusz",
                                                                           timeout=10) as r:  # fmt: skip
        state = json.loads(r.read())
        return {"writer": state.get("writer"), "apiRequests": state.get("apiRequests")}
    return {}


def _scale_deployments(api: client.ApiClient, churn: Churn, deployments: Sequence[WorkloadKey]) -> None:
    """+2 replicas for each Deployment at once (``churn.workers`` in parallel): its replicas, and two more pods
    like its newest."""
    apps = client.AppsV1Api(api)

    def scale(key: WorkloadKey) -> None:
        with contextlib.suppress(ApiException):
            deployment = apps.read_namespaced_deployment(key.name, key.namespace, _preload_content=False)
            replicas = orjson.loads(deployment.data)["spec"].get("replicas", 1) + 2
            patched = apps.patch_namespaced_deployment(key.name, key.namespace, {"spec": {"replicas": replicas}},
                                                       _preload_content=False)  # fmt: skip
            churn.apply(orjson.loads(patched.data), None, kind="Deployment")
            for template in churn.pods_of(key.namespace, key.name)[-1:] * 2:
                churn.add_pod(key.namespace, template, f"{key.name}-burst")

    with ThreadPoolExecutor(churn.workers) as pool:
        list(pool.map(scale, deployments))


def _compare_sample(
    kubectl: list[str], command: list[str], state: Path, keys: Sequence[WorkloadKey], sample: int, profile: str
) -> dict[str, int]:
    """``sample`` reports compared with ``spreadwatch analyze --profile PROFILE`` (the operator's, ``auto``
    resolved) of a ``kubectl get -o json`` dump: the nodes and namespaces, and every object of the sampled
    workloads' namespaces (all a report reads: a workload's selectors match in its own namespace; one dump of
    the whole envelope took kubectl past the machine's memory). ``analyze`` makes no comparison: the
    reports' ``comparison`` is left out (the expectation checks it, from an index with the operator's)."""
    chosen = random.Random(7).sample(list(keys), min(sample, len(keys)))
    dump = state / "dump"
    dump.mkdir(exist_ok=True)
    kinds = "pods,services,replicationcontrollers,replicasets,statefulsets,deployments,poddisruptionbudgets"
    gets = [("cluster", ["nodes,namespaces"]), *((f"ns-{ns}", [kinds, "-n", ns])
                                                 for ns in sorted({k.namespace for k in chosen}))]  # fmt: skip
    for name, args in gets:
        with open(dump / f"{name}.json", "wb") as out:
            subprocess.run([*kubectl, "get", *args, "-o", "json"], check=True, stdout=out)
    report_flags = ("--top-nodes=", "--max-report-nodes=", "--max-node-skew=", "--max-zone-skew=",
                    "--spof-min-pods=", "--window-samples=")  # fmt: skip
    flags = [f"--profile={profile}", *(a for a in command if a.startswith(report_flags))]
    analyzed = subprocess.run([command[0], "analyze", "--cluster", str(dump), "-o", "json", *flags],
                              check=True, capture_output=True).stdout  # fmt: skip
    offline = {(r["workload"]["namespace"], r["workload"]["kind"], r["workload"]["name"]): r
               for r in orjson.loads(analyzed)["reports"]}  # fmt: skip
    reports = [item for ns in sorted({k.namespace for k in chosen})
               for item in orjson.loads(subprocess.run([*kubectl, "get", SPREAD_REPORTS.plural, "-n", ns, "-o", "json"],
                                                       check=True, capture_output=True).stdout)["items"]]  # fmt: skip
    live = {(r["metadata"]["namespace"], r["spec"]["workloadRef"]["kind"], r["spec"]["workloadRef"]["name"]): r
            for r in reports}  # fmt: skip
    same = 0
    for key in chosen:
        ident = (key.namespace, key.kind, key.name)
        if ident in live and ident in offline:
            status = {k: v for k, v in live[ident]["status"].items() if k != "comparison"}
            same += _content(status) == _content(offline[ident])
    return {"compared": len(chosen), "identical": same}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--churn-rate", type=float, default=100.0, help="pod events per second")
    parser.add_argument("--churn-seconds", type=float, default=330.0,
                        help="each churn phase; 330 s holds one resync at the chart's period of 300 s")  # fmt: skip
    parser.add_argument("--burst", type=int, default=200, help="Deployments scaled +2 at once")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--cluster-dir", default="", help="keep the loaded control plane there and reuse it")
    parser.add_argument("--resync-period", type=float, default=None, help="the operator's (default: the chart's)")
    parser.add_argument("--out", default="-", help="JSON result file (default: stdout)")
    args = parser.parse_args(argv)
    result = measure(args.scale, args.seed, args.threads, args.churn_rate, args.churn_seconds, args.burst,
                     args.sample, cluster_dir=args.cluster_dir, resync_period=args.resync_period,
                     log=lambda line: print(line, file=sys.stderr, flush=True))  # fmt: skip
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out == "-":
        print(text)
    else:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
