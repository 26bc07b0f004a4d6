"""Failed API requests by HTTP status: the counter behind ``spreadwatch_api_errors_total``."""

from __future__ import annotations

import threading

__all__ = ["ApiErrors"]


class ApiErrors:
    """Failed API requests by HTTP status ("0": no HTTP answer). :meth:`note` is ``kube.ReportClient``'s
    ``on_request`` hook, called from worker threads, hence the lock. O(1)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_code: dict[str, int] = {}

    def note(self, verb: str, outcome: str) -> None:
        """One request's outcome: "ok", an HTTP status, or anything else for a connection error."""
        if outcome == "ok":
            return
        code = outcome if outcome.isdigit() else "0"
        with self._lock:
            self._by_code[code] = self._by_code.get(code, 0) + 1

    def by_code(self) -> dict[str, int]:
        """A copy of the counts by code. O(codes seen)."""
        with self._lock:
            return dict(self._by_code)
