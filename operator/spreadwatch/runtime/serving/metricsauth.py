"""Kubernetes authentication and authorization of ``/metrics`` requests (the kube-rbac-proxy pattern).

Every request must carry ``Authorization: Bearer <token>``. The token is authenticated with a TokenReview
and the user it names is authorized with a SubjectAccessReview for the request's verb (``get``) on the
non-resource URL (``/metrics``), both sent to the API server through :mod:`spreadwatch.kube`. Answers, as
controller-runtime's ``WithAuthenticationAndAuthorization`` filter gives them:

* 401 ``Unauthorized`` — no bearer token, or one the API server does not accept;
* 403 ``Forbidden`` — a valid token whose user may not ``get`` the path (grant the chart's
  ``<fullname>-metrics-reader`` ClusterRole);
* 500 — the review itself failed (the operator may not create TokenReviews/SubjectAccessReviews: it needs
  ``system:auth-delegator``; or the API server is unreachable). Not cached: the next scrape asks again.

Decisions are cached per (SHA-256 of the token, verb, path) in a bounded TTL cache (``cachetools``):
allowed for ``allow_ttl`` (60 s), 401/403 for ``deny_ttl`` (10 s), at most ``max_entries`` (1,024) tokens,
least recently used evicted first. So a Prometheus scraping every 30 s costs two API calls per token per
minute at most; a revoked permission or token stops working within ``allow_ttl``. A lookup is O(1); a miss
costs two API calls (one when the token is rejected), run in worker threads, never blocking the event loop.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from aiohttp import typedefs, web
from cachetools import TLRUCache

from spreadwatch.errors import SpreadwatchError
from spreadwatch.jsonform import json_form

if TYPE_CHECKING:  # (a type only: the reviews themselves are passed in)
    from spreadwatch.kube import ReviewedUser

__all__ = [
    "DEFAULT_ALLOW_TTL",
    "DEFAULT_DENY_TTL",
    "DEFAULT_MAX_ENTRIES",
    "AccessReviews",
    "AuthStats",
    "Decision",
    "DecisionCache",
    "MetricsAuth",
]

log = logging.getLogger("spreadwatch.metricsauth")

DEFAULT_ALLOW_TTL: Final = 60.0  # seconds an allowed token is trusted without asking the API server again
DEFAULT_DENY_TTL: Final = 10.0  # seconds a 401/403 is remembered
DEFAULT_MAX_ENTRIES: Final = 1024


class AccessReviews(Protocol):
    """What :class:`MetricsAuth` asks the API server (``kube.AccessReviewClient``; a fake in unit tests)."""

    async def token(self, token: str) -> ReviewedUser | None: ...

    async def access(self, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]: ...


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to one request: 200 (serve it), 401, 403 or 500, with the user (if known) and why."""

    status: int
    user: str = ""
    message: str = ""

    @property
    def allowed(self) -> bool:
        return self.status == 200


CacheKey = tuple[bytes, str, str]


class DecisionCache:
    """Bounded TTL cache of decisions keyed by (SHA-256 of the token, verb, path); never holds a token.

    ``timer`` is the clock in seconds (``time.monotonic``; a fake one in tests). O(1) per lookup/insert;
    memory O(max_entries).
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        allow_ttl: float = DEFAULT_ALLOW_TTL,
        deny_ttl: float = DEFAULT_DENY_TTL,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or allow_ttl <= 0 or deny_ttl <= 0:
            raise ValueError("the decision cache needs max_entries >= 1 and TTLs > 0")
        self.allow_ttl = allow_ttl
        self.deny_ttl = deny_ttl

        def expires(_key: CacheKey, decision: Decision, now: float) -> float:
            return now + (allow_ttl if decision.allowed else deny_ttl)

        self._cache: TLRUCache[CacheKey, Decision] = TLRUCache(maxsize=max_entries, ttu=expires, timer=timer)

    @staticmethod
    def key(token: str, verb: str, path: str) -> CacheKey:
        return hashlib.sha256(token.encode()).digest(), verb, path

    def get(self, token: str, verb: str, path: str) -> Decision | None:
        return self._cache.get(self.key(token, verb, path))

    def put(self, token: str, verb: str, path: str, decision: Decision) -> None:
        if decision.status in (200, 401, 403):  # never cache a failed review
            self._cache[self.key(token, verb, path)] = decision

    def __len__(self) -> int:
        self._cache.expire()
        return len(self._cache)


_ANSWERS: Final = {200: "allowed", 401: "unauthorized", 403: "forbidden"}  # any other status: "failed"


@dataclass(slots=True)
class AuthStats:
    """Counters for ``/statusz`` (and tests): reviews sent and how requests were answered (``answers``:
    allowed, unauthorized, forbidden, failed)."""

    token_reviews: int = 0
    access_reviews: int = 0
    cache_hits: int = 0
    answers: Counter[str] = field(default_factory=Counter)

    def count(self, decision: Decision) -> Decision:
        """Count how ``decision`` answers its request; returns it. O(1)."""
        self.answers[_ANSWERS.get(decision.status, "failed")] += 1
        return decision

    def as_dict(self) -> dict[str, int]:
        counts: dict[str, int] = _REVIEWS_FORM(self)
        return counts | {answer: self.answers[answer] for answer in (*_ANSWERS.values(), "failed")}


_REVIEWS_FORM = json_form(AuthStats, ("token_reviews", "access_reviews", "cache_hits"))


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class MetricsAuth:
    """Decides each request (:meth:`decide`) and guards a server's routes (:meth:`middleware`)."""

    def __init__(self, reviews: AccessReviews, cache: DecisionCache | None = None) -> None:
        self.reviews = reviews
        self.cache = cache if cache is not None else DecisionCache()
        self.stats = AuthStats()

    async def decide(self, authorization: str | None, verb: str, path: str) -> Decision:
        """The decision for a request with this ``Authorization`` header. O(1) on a cache hit, else 1–2 API
        calls."""
        token = _bearer(authorization)
        if token is None:
            return self.stats.count(Decision(401, message="Unauthorized: a bearer token is required"))
        cached = self.cache.get(token, verb, path)
        if cached is not None:
            self.stats.cache_hits += 1
            return self.stats.count(cached)
        decision = await self._review(token, verb, path)
        self.cache.put(token, verb, path, decision)
        return self.stats.count(decision)

    async def _review(self, token: str, verb: str, path: str) -> Decision:
        try:
            self.stats.token_reviews += 1
            user = await self.reviews.token(token)
            if user is None:
                return Decision(401, message="Unauthorized")
            self.stats.access_reviews += 1
            allowed, reason = await self.reviews.access(user, verb, path)
        except SpreadwatchError as err:
            log.warning("cannot authorize a %s %s request: %s", verb, path, err)
            return Decision(500, message="Authorization failed: the API server could not review the request")
        if not allowed:
            log.debug("denied %s %s to %s: %s", verb, path, user.name, reason)
            return Decision(403, user.name, f"Forbidden: user {user.name!r} may not {verb} {path}")
        return Decision(200, user.name)

    @web.middleware
    async def middleware(self, request: web.Request, handler: typedefs.Handler) -> web.StreamResponse:
        """aiohttp middleware: serve the request only when :meth:`decide` allows it."""
        decision = await self.decide(request.headers.get("Authorization"), request.method.lower(), request.path)
        if decision.allowed:
            return await handler(request)
        headers = {"WWW-Authenticate": 'Bearer realm="spreadwatch"'} if decision.status == 401 else None
        return web.Response(status=decision.status, text=decision.message + "\n", headers=headers)
