"""Secure /metrics on the real control plane, with real tokens and a real Prometheus.

The operator runs as a local `spreadwatch run` process with the chart Deployment's args and a TokenRequest
token of the chart's ServiceAccount (so its TokenReviews and SubjectAccessReviews go through the chart's
`system:auth-delegator` binding). Scrapers are ServiceAccounts with real TokenRequest tokens: one bound to
the chart's `<fullname>-metrics-reader` ClusterRole, one bound to nothing. The self-signed serving
certificate is written under the process' $TMPDIR (a test directory), so the client can verify it.

Prometheus is Debian's (`make prometheus-tools`), scraping over HTTPS with the reader's token, once with
`insecure_skip_verify` (what the chart's ServiceMonitor does by default) and once verifying the certificate;
the dashboard's queries run against what it scraped.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chart_rbac import ChartInstall, install_chart_rbac
from kube_helpers import (
    ControlPlane,
    create_deployment,
    create_namespace,
    create_node,
    create_service_account,
    delete_namespace,
    delete_node,
    http_get,
    pod_spec,
    schedule_pending_pods,
    service_account_token,
    token_api_client,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "monitoring"))
from monitoring_helpers import (
    Prometheus,
    PrometheusError,
    dashboard_targets,
    load_dashboard,
    require_binary,
    substitute,
)

from ports import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "spreadreports.spreadwatch.io.yaml"
JOB = "spreadwatch"
#: Dashboard panels whose series exist only after a failure (no API error happens here).
FAILURE_ONLY_PANELS = {"API errors by HTTP status"}


@dataclass
class SecureOperator:
    proc: subprocess.Popen[bytes]
    probes_port: int
    metrics_port: int
    tmpdir: Path
    log: Path

    @property
    def cert(self) -> Path:
        [cert] = self.tmpdir.glob("spreadwatch-metrics-*/tls.crt")
        return cert

    def scrape(self, token: str | None = None, *, verify: bool = True, header: str | None = None,
               path: str = "/metrics") -> tuple[int, str]:  # fmt: skip
        """GET https://localhost:<metrics port><path> (verifying the self-signed certificate by default)."""
        ctx = ssl.create_default_context(cafile=str(self.cert) if verify else None)
        if not verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        request = urllib.request.Request(f"https://localhost:{self.metrics_port}{path}")
        if header is not None:
            request.add_header("Authorization", header)
        elif token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10, context=ctx) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    def state(self) -> dict[str, Any]:
        code, body = http_get(self.probes_port, "/statusz")
        assert code == 200, body
        data: dict[str, Any] = json.loads(body)
        return data

    def tail(self) -> str:
        return self.log.read_text()[-4000:]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@dataclass
class Scrapers:
    reader: str  # bound to <fullname>-metrics-reader
    outsider: str  # a valid token with no RBAC at all
    namespace: str  # of their ServiceAccounts "prometheus" (the reader) and "outsider"


@pytest.fixture(scope="module")
def chart(control_plane: ControlPlane, kube_api: client.ApiClient,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChartInstall]:  # fmt: skip
    installed = install_chart_rbac(control_plane, kube_api, tmp_path_factory.mktemp("chart"))
    yield installed
    installed.uninstall()


def start_operator(chart: ChartInstall, work: Path, *extra: str) -> SecureOperator:
    """`spreadwatch run` with the chart's args as its ServiceAccount; $TMPDIR is ``work/tmp``."""
    tmpdir = work / "tmp"
    tmpdir.mkdir()
    probes, metrics = free_port(), free_port()
    cmd = [sys.executable, "-m", "spreadwatch.cli", "run", *chart.args, "--kubeconfig", str(chart.kubeconfig),
           f"--port={probes}", f"--metrics-port={metrics}", "--bind-address=127.0.0.1", "--debounce=0.2",
           "--log-format=json", "--skip-namespace=kube-system", *extra]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPREADWATCH_") and k != "KUBECONFIG"}
    env.update(chart.env, TMPDIR=str(tmpdir))
    log = work / "operator.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    op = SecureOperator(proc, probes, metrics, tmpdir, log)

    def ready() -> bool:
        assert proc.poll() is None, f"operator exited with {proc.returncode}:\n{op.tail()}"
        return http_get(probes, "/readyz")[0] == 200

    try:
        wait_for(ready, timeout=60, message="the operator's /readyz")
    except BaseException:
        op.stop()
        raise
    return op


@pytest.fixture(scope="module")
def operator(crd: None, chart: ChartInstall, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureOperator]:
    assert "--metrics-secure=true" in chart.args  # the chart's default
    op = start_operator(chart, tmp_path_factory.mktemp("secure-operator"))
    try:
        yield op
    finally:
        code = op.stop()
    assert code == 0, f"operator exited with {code} on SIGTERM:\n{op.tail()}"
    assert not list(op.tmpdir.glob("spreadwatch-metrics-*")), "the self-signed certificate directory was left behind"


@pytest.fixture(scope="module")
def scrapers(kube_api: client.ApiClient, chart: ChartInstall) -> Iterator[Scrapers]:
    ns = create_namespace(kube_api)
    rbac = client.RbacAuthorizationV1Api(kube_api)
    binding = unique_name("metrics-reader")
    for sa in ("prometheus", "outsider"):
        create_service_account(kube_api, ns, sa)
    rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name=binding),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole",
                                  name=f"{chart.release}-spreadwatch-metrics-reader"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="prometheus", namespace=ns)]))  # fmt: skip
    yield Scrapers(service_account_token(kube_api, ns, "prometheus", create=False),
                   service_account_token(kube_api, ns, "outsider", create=False), ns)  # fmt: skip
    rbac.delete_cluster_role_binding(binding)
    delete_namespace(kube_api, ns)


@pytest.fixture(scope="module")
def workload(kube_api: client.ApiClient, operator: SecureOperator) -> Iterator[tuple[str, str]]:
    """Deployment web: 2 pods on one of three zoned nodes (SinglePointOfFailure), reported by the operator; beside
    it stranded (no node fits), defeated and filler (resource requests that defeat the spreading)."""
    ns = create_namespace(kube_api)
    prefix = unique_name("sm")
    nodes = [create_node(kube_api, f"{prefix}-{z}", zone=f"zone-{z}", region="r1").metadata.name for z in "abc"]
    create_deployment(kube_api, ns, "web", replicas=2)
    # a workload no node can take (the dashboard's "Next replica would stay Pending" panel needs one)
    create_deployment(kube_api, ns, "stranded", replicas=1,
                      spec=pod_spec(node_selector={"spreadwatch.io/pool": "nowhere"}))
    # a workload whose spreading best nodes cannot take its next pod (the "Spread defeated" panel needs one):
    # defeated's pod (1 CPU) on node a, filler (3.5 CPU each) on b and c; the next 1-CPU pod fits only on a,
    # the node spreading ranks last
    create_deployment(kube_api, ns, "defeated", replicas=1, spec=_requesting("1"))
    create_deployment(kube_api, ns, "filler", replicas=2, spec=_requesting("3500m"))
    wait_for_pods(kube_api, ns, {"app": "web"}, 2)
    schedule_pending_pods(kube_api, ns, nodes[:1], {"app": "web"})
    wait_for_pods(kube_api, ns, {"app": "defeated"}, 1)
    schedule_pending_pods(kube_api, ns, nodes[:1], {"app": "defeated"})
    wait_for_pods(kube_api, ns, {"app": "filler"}, 2)
    schedule_pending_pods(kube_api, ns, nodes[1:], {"app": "filler"})
    yield ns, "web"
    delete_namespace(kube_api, ns)
    for name in nodes:
        delete_node(kube_api, name)


def _requesting(cpu: str) -> client.V1PodSpec:
    """A pod spec whose one container requests ``cpu``."""
    spec = pod_spec()
    spec.containers[0].resources = client.V1ResourceRequirements(requests={"cpu": cpu})
    return spec


# --------------------------------------------------------------------------- requests


def test_only_tokens_allowed_to_get_metrics_scrape(operator: SecureOperator, scrapers: Scrapers) -> None:
    before = operator.state()["metricsAuth"]
    cases = {
        "no token": operator.scrape(),
        "not a bearer token": operator.scrape(header="Basic cHJvbTpwcm9t"),
        "garbage token": operator.scrape("not-a-token"),
        "token without RBAC": operator.scrape(scrapers.outsider),
        "metrics-reader": operator.scrape(scrapers.reader),
    }
    statuses = {what: status for what, (status, _) in cases.items()}
    assert statuses == {"no token": 401, "not a bearer token": 401, "garbage token": 401,
                        "token without RBAC": 403, "metrics-reader": 200}, cases  # fmt: skip
    body = cases["metrics-reader"][1]
    assert "spreadwatch_build_info{" in body and "spreadwatch_ready 1.0" in body
    # the chart's profile: auto, resolved from kube-apiserver v1.36's /version (docs/scoring.md §14)
    [info] = [line for line in body.splitlines() if line.startswith("spreadwatch_build_info{")]
    assert 'profile="v1.29"' in info
    assert "may not get /metrics" in cases["token without RBAC"][1]
    assert "spreadwatch_" not in cases["token without RBAC"][1] + cases["no token"][1]
    after = operator.state()["metricsAuth"]
    # garbage and outsider and reader: 3 TokenReviews; outsider and reader: 2 SubjectAccessReviews
    assert after["tokenReviews"] - before["tokenReviews"] == 3
    assert after["accessReviews"] - before["accessReviews"] == 2
    assert after["failed"] == 0, operator.tail()


def test_repeated_scrapes_are_answered_from_the_cache(operator: SecureOperator, scrapers: Scrapers,
                                                      kube_api: client.ApiClient) -> None:  # fmt: skip
    fresh = service_account_token(kube_api, scrapers.namespace, "prometheus", create=False)  # a new token
    before = operator.state()["metricsAuth"]
    started = time.monotonic()
    assert operator.scrape(fresh)[0] == 200  # reviewed: a TokenReview and a SubjectAccessReview
    uncached = time.monotonic() - started
    after = operator.state()["metricsAuth"]
    assert (after["tokenReviews"] - before["tokenReviews"], after["accessReviews"] - before["accessReviews"]) == (1, 1)
    before = after
    started = time.monotonic()
    statuses = [operator.scrape(fresh)[0] for _ in range(20)]
    elapsed = time.monotonic() - started
    after = operator.state()["metricsAuth"]
    assert statuses == [200] * 20
    assert (after["tokenReviews"], after["accessReviews"]) == (before["tokenReviews"], before["accessReviews"])
    assert after["cacheHits"] - before["cacheHits"] == 20
    print(f"HTTPS scrape with a new token {uncached * 1000:.0f} ms; cached: {elapsed / 20 * 1000:.0f} ms on average")


def test_tls_only_on_the_metrics_port_and_probes_stay_plain(operator: SecureOperator, scrapers: Scrapers) -> None:
    status, _ = http_get(operator.metrics_port, "/metrics")  # plain HTTP to the TLS port
    assert status != 200
    assert http_get(operator.probes_port, "/healthz") == (200, "ok\n")  # no token needed
    assert http_get(operator.probes_port, "/metrics")[0] == 404
    ctx = ssl.create_default_context()  # the system's CAs do not know the self-signed certificate
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(f"https://localhost:{operator.metrics_port}/metrics", timeout=10, context=ctx)
    assert operator.scrape(scrapers.reader, verify=True)[0] == 200  # the certificate names localhost


# --------------------------------------------------------------------------- RBAC


def _rules(cp: ControlPlane, token: str, namespace: str) -> set[tuple[str, str, str, str]]:
    """(apiGroup, resource, resourceName, verb) the token may use in `namespace` (SelfSubjectRulesReview)."""
    api = token_api_client(cp.server, cp.ca_file, token)
    try:
        review = client.AuthorizationV1Api(api).create_self_subject_rules_review(
            client.V1SelfSubjectRulesReview(spec=client.V1SelfSubjectRulesReviewSpec(namespace=namespace)))
    finally:
        api.close()
    assert not review.status.incomplete, review.status.evaluation_error
    return {(group, resource, name, verb)
            for rule in review.status.resource_rules
            for group in rule.api_groups or [""] for resource in rule.resources or []
            for name in rule.resource_names or [""] for verb in rule.verbs}  # fmt: skip


def test_operator_may_review_tokens_and_access_and_nothing_more(
    control_plane: ControlPlane, kube_api: client.ApiClient, chart: ChartInstall,
    tmp_path: Path,
) -> None:  # fmt: skip
    """The secure chart's ServiceAccount may do exactly what the insecure chart's may, plus create TokenReviews
    and SubjectAccessReviews (system:auth-delegator); both work with its real token."""
    insecure = install_chart_rbac(control_plane, kube_api, tmp_path, {"metrics": {"secure": False}},
                                  namespace=chart.namespace)  # fmt: skip
    try:
        assert "--metrics-secure=false" in insecure.args
        secure_rules = _rules(control_plane, chart.token, chart.namespace)
        plain_rules = _rules(control_plane, insecure.token, chart.namespace)
    finally:
        insecure.uninstall()
    # the Lease rule names each release's own Lease: compare everything else
    lease_rules = {r for r in secure_rules | plain_rules if r[1] == "leases" and r[2]}
    assert secure_rules - plain_rules - lease_rules == {
        ("authentication.k8s.io", "tokenreviews", "", "create"),
        ("authorization.k8s.io", "subjectaccessreviews", "", "create"),
    }
    assert plain_rules - secure_rules - lease_rules == set()

    api = token_api_client(control_plane.server, control_plane.ca_file, chart.token)
    try:
        review = client.AuthenticationV1Api(api).create_token_review(
            client.V1TokenReview(spec=client.V1TokenReviewSpec(token=chart.token)))
        assert review.status.authenticated
        assert review.status.user.username == f"system:serviceaccount:{chart.namespace}:{chart.service_account}"
        sar = client.AuthorizationV1Api(api).create_subject_access_review(client.V1SubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(user=review.status.user.username,
                                                  groups=review.status.user.groups,
                                                  non_resource_attributes=client.V1NonResourceAttributes(
                                                      path="/metrics", verb="get"))))  # fmt: skip
        assert sar.status.allowed is False  # the operator itself is not a metrics reader
    finally:
        api.close()


def test_without_auth_delegator_every_scrape_is_500_and_logged(
    control_plane: ControlPlane, kube_api: client.ApiClient, crd: None, scrapers: Scrapers, tmp_path: Path,
) -> None:  # fmt: skip
    """The chart's RBAC without secure metrics (no system:auth-delegator), the operator told to secure them
    anyway: its TokenReviews are refused, so valid tokens get 500 (never a 200, never cached)."""
    chart = install_chart_rbac(control_plane, kube_api, tmp_path, {"metrics": {"secure": False}})
    try:
        # its own empty namespace only: no second writer of the other tests' reports
        op = start_operator(chart, tmp_path, "--metrics-secure=true", f"--namespace={chart.namespace}")
        try:
            assert [op.scrape(scrapers.reader)[0] for _ in range(2)] == [500, 500]
            assert op.scrape()[0] == 401  # no token: decided without the API
            state = op.state()["metricsAuth"]
            assert (state["failed"], state["tokenReviews"], state["cached"]) == (2, 2, 0), state
        finally:
            op.stop()
        assert "cannot authorize a get /metrics request: TokenReview: HTTP 403" in op.log.read_text(), op.tail()
    finally:
        chart.uninstall()


# --------------------------------------------------------------------------- Prometheus


def _wait(what: str, check: Any, prom: Prometheus, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except PrometheusError as err:
            last = err
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} (last: {last})\n{prom.log_tail()}")


def test_prometheus_scrapes_with_the_bearer_token_and_tls(
    operator: SecureOperator, scrapers: Scrapers, workload: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:  # fmt: skip
    try:
        prometheus_bin = require_binary("prometheus")
    except FileNotFoundError as err:
        pytest.fail(str(err), pytrace=False)
    work = tmp_path_factory.mktemp("prometheus")
    tokens = {}
    for name, token in (("reader", scrapers.reader), ("outsider", scrapers.outsider), ("garbage", "garbage")):
        tokens[name] = work / f"{name}.token"
        tokens[name].write_text(token)
    target = f"127.0.0.1:{operator.metrics_port}"

    def job(name: str, token: str | None, tls: dict[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {"job_name": name, "scheme": "https", "tls_config": tls,
                                  "static_configs": [{"targets": [target]}]}  # fmt: skip
        if token is not None:
            config["authorization"] = {"type": "Bearer", "credentials_file": str(tokens[token])}
        return config

    skip_verify = {"insecure_skip_verify": True}
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            job(JOB, "reader", skip_verify),  # what the chart's ServiceMonitor does by default
            job("verified", "reader", {"ca_file": str(operator.cert), "server_name": "localhost"}),
            job("forbidden", "outsider", skip_verify),
            job("garbage", "garbage", skip_verify),
            job("anonymous", None, skip_verify),
        ],
    }
    prom = Prometheus(prometheus_bin, work, config)
    try:
        prom.wait_ready()
        up = _wait("every job scraped 3 times", lambda: (r := prom.query(
            "count_over_time(up[1m]) >= 3")) and len(r) == 5 and {x["metric"]["job"]: x for x in prom.query("up")},
            prom)  # fmt: skip
        assert {job: x["value"][1] for job, x in up.items()} == {
            JOB: "1", "verified": "1", "forbidden": "0", "garbage": "0", "anonymous": "0"}
        errors = {t["labels"]["job"]: t["lastError"] for t in prom.api("targets")["activeTargets"]}
        assert "403" in errors["forbidden"], errors
        assert "401" in errors["garbage"] and "401" in errors["anonymous"], errors
        assert errors[JOB] == errors["verified"] == "", errors

        ns, name = workload
        _wait("the workload's series", lambda: prom.query(
            f'spreadwatch_workload_health{{job="{JOB}", namespace="{ns}", workload="{name}", '
            'state="SinglePointOfFailure"} == 1'), prom)  # fmt: skip
        _wait("the stranded workload's series", lambda: prom.query(
            f'spreadwatch_workload_next_pod_schedulable{{job="{JOB}", namespace="{ns}", workload="stranded"}} == 0'),
            prom)  # fmt: skip
        _wait("the defeated workload's series", lambda: prom.query(
            f'spreadwatch_workload_prediction_spreading_agrees{{job="{JOB}", namespace="{ns}", '
            'workload="defeated"} == 0'), prom)  # fmt: skip
        _wait("4 scrapes after the workload appeared (rate() over 10 s)", lambda: prom.query(
            f'count_over_time(spreadwatch_workload_pods{{job="{JOB}", namespace="{ns}"}}[1m]) >= 4'), prom)
        variables = {"job": JOB, "instance": ".+", "datasource": "prometheus", "namespace": ns, "workload": name}
        empty, ran = [], 0
        for t in dashboard_targets(load_dashboard()):
            if t.panel in FAILURE_ONLY_PANELS:
                continue
            ran += 1
            if not prom.query(expr := substitute(t.expr, variables)):
                empty.append(f"{t.panel} [{t.ref}]: {expr}")
        assert ran > 30
        assert not empty, "dashboard targets without data:\n" + "\n".join(empty)
        zones = {r["metric"]["zone"]: r["value"][1] for r in prom.query(substitute(
            'max by (zone) (spreadwatch_workload_zone_pods{job=~"$job", namespace="$namespace", '
            'workload="$workload"})', variables))}  # fmt: skip
        assert zones == {"zone-a": "2", "zone-b": "0", "zone-c": "0"}
    finally:
        prom.stop()
    state = operator.state()["metricsAuth"]
    assert state["failed"] == 0, operator.tail()
    assert state["cacheHits"] > state["tokenReviews"], state  # most scrapes cost no API call
