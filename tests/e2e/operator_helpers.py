"""The operator as the e2e suites run it, and the exactness check (shared by test_operator.py, test_failover.py).

* :func:`start_operator`: ``spreadwatch run`` as a subprocess with the Helm chart Deployment's args,
  authenticated as the chart's ServiceAccount (chart_rbac.py), JSON logs to a file; :class:`Operator` reads
  its /statusz and logs;
* :func:`offline_reports` / :func:`live_reports` / :func:`wait_converged`: every SpreadReport of a namespace
  must equal ``spreadwatch analyze`` of a fresh ``kubectl get -o json`` dump of the live cluster, under the
  profile the chart's defaults take on this control plane (:data:`EXPECTED_PROFILE`), with the comparison
  with :data:`EXPECTED_COMPARED` computed apart (tests/comparison_oracle.py);
* :func:`apply_crd`, :func:`create_zone_nodes`: the CRD and six zoned nodes every operator suite starts from;
* :class:`PodChurn`: pod churn from background threads (create bound pods, finish some, delete the oldest)
  until stopped, for tests that need events to keep coming while something else happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chart_rbac import ChartInstall
from kube_helpers import (
    ControlPlane,
    create_node,
    create_pod,
    delete_pod,
    http_get,
    set_pod_phase,
    unique_name,
    wait_for,
)
from kubernetes import client

from comparison_oracle import expected_comparison
from ports import free_port
from processes import stop_process
from spreadwatch.analysis import WorkloadFilter, analyze_index
from spreadwatch.profile_args import load_scheduler_profile
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import load_snapshot

__all__ = [
    "DEBOUNCE",
    "EXPECTED_COMPARED",
    "EXPECTED_PROFILE",
    "Operator",
    "PodChurn",
    "apply_crd",
    "create_zone_nodes",
    "diff",
    "kubectl_json",
    "live_reports",
    "offline_reports",
    "replace_report_status",
    "start_operator",
    "wait_converged",
]

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "spreadreports.spreadwatch.io.yaml"
KINDS = "nodes,namespaces,pods,services,rc,rs,sts,deploy,pdb"
#: status fields not in the offline report (lastPlacement: the operator's check of the last new binding)
VOLATILE = ("conditions", "observedGeneration", "lastUpdateTime", "lastPlacement")
DEBOUNCE = float(os.environ.get("SPREADWATCH_E2E_DEBOUNCE", "0.3"))
#: What the chart's defaults (``profile: auto``, ``compareProfile: auto``) score on the local control plane,
#: kube-apiserver v1.36.4 (hack/controlplane/versions.env): kube-scheduler v1.20 and later spread with
#: PodTopologySpread and its system defaults (docs/scoring.md §14), SelectorSpread's last generation beside it.
#: :func:`server_minor` checks the release these were written for.
EXPECTED_PROFILE, EXPECTED_COMPARED = "v1.29", "v1.28"
#: the chart's report options: its defaults with the prediction (``prediction: true``, no ``--scheduler-config``:
#: kube-scheduler's default profile), every namespace seen
EXPECTED_OPTIONS = ReportOptions(scheduler=load_scheduler_profile(None))
EXPECTED_SERVER_MINOR = 36


# --------------------------------------------------------------------------- the operator process


@dataclass
class Operator:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    def get(self, path: str) -> tuple[int, str]:
        return http_get(self.port, path)

    def state(self) -> dict[str, Any]:
        code, body = self.get("/statusz")
        assert code == 200, body
        data: dict[str, Any] = json.loads(body)
        return data

    def logs(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    def assert_alive(self) -> None:
        assert self.proc.poll() is None, f"operator exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"

    def stop(self, grace: float = 60) -> int:
        """SIGTERM; SIGKILL after `grace` s (the test then fails: the operator must honour SIGTERM)."""
        stopped = stop_process(self.proc, grace)
        if stopped.killed:
            raise AssertionError(f"operator ignored SIGTERM for {grace}s:\n{self.log.read_text()[-3000:]}")
        return stopped.returncode


def start_operator(chart: ChartInstall, log: Path, *extra: str) -> Operator:
    """`spreadwatch run` with the chart Deployment's args, authenticated as the chart's ServiceAccount (a
    TokenRequest token, not admin): the chart's RBAC must be enough for everything these tests check."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "spreadwatch.cli", "run", *chart.args, "--kubeconfig", str(chart.kubeconfig),
        "--port", str(port), "--metrics-port", str(free_port()),
        "--bind-address", "127.0.0.1", "--debounce", str(DEBOUNCE), "--log-format", "json",
        "--skip-namespace", "kube-system", "--max-writes-per-second", "100", "--write-burst", "100", *extra,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPREADWATCH_")}
    env.update(chart.env)
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    op = Operator(proc, port, log)

    def ready() -> bool:
        op.assert_alive()
        return op.get("/readyz")[0] == 200

    wait_for(ready, timeout=180, message="the operator's /readyz")
    return op

def apply_crd(cp: ControlPlane) -> None:
    """Install the SpreadReport CRD and wait until its API is served."""
    cp.kubectl("apply", "--server-side", "-f", str(CRD))
    cp.kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io", "--timeout=180s")
    wait_for(lambda: cp.kubectl("get", "spreadreports", "-A", check=False).returncode == 0,
             timeout=180, message="the SpreadReport API to be served")  # fmt: skip


def create_zone_nodes(api: client.ApiClient) -> list[str]:
    """Six nodes, two in each of three zones; returns their names."""
    prefix = unique_name("n")
    return [create_node(api, f"{prefix}-{z}{i}", zone=f"zone-{z}", region="r1").metadata.name
            for z in "abc" for i in (1, 2)]  # fmt: skip


# --------------------------------------------------------------------------- expected vs actual


def replace_report_status(cp: ControlPlane, namespace: str, name: str, status: dict[str, Any]) -> dict[str, Any]:
    """Write ``status`` to SpreadReport ``name`` (server-side validation against the structural schema; the
    CRD has no status subresource: the operator applies whole reports) and return the report as stored."""
    cp.kubectl("patch", "spreadreport", name, "-n", namespace, "--type=merge",
               "-p", json.dumps({"status": status}))  # fmt: skip
    stored: dict[str, Any] = json.loads(cp.kubectl("get", "spr", name, "-n", namespace, "-o", "json").stdout)
    return stored


def kubectl_json(cp: ControlPlane, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(cp.kubectl(*args, "-o", "json", timeout=120).stdout)
    return data


def server_minor(cp: ControlPlane) -> int:
    """The API server's minor release, from ``kubectl version`` (its /version)."""
    version = json.loads(cp.kubectl("version", "-o", "json").stdout)["serverVersion"]
    return int(str(version["minor"]).rstrip("+"))


def offline_reports(cp: ControlPlane, namespace: str, tmp: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """`spreadwatch analyze --profile v1.29 --prediction` on a `kubectl get -o json` dump of the cluster, for one
    namespace, each report with the comparison an index of v1.28 alone gives (what the chart's defaults write)."""
    dump = tmp / f"dump-{time.monotonic_ns()}.json"
    dump.write_text(cp.kubectl("get", KINDS, "-A", "-o", "json", timeout=120).stdout)
    snapshot = load_snapshot([dump])
    only = WorkloadFilter([namespace])
    index, reports = analyze_index(snapshot, get_profile(EXPECTED_PROFILE), EXPECTED_OPTIONS, only)
    other = analyze_index(snapshot, get_profile(EXPECTED_COMPARED), ReportOptions(), only)[0]
    out = {}
    for r in reports:
        key = r.workload.key
        compared = other.report_for(key)
        assert compared is not None
        comparison = expected_comparison(r, index.candidate_layout(key), compared, other.candidate_layout(key))
        out[(r.workload.kind, r.workload.name)] = {**r.to_dict(), "comparison": comparison}
    return out


def live_reports(cp: ControlPlane, namespace: str) -> dict[tuple[str, str], dict[str, Any]]:
    items = kubectl_json(cp, "get", "spreadreports", "-n", namespace)["items"]
    return {(o["status"]["workload"]["kind"], o["status"]["workload"]["name"]): o["status"]
            for o in items if o.get("status")}  # fmt: skip


def strip(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k not in VOLATILE}


def diff(expected: dict[tuple[str, str], dict[str, Any]], actual: dict[tuple[str, str], dict[str, Any]]) -> str:
    lines = []
    for key in sorted(set(expected) | set(actual)):
        e, a = expected.get(key), actual.get(key)
        if a is None or e is None:
            lines.append(f"{key}: {'missing' if a is None else 'unexpected'}")
            continue
        a = strip(a)
        lines += [f"{key}.{f}: expected {e.get(f)!r}, got {a.get(f)!r}" for f in sorted(set(e) | set(a))
                  if e.get(f) != a.get(f)]  # fmt: skip
    return "\n".join(lines)


def wait_converged(cp: ControlPlane, namespace: str, tmp: Path, timeout: float = 180,
                   expected: dict[tuple[str, str], dict[str, Any]] | None = None) -> float:  # fmt: skip
    """Wait until the SpreadReports of the namespace equal the offline analysis; returns seconds waited."""
    start = time.monotonic()
    want = expected if expected is not None else offline_reports(cp, namespace, tmp)
    last = ""
    while True:
        got = live_reports(cp, namespace)
        last = diff(want, got)
        if not last:
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"SpreadReports in {namespace} did not converge in {timeout}s:\n{last}")
        time.sleep(0.2)
        if expected is None:
            want = offline_reports(cp, namespace, tmp)


# --------------------------------------------------------------------------- churn in the background


@dataclass
class PodChurn:
    """Pod events from background threads until :meth:`stop`: each thread creates pods bound to the nodes
    (labels ``app=<workload>``, round-robin over workloads and nodes), marks every third one Succeeded, and
    deletes its oldest pod once it holds more than ``keep``. Use workloads that create no pods of their own
    (StatefulSets with 0 replicas ignore pods not named like theirs). Every API call is one pod event.

    ``events`` counts the calls made so far; the first failure stops the thread and is re-raised by
    :meth:`stop`. Thread-safe counters; O(threads × keep) live pods.
    """

    api: client.ApiClient
    namespace: str
    workloads: Sequence[str]
    nodes: Sequence[str]
    threads: int = 4
    keep: int = 12
    events: int = 0
    tag: str = field(default_factory=lambda: unique_name("c"))  # pod names differ between PodChurn runs
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)
    _errors: list[BaseException] = field(default_factory=list)

    def start(self) -> PodChurn:
        for t in range(self.threads):
            worker = threading.Thread(target=self._run, args=(t,), name=f"pod churn {t}", daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def _count(self) -> None:
        with self._lock:
            self.events += 1

    def _run(self, thread: int) -> None:
        live: deque[str] = deque()
        i = 0
        try:
            while not self._stop.is_set():
                workload = self.workloads[i % len(self.workloads)]
                name = f"{workload}-{self.tag}-{thread}-{i}"
                node = self.nodes[(i * 5 + thread) % len(self.nodes)]
                create_pod(self.api, self.namespace, name, node_name=node, labels={"app": workload})
                self._count()
                live.append(name)
                if i % 3 == 0:
                    set_pod_phase(self.api, self.namespace, name, "Succeeded")
                    self._count()
                if len(live) > self.keep:
                    delete_pod(self.api, self.namespace, live.popleft())
                    self._count()
                i += 1
        except BaseException as err:  # re-raised in stop()
            self._errors.append(err)

    def stop(self) -> int:
        """Stop the threads (each finishes its current API call); returns the events made. Raises the first
        error a thread hit."""
        self._stop.set()
        for worker in self._workers:
            worker.join()
        if self._errors:
            raise self._errors[0]
        return self.events
