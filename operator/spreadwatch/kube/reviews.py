"""Delegated authentication and authorization of ``/metrics`` scrapers, as kube-rbac-proxy does.

* :func:`review_token`: who a bearer token belongs to (a TokenReview);
* :func:`review_access`: whether that user may ``get`` a non-resource URL (a SubjectAccessReview);
* :class:`AccessReviewClient`: both for the event loop (each call in a worker thread), what the operator's
  ``/metrics`` authorization asks.

One request each, no retries (a scrape waits for it); the caller caches the answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from spreadwatch.kube.retry import CONNECTION_ERRORS, api_error, run_sync

__all__ = ["AccessReviewClient", "ReviewedUser", "review_access", "review_token"]


@dataclass(frozen=True, slots=True)
class ReviewedUser:
    """Who a bearer token belongs to, as the API server's TokenReview says."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()  # sorted (key, values) pairs: hashable


_REVIEW_TIMEOUT: Final = (5.0, 10.0)  # (connect, read) seconds: a scrape waits for it, so no retries


def review_token(api: client.ApiClient, token: str) -> ReviewedUser | None:
    """Authenticate a bearer token: one ``create tokenreviews`` (authentication.k8s.io/v1) call, no retries.

    Returns the user, or None when the API server does not accept the token (unknown, expired, malformed).
    The API server's default audiences apply. Raises :class:`KubeApiError` when the review itself fails
    (no permission to create TokenReviews, API unreachable): the caller answers 500, not 401. O(1) calls.
    """
    body = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
    try:
        result = client.AuthenticationV1Api(api).create_token_review(body, _request_timeout=_REVIEW_TIMEOUT)
    except (ApiException, *CONNECTION_ERRORS) as err:
        raise api_error(err, "TokenReview") from None
    status = result.status
    if status is None or not status.authenticated or status.user is None or not status.user.username:
        return None
    user = status.user
    extra = tuple(sorted((k, tuple(v or ())) for k, v in (user.extra or {}).items()))
    return ReviewedUser(user.username, user.uid or "", tuple(user.groups or ()), extra)


def review_access(api: client.ApiClient, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]:
    """Authorize ``verb`` on the non-resource URL ``path`` for ``user``: one ``create subjectaccessreviews``
    (authorization.k8s.io/v1) call, no retries. Returns (allowed, the authorizer's reason). Raises
    :class:`KubeApiError` when the review itself fails. O(1) calls.
    """
    spec = client.V1SubjectAccessReviewSpec(
        user=user.name,
        uid=user.uid or None,
        groups=list(user.groups) or None,
        extra={k: list(v) for k, v in user.extra} or None,
        non_resource_attributes=client.V1NonResourceAttributes(path=path, verb=verb),
    )
    try:
        result = client.AuthorizationV1Api(api).create_subject_access_review(
            client.V1SubjectAccessReview(spec=spec), _request_timeout=_REVIEW_TIMEOUT
        )
    except (ApiException, *CONNECTION_ERRORS) as err:
        raise api_error(err, "SubjectAccessReview") from None
    status = result.status
    if status is None:
        return False, ""
    return bool(status.allowed) and not status.denied, status.reason or ""


class AccessReviewClient:
    """TokenReview and SubjectAccessReview through the operator's API client (each call in a worker thread):
    the ``AccessReviews`` the operator's ``/metrics`` authorization asks."""

    def __init__(self, api: client.ApiClient) -> None:
        self._api = api

    async def token(self, token: str) -> ReviewedUser | None:
        return await run_sync(review_token, self._api, token)

    async def access(self, user: ReviewedUser, verb: str, path: str) -> tuple[bool, str]:
        return await run_sync(review_access, self._api, user, verb, path)
