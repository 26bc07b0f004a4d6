"""``kubectl spreadwatch`` through the real kubectl binary against the local control plane: kubectl finds
``kubectl-spreadwatch`` on PATH (the venv's bin), the namespace comes from the kubeconfig context unless -n
or -A, --context/--kubeconfig work, outputs and sorting follow kubectl, simulate/rebalance/summary/explain
answer, a rebalance plan executed with kubectl and a fake scheduler makes the workload Balanced, and
``analyze -w`` re-prints a changed row and exits 0 on Ctrl-C."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kube_helpers import (
    ControlPlane,
    bind_pod,
    create_deployment,
    create_namespace,
    create_node,
    delete_namespace,
    delete_node,
    list_pods,
    pod_spec,
    schedule_pending_pods,
    set_pod_phase,
    unique_name,
    wait_for,
)
from kubernetes import client

pytestmark = pytest.mark.e2e
PLUGIN = Path(sys.executable).parent / "kubectl-spreadwatch"


@dataclass
class Setup:
    namespace: str
    nodes: list[str]  # sorted; zones za, zb, zc
    kubeconfig: Path  # current context's namespace: ``namespace``; context "elsewhere": an empty namespace
    elsewhere: str
    env: dict[str, str]


def _pods_of(api: client.ApiClient, ns: str, app: str, count: int) -> None:
    wait_for(lambda: len(list_pods(api, ns, {"app": app})) == count, timeout=60, message=f"{count} pods of {app}")


def _unbound(api: client.ApiClient, ns: str, app: str) -> client.V1Pod:
    """Wait for a pod of ``app`` that no node holds yet (a controller's new pod)."""
    return wait_for(
        lambda: next((p for p in list_pods(api, ns, {"app": app}) if not p.spec.node_name), None),
        timeout=60,
        message=f"a new pod of {app}",
    )


@pytest.fixture(scope="module")
def setup(
    control_plane: ControlPlane, kube_api: client.ApiClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    assert PLUGIN.exists(), f"{PLUGIN} missing: reinstall the package (make setup)"
    ns = create_namespace(kube_api)
    tag = unique_name("whatif")
    nodes = [f"{tag}-{z}" for z in ("a", "b", "c")]
    for name, zone in zip(nodes, ("za", "zb", "zc"), strict=True):
        create_node(kube_api, name, zone=zone, region="r", labels={"whatif": tag})
    spec = pod_spec(node_selector={"whatif": tag})  # only this test's nodes are candidates
    create_deployment(kube_api, ns, "web", replicas=3, labels={"app": "web"}, spec=spec)
    create_deployment(kube_api, ns, "api", replicas=3, labels={"app": "api"}, spec=spec)
    _pods_of(kube_api, ns, "web", 3)
    _pods_of(kube_api, ns, "api", 3)
    schedule_pending_pods(kube_api, ns, nodes[:1], {"app": "web"})  # all three on node a: SinglePointOfFailure
    schedule_pending_pods(kube_api, ns, nodes, {"app": "api"})  # one per zone: Balanced

    kubeconfig = tmp_path_factory.mktemp("plugin") / "kubeconfig"
    kubeconfig.write_text(Path(control_plane.kubeconfig).read_text())
    elsewhere = unique_name("nothing")  # never created: listing it finds nothing
    kc = ["--kubeconfig", str(kubeconfig)]
    control_plane.kubectl("config", "set-context", "--current", f"--namespace={ns}", *kc)
    current = control_plane.kubectl("config", "current-context", *kc).stdout.strip()
    cluster = control_plane.kubectl(
        "config", "view", "-o", f"jsonpath={{.contexts[?(@.name=='{current}')].context.cluster}}", *kc
    ).stdout
    user = control_plane.kubectl(
        "config", "view", "-o", f"jsonpath={{.contexts[?(@.name=='{current}')].context.user}}", *kc
    ).stdout
    control_plane.kubectl(
        "config", "set-context", "elsewhere", f"--cluster={cluster}", f"--user={user}", f"--namespace={elsewhere}", *kc
    )
    env = dict(control_plane.env)
    env["PATH"] = os.pathsep.join([str(PLUGIN.parent), str(control_plane.bin_dir), env.get("PATH", "")])
    env["KUBECONFIG"] = str(kubeconfig)
    yield Setup(ns, nodes, kubeconfig, elsewhere, env)
    delete_namespace(kube_api, ns)
    for name in nodes:
        delete_node(kube_api, name)


def kubectl(setup: Setup, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The real kubectl, which runs the plugin found on PATH."""
    proc = subprocess.run(["kubectl", *args], env=setup.env, text=True, capture_output=True, timeout=120, check=False)
    if check:
        assert proc.returncode == 0, f"kubectl {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    return proc


def rows(out: str) -> dict[str, list[str]]:
    """Table rows by workload name (the NAME column follows KIND, or NAMESPACE and KIND)."""
    lines = out.splitlines()
    at = lines[0].split().index("NAME")
    return {line.split()[at]: line.split() for line in lines[1:]}


def test_kubectl_finds_the_plugin(setup: Setup) -> None:
    out = kubectl(setup, "plugin", "list").stdout
    assert str(PLUGIN) in out
    assert kubectl(setup, "spreadwatch", "--help").stdout.startswith("usage: kubectl spreadwatch")


def test_namespace_context_and_kubeconfig_conventions(setup: Setup) -> None:
    out = kubectl(setup, "spreadwatch", "analyze").stdout
    assert out.splitlines()[0].split()[:2] == ["KIND", "NAME"]
    table = rows(out)
    assert set(table) == {"api", "web"}
    assert table["web"][-1] == "SinglePointOfFailure" and table["api"][-1] == "Balanced"
    elsewhere = kubectl(setup, "spreadwatch", "analyze", "--context", "elsewhere").stdout
    assert elsewhere == f"No workloads found in {setup.elsewhere} namespace.\n"
    assert rows(kubectl(setup, "spreadwatch", "analyze", "--context", "elsewhere", "-n", setup.namespace).stdout)
    all_ns = kubectl(setup, "spreadwatch", "analyze", "-A").stdout
    assert all_ns.splitlines()[0].split()[0] == "NAMESPACE"
    assert [setup.namespace, "Deployment", "web"] in [line.split()[:3] for line in all_ns.splitlines()]
    env = dict(setup.env)
    env.pop("KUBECONFIG")
    proc = subprocess.run(
        ["kubectl", "spreadwatch", "analyze", "--kubeconfig", str(setup.kubeconfig), "-o", "name"],
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "deployment.apps/api\ndeployment.apps/web\n")


def test_outputs_sorting_and_selectors(setup: Setup) -> None:
    out = kubectl(setup, "spreadwatch", "analyze", "--sort-by", "health", "--no-headers").stdout
    assert [line.split()[1] for line in out.splitlines()] == ["web", "api"]
    out = kubectl(setup, "spreadwatch", "analyze", "--sort-by", "node-skew", "--no-headers").stdout
    assert [line.split()[1] for line in out.splitlines()] == ["api", "web"]  # node skew 1 (api) < 3 (web)
    wide = kubectl(setup, "spreadwatch", "analyze", "-o", "wide").stdout
    assert wide.splitlines()[0].split()[-4:] == ["PROFILE", "REPLICAS", "BEST-NODES", "REASONS"]
    # --profile auto: the API server's /version (kube-apiserver v1.36) picks PodTopologySpread, v1.29
    auto = kubectl(setup, "spreadwatch", "analyze", "--profile", "auto", "-o", "wide")
    header, *rows = auto.stdout.splitlines()
    column = header.split().index("PROFILE")
    assert rows and {row.split()[column] for row in rows} == {"v1.29"}
    assert "--profile auto: v1.29 (auto: kube-apiserver is v1.36." in auto.stderr
    reports = json.loads(kubectl(setup, "spreadwatch", "analyze", "-o", "json", "-l", "app=web").stdout)["reports"]
    assert [(r["workload"]["name"], r["pods"], r["nodeSkew"]) for r in reports] == [("web", 3, 3)]
    assert (
        "health: SinglePointOfFailure" in kubectl(setup, "spreadwatch", "analyze", "-o", "yaml", "-l", "app=web").stdout
    )
    bad = kubectl(setup, "spreadwatch", "analyze", "--sort-by", "age", check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--sort-by" in bad.stderr


def test_simulate_explain_and_summary(setup: Setup) -> None:
    data = json.loads(kubectl(setup, "spreadwatch", "simulate", "deploy/web", "--add", "2", "-o", "json").stdout)
    # web: 3 pods on node a (za). Nodes b and c: node 100*1/3 + zone 100*2/3 = 100, a: 0 → b, then c (100 alone)
    assert [(s["node"], s["bestScore"], s["bestNodeCount"]) for s in data["steps"]] == [
        (setup.nodes[1], 100, 2),
        (setup.nodes[2], 100, 1),
    ]
    assert data["final"]["pods"] == 5
    out = kubectl(setup, "spreadwatch", "explain", "deploy/api").stdout
    assert out.startswith(f"Workload:    Deployment {setup.namespace}/api")
    summary = kubectl(setup, "spreadwatch").stdout
    assert summary.startswith("Workloads: 2 (profile v1.28)")
    assert "SinglePointOfFailure   1" in summary


def test_compare_through_kubectl_equals_the_offline_comparison(setup: Setup, tmp_path: Path) -> None:
    """`kubectl spreadwatch compare` reads the context's namespace from the live cluster; `spreadwatch compare`
    on a `kubectl get -o json` dump of the same objects must say the same."""
    live = json.loads(kubectl(setup, "spreadwatch", "compare", "--from", "v1.28", "--to", "v1.29", "-o", "json").stdout)
    assert (live["from"], live["to"]) == ("v1.28", "v1.29")
    assert {w["workload"]["name"] for w in live["workloads"]} == {"api", "web"}
    dump = tmp_path / "cluster.json"
    dump.write_text(kubectl(setup, "get", "nodes,namespaces,pods,services,rc,rs,sts,deploy", "-A", "-o", "json").stdout)
    offline = subprocess.run(
        [str(PLUGIN.parent / "spreadwatch"), "compare", "--cluster", str(dump), "--from", "v1.28", "--to", "v1.29",
         "-n", setup.namespace, "-o", "json"],
        text=True, capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert live == json.loads(offline.stdout)


def test_rebalance_plan_executed_makes_web_balanced(setup: Setup, kube_api: client.ApiClient) -> None:
    plan = json.loads(kubectl(setup, "spreadwatch", "rebalance", "deploy/web", "-o", "json").stdout)
    assert plan["found"] and len(plan["evictions"]) == 2  # 3 on one node → 1 per zone needs two moves
    text = kubectl(setup, "spreadwatch", "rebalance", "deploy/web").stdout
    assert all(f"  {c}" in text.splitlines() for c in plan["commands"])
    for eviction in plan["evictions"]:
        # the plan's command, plus what a cluster without kubelets needs to let a bound pod go
        command = eviction["command"].split()
        assert command[:3] == ["kubectl", "delete", "pod"]
        kubectl(setup, *command[1:], "--grace-period=0", "--force")
        replacement = _unbound(kube_api, setup.namespace, "web")  # the ReplicaSet's replacement pod
        bind_pod(kube_api, setup.namespace, replacement.metadata.name, eviction["replacementNode"])
        set_pod_phase(kube_api, setup.namespace, replacement.metadata.name, "Running")
    report = json.loads(kubectl(setup, "spreadwatch", "analyze", "-o", "json", "-l", "app=web").stdout)["reports"][0]
    assert report["health"] == plan["final"]["health"] == "Balanced"
    assert report["nodeSkew"] == plan["final"]["nodeSkew"] and report["zoneSkew"] == plan["final"]["zoneSkew"]


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    q: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            q.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return q


def test_watch_reprints_changed_rows_and_ctrl_c_exits_0(setup: Setup, kube_api: client.ApiClient) -> None:
    proc = subprocess.Popen(
        ["kubectl", "spreadwatch", "analyze", "-w", "--watch-interval", "0.5", "-l", "app=api"],
        env=setup.env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lines = _lines(proc)
        seen: list[str] = []

        def got(predicate: Any) -> bool:
            while not lines.empty():
                seen.append(lines.get())
            return any(predicate(line.split()) for line in seen)

        wait_for(lambda: got(lambda c: c[:3] == ["Deployment", "api", "3"]), timeout=60, message="the first listing")
        client.AppsV1Api(kube_api).patch_namespaced_deployment_scale("api", setup.namespace, {"spec": {"replicas": 4}})
        pending = _unbound(kube_api, setup.namespace, "api")
        bind_pod(kube_api, setup.namespace, pending.metadata.name, setup.nodes[0])
        wait_for(lambda: got(lambda c: c[:3] == ["Deployment", "api", "4"]), timeout=60, message="the changed row")
        assert not any(line.startswith("KIND") for line in seen[1:])  # updates come without headers
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
