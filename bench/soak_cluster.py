"""Soak benchmark of the real operator on the real local control plane: minutes of pod churn, sampled.

    make bench FIGURES=soak-cluster              # bench/figures.toml: 5 minutes

A private control plane (hack/devcluster.py, free ports, a temp dir; stopped at the end) with 30 zoned Nodes
and ``--workloads`` StatefulSets (0 replicas: every pod comes from the churn) holding ``--base-pods`` bound
pods; then ``spreadwatch run`` (admin kubeconfig, the operator's defaults: debounce 1 s, 20 writes/s, leader
election on) and ``--threads`` churn threads that create bound pods, mark every third Succeeded and delete
their oldest beyond a fixed population, each new pod labelled with a ``soak-rev`` that changes every minute.

Sampled every ``--sample-seconds``: the operator's RSS (``/proc/<pid>/status``), its /statusz (events →
events/s, API writes → writes/min, interned label maps, label groups, pods, pending). Event latency on the
real operator is measured end to end by a probe thread: every 2 s it adds or removes one pod of a quiet
``probe`` workload and times until that SpreadReport shows the new pod count (watch delivery + index +
the 1 s debounce + the status write + this poll, every 50 ms). Costs: the control plane, the operator and the
churn share the machine; O(pods) objects.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.soak import memory_figures, trend
from bench.timing import log as bench_log
from bench.timing import percentile
from hack import devcluster
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.exceptions import ApiException

from spreadwatch.resources import SPREAD_REPORTS

__all__ = ["free_port", "measure", "run_cluster_soak", "stop_process"]

ROOT = Path(__file__).resolve().parent.parent

CRD = ROOT / "crds" / f"{SPREAD_REPORTS.full_name}.yaml"
NAMESPACE = "soak"
ZONES = ("a", "b", "c")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _statusz(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/statusz", timeout=10) as resp:
        data: dict[str, Any] = json.loads(resp.read())
        return data


def _wait(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, ApiException):
            value = predicate()
            if value:
                return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"soak: timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.2)


def _pod(name: str, app: str, node: str, rev: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": app, "soak-rev": str(rev)}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.invalid/pause:1"}]}}  # fmt: skip


class _Churn:
    """Churn threads (see the module docstring); ``events`` counts API calls (= pod events). O(live pods)."""

    def __init__(self, core: client.CoreV1Api, workloads: Sequence[str], nodes: Sequence[str], threads: int,
                 keep: int, started: float) -> None:  # fmt: skip
        self.core, self.workloads, self.nodes, self.keep, self.started = core, workloads, nodes, keep, started
        self.events = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(t,), daemon=True) for t in range(threads)]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()

    def _count(self) -> None:
        with self._lock:
            self.events += 1

    def _call(self, fn: Callable[[], Any]) -> None:
        try:
            fn()
            self._count()
        except (ApiException, OSError) as err:  # keep churning; reported in the summary
            if len(self.errors) < 20:
                self.errors.append(str(err).splitlines()[0][:200])
            time.sleep(0.5)

    def _run(self, t: int) -> None:
        live: deque[str] = deque()
        i = 0
        while not self._stop.is_set():
            w = self.workloads[(i + t) % len(self.workloads)]
            name = f"{w}-c{t}-{i}"
            rev = int((time.monotonic() - self.started) / 60)
            pod = _pod(name, w, self.nodes[(i * 7 + t) % len(self.nodes)], rev)
            self._call(lambda pod=pod: self.core.create_namespaced_pod(NAMESPACE, pod))
            live.append(name)
            if i % 3 == 0:
                body = {"status": {"phase": "Succeeded"}}
                self._call(lambda: self.core.patch_namespaced_pod_status(name, NAMESPACE, body))  # noqa: B023
            if len(live) > self.keep:
                old = live.popleft()
                self._call(lambda: self.core.delete_namespaced_pod(old, NAMESPACE, grace_period_seconds=0))  # noqa: B023
            i += 1


class _Probe:
    """Every ``period`` s: add or remove one pod of the quiet ``probe`` workload, time until its report shows it."""

    def __init__(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, node: str, period: float = 2.0) -> None:
        self.core, self.custom, self.node, self.period = core, custom, node, period
        self.latencies: list[float] = []
        self.timeouts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _pods(self) -> int:
        obj = self.custom.get_namespaced_custom_object(
            SPREAD_REPORTS.group, SPREAD_REPORTS.version, NAMESPACE, SPREAD_REPORTS.plural, "statefulset-probe"
        )
        return int((obj.get("status") or {}).get("pods", -1))

    def _run(self) -> None:
        live: deque[str] = deque()
        serial = 0
        while not self._stop.wait(self.period):
            try:
                if len(live) < 3:  # up to 3 pods, then one out and one in: every change moves the count
                    serial += 1
                    name = f"probe-x{serial}"  # not "probe-<n>": the StatefulSet would claim and delete that
                    self.core.create_namespaced_pod(NAMESPACE, _pod(name, "probe", self.node, 0))
                    live.append(name)
                else:
                    self.core.delete_namespaced_pod(live.popleft(), NAMESPACE, grace_period_seconds=0)
            except (ApiException, OSError):
                self.timeouts += 1
                continue
            self._measure(len(live))

    def _measure(self, want: int) -> None:
        start = time.monotonic()
        while time.monotonic() - start < 60 and not self._stop.is_set():
            with contextlib.suppress(ApiException):
                if self._pods() == want:
                    self.latencies.append(time.monotonic() - start)
                    return
            time.sleep(0.05)
        self.timeouts += 1


def _setup(api: client.ApiClient, kubectl: Path, kubeconfig: str, workloads: int, base_pods: int) -> list[str]:
    """CRD, namespace, 30 zoned Nodes, StatefulSets with 0 replicas and their base pods; returns node names."""
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    subprocess.run([str(kubectl), "apply", "--server-side", "-f", str(CRD)], check=True, env=env, capture_output=True)
    subprocess.run([str(kubectl), "wait", "--for=condition=Established", f"crd/{SPREAD_REPORTS.full_name}",
                    "--timeout=120s"], check=True, env=env, capture_output=True)  # fmt: skip
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    _wait(lambda: core.read_namespaced_service_account("default", NAMESPACE), 120, "the default ServiceAccount")
    nodes = []
    for i in range(30):
        zone = ZONES[i % 3]
        name = f"soak-{zone}-{i}"
        core.create_node({"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": f"zone-{zone}",
                                                                 "kubernetes.io/hostname": name}}})  # fmt: skip
        resources = {"cpu": "8", "memory": "32Gi", "pods": "110"}
        core.patch_node_status(name, {"status": {"conditions": [{"type": "Ready", "status": "True"}],
                                                 "capacity": resources, "allocatable": resources}})  # fmt: skip
        nodes.append(name)
    names = [f"w{i}" for i in range(workloads)] + ["probe"]
    for w in names:
        apps.create_namespaced_stateful_set(NAMESPACE, {
            "metadata": {"name": w}, "spec": {"replicas": 0, "serviceName": w, "selector": {"matchLabels": {"app": w}},
            "template": {"metadata": {"labels": {"app": w}},
                         "spec": {"containers": [{"name": "c", "image": "registry.invalid/pause:1"}]}}}})  # fmt: skip
    for i in range(base_pods):
        w = names[i % workloads]
        core.create_namespaced_pod(NAMESPACE, _pod(f"{w}-base-{i}", w, nodes[(i * 7) % len(nodes)], 0))
    return nodes


def stop_process(proc: subprocess.Popen[bytes], grace: float = 60.0) -> int:
    """SIGTERM, SIGKILL after ``grace`` s; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def run_cluster_soak(minutes: float, sample_seconds: float, workloads: int, base_pods: int, threads: int,
                     keep: int, log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    """Start a control plane, the operator and the churn; sample; tear everything down. Blocks ``minutes``."""
    with tempfile.TemporaryDirectory(prefix="spreadwatch-soak-") as tmp:
        state = Path(tmp) / "cluster"
        bin_dir = Path(os.environ.get("SPREADWATCH_CONTROLPLANE_BIN") or state / "bin")
        if not os.environ.get("SPREADWATCH_CONTROLPLANE_BIN"):
            devcluster.ensure_tools(bin_dir)
        cluster = devcluster.up(state, bin_dir=bin_dir, ports="auto", die_with_parent=True)
        proc: subprocess.Popen[bytes] | None = None
        churn: _Churn | None = None
        probe: _Probe | None = None
        try:
            api = kube_config.new_client_from_config(config_file=str(cluster.kubeconfig))
            started = time.monotonic()
            nodes = _setup(api, bin_dir / "kubectl", str(cluster.kubeconfig), workloads, base_pods)
            log(f"soak: cluster ready with {base_pods} pods in {time.monotonic() - started:.0f}s")
            port = free_port()
            env = {k: v for k, v in os.environ.items() if not k.startswith("SPREADWATCH_")}
            env["SPREADWATCH_METRICS_PORT"] = str(free_port())  # the operator's default HTTPS /metrics, on a free port
            cmd = [sys.executable, "-m", "spreadwatch.cli", "run", "--kubeconfig", str(cluster.kubeconfig),
                   "--port", str(port), "--bind-address", "127.0.0.1", "--log-format", "json", "--identity", "soak",
                   "--lease-namespace", "default", "--skip-namespace", "kube-system"]  # fmt: skip
            with open(Path(tmp) / "operator.log", "ab") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
            _wait(lambda: _statusz(port)["ready"] and _statusz(port)["leader"], 300, "the operator to be ready")
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            _wait(lambda: _statusz(port)["pending"] == 0 and _statusz(port)["writer"]["apiWrites"] >= workloads, 600,
                  "the first reports")  # fmt: skip
            churn = _Churn(core, [f"w{i}" for i in range(workloads)], nodes, threads, keep, time.monotonic())
            probe = _Probe(core, custom, nodes[0])
            t0 = time.monotonic()
            churn.start()
            probe.start()
            samples: list[dict[str, Any]] = []
            last = _statusz(port)
            last_t, probes_seen = t0, 0
            while True:
                time.sleep(max(0.0, t0 + (len(samples) + 1) * sample_seconds - time.monotonic()))
                now, st = time.monotonic(), _statusz(port)
                span = now - last_t
                lat = sorted(probe.latencies[probes_seen:])
                probes_seen = len(probe.latencies)
                samples.append({
                    "t_min": round((now - t0) / 60, 2),
                    "rss_mib": round(_rss_mib(proc.pid), 1),
                    "interned_label_maps": st["index"].get("internedLabelMaps", -1),
                    "label_groups": st["index"]["labelGroups"],
                    "pods": st["index"]["pods"],
                    "events_per_s": round((st["events"]["total"] - last["events"]["total"]) / span, 1),
                    "writes_per_min": round((st["writer"]["apiWrites"] - last["writer"]["apiWrites"]) / span * 60, 1),
                    "pending": st["pending"],
                    "probe_max_s": round(lat[-1], 2) if lat else float("nan"),
                    "probes": len(lat),
                })  # fmt: skip
                log("soak-cluster: " + json.dumps(samples[-1]))
                last, last_t = st, now
                if now - t0 >= minutes * 60:
                    break
            churn.stop()
            probe.stop()
            final = _statusz(port)
            latencies = sorted(probe.latencies)
            summary: dict[str, Any] = {k: trend(samples, k) for k in ("rss_mib", "interned_label_maps")}
            summary.update({
                "churn_events": churn.events, "churn_errors": churn.errors[:5],
                "operator_events": final["events"]["total"], "api_writes": final["writer"]["apiWrites"],
                "writer_failures": final["writer"]["failures"], "probes": len(latencies),
                "probe_timeouts": probe.timeouts,
                "probe_p50_s": percentile(latencies, 50),
                "probe_p99_s": percentile(latencies, 99),
                "probe_max_s": latencies[-1] if latencies else float("nan"),
            })  # fmt: skip
            summary["events_per_s"] = round(sum(s["events_per_s"] for s in samples) / len(samples), 1)
            config = {"minutes": minutes, "sample_seconds": sample_seconds, "workloads": workloads,
                      "base_pods": base_pods, "threads": threads, "keep": keep, "nodes": len(nodes)}  # fmt: skip
            return {"config": config, "samples": samples, "summary": summary}
        finally:
            for worker in (churn, probe):
                if worker is not None:
                    worker.stop()
            if proc is not None:
                stop_process(proc)
            devcluster.down(state)


def measure(
    *,
    scale: float = 1.0,
    quick: bool = False,
    minutes: float = 5.0,
    workloads: int = 40,
    base_pods: int = 1200,
    threads: int = 6,
    keep: int = 50,
) -> dict[str, Any]:
    """The soak as figures (bench/figures.toml ``soak-cluster``); the samples under ``series``. ``quick``: 0.5
    min with 10 workloads of 100 pods. ``scale`` is not used (the load is given by the other parameters)."""
    if quick:
        minutes, workloads, base_pods, threads = 0.5, 10, 100, 2
    result = run_cluster_soak(minutes, max(5.0, minutes * 2), workloads, base_pods, threads, keep, bench_log)
    s, samples = result["summary"], result["samples"]
    return {
        **memory_figures(s, samples),
        "probe_p50_s": s["probe_p50_s"],
        "probe_p99_s": s["probe_p99_s"],
        "writes_per_min": round(sum(x["writes_per_min"] for x in samples) / len(samples), 1),
        "api_writes": s["api_writes"],
        "writer_failures": s["writer_failures"],
        "probes": s["probes"],
        "churn_errors": len(s["churn_errors"]),
        "series": samples,
    }
