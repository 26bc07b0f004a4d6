"""The operator with profile v1.29 (PodTopologySpread) and ``--compare-profile v1.28`` against a real control
plane, under the Helm chart's RBAC with the chart's own values (``profile: v1.29``, ``compareProfile: v1.28``).

The cluster mixes what PodTopologySpread reads differently from SelectorSpread: nodes with the GA zone label,
with both labels, with only the beta zone label (zoneless for v1.29's system defaults) and with none; workloads
spread by the system-default constraints, by their own ``ScheduleAnyway`` constraint next to a
``DoNotSchedule`` one, and one with only a ``DoNotSchedule`` constraint (PodTopologySpread's Filter picks its
candidates; its Score skips it). Every SpreadReport's candidates, excluded nodes and scores must be those of
the real plugins (the v1.36.4 PodTopologySpread oracle of tests/oracle, with the real filters, PodTopologySpread's
among them, on a ``kubectl get -o json`` dump of the same cluster), and the report must equal ``spreadwatch
analyze --profile v1.29`` of that dump (one code path), its ``comparison`` block what ``spreadwatch analyze
--profile v1.28`` and ``spreadwatch compare`` say of it, before and after a pod is deleted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chart_rbac import ChartInstall, install_chart_rbac
from kube_helpers import (
    ControlPlane,
    create_deployment,
    create_node,
    create_pod,
    create_service,
    create_statefulset,
    delete_node,
    delete_pod,
    pod_spec,
    schedule_pending_pods,
    unique_name,
    wait_for_pods,
)
from kubernetes import client
from operator_helpers import KINDS, Operator, apply_crd, diff, kubectl_json, live_reports, start_operator
from oracle_checks import check_against_oracle, oracle_expectations

from spreadwatch.profile_args import load_profile

pytestmark = pytest.mark.e2e

Reports = dict[tuple[str, str], dict[str, Any]]
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def nodes(control_plane: ControlPlane, kube_api: client.ApiClient) -> Iterator[dict[str, str]]:
    """Six nodes by role: GA zone label (zones a, a, b), GA and beta labels (zone c), beta only (zone b), none."""
    prefix = unique_name("pts")
    specs: dict[str, dict[str, Any]] = {
        "a1": {"zone": "zone-a"},
        "a2": {"zone": "zone-a"},
        "b1": {"zone": "zone-b"},
        "c1": {"zone": "zone-c", "legacy_labels": True},
        "beta": {"zone": "zone-b", "legacy_labels": True, "modern_labels": False},
        "nozone": {},
    }
    names = {role: create_node(kube_api, f"{prefix}-{role}", region="r1", **kw).metadata.name
             for role, kw in specs.items()}  # fmt: skip
    yield names
    for name in names.values():
        delete_node(kube_api, name)


@pytest.fixture(scope="module")
def chart(control_plane: ControlPlane, kube_api: client.ApiClient,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChartInstall]:  # fmt: skip
    """The chart's ServiceAccount and RBAC; its Deployment args rendered with profile v1.29 compared to v1.28."""
    installed = install_chart_rbac(control_plane, kube_api, tmp_path_factory.mktemp("chart"),
                                   values={"profile": "v1.29", "compareProfile": "v1.28"})  # fmt: skip
    assert "--profile=v1.29" in installed.args, installed.args
    assert "--compare-profile=v1.28" in installed.args, installed.args
    yield installed
    installed.uninstall()


@pytest.fixture(scope="module")
def operator(control_plane: ControlPlane, nodes: dict[str, str], chart: ChartInstall,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:  # fmt: skip
    apply_crd(control_plane)
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    op = start_operator(chart, log)
    yield op
    code = op.stop()
    assert code == 0, f"operator exited with {code} on SIGTERM:\n{log.read_text()[-3000:]}"


# --------------------------------------------------------------------------- expected: the CLI on a dump


def _cli(*args: str) -> dict[str, Any]:
    """``spreadwatch ARGS -o json`` as a user runs it (a subprocess); fails on a non-zero exit."""
    done = subprocess.run([sys.executable, "-m", "spreadwatch.cli", *args, "-o", "json"],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"spreadwatch {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def expected_reports(cp: ControlPlane, namespace: str, tmp: Path) -> Reports:
    """The v1.29 report of every workload of ``namespace`` in a fresh dump, with the ``comparison`` block the
    operator adds: v1.28's best score and nodes (``analyze --profile v1.28``) and whether the complete best-node
    sets overlap (``compare --from v1.29 --to v1.28``, which lists complete sets)."""
    dump = tmp / f"dump-{time.monotonic_ns()}.json"
    dump.write_text(cp.kubectl("get", KINDS, "-A", "-o", "json", timeout=120).stdout)
    common = ("--cluster", str(dump), "-n", namespace)
    v129 = {(r["workload"]["kind"], r["workload"]["name"]): r
            for r in _cli("analyze", *common, "--profile", "v1.29")["reports"]}  # fmt: skip
    v128 = {(r["workload"]["kind"], r["workload"]["name"]): r
            for r in _cli("analyze", *common, "--profile", "v1.28")["reports"]}  # fmt: skip
    compared = {(w["workload"]["kind"], w["workload"]["name"]): w
                for w in _cli("compare", *common, "--from", "v1.29", "--to", "v1.28")["workloads"]}  # fmt: skip
    assert set(v129) == set(v128) == set(compared), (sorted(v129), sorted(v128), sorted(compared))
    for key, report in v129.items():
        other = v128[key]
        report["comparison"] = {
            "profile": "v1.28",
            "bestScore": other["bestScore"],
            "bestNodes": other["bestNodes"],
            "bestNodeCount": other["bestNodeCount"],
            "bestNodesOverlap": compared[key]["bestNodesOverlap"],
        }
    return v129


def check_oracle(cp: ControlPlane, namespace: str, reports: Reports) -> None:
    """Every report's candidates and scores are the real PodTopologySpread plugin's (see the module docstring)."""
    items = kubectl_json(cp, "get", KINDS, "-A")["items"]
    labels = {o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in items if o["kind"] == "Node"}
    oracle = oracle_expectations(items, [(kind, namespace, name) for kind, name in reports], which="pts")
    for key, report in reports.items():
        check_against_oracle(report, oracle[key], labels, load_profile("v1.29", None))


def wait_equal(cp: ControlPlane, namespace: str, tmp: Path, timeout: float = 180) -> Reports:
    """Wait until the namespace's SpreadReports equal :func:`expected_reports` (recomputed on every round, as
    controllers may still be changing objects); returns the reports."""
    deadline = time.monotonic() + timeout
    while True:
        want = expected_reports(cp, namespace, tmp)
        got = live_reports(cp, namespace)
        problems = diff(want, got)
        if not problems:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"SpreadReports in {namespace} did not converge in {timeout}s:\n{problems}")
        time.sleep(0.3)


# --------------------------------------------------------------------------- the workloads


def _constraint(key: str, when: str, app: str, max_skew: int = 1) -> client.V1TopologySpreadConstraint:
    return client.V1TopologySpreadConstraint(
        max_skew=max_skew, topology_key=key, when_unsatisfiable=when,
        label_selector=client.V1LabelSelector(match_labels={"app": app}),
    )  # fmt: skip


def make_workloads(api: client.ApiClient, namespace: str, nodes: dict[str, str]) -> None:
    """web: system defaults, 4 pods (zone a twice, beta-only, zoneless); soft: its own ScheduleAnyway zone
    constraint next to a DoNotSchedule hostname one, 3 pods in zone a and b; strict: only DoNotSchedule (the
    plugin skips it), 2 pods; db: a StatefulSet and Service whose 3 pods (on a1, beta, nozone) are made by hand,
    so deleting one leaves 2 (StatefulSets adopt no pods not named like theirs)."""
    create_deployment(api, namespace, "web", replicas=4)
    create_service(api, namespace, "web", {"app": "web"})
    soft = [_constraint(ZONE, "ScheduleAnyway", "soft"), _constraint(HOSTNAME, "DoNotSchedule", "soft")]
    create_deployment(api, namespace, "soft", replicas=3, spec=pod_spec(topology_spread=soft))
    strict = [_constraint(ZONE, "DoNotSchedule", "strict")]
    create_deployment(api, namespace, "strict", replicas=2, spec=pod_spec(topology_spread=strict))
    create_statefulset(api, namespace, "db", replicas=0)
    create_service(api, namespace, "db", {"app": "db"}, headless=True)
    for i, role in enumerate(("a1", "beta", "nozone")):
        create_pod(api, namespace, f"db-hand-{i}", node_name=nodes[role], labels={"app": "db"})
    for app, count, roles in (("web", 4, ("a1", "a2", "beta", "nozone")), ("soft", 3, ("a1", "a2", "b1")),
                              ("strict", 2, ("b1", "c1"))):  # fmt: skip
        wait_for_pods(api, namespace, {"app": app}, count)
        schedule_pending_pods(api, namespace, [nodes[r] for r in roles], {"app": app})


def test_v129_reports_equal_offline_analyze_with_the_comparison(
    control_plane: ControlPlane, kube_api: client.ApiClient, operator: Operator, nodes: dict[str, str],
    namespace: str, tmp_path: Path,
) -> None:  # fmt: skip
    make_workloads(kube_api, namespace, nodes)
    reports = wait_equal(control_plane, namespace, tmp_path)
    check_oracle(control_plane, namespace, reports)
    assert set(reports) == {("Deployment", "web"), ("Deployment", "soft"), ("Deployment", "strict"),
                            ("StatefulSet", "db")}  # fmt: skip
    assert {r["profile"] for r in reports.values()} == {"v1.29"}
    assert all(r["comparison"]["profile"] == "v1.28" for r in reports.values())

    # strict: only DoNotSchedule, so every candidate scores 0 (skipped), but the Filter decides the candidates and
    # the spread is judged: zone a is empty, b and c hold one pod each (no domain over maxSkew 1)
    strict = reports[("Deployment", "strict")]
    assert strict["skipped"] is True and strict["skipReason"], strict
    assert strict["health"] == "Balanced" and strict["nextPodSchedulable"] is True, strict
    (kept,) = strict["constraints"]
    assert (kept["topologyKey"], kept["skew"], kept["satisfied"], kept["eligibleDomains"] >= 3) == (ZONE, 1, True, True)
    assert {r["skipped"] for key, r in reports.items() if key != ("Deployment", "strict")} == {False}
    # soft: its DoNotSchedule hostname constraint rejects a1, a2 and b1 (one pod each, an empty node exists)
    soft = reports[("Deployment", "soft")]
    assert soft["excludedNodes"].get("PodTopologySpread") == 3, soft
    # the beta-only and the unlabelled node are zoneless for v1.29: web's 4 pods are in zone a (2) and nowhere
    web = reports[("Deployment", "web")]
    assert web["pods"] == 4
    assert {z["zone"]: z["pods"] for z in web["zones"] if z["zone"]}.get("zone-a") == 2
    assert reports[("StatefulSet", "db")]["pods"] == 3

    # a deleted pod: the report follows and equals the offline analysis again
    delete_pod(kube_api, namespace, "db-hand-0")
    after = wait_equal(control_plane, namespace, tmp_path)
    check_oracle(control_plane, namespace, after)
    assert after[("StatefulSet", "db")]["pods"] == 2
    assert after[("StatefulSet", "db")]["profile"] == "v1.29"
    operator.assert_alive()
