"""The SpreadReport ``status`` the operator writes (pure; no I/O).

``status = report.to_dict()`` (docs/report.md; with the operator's ``lastPlacement`` check, which changes the
digest: a status is rewritten once per checked placement) plus:

* ``conditions``: one metav1.Condition of type ``Balanced`` — status ``True`` (health Balanced), ``False``
  (Imbalanced, SinglePointOfFailure, ZoneOutageUnsafe) or ``Unknown`` (Skipped, Error); ``reason`` is the health value
  (CamelCase); ``message`` the report's reasons joined with ``"; "`` (or a short sentence);
  ``lastTransitionTime`` changes only when the condition's status or reason changes; ``observedGeneration``;
* ``observedGeneration``: the workload's ``metadata.generation`` the report was computed from;
* ``lastUpdateTime``: when the status was written.

:func:`content_digest` identifies a status without ``lastUpdateTime``: the writer skips a write when the
digest did not change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

import orjson

from spreadwatch.report import Health, SpreadReport
from spreadwatch.timestamps import rfc3339

__all__ = [
    "CONDITION_TYPE",
    "balanced_condition",
    "build_status",
    "content_digest",
    "find_condition",
    "kept_condition",
    "rfc3339",
    "workload_ref",
]

CONDITION_TYPE: Final = "Balanced"

_STATUS: Final = {
    Health.BALANCED: "True",
    Health.IMBALANCED: "False",
    Health.SINGLE_POINT_OF_FAILURE: "False",
    Health.UNSCHEDULABLE: "False",
    Health.ZONE_OUTAGE_UNSAFE: "False",
    Health.SKIPPED: "Unknown",
    Health.ERROR: "Unknown",
}


def _message(report: SpreadReport) -> str:
    if report.reasons:
        return "; ".join(report.reasons)
    if report.health is Health.SKIPPED:
        return f"the profile skips this workload's pods: {report.skip_reason}" if report.skip_reason else "skipped"
    if report.health is Health.BALANCED:
        return (
            f"{report.pods} pod(s) spread over the candidate nodes within the skew limits "
            f"(node skew {report.node_skew}, zone skew {report.zone_skew})"
        )
    return report.health.value


def balanced_condition(
    report: SpreadReport, generation: int, previous: Mapping[str, Any] | None, now: str
) -> dict[str, Any]:
    """The ``Balanced`` condition; keeps ``previous``'s lastTransitionTime when status and reason match."""
    status = _STATUS[report.health]
    reason = report.health.value
    since = now
    if (
        previous is not None
        and previous.get("status") == status
        and previous.get("reason") == reason
        and isinstance(previous.get("lastTransitionTime"), str)
    ):
        since = previous["lastTransitionTime"]
    return {
        "type": CONDITION_TYPE,
        "status": status,
        "reason": reason,
        "message": _message(report)[:32768],
        "lastTransitionTime": since,
        "observedGeneration": max(0, generation),
    }


def build_status(
    report: SpreadReport, generation: int, previous_condition: Mapping[str, Any] | None, now: str | None = None
) -> dict[str, Any]:
    """The full status of a SpreadReport."""
    stamp = now or rfc3339()
    status = report.to_dict()
    status["conditions"] = [balanced_condition(report, generation, previous_condition, stamp)]
    status["observedGeneration"] = max(0, generation)
    status["lastUpdateTime"] = stamp
    return status


def find_condition(status: Mapping[str, Any] | None, kind: str = CONDITION_TYPE) -> Mapping[str, Any] | None:
    """The condition of that type in a status read back from the API (None when absent/malformed)."""
    if not isinstance(status, Mapping):
        return None
    for cond in status.get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == kind:
            return cond
    return None


#: what :func:`balanced_condition` reads of a previous condition (and its type)
_KEPT_CONDITION_FIELDS: Final = ("type", "status", "reason", "lastTransitionTime")


def kept_condition(condition: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the writer keeps of a report's condition between writes: the fields :func:`balanced_condition`
    compares and carries over, not its message (a few hundred bytes a report: ~5 MiB at 10,000 reports).
    O(1)."""
    if condition is None:
        return None
    return {k: condition[k] for k in _KEPT_CONDITION_FIELDS if k in condition}


def content_digest(status: Mapping[str, Any]) -> bytes:
    """Digest of a status without ``lastUpdateTime`` (key order does not matter)."""
    content = {k: v for k, v in status.items() if k != "lastUpdateTime"}
    return hashlib.blake2b(orjson.dumps(content, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()


def workload_ref(report: SpreadReport) -> dict[str, str]:
    """``spec.workloadRef`` / ownerReference source: apiVersion, kind, namespace, name, uid."""
    w = report.workload
    return {"apiVersion": w.api_version, "kind": w.kind, "namespace": w.namespace, "name": w.name, "uid": w.uid}
