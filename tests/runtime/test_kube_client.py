"""spreadwatch.kube without a cluster: retries/backoff, credentials for kopf, Lease election rounds on a fake API."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.kube import LeaseElector, RetryPolicy, connection_params, retry
from spreadwatch.kube.reports import REPORT_PAGE_SIZE, ReportClient
from spreadwatch.kube.retry import describe, retrying


def api_error(status: int, reason: str = "") -> ApiException:
    err = ApiException(status=status, reason="x")
    err.body = f'{{"reason": "{reason}"}}' if reason else ""
    return err


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    return slept


@pytest.mark.parametrize("status", [409, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried(status: int, no_sleep: list[float]) -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise api_error(status)
        return "ok"

    assert retrying(RetryPolicy(), flaky) == "ok"
    assert len(calls) == 3
    assert len(no_sleep) == 2


@pytest.mark.parametrize("err", [api_error(404), api_error(403), api_error(422), api_error(409, "AlreadyExists")])
def test_other_errors_are_not_retried(err: ApiException) -> None:
    calls = []

    def failing() -> None:
        calls.append(1)
        raise err

    with pytest.raises(ApiException):
        retrying(RetryPolicy(), failing)
    assert len(calls) == 1


def test_connection_errors_are_retried_then_raised(no_sleep: list[float]) -> None:
    calls = []

    def down() -> None:
        calls.append(1)
        raise ConnectionRefusedError("refused")

    with pytest.raises(ConnectionRefusedError):
        retrying(RetryPolicy(attempts=4), down)
    assert len(calls) == 4
    assert len(no_sleep) == 3


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy(base=0.5, cap=4.0)
    for attempt, ceiling in enumerate([0.5, 1.0, 2.0, 4.0, 4.0, 4.0]):
        samples = [policy.delay(attempt) for _ in range(200)]
        assert all(0 <= s <= ceiling for s in samples)
        assert max(samples) > ceiling / 2  # jitter spreads over the whole range


def test_retry_after_header_is_honoured(no_sleep: list[float]) -> None:
    err = api_error(429)
    err.headers = {"Retry-After": "3"}
    calls = []

    def throttled() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise err
        return "ok"

    assert retrying(RetryPolicy(), throttled) == "ok"
    assert no_sleep == [3.0]


def test_connection_params_for_kopf() -> None:
    cfg = client.Configuration()
    cfg.host = "https://h:6443"
    cfg.ssl_ca_cert = "/ca.crt"
    cfg.api_key = {"authorization": "Bearer tok"}
    params = connection_params(cfg)
    assert params["server"] == "https://h:6443"
    assert (params["scheme"], params["token"], params["ca_path"]) == ("Bearer", "tok", "/ca.crt")
    assert params["insecure"] is False


# --- Lease election -----------------------------------------------------------------------------------------


class FakeCoordination:
    """Enough of CoordinationV1Api for LeaseElector: optimistic concurrency on resourceVersion."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0

    def _model(self) -> Any:
        assert self.lease is not None
        spec = self.lease["spec"]

        def t(key: str) -> dt.datetime | None:
            raw = spec.get(key)
            return dt.datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else None

        return SimpleNamespace(
            metadata=SimpleNamespace(resource_version=str(self.rv)),
            spec=SimpleNamespace(
                holder_identity=spec.get("holderIdentity"),
                renew_time=t("renewTime"),
                acquire_time=t("acquireTime"),
                lease_duration_seconds=spec.get("leaseDurationSeconds"),
                lease_transitions=spec.get("leaseTransitions"),
            ),
        )

    def read_namespaced_lease(self, name: str, namespace: str, **_: Any) -> Any:
        if self.lease is None:
            raise ApiException(status=404)
        return self._model()

    def create_namespaced_lease(self, namespace: str, body: dict[str, Any], **_: Any) -> None:
        if self.lease is not None:
            raise ApiException(status=409)
        self.lease, self.rv = body, self.rv + 1

    def replace_namespaced_lease(self, name: str, namespace: str, body: dict[str, Any], **_: Any) -> None:
        if body["metadata"]["resourceVersion"] != str(self.rv):
            raise ApiException(status=409)
        self.lease, self.rv = body, self.rv + 1


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def elector(identity: str, coord: FakeCoordination, clock: Clock) -> LeaseElector:
    e = LeaseElector(client.ApiClient(), "lease", "ns", identity, lease_duration=15, renew_period=2, clock=clock)
    e.coord = coord  # type: ignore[assignment]
    return e


def test_one_leader_renews_and_the_standby_takes_over_after_expiry() -> None:
    coord, clock = FakeCoordination(), Clock()
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    for _ in range(10):  # a keeps renewing: b never wins
        clock.now += 2
        assert a.try_acquire_or_renew()
        assert not b.try_acquire_or_renew()
    assert coord.lease is not None
    assert coord.lease["spec"]["holderIdentity"] == "a"
    # a stops renewing: b waits a full lease duration from when it last saw a change, then takes over
    clock.now += 14
    assert not b.try_acquire_or_renew()
    clock.now += 2
    assert b.try_acquire_or_renew()
    assert coord.lease["spec"]["holderIdentity"] == "b"
    assert coord.lease["spec"]["leaseTransitions"] == 1


def test_concurrent_takeover_has_one_winner() -> None:
    coord, clock = FakeCoordination(), Clock()
    a, b, c = (elector(x, coord, clock) for x in "abc")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert not c.try_acquire_or_renew()
    clock.now += 20
    # both read the same expired lease; the second update carries a stale resourceVersion
    lease = coord.read_namespaced_lease("lease", "ns")
    real_read = coord.read_namespaced_lease
    coord.read_namespaced_lease = lambda *args, **kw: lease  # type: ignore[method-assign]
    assert b.try_acquire_or_renew()
    assert not c.try_acquire_or_renew()
    coord.read_namespaced_lease = real_read  # type: ignore[method-assign]
    assert coord.lease is not None
    assert coord.lease["spec"]["holderIdentity"] == "b"


def test_leader_steps_down_when_it_cannot_renew() -> None:
    coord, clock = FakeCoordination(), Clock()
    a = elector("a", coord, clock)
    assert a.try_acquire_or_renew()
    a._leader = True
    clock.now += 14.9
    assert a.is_leader
    clock.now += 0.2
    assert not a.is_leader


def test_released_lease_is_taken_at_once() -> None:
    coord, clock = FakeCoordination(), Clock()
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    assert a.try_acquire_or_renew()
    a._leader = True
    assert not b.try_acquire_or_renew()
    a.release()
    assert coord.lease is not None
    assert coord.lease["spec"]["holderIdentity"] is None
    assert b.try_acquire_or_renew()


class SlowCoordination(FakeCoordination):
    """Every request takes `latency` seconds of the shared clock."""

    def __init__(self, clock: Clock, latency: float) -> None:
        super().__init__()
        self.clock, self.latency = clock, latency

    def read_namespaced_lease(self, name: str, namespace: str, **kw: Any) -> Any:
        self.clock.now += self.latency
        return super().read_namespaced_lease(name, namespace, **kw)

    def replace_namespaced_lease(self, name: str, namespace: str, body: dict[str, Any], **kw: Any) -> None:
        self.clock.now += self.latency
        super().replace_namespaced_lease(name, namespace, body, **kw)


@pytest.mark.parametrize(
    ("seen_at", "round_started", "now", "delay"),
    [
        pytest.param(0.0, 10.0, 10.0, 1.0, id="holder seen at 0, expires at 15: a standby ticks every 2/2, at 11"),
        pytest.param(0.0, 14.5, 14.5, 0.5, id="round at 14.5: the Lease expires at 15, before the tick at 15.5"),
        pytest.param(0.0, 14.5, 14.9, 0.1, id="round at 14.5 took 0.4s: expiry 15-14.9=0.1"),
        pytest.param(0.0, 12.0, 12.4, 0.6, id="round at 12 took 0.4s: fixed rate, the tick at 13 is 0.6s away"),
    ],
)
def test_a_standby_wakes_when_the_holders_lease_expires(seen_at: float, round_started: float, now: float,
                                                        delay: float) -> None:  # fmt: skip
    coord, clock = FakeCoordination(), Clock()
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    assert a.try_acquire_or_renew()
    clock.now = seen_at
    assert not b.try_acquire_or_renew()  # b first sees a's renewTime now: expires at seen_at + 15
    clock.now = round_started
    assert not b.try_acquire_or_renew()
    clock.now = now
    assert b.next_round_in(round_started) == pytest.approx(delay)


def test_a_leader_ticks_at_a_fixed_rate_and_a_standby_takes_over_at_expiry() -> None:
    coord, clock = FakeCoordination(), Clock()
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    assert a.try_acquire_or_renew()
    a._leader = True
    assert a.next_round_in(0.0) == 2.0  # the leader renews every renew period
    clock.now = 0.3  # the round took 0.3 s: the next one still starts at 2.0
    assert a.next_round_in(0.0) == pytest.approx(1.7)
    assert not b.try_acquire_or_renew()  # b sees a's Lease at 0.3; a crashes
    for tick in (1.3, 2.3, 3.3, 5.3, 8.3, 13.3, 14.3):
        clock.now = tick
        assert not b.try_acquire_or_renew()
    assert b.next_round_in(14.3) == pytest.approx(1.0)  # the tick at 15.3 is the expiry: 0.3 + 15
    clock.now = 14.9
    assert b.next_round_in(14.3) == pytest.approx(0.4)
    clock.now = 15.3
    assert b.try_acquire_or_renew()  # 15 s after it saw the last renewal: within lease + renew of the crash


def test_a_slow_leader_stops_leading_before_a_standby_may_take_over() -> None:
    """Requests take 0.4 s: the leader's deadline counts from the start of its renewing round, a standby's
    from when it saw the renewal, so the leader always steps down first (never two writers)."""
    clock = Clock()
    coord = SlowCoordination(clock, 0.0)
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    assert a.try_acquire_or_renew()
    a._leader = True
    coord.latency = 0.4
    clock.now = 100.0
    assert a.try_acquire_or_renew()  # round starts at 100: read until 100.4, renewal stored at 100.8
    assert not b.try_acquire_or_renew()  # b's read returns at 101.2: it counts from there
    clock.now = 115.0
    assert not a.is_leader  # a's own deadline: 100 + 15
    clock.now = 115.7
    assert not b.try_acquire_or_renew()  # read returns at 116.1 < 101.2 + 15
    clock.now = 115.9
    assert b.try_acquire_or_renew()  # read returns at 116.3: expired, b takes over — after a stepped down


def test_run_campaigns_in_a_thread_notifies_the_loop_and_releases_on_stop() -> None:
    coord = FakeCoordination()
    changes: list[bool] = []

    async def on_change(leader: bool) -> None:
        changes.append(leader)

    e = LeaseElector(client.ApiClient(), "lease", "ns", "a", lease_duration=15, renew_period=0.05,
                     on_change=on_change)  # fmt: skip
    e.coord = coord  # type: ignore[assignment]

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(e.run(stop))
        while not changes:  # the thread acquires the Lease, the loop hears of it
            await asyncio.sleep(0.01)
        assert e.is_leader
        stop.set()
        await task

    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert changes == [True]
    assert coord.lease is not None
    assert coord.lease["spec"]["holderIdentity"] is None  # released on stop


class RecordingCoordination(FakeCoordination):
    """Keeps every Lease body sent (create and replace), in order."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []

    def create_namespaced_lease(self, namespace: str, body: dict[str, Any], **kw: Any) -> None:
        self.sent.append(body)
        super().create_namespaced_lease(namespace, body, **kw)

    def replace_namespaced_lease(self, name: str, namespace: str, body: dict[str, Any], **kw: Any) -> None:
        self.sent.append(body)
        super().replace_namespaced_lease(name, namespace, body, **kw)


def test_every_lease_write_is_one_shape_with_the_observed_resource_version() -> None:
    """create (no resourceVersion), renew (acquireTime kept), take-over (transitions + 1, new acquireTime) and
    release (no holder) all send a coordination.k8s.io/v1 Lease named by the elector; updates are conditional."""
    coord, clock = RecordingCoordination(), Clock()
    a, b = elector("a", coord, clock), elector("b", coord, clock)
    sent = coord.sent

    assert a.try_acquire_or_renew()  # create
    a._leader = True
    clock.now += 2
    assert a.try_acquire_or_renew()  # renew
    clock.now += 30
    assert not b.try_acquire_or_renew()  # b first sees a's renewal
    clock.now += 16
    assert b.try_acquire_or_renew()  # take-over
    b._leader = True
    b.release()

    assert [(m["apiVersion"], m["kind"], m["metadata"]["name"], m["metadata"]["namespace"]) for m in sent] == [
        ("coordination.k8s.io/v1", "Lease", "lease", "ns")
    ] * 4
    assert [m["metadata"].get("resourceVersion") for m in sent] == [None, "1", "2", "3"]
    created, renewed, taken, released = (m["spec"] for m in sent)
    assert (created["holderIdentity"], created["leaseTransitions"], created["leaseDurationSeconds"]) == ("a", 0, 15)
    assert created["acquireTime"] == created["renewTime"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", created["renewTime"])
    assert (renewed["holderIdentity"], renewed["leaseTransitions"]) == ("a", 0)
    assert renewed["acquireTime"] == created["acquireTime"]
    assert (taken["holderIdentity"], taken["leaseTransitions"]) == ("b", 1)
    assert taken["acquireTime"] == taken["renewTime"]
    assert (released["holderIdentity"], released["leaseTransitions"], released["leaseDurationSeconds"]) == (None, 1, 1)
    assert "acquireTime" not in released


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (404, {"reason": "NotFound", "message": "spreadreports \"x\" not found"}, "HTTP 404 NotFound"),
        (500, {"reason": "InternalError", "message": "failed to create typed patch object (ns/x): "
               ".status.nodesScored: field not declared in schema\nmore"},
         "HTTP 500 InternalError: failed to create typed patch object (ns/x): .status.nodesScored: field not "
         "declared in schema"),
        (503, None, "HTTP 503 Service Unavailable"),
    ],
    ids=["a client error: its reason", "a server error: its message's first line", "no Status: the HTTP reason"],
)  # fmt: skip
def test_an_api_error_is_one_line_with_the_servers_message_for_a_server_error(
    status: int, body: dict[str, str] | None, expected: str
) -> None:
    err = ApiException(status=status, reason="Service Unavailable" if body is None else "x")
    err.body = orjson.dumps(body) if body is not None else None
    assert describe(err) == expected


def test_report_lists_are_kept_page_by_page() -> None:
    """A resync's list: pages of REPORT_PAGE_SIZE, each report slimmed (no managedFields, no node tables) and
    handed to ``keep`` before the next page is asked for (only one page of whole reports is ever held);
    what ``keep`` maps to None is left out."""
    total = 2 * REPORT_PAGE_SIZE + 7
    log: list[str] = []

    def report(i: int) -> dict[str, Any]:
        return {"metadata": {"name": f"r{i}", "namespace": "ns", "managedFields": [{"manager": "x"}]},
                "spec": {"workloadRef": {"kind": "Deployment", "name": f"w{i}"}},
                "status": {"health": "Balanced", "bestNodes": ["n1"], "nodes": [{"name": "n1"}] * 50}}  # fmt: skip

    def call_api(path: str, method: str, query_params: list[tuple[str, str]], **_: Any) -> SimpleNamespace:
        query = dict(query_params)
        start = int(query.get("continue", "0"))
        log.append(f"page {start} limit {query['limit']}")
        end = min(total, start + int(query["limit"]))
        items = [report(i) for i in range(start, end)]
        more = str(end) if end < total else ""
        return SimpleNamespace(data=orjson.dumps({"metadata": {"continue": more}, "items": items}))

    def keep(obj: dict[str, Any]) -> str | None:
        assert "managedFields" not in obj["metadata"] and "nodes" not in obj["status"]
        log.append("keep")
        number = int(obj["metadata"]["name"][1:])
        return None if number % 2 else obj["spec"]["workloadRef"]["name"]

    kept = asyncio.run(ReportClient(SimpleNamespace(call_api=call_api)).list_reports((), keep))  # type: ignore[arg-type]
    assert kept == [f"w{i}" for i in range(0, total, 2)]
    pages = [i for i, entry in enumerate(log) if entry.startswith("page")]
    assert [log[i] for i in pages] == [f"page {s} limit {REPORT_PAGE_SIZE}" for s in range(0, total, REPORT_PAGE_SIZE)]
    assert pages == [0, REPORT_PAGE_SIZE + 1, 2 * REPORT_PAGE_SIZE + 2]  # a page's reports kept before the next page


def test_a_report_apply_sends_its_json_as_given_and_reads_back_metadata_and_spec() -> None:
    """Through the generated client itself (only its connection pool replaced): the apply patch goes out as
    the JSON ``save`` made, byte for byte, with the apply media type the API server matches (its parameter
    dropped, as handlers/patch.go does); the answer's metadata and spec come back, its status and
    managedFields left undecoded."""
    sent: list[tuple[str, str, bytes, dict[str, str]]] = []
    stored = {"apiVersion": "spreadwatch.io/v1alpha1", "kind": "SpreadReport",
              "metadata": {"name": "web-deployment", "namespace": "shop", "uid": "r-1", "resourceVersion": "42",
                           "managedFields": [{"manager": "spreadwatch"}],
                           "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "w-1"}]},
              "spec": {"workloadRef": {"kind": "Deployment", "name": "web", "uid": "w-1"}},
              "status": {"health": "Balanced", "nodes": [{"name": "n1"}] * 50}}  # fmt: skip

    class Pool:
        def request(self, method: str, url: str, *, body: bytes, headers: dict[str, str], **_: Any) -> Any:
            sent.append((method, url, body, headers))
            return SimpleNamespace(status=200, reason="OK", data=orjson.dumps(stored), headers={},
                                   getheaders=dict, getheader=lambda name, default=None: default)  # fmt: skip

    api = client.ApiClient(client.Configuration(host="https://api.example"))
    api.rest_client.pool_manager = Pool()
    status = {"health": "Balanced", "bestNodes": ["n1", "n2"], "conditions": [{"type": "Balanced"}]}
    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "w-1"}
    got = asyncio.run(ReportClient(api).save("shop", "web-deployment", {"h": "Balanced"}, {"d": "ab"}, workload,
                                             status))  # fmt: skip
    [(method, url, body, headers)] = sent
    assert (method, headers["Content-Type"]) == ("PATCH", "application/apply-patch+yaml; charset=utf-8")
    assert url.startswith("https://api.example/apis/spreadwatch.io/v1alpha1/namespaces/shop/spreadreports/")
    patch = orjson.loads(body)
    assert isinstance(body, bytes) and body == orjson.dumps(patch)  # the bytes orjson made, not re-encoded
    assert (patch["status"], patch["spec"]["workloadRef"], patch["metadata"]["annotations"]) == (
        status, workload, {"d": "ab"})  # fmt: skip
    assert got == {"metadata": {"name": "web-deployment", "namespace": "shop", "uid": "r-1", "resourceVersion": "42",
                                "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "w-1"}]},
                   "spec": {"workloadRef": {"kind": "Deployment", "name": "web", "uid": "w-1"}}}  # fmt: skip
