"""The operator (`spreadwatch run`, a subprocess) against a real control plane, under the Helm chart's RBAC
(a ServiceAccount token from TokenRequest, the chart Deployment's args; see chart_rbac.py).

Checks: the chart's defaults take the profile of the real kube-apiserver's /version (v1.29 on v1.36, SelectorSpread
v1.28 compared beside it); `kubectl get spreadreports` columns and values; every SpreadReport's candidates and
scores equal the real PodTopologySpread plugin's and its comparison the real SelectorSpread plugin's best nodes
(the Go oracles of tests/oracle, with the real filters, on a `kubectl get -o json` dump), and its status equals
offline `spreadwatch analyze` on the same objects (the operator and the CLI share one code path); reports follow
scaling and
go away with their workload; a workload with an invalid selector gets an Error report while the others stay
correct; users' objects are byte-for-byte untouched (resourceVersion, annotations, finalizers, field
managers); a standby replica writes nothing; convergence after a churn of pod events (time and API writes
are printed, and written as JSON to $SPREADWATCH_E2E_CHURN_OUT when set — `make bench` records them;
SPREADWATCH_E2E_CHURN_PODS scales it, SPREADWATCH_E2E_DEBOUNCE sets the operator's debounce, default 0.3 s);
survival of an API-server restart; pods deleted during a watch gap (410 Gone, kopf re-lists) stop counting;
new bindings checked against the report held just before (status.lastPlacement, the placements counter).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from chart_rbac import ChartInstall, install_chart_rbac
from hack import devcluster
from kube_helpers import (
    ControlPlane,
    create_deployment,
    create_pod,
    create_replication_controller,
    create_service,
    create_statefulset,
    delete_pod,
    schedule_pending_pods,
    set_pod_phase,
    wait_for,
    wait_for_pods,
)
from kubernetes import client
from operator_helpers import (
    DEBOUNCE,
    EXPECTED_COMPARED,
    EXPECTED_PROFILE,
    EXPECTED_SERVER_MINOR,
    KINDS,
    Operator,
    kubectl_json,
    live_reports,
    offline_reports,
    server_minor,
    start_operator,
    wait_converged,
)
from oracle_checks import check_against_oracle, oracle_expectations

from spreadwatch.report import NAMESPACED_PARTIAL, PREDICTION_PLACEMENTS
from spreadwatch.runtime.writing.status import content_digest
from spreadwatch.scoring import get_profile

pytestmark = pytest.mark.e2e

COLUMNS = ["NAME", "KIND", "WORKLOAD", "PODS", "NODES", "ZONES", "NODE-SKEW", "ZONE-SKEW", "BEST", "HEALTH", "PROFILE",
           "AGE"]  # fmt: skip


@pytest.fixture(scope="module")
def chart(control_plane: ControlPlane, kube_api: client.ApiClient,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChartInstall]:  # fmt: skip
    """The Helm chart's ServiceAccount and RBAC (default values: cluster-wide), and a kubeconfig for it."""
    installed = install_chart_rbac(control_plane, kube_api, tmp_path_factory.mktemp("chart"))
    yield installed
    installed.uninstall()


@pytest.fixture(scope="module")
def operator(control_plane: ControlPlane, crd: None, zone_nodes: list[str], chart: ChartInstall,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:  # fmt: skip
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    op = start_operator(chart, log, "--resync-period", "15")
    yield op
    code = op.stop()
    assert code == 0, f"operator exited with {code} on SIGTERM:\n{log.read_text()[-3000:]}"
    assert any("stopped:" in e.get("message", "") for e in op.logs()), "no graceful shutdown log line"


# --------------------------------------------------------------------------- expected vs actual: operator_helpers.py


def settle(read: Callable[[], Any], quiet: float = 2.0, timeout: float = 180) -> None:
    """Wait until read() returns the same value for `quiet` seconds (controllers done updating)."""
    deadline = time.monotonic() + timeout
    value, since = read(), time.monotonic()
    while time.monotonic() - since < quiet:
        if time.monotonic() > deadline:
            raise AssertionError("objects kept changing")
        time.sleep(0.3)
        now = read()
        if now != value:
            value, since = now, time.monotonic()


# --------------------------------------------------------------------------- tests


def make_workloads(api: client.ApiClient, namespace: str, nodes: Sequence[str]) -> None:
    """web: 3 pods over 3 nodes (zones a, a, b); db: 2 pods on one node; legacy: RC, 2 pods in zones b, c."""
    create_deployment(api, namespace, "web", replicas=3)
    create_service(api, namespace, "web", {"app": "web"})
    create_statefulset(api, namespace, "db", replicas=2)
    create_service(api, namespace, "db", {"app": "db"}, headless=True)
    create_replication_controller(api, namespace, "legacy", replicas=2)
    wait_for_pods(api, namespace, {"app": "web"}, 3)
    wait_for_pods(api, namespace, {"app": "db"}, 2)
    wait_for_pods(api, namespace, {"app": "legacy"}, 2)
    schedule_pending_pods(api, namespace, nodes[:3], {"app": "web"})
    schedule_pending_pods(api, namespace, nodes[:1], {"app": "db"})
    schedule_pending_pods(api, namespace, nodes[3:5], {"app": "legacy"})


def test_reports_equal_offline_analyze_and_kubectl_columns(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    expected = offline_reports(control_plane, namespace, tmp_path)
    assert {k for k, _ in expected} == {"Deployment", "StatefulSet", "ReplicationController"}
    health = {name: r["health"] for (_, name), r in expected.items()}
    assert health == {"web": "Imbalanced", "db": "SinglePointOfFailure", "legacy": "Balanced"}
    # the scores and candidates themselves come from the real plugin, not from spreadwatch
    items = kubectl_json(control_plane, "get", KINDS, "-A")["items"]
    labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in items if o["kind"] == "Node"}
    live = live_reports(control_plane, namespace)
    workloads = [(kind, namespace, name) for kind, name in live]
    # the chart's defaults score v1.29 (kube-apiserver v1.36): the PodTopologySpread oracle (v1.36.4); the
    # comparison's best nodes are the SelectorSpread oracle's (v1.28.15), their overlap the two best sets'
    oracle, beside = oracle_expectations(items, workloads, which="pts"), oracle_expectations(items, workloads)
    for key, report in live.items():
        check_against_oracle(report, oracle[key], labels, get_profile(EXPECTED_PROFILE))
        check_comparison(report["comparison"], oracle[key]["scores"], beside[key]["scores"])

    table = control_plane.kubectl("get", "spreadreports", "-n", namespace).stdout.splitlines()
    assert table[0].split() == COLUMNS
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert set(rows) == {"deployment-web", "statefulset-db", "replicationcontroller-legacy"}
    for (kind, name), r in expected.items():
        row = rows[f"{kind.lower()}-{name}"]
        fields = ("pods", "candidateNodes", "zoneCount", "nodeSkew", "zoneSkew", "bestScore", "health", "profile")
        assert row[1:11] == [kind, name, *(str(r[f]) for f in fields)]

    # metadata: owner reference, workloadRef, labels, digest; conditions and observedGeneration
    for obj in kubectl_json(control_plane, "get", "spreadreports", "-n", namespace)["items"]:
        ref = obj["spec"]["workloadRef"]
        workload = kubectl_json(control_plane, "get", ref["kind"].lower(), ref["name"], "-n", namespace)
        assert obj["metadata"]["ownerReferences"] == [{
            "apiVersion": workload["apiVersion"], "kind": ref["kind"], "name": ref["name"],
            "uid": workload["metadata"]["uid"], "controller": False, "blockOwnerDeletion": False}]  # fmt: skip
        status = obj["status"]
        assert obj["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "spreadwatch",
                                             "spreadwatch.io/health": status["health"]}  # fmt: skip
        digest = content_digest(status).hex()  # what a restarted operator compares, without reading the status
        assert obj["metadata"]["annotations"]["spreadwatch.io/status-digest"] == digest
        assert status["observedGeneration"] == workload["metadata"]["generation"]
        [cond] = status["conditions"]
        assert cond["type"] == "Balanced"
        assert cond["reason"] == status["health"]
        assert cond["status"] == ("True" if status["health"] == "Balanced" else "False")
        assert cond["message"] == ("; ".join(status["reasons"]) or cond["message"])

    # the live CLI reads the same cluster through the kubeconfig and prints the same reports (analyze makes no
    # comparison; reading one namespace's pods, its predictions are partial); --profile auto asks the API
    # server's /version, as the operator did
    live = subprocess.run(
        [sys.executable, "-m", "spreadwatch.cli", "analyze", "--kubeconfig", control_plane.kubeconfig,
         "-n", namespace, "-o", "json", "--profile", "auto"], capture_output=True, text=True, check=True)  # fmt: skip
    uncompared = {key: {f: v for f, v in r.items() if f not in ("comparison", "prediction")}
                  for key, r in expected.items()}  # fmt: skip
    cli = {(r["workload"]["kind"], r["workload"]["name"]): r for r in json.loads(live.stdout)["reports"]}
    assert all(r.pop("prediction")["partialReasons"] == [NAMESPACED_PARTIAL] for r in cli.values())
    assert cli == uncompared
    assert f"--profile auto: {EXPECTED_PROFILE} (auto: kube-apiserver is v1.{EXPECTED_SERVER_MINOR}." in live.stderr
    explain = subprocess.run(
        [sys.executable, "-m", "spreadwatch.cli", "explain", "--kubeconfig", control_plane.kubeconfig,
         "--profile", "auto", f"deploy/{namespace}/web"], capture_output=True, text=True, check=True)  # fmt: skip
    assert "Health:      Imbalanced" in explain.stdout
    assert f"Chosen by:   auto: kube-apiserver is v1.{EXPECTED_SERVER_MINOR}." in explain.stdout

    # a new report is no news: every Event is a health transition ("Imbalanced -> Balanced"), none a creation
    events = kubectl_json(control_plane, "get", "events", "-n", namespace,
                          "--field-selector", "involvedObject.kind=SpreadReport")["items"]  # fmt: skip
    assert all(" -> " in e["message"].split(": ", 1)[1] for e in events), [e["message"] for e in events]


def check_comparison(comparison: dict[str, Any], scores: dict[str, int], beside: dict[str, int]) -> None:
    """A report's comparison against the plugins' scores of every candidate: the compared plugin's best score,
    its best nodes (the first 3 by name) and their number, and whether both best sets share a node."""
    best = max(beside.values(), default=0)
    theirs = sorted(n for n, s in beside.items() if s == best)
    mine = {n for n, s in scores.items() if s == max(scores.values(), default=0)}
    expected = {"profile": EXPECTED_COMPARED, "bestScore": best, "bestNodes": theirs[:3], "bestNodeCount": len(theirs),
                "bestNodesOverlap": bool(mine & set(theirs))}  # fmt: skip
    assert comparison == expected, (comparison, scores, beside)


def test_the_default_profile_is_the_api_servers_with_selector_spread_beside_it(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    """The chart's defaults (--profile auto, --compare-profile auto) on the real kube-apiserver: its /version
    (v1.36) picks v1.29, PodTopologySpread, and v1.28, SelectorSpread, is compared in every report; the choice
    shows in the log and /statusz."""
    assert "--profile=auto" in operator_args(operator) and "--compare-profile=auto" in operator_args(operator)
    assert server_minor(control_plane) == EXPECTED_SERVER_MINOR  # (the release EXPECTED_PROFILE is written for)
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    reports = live_reports(control_plane, namespace)
    assert {r["profile"] for r in reports.values()} == {EXPECTED_PROFILE}
    assert {r["comparison"]["profile"] for r in reports.values()} == {EXPECTED_COMPARED}
    started = [e["message"] for e in operator.logs() if "starting: profile" in e.get("message", "")]
    assert started and started[0].split("starting: profile ", 1)[1].startswith(
        f"{EXPECTED_PROFILE} (auto: kube-apiserver is v1.{EXPECTED_SERVER_MINOR}.")
    assert f"compared with {EXPECTED_COMPARED}," in started[0]
    profile = operator.state()["profile"]
    assert (profile["name"], profile["compared"]) == (EXPECTED_PROFILE, EXPECTED_COMPARED)
    assert profile["chosenBy"].startswith(f"auto: kube-apiserver is v1.{EXPECTED_SERVER_MINOR}.")


def operator_args(operator: Operator) -> list[str]:
    """The operator process's command line."""
    return [str(a) for a in operator.proc.args]


def test_reports_follow_changes_and_go_away_with_the_workload(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    before = live_reports(control_plane, namespace)[("Deployment", "web")]

    control_plane.kubectl("scale", "deployment/web", "-n", namespace, "--replicas=6")
    wait_for_pods(kube_api, namespace, {"app": "web"}, 6)
    schedule_pending_pods(kube_api, namespace, zone_nodes[3:], {"app": "web"})
    wait_converged(control_plane, namespace, tmp_path)
    after = live_reports(control_plane, namespace)[("Deployment", "web")]
    assert (after["pods"], after["replicas"], after["health"]) == (6, 6, "Balanced")
    assert before["health"] == "Imbalanced"
    events = kubectl_json(control_plane, "get", "events", "-n", namespace,
                          "--field-selector", "involvedObject.kind=SpreadReport")["items"]  # fmt: skip
    transitions = {(e["involvedObject"]["name"], e["reason"], e["type"], e["message"]) for e in events}
    change = f"Deployment {namespace}/web: Imbalanced -> Balanced"
    assert ("deployment-web", "Balanced", "Normal", change) in transitions
    assert after["observedGeneration"] > before["observedGeneration"]
    assert after["conditions"][0]["lastTransitionTime"] >= before["conditions"][0]["lastTransitionTime"]

    control_plane.kubectl("delete", "deployment", "web", "-n", namespace, "--wait=false")
    control_plane.kubectl("delete", "statefulset", "db", "-n", namespace, "--wait=false")
    wait_for(lambda: set(live_reports(control_plane, namespace)) == {("ReplicationController", "legacy")},
             timeout=180, message="the reports of deleted workloads to go")  # fmt: skip
    wait_converged(control_plane, namespace, tmp_path)

    # a report deleted by hand comes back (at the next resync, or sooner when the workload changes)
    control_plane.kubectl("delete", "spreadreport", "replicationcontroller-legacy", "-n", namespace)
    wait_converged(control_plane, namespace, tmp_path, timeout=180)
    operator.assert_alive()


def _etcd(cp: ControlPlane, call: str, request: dict[str, Any]) -> dict[str, Any]:
    """One call of etcd's v3 JSON gateway (``/v3/kv/put``, ``/v3/kv/deleterange``, ``/v3/kv/compaction``)."""
    state = json.loads((Path(cp.dir) / "state.json").read_text())
    port = state["ports"]["etcd_client"]
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v3/kv/{call}", data=json.dumps(request).encode(),
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200
        reply: dict[str, Any] = json.loads(resp.read())
        return reply


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _etcd_put_json(cp: ControlPlane, key: str, obj: dict[str, Any]) -> None:
    """Store an object in etcd as JSON (the apiserver reads JSON as well as protobuf from storage)."""
    _etcd(cp, "put", {"key": _b64(key), "value": _b64(json.dumps(obj))})


def test_invalid_selector_gives_an_error_report_and_others_stay_correct(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    """Today's apiserver rejects invalid selectors, but objects stored before validation got stricter still
    exist: one is simulated by writing the Deployment to etcd directly (as JSON)."""
    make_workloads(kube_api, namespace, zone_nodes)
    create_deployment(kube_api, namespace, "broken", replicas=0)
    wait_converged(control_plane, namespace, tmp_path)
    obj = kubectl_json(control_plane, "get", "deployment", "broken", "-n", namespace)
    obj["metadata"].pop("resourceVersion")
    obj["spec"]["selector"]["matchExpressions"] = [{"key": "app", "operator": "NotIn", "values": ["bad value!"]}]
    _etcd_put_json(control_plane, f"/registry/deployments/{namespace}/broken", obj)
    wait_for(lambda: "bad value!" in control_plane.kubectl("get", "deploy", "broken", "-n", namespace,
                                                           "-o", "jsonpath={.spec.selector}").stdout,
             timeout=180, message="the invalid selector to be served")  # fmt: skip

    wait_converged(control_plane, namespace, tmp_path)
    reports = live_reports(control_plane, namespace)
    error = reports[("Deployment", "broken")]
    assert error["health"] == "Error"
    assert error["reasons"][0].startswith("InvalidSelector:")
    assert error["conditions"][0]["status"] == "Unknown"
    assert error["conditions"][0]["reason"] == "Error"
    assert {name: r["health"] for (_, name), r in reports.items()} == {
        "broken": "Error", "web": "Imbalanced", "db": "SinglePointOfFailure", "legacy": "Balanced"}  # fmt: skip
    # remove it through etcd too: the API would reject a delete's final update of an invalid object? No: a
    # plain delete works; the garbage collector and the operator then drop its report.
    control_plane.kubectl("delete", "deployment", "broken", "-n", namespace, "--wait=false")
    wait_for(lambda: ("Deployment", "broken") not in live_reports(control_plane, namespace), timeout=180,
             message="the Error report to go with its workload")  # fmt: skip
    operator.assert_alive()


def _metadata_fingerprint(cp: ControlPlane, namespace: str, nodes: Sequence[str]) -> dict[str, Any]:
    objs = kubectl_json(cp, "get", "pods,services,rc,rs,sts,deploy", "-n", namespace)["items"]
    objs += [kubectl_json(cp, "get", "node", n) for n in nodes]
    objs.append(kubectl_json(cp, "get", "namespace", namespace))
    return {
        f"{o['kind']}/{o['metadata']['name']}": {
            "resourceVersion": o["metadata"]["resourceVersion"],
            "annotations": o["metadata"].get("annotations"),
            "finalizers": o["metadata"].get("finalizers"),
            "managers": sorted({m["manager"] for m in o["metadata"].get("managedFields", [])}),
        }
        for o in objs
    }


def test_users_objects_are_untouched_and_a_standby_writes_nothing(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path, chart: ChartInstall,
) -> None:  # fmt: skip
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    settle(lambda: _metadata_fingerprint(control_plane, namespace, zone_nodes))
    before = _metadata_fingerprint(control_plane, namespace, zone_nodes)

    # a second replica lists and watches everything (its informers' initial lists), stays a standby
    standby = start_operator(chart, tmp_path / "standby.log", "--identity", "standby")
    try:
        state = wait_for(lambda: (st := standby.state())["index"]["pods"] >= 7 and st, timeout=120,
                         message="the standby to list every pod")  # fmt: skip
        assert state["leader"] is False
        assert state["writer"]["apiWrites"] == 0
        assert state["index"]["pods"] >= 7
    finally:
        assert standby.stop() == 0
    # the writers' own records instead of a pause: the standby's last line counts its API writes over its
    # whole life (it has exited: nothing of it can land later), and the leader has nothing pending or in flight
    assert any(e.get("message", "").startswith("stopped: 0 API writes") for e in standby.logs()), "standby wrote"
    wait_for(lambda: (st := operator.state())["pending"] == 0 and st["inFlight"] == 0, timeout=120,
             message="the leader's writer to have nothing pending or in flight")  # fmt: skip
    after = _metadata_fingerprint(control_plane, namespace, zone_nodes)
    assert after == before
    for name, meta in after.items():
        assert not any("kopf" in k or "spreadwatch" in k for k in (meta["annotations"] or {})), name
        assert not meta["finalizers"], name
        assert not any("kopf" in m or "spreadwatch" in m for m in meta["managers"]), name


def test_convergence_after_a_churn_of_pod_events(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    """Pods (no controller creates or deletes them: StatefulSets ignore pods whose names are not theirs)
    created bound, a third marked Succeeded, half deleted, 75 per workload; SPREADWATCH_E2E_CHURN_PODS pods
    (default 2,800: 37 workloads, 2,775 creates + 925 phase changes + 1,369 deletes = 5,069 pod events)."""
    workloads = max(4, int(os.environ.get("SPREADWATCH_E2E_CHURN_PODS", "2800")) // 75)
    per = 75
    total = per * workloads
    for w in range(workloads):
        create_statefulset(kube_api, namespace, f"churn{w}", replicas=0)
    wait_converged(control_plane, namespace, tmp_path)
    before_state = operator.state()
    writes_before = before_state["writer"]["apiWrites"]
    requests_before = before_state["apiRequests"]
    # One workload after the other: a workload's events come back to back (8 requests in flight), so the gap
    # between two of its events is one request's latency, far below the debounce however busy the machine is.
    # (Interleaved workloads made that gap `workloads` requests long: above the debounce on a loaded machine,
    # where every event then became a write.)
    pods = [(w, j) for w in range(workloads) for j in range(per)]

    def create(pod: tuple[int, int]) -> str:
        w, j = pod
        name = f"churn{w}-pod-{j}"
        create_pod(kube_api, namespace, name, node_name=zone_nodes[(j * 7 + w) % len(zone_nodes)],
                   labels={"app": f"churn{w}"})  # fmt: skip
        return name

    started = time.monotonic()
    events = 0
    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(create, pods))
        events += total
        # within every workload: every third pod finishes, every other pod is deleted
        finished = [n for (_, j), n in zip(pods, names, strict=True) if j % 3 == 0]
        list(pool.map(lambda n: set_pod_phase(kube_api, namespace, n, "Succeeded"), finished))
        events += len(finished)
        deleted = [n for (_, j), n in zip(pods, names, strict=True) if j % 2 == 1]
        list(pool.map(lambda n: delete_pod(kube_api, namespace, n), deleted))
        events += len(deleted)
    churned = time.monotonic() - started
    churn_end = time.time()
    expected = offline_reports(control_plane, namespace, tmp_path)
    wait_converged(control_plane, namespace, tmp_path, timeout=300, expected=expected)
    state = operator.state()
    writes = state["writer"]["apiWrites"] - writes_before
    requests = state["apiRequests"] - requests_before
    by_kind = {k: state["writer"][k] - before_state["writer"][k] for k in ("statusWrites", "events", "creates")}
    # converged = the operator's last report write for this namespace (the reports are then correct: checked)
    stamps = [
        dt.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
        for e in operator.logs()
        if str(e.get("workload", "")).startswith(f"{namespace}/") and e.get("report")
    ]
    converge = max(0.0, max(stamps) - churn_end) if stamps else 0.0
    summary = (
        f"churn: {total} pods, {events} pod events over {workloads} workloads in {churned:.1f}s; "
        f"converged {converge:.2f}s after the last event; {writes} API writes ({requests} requests: "
        f"{by_kind['statusWrites']} status, {by_kind['events']} Events, {by_kind['creates']} creates)"
    )
    print(summary)
    if os.environ.get("SPREADWATCH_E2E_CHURN_OUT"):
        Path(os.environ["SPREADWATCH_E2E_CHURN_OUT"]).write_text(json.dumps({
            "pods": total, "events": events, "workloads": workloads, "churn_seconds": round(churned, 2),
            "converge_seconds": round(converge, 2), "api_writes": writes, "api_requests": requests,
            "status_writes": by_kind["statusWrites"], "event_posts": by_kind["events"], "creates": by_kind["creates"],
            "debounce": DEBOUNCE,
        }, indent=2) + "\n")  # fmt: skip
    final = live_reports(control_plane, namespace)
    assert all(0 < r["pods"] < per for r in final.values())  # every workload kept some pods
    # debounced: a workload is written after `debounce` seconds without events, or at the latest every
    # max(1 s, 10 x debounce) while events keep coming, plus once for its final state; each write possibly with
    # an Event (health changes). A stall of the whole machine longer than the debounce costs at most one write
    # of the one or two workloads then active, so the bound by events holds under load too.
    assert by_kind["statusWrites"] >= workloads  # every workload's final state was written
    assert by_kind["statusWrites"] <= events / 6
    assert writes < events / 4
    operator.assert_alive()


def _restart_apiserver(cp: ControlPlane, down_for: float, while_down: Callable[[], None] = lambda: None) -> None:
    """Stop kube-apiserver (and kube-controller-manager; SIGKILL after a grace), keep it down for `down_for`
    seconds so that every watch breaks, call while_down(), start both again and wait until they serve."""

    def gap() -> None:
        while_down()
        time.sleep(down_for)  # the outage itself, not a wait for a condition

    devcluster.restart_apiserver(Path(cp.dir), while_down=gap)


def test_survives_an_api_server_restart(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    _restart_apiserver(control_plane, down_for=3)
    wait_for(lambda: control_plane.kubectl("get", "--raw", "/readyz", check=False).returncode == 0, timeout=180,
             message="the apiserver to serve again")  # fmt: skip
    # changes after the restart reach the reports
    for i in range(3):
        create_pod(kube_api, namespace, f"legacy-extra-{i}", node_name=zone_nodes[i], labels={"app": "legacy"})
    control_plane.kubectl("delete", "statefulset", "db", "-n", namespace, "--wait=false")
    wait_converged(control_plane, namespace, tmp_path, timeout=240)
    operator.assert_alive()
    assert operator.get("/healthz")[0] == 200
    state = operator.state()
    assert state["leader"] is True


def test_pods_deleted_during_a_watch_gap_stop_counting(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    """While the apiserver is down, 2 of 4 pods vanish from etcd and etcd is compacted past them: the watches
    cannot resume (410 Gone), and the pods informer lists again and must drop what the list lacks: no DELETED
    event ever comes for them. Without that the report keeps counting 4 pods."""
    create_statefulset(kube_api, namespace, "gap", replicas=0)  # adopts nothing: pods below are not its own
    for i in range(4):
        create_pod(kube_api, namespace, f"gap-pod-{i}", node_name=zone_nodes[i], labels={"app": "gap"})
    wait_converged(control_plane, namespace, tmp_path)
    assert live_reports(control_plane, namespace)[("StatefulSet", "gap")]["pods"] == 4
    removed_before = operator.state()["watches"]["pods"]["staleRemoved"]

    def delete_in_etcd() -> None:
        revision = 0
        for i in (0, 1):
            reply = _etcd(control_plane, "deleterange", {"key": _b64(f"/registry/pods/{namespace}/gap-pod-{i}")})
            assert reply.get("deleted") == "1", reply
            revision = int(reply["header"]["revision"])
        _etcd(control_plane, "compaction", {"revision": str(revision), "physical": True})

    _restart_apiserver(control_plane, down_for=1, while_down=delete_in_etcd)
    wait_for(lambda: control_plane.kubectl("get", "--raw", "/readyz", check=False).returncode == 0, timeout=180,
             message="the apiserver to serve again")  # fmt: skip
    wait_converged(control_plane, namespace, tmp_path, timeout=240)
    assert live_reports(control_plane, namespace)[("StatefulSet", "gap")]["pods"] == 2  # 4 − 2 deleted in the gap
    assert operator.state()["watches"]["pods"]["staleRemoved"] - removed_before >= 2
    operator.assert_alive()


def _bind_new_web_pod(control_plane: ControlPlane, kube_api: client.ApiClient, namespace: str, replicas: int,
                      node: str) -> str:  # fmt: skip
    """Scale web to `replicas` and bind its new (pending) pod to `node`, as a scheduler would; its name."""
    control_plane.kubectl("scale", "deployment/web", "-n", namespace, f"--replicas={replicas}")
    wait_for_pods(kube_api, namespace, {"app": "web"}, replicas)
    [(pod, _)] = schedule_pending_pods(kube_api, namespace, [node], {"app": "web"}).items()
    return pod


def test_new_bindings_are_checked_against_the_report_held_before(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, zone_nodes: list[str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    """web's pods on nodes 0, 1 (zone a) and 2 (zone b): a new pod bound by hand to one of the report's best
    nodes is a best_node placement; the next, bound to node 0 (zone a, whose both nodes hold a web pod), is
    `other`. Each shows in the report's status.lastPlacement and the operator's counter (/statusz, the
    values spreadwatch_placements_total exposes)."""
    make_workloads(kube_api, namespace, zone_nodes)
    wait_converged(control_plane, namespace, tmp_path)
    placements = operator.state()["placements"]  # (make_workloads' bindings counted)
    # (the compared profile's checks too, and the prediction's: the chart's defaults predict)
    assert set(placements) == {EXPECTED_PROFILE, EXPECTED_COMPARED, PREDICTION_PLACEMENTS}
    profile, counts_before = EXPECTED_PROFILE, placements[EXPECTED_PROFILE]
    predicted_before = sum(placements[PREDICTION_PLACEMENTS].values())
    best = live_reports(control_plane, namespace)[("Deployment", "web")]["bestNodes"][0]

    pod = _bind_new_web_pod(control_plane, kube_api, namespace, 4, best)
    wait_for(lambda: live_reports(control_plane, namespace)[("Deployment", "web")].get("lastPlacement", {})
             .get("pod") == pod, timeout=120, message="web's lastPlacement for the pod on a best node")  # fmt: skip
    placed = live_reports(control_plane, namespace)[("Deployment", "web")]["lastPlacement"]
    assert (placed["node"], placed["outcome"], placed["consecutiveMisses"]) == (best, "best_node", 0)
    wait_converged(control_plane, namespace, tmp_path)  # lastPlacement aside, the report equals the offline one

    # node 0 (zone a): a web pod on it and on node 1, its zone's other node; not one of the best
    held = live_reports(control_plane, namespace)[("Deployment", "web")]
    scores = {n["node"]: n["score"] for n in held["nodes"]}
    assert scores[zone_nodes[0]] < held["bestScore"] and scores[zone_nodes[1]] < held["bestScore"]
    pod = _bind_new_web_pod(control_plane, kube_api, namespace, 5, zone_nodes[0])
    wait_for(lambda: live_reports(control_plane, namespace)[("Deployment", "web")].get("lastPlacement", {})
             .get("pod") == pod, timeout=120, message="web's lastPlacement for the pod on node 0")  # fmt: skip
    placed = live_reports(control_plane, namespace)[("Deployment", "web")]["lastPlacement"]
    assert (placed["node"], placed["outcome"], placed["consecutiveMisses"]) == (zone_nodes[0], "other", 1)

    counts = operator.state()["placements"][profile]
    assert counts["best_node"] - counts_before["best_node"] == 1
    assert counts["other"] - counts_before["other"] == 1
    assert counts["best_zone"] == counts_before["best_zone"]
    assert sum(operator.state()["placements"][PREDICTION_PLACEMENTS].values()) - predicted_before == 2
    operator.assert_alive()
