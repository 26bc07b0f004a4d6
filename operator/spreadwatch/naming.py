"""SpreadReport object names (pure).

A workload's report lives in the workload's namespace and is named ``<kind-lowercase>-<workload-name>``
(``deployment-web``, ``statefulset-db``). Names longer than the 253 characters a Kubernetes object name
allows are cut to their first 243 (253 − 10) characters, plus ``-`` and the first 8 hex digits of the
SHA-256 of the full name: stable across restarts and replicas, and distinct for workloads that share the
first 243 characters.
Workload names are DNS subdomains already, so the result is one too (a cut never leaves a trailing ``.``
or ``-`` before the suffix).
"""

from __future__ import annotations

import hashlib
from typing import Final

__all__ = ["MAX_NAME_LENGTH", "report_name", "workload_of_report_name"]

MAX_NAME_LENGTH: Final = 253
_HASH_LENGTH: Final = 8
_PREFIX: Final = MAX_NAME_LENGTH - 10  # 243 characters, then "-" and the hash


def report_name(kind: str, name: str) -> str:
    """The SpreadReport name of a workload; at most 253 characters, deterministic."""
    full = f"{kind.lower()}-{name}"
    if len(full) <= MAX_NAME_LENGTH:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:_HASH_LENGTH]
    head = full[:_PREFIX].rstrip(".-")
    return f"{head}-{digest}"


def workload_of_report_name(report: str, kinds: tuple[str, ...]) -> tuple[str, str] | None:
    """(kind, name) for an unshortened report name, or None (shortened or not ours).

    Used only as a fallback when a report has no ``spec.workloadRef``.
    """
    for kind in kinds:
        prefix = kind.lower() + "-"
        if report.startswith(prefix) and len(report) > len(prefix):
            name = report[len(prefix) :]
            if report_name(kind, name) == report:
                return kind, name
    return None
