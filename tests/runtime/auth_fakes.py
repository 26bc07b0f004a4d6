"""A stand-in for the API server's TokenReview/SubjectAccessReview in unit and monitoring tests (the e2e
tests use the real ones): a table of tokens → users and the users allowed to ``get /metrics``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from spreadwatch.errors import KubeApiError
from spreadwatch.kube import ReviewedUser


@dataclass
class FakeAccessReviews:
    """``tokens``: token → user name; ``allowed``: user names allowed every verb on every path;
    ``broken``: every review raises KubeApiError (the API server refuses or is unreachable)."""

    tokens: Mapping[str, str] = field(default_factory=dict)
    allowed: frozenset[str] = frozenset()
    broken: bool = False
    token_calls: int = 0
    access_calls: list[tuple[str, str, str]] = field(default_factory=list)

    async def token(self, token: str) -> ReviewedUser | None:
        self.token_calls += 1
        if self.broken:
            raise KubeApiError("TokenReview: HTTP 403 Forbidden", 403)
        name = self.tokens.get(token)
        return ReviewedUser(name, uid=f"uid-{name}", groups=("system:authenticated",)) if name else None

    async def access(self, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]:
        self.access_calls.append((user.name, verb, path))
        return user.name in self.allowed, "" if user.name in self.allowed else "no RBAC rule"
