"""How one API call is made: timeouts, retries with backoff, one-line errors, worker threads.

* :class:`RetryPolicy` / :func:`call_with_retries` / :func:`retrying`: exponential backoff with full jitter
  on 429, 5xx, 409 Conflict (not AlreadyExists) and connection errors; a ``Retry-After`` header wins;
* :func:`api_error` / :func:`describe`: a client exception as one line (:class:`~spreadwatch.errors.KubeApiError`);
* :func:`run_sync`: a blocking client call from the operator's event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, ParamSpec, TypeVar

import orjson
import urllib3
from kubernetes.client.exceptions import ApiException

from spreadwatch.errors import KubeApiError

__all__ = [
    "CONNECTION_ERRORS",
    "DEFAULT_RETRY",
    "REQUEST_TIMEOUT",
    "RetryPolicy",
    "api_error",
    "call_with_retries",
    "describe",
    "retrying",
    "run_sync",
]

log = logging.getLogger("spreadwatch.kube")

P = ParamSpec("P")
T = TypeVar("T")

#: (connect, read) seconds for every non-watch request.
REQUEST_TIMEOUT: Final = (5.0, 30.0)
_MESSAGE_CHARS: Final = 300  # of a server error's message in the one-line error
#: What a request raises when no HTTP answer came back.
CONNECTION_ERRORS: Final = (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, OSError)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n sleeps uniform(0, min(cap, base * 2**n)) seconds."""

    attempts: int = 6
    base: float = 0.2
    cap: float = 10.0
    retry_statuses: frozenset[int] = frozenset({409, 429, 500, 502, 503, 504})

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1``. O(1)."""
        return random.uniform(0, min(self.cap, self.base * (2**attempt)))  # jitter, not cryptography


DEFAULT_RETRY: Final = RetryPolicy()


def _retryable(err: BaseException, policy: RetryPolicy) -> bool:
    if isinstance(err, ApiException):
        if err.status == 409 and _reason(err) == "AlreadyExists":
            return False
        return err.status in policy.retry_statuses or err.status == 0
    return isinstance(err, CONNECTION_ERRORS)


def _reason(err: ApiException) -> str:
    try:
        body = orjson.loads(err.body) if err.body else {}
    except orjson.JSONDecodeError:
        return ""
    reason = body.get("reason", "") if isinstance(body, dict) else ""
    return reason if isinstance(reason, str) else ""


def _message(err: ApiException) -> str:
    """The first line of the ``message`` of the Status the server sent ("" when there is none)."""
    try:
        body = orjson.loads(err.body) if err.body else {}
    except orjson.JSONDecodeError:
        return ""
    message = body.get("message", "") if isinstance(body, dict) else ""
    return message.splitlines()[0] if isinstance(message, str) and message else ""


def _retry_after(err: BaseException) -> float | None:
    if isinstance(err, ApiException) and err.headers:
        raw = err.headers.get("Retry-After")
        with contextlib.suppress(TypeError, ValueError):
            return min(float(raw), 30.0)
    return None


def call_with_retries(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Call ``fn`` with :data:`DEFAULT_RETRY`; re-raise the last error when the attempts run out."""
    return retrying(DEFAULT_RETRY, fn, *args, **kwargs)


def retrying(policy: RetryPolicy, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Call ``fn`` until it returns, an error is not retryable, or ``policy.attempts`` calls failed (then the
    last error is raised). At most ``policy.attempts`` calls and as many sleeps less one."""
    attempt = 0
    while True:
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            if attempt + 1 >= policy.attempts or not _retryable(err, policy):
                raise
            pause = _retry_after(err) or policy.delay(attempt)
            log.debug("retrying %s in %.2fs after %s", getattr(fn, "__name__", "call"), pause, describe(err))
            time.sleep(pause)
            attempt += 1


def describe(err: BaseException) -> str:
    """A client error in a few words: ``HTTP 403 Forbidden``, ``HTTP 500 InternalError: <the server's message>``
    for a server error (e.g. an apply naming a field the CRD lacks), ``MaxRetryError: <first line>``. O(1)."""
    if isinstance(err, ApiException):
        status = f"HTTP {err.status} {_reason(err) or err.reason}".strip()
        message = _message(err) if err.status and err.status >= 500 else ""
        return f"{status}: {message[:_MESSAGE_CHARS]}" if message else status
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}"


def api_error(err: BaseException, what: str) -> KubeApiError:
    """A one-line KubeApiError (``what: HTTP 404 NotFound``) for an exception of the client."""
    if isinstance(err, ApiException):
        return KubeApiError(f"{what}: {describe(err)}", err.status, _reason(err))
    return KubeApiError(f"{what}: {describe(err)}")


async def run_sync(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking client call in a worker thread (for the operator's event loop)."""
    return await asyncio.to_thread(fn, *args, **kwargs)
