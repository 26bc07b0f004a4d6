"""Secure /metrics without an API server: the decision cache (a manual clock), the 401/403/500 decisions,
and a Runtime serving /metrics over HTTPS (self-signed or mounted certificate) to a verifying client."""

from __future__ import annotations

import asyncio
import ssl
import tempfile
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
from auth_fakes import FakeAccessReviews
from handler_fakes import NAMED_CONFIG, FakeReportApi, Feeder, web_cluster

from spreadwatch.errors import InputError
from spreadwatch.runtime.process import Runtime
from spreadwatch.runtime.serving.metricsauth import Decision, DecisionCache, MetricsAuth
from spreadwatch.runtime.serving.servingcert import CERT_FILE, KEY_FILE, serving_cert, write_self_signed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


ALLOWED = Decision(200, "prom")
FORBIDDEN = Decision(403, "intruder")
UNAUTHORIZED = Decision(401)


# --- the cache ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "age", "cached"),
    [
        (ALLOWED, 59.9, True),  # allow TTL 60 s: 59.9 < 60 → still cached
        (ALLOWED, 60.0, False),  # 60 ≥ 60 → expired
        (FORBIDDEN, 9.9, True),  # deny TTL 10 s
        (FORBIDDEN, 10.0, False),
        (UNAUTHORIZED, 9.9, True),
        (UNAUTHORIZED, 10.0, False),
        (Decision(500), 0.0, False),  # a failed review is never cached
    ],
    ids=lambda v: str(v.status) if isinstance(v, Decision) else str(v),
)
def test_cache_ttl_by_decision(decision: Decision, age: float, cached: bool) -> None:
    clock = Clock()
    cache = DecisionCache(max_entries=8, allow_ttl=60, deny_ttl=10, timer=clock)
    cache.put("token", "get", "/metrics", decision)
    clock.now += age
    assert (cache.get("token", "get", "/metrics") == decision) is cached
    assert len(cache) == int(cached)


def test_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    cache = DecisionCache(max_entries=3, timer=Clock())
    for i in range(3):
        cache.put(f"t{i}", "get", "/metrics", ALLOWED)
    assert cache.get("t0", "get", "/metrics") == ALLOWED  # t0 used: t1 is now the least recently used
    cache.put("t3", "get", "/metrics", ALLOWED)  # 4 entries > 3: evict t1
    assert len(cache) == 3
    assert cache.get("t1", "get", "/metrics") is None
    assert [cache.get(t, "get", "/metrics") for t in ("t0", "t2", "t3")] == [ALLOWED] * 3


def test_cache_keys_hold_no_token_and_separate_verbs_and_paths() -> None:
    cache = DecisionCache(timer=Clock())
    cache.put("secret-token", "get", "/metrics", ALLOWED)
    assert cache.get("secret-token", "post", "/metrics") is None
    assert cache.get("secret-token", "get", "/other") is None
    key = DecisionCache.key("secret-token", "get", "/metrics")
    assert b"secret-token" not in key[0] and len(key[0]) == 32  # SHA-256 digest


# --- decisions ---------------------------------------------------------------------------------------------


REVIEWS = {"good": "prom", "other": "intruder"}


@pytest.mark.parametrize(
    ("header", "status", "token_reviews", "access_reviews"),
    [
        (None, 401, 0, 0),  # no header: no API call
        ("", 401, 0, 0),
        ("Basic dXNlcjpwYXNz", 401, 0, 0),  # not a bearer token
        ("Bearer ", 401, 0, 0),
        ("Bearer garbage", 401, 1, 0),  # TokenReview says no: no SubjectAccessReview
        ("Bearer other", 403, 1, 1),  # valid token, no RBAC
        ("Bearer good", 200, 1, 1),
        ("bearer good", 200, 1, 1),  # the scheme is case-insensitive
    ],
)
def test_decisions(header: str | None, status: int, token_reviews: int, access_reviews: int) -> None:
    reviews = FakeAccessReviews(REVIEWS, frozenset({"prom"}))
    auth = MetricsAuth(reviews)
    decision = asyncio.run(auth.decide(header, "get", "/metrics"))
    assert decision.status == status
    assert (reviews.token_calls, len(reviews.access_calls)) == (token_reviews, access_reviews)
    if access_reviews:
        assert reviews.access_calls == [(REVIEWS[header.split()[1]], "get", "/metrics")]  # type: ignore[union-attr]


def test_repeated_scrapes_hit_the_cache_until_the_ttl_ends() -> None:
    clock = Clock()
    reviews = FakeAccessReviews(REVIEWS, frozenset({"prom"}))
    auth = MetricsAuth(reviews, DecisionCache(allow_ttl=60, deny_ttl=10, timer=clock))

    async def scrapes(n: int, token: str) -> list[int]:
        return [(await auth.decide(f"Bearer {token}", "get", "/metrics")).status for _ in range(n)]

    assert asyncio.run(scrapes(20, "good")) == [200] * 20
    assert asyncio.run(scrapes(20, "other")) == [403] * 20
    assert (reviews.token_calls, len(reviews.access_calls)) == (2, 2)  # 40 requests, 4 API calls
    clock.now += 30  # the denial expired (10 s), the allowance did not (60 s)
    assert asyncio.run(scrapes(1, "good")) + asyncio.run(scrapes(1, "other")) == [200, 403]
    assert (reviews.token_calls, len(reviews.access_calls)) == (3, 3)
    assert auth.stats.as_dict() == {"tokenReviews": 3, "accessReviews": 3, "cacheHits": 39, "allowed": 21,
                                    "unauthorized": 0, "forbidden": 21, "failed": 0}  # fmt: skip


def test_a_failed_review_is_500_and_asked_again() -> None:
    reviews = FakeAccessReviews(REVIEWS, frozenset({"prom"}), broken=True)
    auth = MetricsAuth(reviews)
    for _ in range(2):
        assert asyncio.run(auth.decide("Bearer good", "get", "/metrics")).status == 500
    assert reviews.token_calls == 2
    reviews.broken = False
    assert asyncio.run(auth.decide("Bearer good", "get", "/metrics")).status == 200


# --- the certificate ---------------------------------------------------------------------------------------


def test_mounted_cert_dir_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no tls\.crt or tls\.key"):
        serving_cert(str(tmp_path))
    (tmp_path / CERT_FILE).write_text("not a certificate")
    (tmp_path / KEY_FILE).write_text("not a key")
    with pytest.raises(InputError, match="cannot load it with its key") as err:
        serving_cert(str(tmp_path))
    assert "\n" not in str(err.value)


def test_self_signed_cert_is_private_and_under_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read $TMPDIR
    cert = serving_cert(None)
    assert cert.self_signed
    assert cert.cert_dir.parent == tmp_path
    assert (cert.cert_dir / KEY_FILE).stat().st_mode & 0o777 == 0o600


# --- a Runtime serving secure /metrics ---------------------------------------------------------------------


def _client_context(ca: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))  # verifies the chain and the host name "localhost"
    return ctx


def _secure_runtime(cert_dir: str | None) -> tuple[Runtime, FakeAccessReviews]:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0, debounce=0.05,
                  metrics_cert_dir=cert_dir)  # fmt: skip
    reviews = FakeAccessReviews(REVIEWS, frozenset({"prom"}))
    return Runtime(cfg, report_api=FakeReportApi(), reviews=reviews), reviews


@pytest.mark.parametrize("mounted", [False, True], ids=["self-signed", "mounted cert dir"])
def test_runtime_serves_metrics_over_https_to_authorized_tokens_only(tmp_path: Path, mounted: bool) -> None:
    if mounted:
        write_self_signed(tmp_path, ["spreadwatch.example"])
    rt, reviews = _secure_runtime(str(tmp_path) if mounted else None)

    async def main() -> dict[str, object]:
        await rt.start()
        Feeder(rt.router).feed(*web_cluster())
        assert rt.metrics_server is not None and rt.serving_cert is not None
        got: dict[str, object] = {"scheme": rt.metrics_server.scheme, "dir": rt.serving_cert.cert_dir}
        url = f"https://localhost:{rt.metrics_server.bound_port}/metrics"
        ctx = _client_context(rt.serving_cert.cert_dir / CERT_FILE)
        try:
            async with aiohttp.ClientSession() as session:
                for name, headers in [("none", {}), ("garbage", {"Authorization": "Bearer garbage"}),
                                      ("other", {"Authorization": "Bearer other"}),
                                      ("good", {"Authorization": "Bearer good"})]:  # fmt: skip
                    async with session.get(url, headers=headers, ssl=ctx) as resp:
                        got[name] = (resp.status, await resp.text(), resp.headers.get("WWW-Authenticate"))
                try:  # plain HTTP to the TLS port: no metrics
                    async with session.get(url.replace("https", "http")) as resp:
                        got["plain"] = resp.status
                except aiohttp.ClientError as err:
                    got["plain"] = type(err).__name__
                async with session.get(f"http://127.0.0.1:{rt.server.bound_port}/statusz") as resp:
                    got["statusz"] = await resp.json()
        finally:
            await rt.stop()
        return got

    got = asyncio.run(main())
    assert got["scheme"] == "https"
    assert got["none"] == (401, "Unauthorized: a bearer token is required\n", 'Bearer realm="spreadwatch"')
    assert got["garbage"] == (401, "Unauthorized\n", 'Bearer realm="spreadwatch"')
    assert got["other"] == (403, "Forbidden: user 'intruder' may not get /metrics\n", None)
    status, text, _ = got["good"]  # type: ignore[misc]
    assert status == 200 and "spreadwatch_workload_pods{" in text
    assert got["plain"] != 200
    assert got["statusz"]["metricsAuth"] == {"tokenReviews": 3, "accessReviews": 2, "cacheHits": 0, "allowed": 1,  # type: ignore[index]
                                             "unauthorized": 2, "forbidden": 1, "failed": 0, "cached": 3}  # fmt: skip
    assert reviews.access_calls == [("intruder", "get", "/metrics"), ("prom", "get", "/metrics")]
    assert Path(str(got["dir"])).exists() is mounted  # the self-signed directory is removed at stop


def test_secure_metrics_without_an_api_or_reviewer_fail_to_start() -> None:
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0)
    rt = Runtime(cfg, report_api=FakeReportApi())
    with pytest.raises(InputError, match="secure metrics need the Kubernetes API"):
        asyncio.run(rt.serve_probes())
