"""`make demo`: spreadwatch end to end on the local control plane.

Run after `make dev-cluster` (the Makefile does both). Installs the SpreadReport CRD and creates nodes in three
zones. The `api` Deployment's pods are bound by hand (the Binding API) before any scheduler runs, piled onto two
nodes: bad spread. Then the real kube-scheduler v1.36.4 starts (hack/devcluster.py up --scheduler v1.36, with
spreading as its only score: hack/scheduler/config/v1.36-spread-only.yaml) and places `web` and `cache` (whose
nodeSelector allows one node: bad spread again). `spreadwatch run` runs in the background with its defaults
(`--profile auto`: the API server's version, v1.36.4, picks v1.29, PodTopologySpread; SelectorSpread v1.28 compared
beside it); the demo prints the profile it took, `kubectl get spreadreports -A`, one `spreadwatch explain` and
metric lines, then scales `api` up by one and prints the report's prediction (and SelectorSpread's beside it) and
the node kube-scheduler chose. There is no kubelet: pods stay Pending on their
nodes. `make demo-down` stops everything.
/metrics is secure (HTTPS, TokenReview + SubjectAccessReview): the demo scrapes it with the token of a
ServiceAccount bound to a metrics-reader ClusterRole, as Prometheus would.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STATE = ROOT / ".dev-cluster"
KUBECONFIG = STATE / "kubeconfig"
KUBECTL = STATE / "bin" / "kubectl"
SPREADWATCH = ROOT / ".venv" / "bin" / "spreadwatch"
PIDFILE = STATE / "operator.pid"
LOG = STATE / "logs" / "operator.log"
NS = "spreadwatch-demo"
PROBES_PORT, METRICS_PORT = 18080, 18443
READER = "metrics-reader"  # ServiceAccount in NS allowed to `get /metrics`

DEVCLUSTER = ROOT / "hack" / "devcluster.py"
SCHEDULER_CONFIG = ROOT / "hack" / "scheduler" / "config" / "v1.36-spread-only.yaml"
SCHEDULER_LOG = STATE / "logs" / "kube-scheduler.log"
ZONES = {"a": ["demo-a1", "demo-a2"], "b": ["demo-b1", "demo-b2"], "c": ["demo-c1", "demo-c2"]}
CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}
# bound by hand before the scheduler runs: workload -> nodes, in pod order
PINNED = {"api": ["demo-b2", "demo-b2", "demo-b2", "demo-c2"]}  # piled up: Imbalanced
# placed by kube-scheduler: workload -> (replicas, nodeSelector)
SCHEDULED: dict[str, tuple[int, dict[str, str]]] = {
    "web": (3, {}),  # the scheduler spreads them: Balanced
    "cache": (2, {"kubernetes.io/hostname": "demo-a2"}),  # one node allowed: SinglePointOfFailure
}
REPLICAS = {**{name: len(nodes) for name, nodes in PINNED.items()}, **{n: r for n, (r, _) in SCHEDULED.items()}}
SCALED = "api"  # the workload the demo scales up by one at the end


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        [str(KUBECTL), "--kubeconfig", str(KUBECONFIG), *args],
        input=stdin, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if check and proc.returncode != 0:
        sys.exit(f"demo: kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def apply(objects: list[dict[str, Any]]) -> None:
    kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))


def devcluster(*args: str) -> None:
    """hack/devcluster.py up on the demo's cluster (already running: only the scheduler changes)."""
    proc = subprocess.run([sys.executable, str(DEVCLUSTER), "up", "--dir", str(STATE), *args],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        sys.exit(f"demo: hack/devcluster.py up {' '.join(args)} failed:\n{proc.stderr.strip()}")


def set_capacity(names: list[str]) -> None:
    """Ready and allocatable (no kubelet reports them): the scheduler's filters need both."""
    status = {"status": {"capacity": CAPACITY, "allocatable": CAPACITY, "conditions": [
        {"type": "Ready", "status": "True", "reason": "Demo", "message": "set by hack/demo.py"}]}}  # fmt: skip
    for name in names:
        kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p", json.dumps(status))


def nodes() -> list[dict[str, Any]]:
    out = []
    for zone, names in ZONES.items():
        for name in names:
            labels = {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/region": "demo",
                "topology.kubernetes.io/zone": f"demo-{zone}",
            }
            out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "demo-gpu", "labels": {
        "topology.kubernetes.io/zone": "demo-a"}}, "spec": {"taints": [
            {"key": "gpu", "value": "true", "effect": "NoSchedule"}]}})  # fmt: skip
    return out


def deployment(name: str, replicas: int, node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.example/demo:1"}],
                            "terminationGracePeriodSeconds": 0}  # fmt: skip
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": spec}},
    }  # fmt: skip


def service(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}  # fmt: skip


def wait_for(what: str, check: Any, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    sys.exit(f"demo: timed out waiting for {what} (operator log: {LOG})")


def pods_of(app: str) -> dict[str, str]:
    """pod -> node ("" while unbound) of the workload's pods that are not being deleted."""
    pods = json.loads(kubectl("get", "pods", "-n", NS, "-l", f"app={app}", "-o", "json"))["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods
            if not p["metadata"].get("deletionTimestamp")}  # fmt: skip


def bind_pods() -> None:
    """Bind the PINNED workloads' pods by hand, as no scheduler runs yet (already bound pods stay)."""
    for app, targets in PINNED.items():

        def pending(app: str = app, want: int = len(targets)) -> list[str] | None:
            names = sorted(pods_of(app))
            return names if len(names) >= want else None

        names = wait_for(f"the pods of {app}", pending)
        for pod, node in zip(names, targets, strict=False):
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "namespace": NS},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": node}}  # fmt: skip
            kubectl("create", "-f", "-", stdin=json.dumps(binding), check=False)


def start_operator() -> None:
    stop_operator(quiet=True)
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with LOG.open("w") as log:
        proc = subprocess.Popen(
            [str(SPREADWATCH), "run", "--kubeconfig", str(KUBECONFIG), "--namespace", NS, "--debounce", "0.5",
             "--top-nodes", "6",
             "--lease-namespace", NS, "--port", str(PROBES_PORT), "--metrics-port", str(METRICS_PORT)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    PIDFILE.write_text(str(proc.pid))


def metrics_reader() -> str:
    """A ServiceAccount bound to a ClusterRole with `get` on /metrics (the chart's <fullname>-metrics-reader);
    returns a token of it (TokenRequest, 1 h)."""
    role = f"{NS}-metrics-reader"
    apply([
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": READER, "namespace": NS}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role},
         "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
         "subjects": [{"kind": "ServiceAccount", "name": READER, "namespace": NS}]},
    ])  # fmt: skip
    return kubectl("create", "token", READER, "-n", NS).strip()


def stop_operator(quiet: bool = False, grace: float = 30.0) -> None:
    """SIGTERM the background operator, SIGKILL it after `grace` seconds, and wait until it is gone."""
    if not PIDFILE.exists():
        return
    try:
        pid = int(PIDFILE.read_text())
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, ValueError):
        PIDFILE.unlink(missing_ok=True)
        return
    deadline = time.monotonic() + grace
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while _alive(pid):  # SIGKILL cannot be ignored
            time.sleep(0.1)
    PIDFILE.unlink(missing_ok=True)
    if not quiet:
        print("demo: operator stopped")


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (the operator runs in its own session, not as our child)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def main() -> int:
    if sys.argv[1:] == ["down"]:
        stop_operator()
        return 0
    print("demo: installing the SpreadReport CRD")
    kubectl("apply", "--server-side", "-f", str(ROOT / "crds" / "spreadreports.spreadwatch.io.yaml"))
    kubectl("wait", "--for=condition=Established", "crd/spreadreports.spreadwatch.io", "--timeout=60s")
    print("demo: creating 7 nodes in 3 zones; binding api's 4 pods by hand onto 2 nodes (no scheduler yet)")
    devcluster("--scheduler", "none")
    kubectl("create", "namespace", NS, check=False)
    node_objects = nodes()
    apply(node_objects)
    set_capacity([n["metadata"]["name"] for n in node_objects])
    apply([deployment(name, len(targets)) for name, targets in PINNED.items()])
    bind_pods()
    print("demo: starting kube-scheduler v1.36.4 (first time: built from Go modules, then cached; "
          f"log {SCHEDULER_LOG.relative_to(ROOT)}); it places web and cache")
    devcluster("--ports", "fixed", "--scheduler", "v1.36", "--scheduler-config", str(SCHEDULER_CONFIG))
    apply([deployment(name, replicas, selector) for name, (replicas, selector) in SCHEDULED.items()]
          + [service("web")])  # fmt: skip
    for app, want in REPLICAS.items():
        wait_for(f"the pods of {app} to be bound", lambda app=app, want=want: _bound(app, want))
    print("demo: starting `spreadwatch run` (--profile auto) in the background (log: .dev-cluster/logs/operator.log)")
    start_operator()
    wait_for("the operator's reports", lambda: all_reports(REPLICAS))
    print(f"\n$ grep 'starting: profile' {LOG.relative_to(ROOT)}   # what --profile auto took, and why")
    started = [line for line in LOG.read_text(errors="replace").splitlines() if "starting: profile" in line]
    print(started[0][started[0].index("starting: profile"):] if started else "(not logged)")
    print("\n$ kubectl get spreadreports -A")
    print(kubectl("get", "spreadreports", "-A"), end="")
    print(f"\n$ spreadwatch explain --profile auto deployment/{NS}/api   # live, through the kubeconfig")
    explain = subprocess.run(
        [str(SPREADWATCH), "explain", "--profile", "auto", "--kubeconfig", str(KUBECONFIG), f"deployment/{NS}/api"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    print(explain.stdout or explain.stderr, end="")
    print(f"\n$ curl -s localhost:{PROBES_PORT}/healthz\n{_get(PROBES_PORT, '/healthz').strip()}")
    token = metrics_reader()
    print(f"\n$ curl -sk https://localhost:{METRICS_PORT}/metrics   # no token")
    print(_get(METRICS_PORT, "/metrics", secure=True).strip())
    print(f"\n$ TOKEN=$(kubectl create token {READER} -n {NS})   # bound to a ClusterRole: get on /metrics")
    print(f"$ curl -sk -H \"Authorization: Bearer $TOKEN\" https://localhost:{METRICS_PORT}/metrics"
          f" | grep -E '{_METRICS_SHOWN}' | grep {NS}")  # fmt: skip
    print(_metric_lines(token), end="")
    scale_up(SCALED)
    print(
        "\nThe operator and kube-scheduler keep running: try `kubectl --kubeconfig .dev-cluster/kubeconfig scale "
        f"deploy/web -n {NS} --replicas=6` and watch `kubectl get spr -A -w`."
    )
    print("Stop everything with: make demo-down")
    return 0


_METRICS_SHOWN = "^spreadwatch_workload_(health|zone_pods|node_skew)"


def _bound(app: str, want: int) -> bool:
    pods = pods_of(app)
    return len(pods) == want and all(pods.values())


def all_reports(replicas: dict[str, int]) -> bool:
    """Every workload's SpreadReport counts the given number of pods."""
    out = kubectl("get", "spreadreports", "-n", NS, "-o", "json", check=False)
    items = json.loads(out)["items"] if out else []
    done = {i["status"]["workload"]["name"]: i["status"]["pods"] for i in items if i.get("status")}
    return all(done.get(app) == want for app, want in replicas.items())


def scale_up(app: str) -> None:
    """Scale the Deployment up by one: the report's prediction just before, then kube-scheduler's choice."""
    report = json.loads(kubectl("get", "spreadreport", f"deployment-{app}", "-n", NS, "-o", "json"))["status"]
    before = pods_of(app)
    best = ", ".join(report["bestNodes"])
    print(f"\n$ kubectl scale deploy/{app} -n {NS} --replicas={len(before) + 1}   # the real scheduler places it")
    print(f"SpreadReport deployment-{app} just before: best score {report['bestScore']} on "
          f"{report['bestNodeCount']} node(s): {best}")  # fmt: skip
    compared = report.get("comparison")
    if compared:
        overlap = "overlap" if compared["bestNodesOverlap"] else "do not overlap"
        nodes = ", ".join(compared["bestNodes"])
        print(f"  beside it, {compared['profile']} (SelectorSpread): best score {compared['bestScore']} on "
              f"{compared['bestNodeCount']} node(s): {nodes}; the best sets {overlap}")  # fmt: skip
    kubectl("scale", f"deploy/{app}", "-n", NS, f"--replicas={len(before) + 1}")

    def placed() -> tuple[str, str] | None:
        fresh = {p: n for p, n in pods_of(app).items() if p not in before}
        return next(iter(fresh.items())) if fresh and all(fresh.values()) else None

    pod, node = wait_for(f"kube-scheduler to place a new pod of {app} (log: {SCHEDULER_LOG})", placed)
    verdict = "one of the predicted best nodes" if node in report["bestNodes"] else "NOT a predicted best node"
    print(f"kube-scheduler bound {pod} to {node}: {verdict}")
    pattern = re.compile(rf'"Plugin scored node for pod" pod="{NS}/{pod}" plugin="PodTopologySpread" '
                         r'node="([^"]+)" score=(\d+)')  # fmt: skip
    logged = dict(pattern.findall(SCHEDULER_LOG.read_text(errors="replace")))
    shown = ", ".join(f"{n} {int(v) // 2}" for n, v in sorted(logged.items()))
    print(f"its log (--vmodule=schedule_one=10), PodTopologySpread per node / weight 2: {shown or '(none)'}")


def _get(port: int, path: str, secure: bool = False, token: str | None = None) -> str:
    """GET a path of the operator; HTTPS without verifying the self-signed certificate (curl -k) if secure."""
    context = None
    if secure:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(f"{'https' if secure else 'http'}://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as resp:
            return resp.read().decode() or str(resp.status)
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code}: {err.read().decode().strip()}\n"
    except OSError as err:
        return f"(unavailable: {err})\n"


def _metric_lines(token: str) -> str:
    """The demo workloads' health (current state only), zone pods and node skew from /metrics."""
    shown = re.compile(_METRICS_SHOWN)
    lines = [
        line
        for line in _get(METRICS_PORT, "/metrics", secure=True, token=token).splitlines()
        if shown.match(line) and f'namespace="{NS}"' in line
        and not (line.startswith("spreadwatch_workload_health") and line.endswith(" 0"))
    ]
    return "".join(f"{line}\n" for line in lines) or "(no spreadwatch metrics yet)\n"


if __name__ == "__main__":
    sys.exit(main())
