"""The dashboard and the alert rules against a real Prometheus scraping a real spreadwatch operator process.

Set-up (module scope, ~15 s):

* a ``runtime.process.Runtime`` (index, router, writer, probe and metrics servers) with an in-memory
  SpreadReport API instead of the Kubernetes API, serving secure ``/metrics`` (HTTPS, self-signed certificate,
  bearer tokens checked by a stand-in for TokenReview/SubjectAccessReview that knows one token; the real
  reviews are tested in tests/e2e/test_secure_metrics.py), fed a small cluster: 6 nodes in 3 zones and the workloads
  ``shop/web`` (Balanced), ``shop/api`` (Imbalanced: 3 + 1 pods), ``shop/cache`` (SinglePointOfFailure: both
  pods on node-b2), ``data/zonal`` (SinglePointOfFailure: both pods in zone-a, on two nodes) and
  ``shop/churn`` (a pod recreated every 0.25 s, so counters and histograms move), and ``data/pending``
  (Unschedulable: its nodeSelector matches no node, so its next replica would stay Pending); a
  PodDisruptionBudget (``minAvailable: 0``) for each but ``churn`` and ``pending``. Its ``/metrics`` is
  ``spreadwatch.metrics.registry_for(index, options, operator=runtime)``;
* a second target serving only the self-metrics of a stale leader (an ``OperatorCollector`` over a
  ``StaticSource``): oldest pending change 20 min old, last resync an hour ago;
* a third target on a closed port (a replica that is down);
* Debian's ``prometheus`` on a free loopback port, temporary storage, scrape and rule evaluation every
  second, loading charts/spreadwatch/files/spreadwatch-rules.yaml. Job ``spreadwatch`` scrapes the operator
  as the chart's ServiceMonitor does (``scheme: https``, the bearer token from a file,
  ``insecure_skip_verify``); the two other targets are plain HTTP in a second job labelled
  ``job="spreadwatch"`` too.

Then every dashboard target (variables substituted) and every alert expression runs through /api/v1/query.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from auth_fakes import FakeAccessReviews
from handler_fakes import (
    FakeReportApi,
    Feeder,
    deployment,
    ev,
    namespace_obj,
    pod_of,
    replicaset_of,
    service,
    zone_nodes,
)
from monitoring_helpers import (
    RULES,
    Prometheus,
    PrometheusError,
    dashboard_targets,
    load_dashboard,
    load_rules,
    substitute,
)

from k8s_objects import budget, controller
from ports import free_port
from spreadwatch.config import LeaderElection, OperatorConfig
from spreadwatch.metrics import (
    CONTENT_TYPE_TEXT,
    OperatorCollector,
    OperatorState,
    SpreadwatchRegistry,
    StaticSource,
    render,
)
from spreadwatch.runtime.process import Runtime

pytestmark = pytest.mark.prometheus

#: (namespace, name) → nodes of its pods
PLACEMENT = {
    ("shop", "web"): ["node-a1", "node-b1", "node-c1"],
    ("shop", "api"): ["node-b1", "node-b1", "node-b1", "node-c1"],
    ("shop", "cache"): ["node-b2", "node-b2"],
    ("data", "zonal"): ["node-a1", "node-a2"],
    ("shop", "churn"): ["node-a1"],
}
SEEDED = [w for w in PLACEMENT if w[1] != "churn"]
JOB = "spreadwatch"
PROMETHEUS_TOKEN = "prometheus-service-account-token"
PROMETHEUS_USER = "system:serviceaccount:monitoring:prometheus"


def _nodes() -> list[dict[str, Any]]:
    """The zone nodes with room for pods (the prediction's NodeResourcesFit) and, in zone-a, a PreferNoSchedule
    taint: the whole profile then sends shop/api's next pod to zone-c, off its spreading best (zone-a)."""
    nodes = zone_nodes()
    for n in nodes:
        n["status"] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        if n["metadata"]["name"].startswith("node-a"):
            n["spec"]["taints"] = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    return nodes


def cluster_events() -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [*_nodes(), namespace_obj("shop"), namespace_obj("data")]
    for (ns, name), nodes in PLACEMENT.items():
        objs += [deployment(name, ns, replicas=len(nodes)), replicaset_of(name, ns, len(nodes))]
        objs += [pod_of(name, i, n, ns) for i, n in enumerate(nodes)]
        objs.append(service(name, {"app": name}, namespace=ns))
        if name != "churn":  # a PodDisruptionBudget each (minAvailable 0: it holds whatever is Ready)
            objs.append(budget(name, {"matchLabels": {"app": name}}, namespace=ns, min_available=0))
    pending = {"app": "pending"}  # no node has pool=none: no candidate, the next replica would stay Pending
    objs.append(controller("Deployment", "pending", {"matchLabels": pending}, pending, namespace="data",
                           template_spec={"nodeSelector": {"pool": "none"}}))  # fmt: skip
    return [ev("ADDED", o) for o in objs]


class OperatorThread(threading.Thread):
    """A Runtime with a fake SpreadReport API on its own event loop; serves /metrics on a free port."""

    def __init__(self) -> None:
        super().__init__(name="spreadwatch-runtime", daemon=True)
        self.api = FakeReportApi()
        self.reviews = FakeAccessReviews({PROMETHEUS_TOKEN: PROMETHEUS_USER}, frozenset({PROMETHEUS_USER}))
        self.started_ok = threading.Event()
        self.halt = threading.Event()
        self.port = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # reported by the fixture
            self.error = err
            self.started_ok.set()

    async def _main(self) -> None:
        config = OperatorConfig(
            profile="v1.29",  # (the prediction's families need PodTopologySpread's; auto would ask an API server)
            compare_profile="none",
            prediction=True,
            host="127.0.0.1",
            port=0,
            metrics_port=0,
            debounce=0.05,
            leader=LeaderElection(enabled=False, identity="test"),
        )
        runtime = Runtime(config, report_api=self.api, reviews=self.reviews)
        feeder = Feeder(runtime.router)
        feeder.feed(*cluster_events())
        # One failed status write (the fake API answers 500 once) and what kube.ReportClient's on_request hook
        # notes for such a request in a real process: spreadwatch_report_writes_total{result="failed"} and
        # spreadwatch_api_errors_total{code="500"} get series.
        self.api.fail_next["apply"] = [500]
        runtime.api_errors.note("apply", "500")
        await runtime.start()
        try:
            assert runtime.metrics_server is not None and runtime.metrics_server.scheme == "https"
            self.port = runtime.metrics_server.bound_port or 0
            self.started_ok.set()
            i = 0
            while not self.halt.is_set():
                await asyncio.sleep(0.25)
                i += 1
                churn = pod_of("churn", 1, "node-b1", "shop")
                feeder.feed(ev("ADDED" if i % 2 else "DELETED", churn))
        finally:
            await runtime.stop()


def stale_leader_state() -> OperatorState:
    return OperatorState(
        workloads=3,
        reports_pending=3,
        oldest_pending_seconds=1200.0,
        last_resync_timestamp=time.time() - 3600,
        leader=True,
        ready=True,
    )


class _StaleHandler(BaseHTTPRequestHandler):
    registry: SpreadwatchRegistry

    def do_GET(self) -> None:
        body = render(self.registry)
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_TEXT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class Live:
    prom: Prometheus
    operator: str  # instance label values
    stale: str
    down: str
    reviews: FakeAccessReviews


def _wait(what: str, check: Any, prom: Prometheus, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return
        except PrometheusError as err:
            last = err
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} (last: {last})\n{prom.log_tail()}")


@pytest.fixture(scope="module")
def live(prometheus_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    operator = OperatorThread()
    operator.start()
    assert operator.started_ok.wait(30), "operator runtime did not start"
    if operator.error is not None:
        raise operator.error

    registry = SpreadwatchRegistry()
    registry.register(OperatorCollector(StaticSource(stale_leader_state())))
    handler = type("StaleHandler", (_StaleHandler,), {"registry": registry})
    stale_server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    stale_thread = threading.Thread(target=stale_server.serve_forever, name="stale-target", daemon=True)
    stale_thread.start()

    operator_target = f"127.0.0.1:{operator.port}"
    stale_target = f"127.0.0.1:{stale_server.server_address[1]}"
    down_target = f"127.0.0.1:{free_port()}"
    workdir = tmp_path_factory.mktemp("prometheus")
    token_file = workdir / "token"
    token_file.write_text(PROMETHEUS_TOKEN)
    config = {
        # a scrape timeout of 2 s, not 1 s: a CPU hog on every core must not turn a slow scrape into up == 0
        "global": {"scrape_interval": "2s", "scrape_timeout": "2s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [
            {  # the operator, as the chart's ServiceMonitor scrapes it
                "job_name": JOB,
                "scheme": "https",
                "authorization": {"type": "Bearer", "credentials_file": str(token_file)},
                "tls_config": {"insecure_skip_verify": True},
                "static_configs": [{"targets": [operator_target]}],
            },
            {  # plain-HTTP targets; a target's job label wins over the job name
                "job_name": f"{JOB}-plain",
                "static_configs": [{"targets": [stale_target, down_target], "labels": {"job": JOB}}],
            },
        ],
    }
    prom = Prometheus(prometheus_bin, workdir, config)
    targets = Live(prom, operator_target, stale_target, down_target, operator.reviews)
    try:
        prom.wait_ready()
        # 8+ scrapes of every target: enough samples for rate() over the 10 s $__rate_interval
        _wait(
            "8 scrapes of each target",
            lambda: (r := prom.query(f'min(count_over_time(up{{job="{JOB}"}}[1m])) >= 8 '
                                     f'and count(up{{job="{JOB}"}}) == 3')) and r,
            prom,
        )
        _wait(
            "report computations in the last 10 s",
            lambda: prom.query(f'increase(spreadwatch_compute_duration_seconds_count{{job="{JOB}"}}[10s]) > 0'),
            prom,
        )
        yield targets
    finally:
        prom.stop()
        operator.halt.set()
        operator.join(timeout=20)
        stale_server.shutdown()
        stale_server.server_close()


# --- the scrape itself -----------------------------------------------------------------------------------------


def test_targets_scraped_as_expected(live: Live) -> None:
    # the best of the last 20 s (≥ 10 scrapes): one scrape slowed past its timeout on a busy machine is no failure
    up = {r["metric"]["instance"]: r["value"][1] for r in live.prom.query(f'max_over_time(up{{job="{JOB}"}}[20s])')}
    assert up == {live.operator: "1", live.stale: "1", live.down: "0"}
    # 8+ HTTPS scrapes a second apart with the bearer token: reviewed once per decision-cache TTL (60 s)
    [scrapes] = live.prom.query(f'count_over_time(up{{job="{JOB}", instance="{live.operator}"}}[1h])')
    reviews = live.reviews.token_calls
    assert 1 <= reviews <= max(1, int(scrapes["value"][1]) // 8), (reviews, scrapes)
    assert set(live.reviews.access_calls) == {(PROMETHEUS_USER, "get", "/metrics")}


def test_workload_series_carry_the_seeded_state(live: Live) -> None:
    health = {
        (r["metric"]["namespace"], r["metric"]["workload"]): r["metric"]["state"]
        for r in live.prom.query("spreadwatch_workload_health == 1")
    }
    assert health[("shop", "web")] == "Balanced"
    assert health[("shop", "api")] == "Imbalanced"
    assert health[("shop", "cache")] == "SinglePointOfFailure"
    assert health[("data", "zonal")] == "SinglePointOfFailure"


# --- the dashboard ---------------------------------------------------------------------------------------------


def _variables(workload: tuple[str, str], instance: str = ".+") -> dict[str, str]:
    """The dashboard's variables as Grafana interpolates them into a regex matcher: `job` and `instance` are
    multi-select with All = ".+" (their allValue), a single pick is the value itself."""
    return {"job": JOB, "instance": instance, "datasource": "prometheus", "namespace": workload[0],
            "workload": workload[1]}  # fmt: skip


def test_dashboard_variables_resolve(live: Live) -> None:
    variables = {v["name"]: v for v in load_dashboard()["templating"]["list"]}
    jobs = live.prom.api("label/job/values", [("match[]", "spreadwatch_build_info")])
    assert jobs == [JOB]
    assert variables["instance"]["allValue"] == variables["job"]["allValue"] == ".+"
    inst_match = substitute(variables["instance"]["definition"], _variables(("", "")))
    selector, label = inst_match.removeprefix("label_values(").removesuffix(")").rsplit(", ", 1)
    # every scrape target of the job, the one that is down included
    assert live.prom.api(f"label/{label}/values", [("match[]", selector)]) == sorted(
        [live.operator, live.stale, live.down])
    ns_match = substitute(variables["namespace"]["definition"], _variables(("", "")))
    # label_values(<selector>, <label>) is what Grafana sends as /api/v1/label/<label>/values?match[]=<selector>
    selector, label = ns_match.removeprefix("label_values(").removesuffix(")").rsplit(", ", 1)
    assert live.prom.api(f"label/{label}/values", [("match[]", selector)]) == ["data", "shop"]
    wl_match = substitute(variables["workload"]["definition"], _variables(("shop", "")))
    selector, label = wl_match.removeprefix("label_values(").removesuffix(")").rsplit(", ", 1)
    assert live.prom.api(f"label/{label}/values", [("match[]", selector)]) == ["api", "cache", "churn", "web"]


def test_every_dashboard_target_returns_data(live: Live) -> None:
    targets = dashboard_targets(load_dashboard())
    empty: list[str] = []
    runs = 0
    for t in targets:
        scoped = "$workload" in t.expr or "$namespace" in t.expr
        for workload in SEEDED if scoped else SEEDED[:1]:
            expr = substitute(t.expr, _variables(workload))
            result = live.prom.query(expr)
            runs += 1
            if not result:
                empty.append(f"{t.panel} [{t.ref}] for {'/'.join(workload) if scoped else 'all'}: {expr}")
    assert not empty, "targets without data:\n" + "\n".join(empty)
    assert runs > len(targets)


def _panel_result(live: Live, title: str, ref: str = "A", workload: tuple[str, str] = SEEDED[0],
                  instance: str = ".+") -> list[Any]:  # fmt: skip
    target = next(t for t in dashboard_targets(load_dashboard()) if t.panel == title and t.ref == ref)
    return live.prom.query(substitute(target.expr, _variables(workload, instance)))


def test_dashboard_values_match_the_cluster(live: Live) -> None:
    by_state = {r["metric"]["state"]: float(r["value"][1]) for r in _panel_result(live, "Workloads by health")}
    assert by_state == {"Balanced": 2, "Imbalanced": 1, "SinglePointOfFailure": 2, "Unschedulable": 1,
                        "ZoneOutageUnsafe": 0, "Skipped": 0, "Error": 0}  # fmt: skip
    expected = {w: [r["value"][1] for r in _panel_result(live, "PodDisruptionBudget", workload=w)] for w in SEEDED}
    assert expected == {w: [str(len(PLACEMENT[w]))] for w in SEEDED}  # an integer minAvailable: the pods it selects
    pending = _panel_result(live, "Next replica would stay Pending", ref="C")
    assert {(r["metric"]["namespace"], r["metric"]["workload"]): r["value"][1] for r in pending} == {
        ("data", "pending"): "1"}  # fmt: skip

    zones = {r["metric"]["zone"]: float(r["value"][1]) for r in _panel_result(live, "Pods per zone",
                                                                              workload=("shop", "cache"))}
    assert zones == {"zone-a": 0, "zone-b": 2, "zone-c": 0}
    nodes = {r["metric"]["node"]: float(r["value"][1]) for r in _panel_result(live, "Pods per node",
                                                                              workload=("shop", "api"))}
    assert nodes == {"node-b1": 3, "node-c1": 1}

    # worst-spread table: the two single points of failure rank first, the Balanced workload last
    risk = _panel_result(live, "Worst-spread workloads (top 25)", ref="I")
    ranked = [r["metric"]["workload"] for r in sorted(risk, key=lambda r: -float(r["value"][1]))]
    assert set(ranked[:2]) == {"cache", "zonal"}
    assert ranked[2] == "api"
    defeated = _panel_result(live, "Spread defeated: next replica off the spreading best nodes")
    assert {r["metric"]["workload"] for r in defeated} == {"api"}
    codes = {r["metric"]["workload"]: float(r["value"][1]) for r in _panel_result(
        live, "Worst-spread workloads (top 25)", ref="A")}
    assert codes["cache"] == 2 and codes["api"] == 1 and codes["web"] == 0

    leaders = {r["metric"]["instance"]: r["value"][1] for r in _panel_result(live, "Leader")}
    assert leaders == {live.operator: "1", live.stale: "1"}
    # picking one instance narrows the operator panels to that replica
    leaders = {r["metric"]["instance"] for r in _panel_result(live, "Leader", instance=live.stale)}
    assert leaders == {live.stale}
    up = {r["metric"]["instance"]: r["value"][1] for r in _panel_result(live, "Scrape targets up",
                                                                        instance=live.down)}  # fmt: skip
    assert up == {live.down: "0"}
    writes = {r["metric"]["result"] for r in _panel_result(live, "Report writes by result")}
    assert {"created", "updated", "failed"} <= writes
    # the churning pod's report is rewritten all along: writes per second, a bound, a lag of at least the debounce
    rates = {r["metric"]["instance"]: float(r["value"][1]) for r in _panel_result(live, "API writes per second")}
    assert rates[live.operator] > 0 and rates[live.stale] == 0
    bound = {r["metric"]["instance"]: float(r["value"][1]) for r in _panel_result(live, "Writes in flight bound")}
    assert 2 <= bound[live.operator] <= 24
    [lag] = _panel_result(live, "Change to report lag", ref="A")
    assert 0.05 <= float(lag["value"][1]) < 30
    assert {r["metric"]["code"] for r in _panel_result(live, "API errors by HTTP status")} == {"500"}


# --- the alert rules -------------------------------------------------------------------------------------------


def _rule(name: str) -> dict[str, Any]:
    return next(r for r in load_rules() if r["alert"] == name)


def _alert_keys(live: Live, name: str) -> set[tuple[str, ...]]:
    keys = set()
    for r in live.prom.query(_rule(name)["expr"]):
        m = r["metric"]
        keys.add(tuple(m[k] for k in ("namespace", "workload", "zone", "topology", "instance", "reason") if k in m))
    return keys


def test_alert_expressions_select_exactly_the_right_workloads(live: Live) -> None:
    assert _alert_keys(live, "SpreadwatchAllReplicasOnOneNode") == {("shop", "cache")}
    assert _alert_keys(live, "SpreadwatchAllReplicasInOneZone") == {("shop", "cache", "zone-b"),
                                                                     ("data", "zonal", "zone-a")}
    assert _alert_keys(live, "SpreadwatchSkewHigh") == {
        ("shop", "api", "node"), ("shop", "api", "zone"),
        ("shop", "cache", "node"), ("shop", "cache", "zone"),
        ("data", "zonal", "zone"),
    }
    for name in ("SpreadwatchAllReplicasOnOneNode", "SpreadwatchAllReplicasInOneZone", "SpreadwatchSkewHigh"):
        assert not any(k[:2] == ("shop", "web") for k in _alert_keys(live, name)), name


def test_unschedulable_alert_selects_the_pending_workload(live: Live) -> None:
    assert _alert_keys(live, "SpreadwatchNextReplicaUnschedulable") == {("data", "pending")}


def test_operator_alert_expressions_select_the_broken_replicas(live: Live) -> None:
    assert _alert_keys(live, "SpreadwatchOperatorDown") == {(live.down,)}
    assert _alert_keys(live, "SpreadwatchReportsStale") == {(live.stale, "pending"), (live.stale, "resync")}


def test_prometheus_loads_and_evaluates_the_rules(live: Live) -> None:
    """Prometheus itself evaluates the rule file: every rule healthy; the alerts pending (their `for` has not
    elapsed) are exactly the ones the expressions select."""
    expected = {
        ("SpreadwatchAllReplicasOnOneNode", "cache"),
        ("SpreadwatchAllReplicasInOneZone", "cache"),
        ("SpreadwatchAllReplicasInOneZone", "zonal"),
        ("SpreadwatchSkewHigh", "api"),
        ("SpreadwatchSkewHigh", "cache"),
        ("SpreadwatchSkewHigh", "zonal"),
        ("SpreadwatchNextReplicaUnschedulable", "pending"),
        ("SpreadwatchSpreadDefeated", "api"),
        ("SpreadwatchOperatorDown", live.down),
        ("SpreadwatchReportsStale", live.stale),
    }

    def pending() -> set[tuple[str, str]]:
        alerts = live.prom.api("alerts")["alerts"]
        return {(a["labels"]["alertname"], a["labels"].get("workload") or a["labels"].get("instance", ""))
                for a in alerts if a["state"] == "pending"}

    _wait("the expected pending alerts", lambda: pending() == expected, live.prom)
    groups = live.prom.api("rules")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    assert {r["name"] for r in rules} == {r["alert"] for r in load_rules()}
    for r in rules:
        assert r["health"] == "ok", (r["name"], r.get("lastError"))
    for a in live.prom.api("alerts")["alerts"]:
        assert a["annotations"]["runbook"] and a["annotations"]["summary"], a
        assert "{{" not in a["annotations"]["description"], a
