"""TaintToleration's score (``pkg/scheduler/framework/plugins/tainttoleration``, v1.36.4): per node, the
``PreferNoSchedule`` taints none of the pod's tolerations (those with effect PreferNoSchedule or none)
tolerates; NormalizeScore reverses them against the highest count over the scored nodes
(``helper.DefaultNormalizeScore(100, reverse=true)``: all 100 when no node has one). Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from spreadwatch.model import PodTemplate, Taint, Toleration
from spreadwatch.scoring.gomath import go_div

__all__ = ["TAINT_TOLERATION", "default_normalize", "intolerable_taints", "prefer_no_schedule_tolerations"]

TAINT_TOLERATION: Final = "TaintToleration"
_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"


def prefer_no_schedule_tolerations(template: PodTemplate) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: the tolerations with effect PreferNoSchedule or none. O(n)."""
    return tuple(t for t in template.tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE)


def intolerable_taints(taints: Iterable[Taint], tolerations: tuple[Toleration, ...]) -> int:
    """``countIntolerableTaintsPreferNoSchedule``: the node's raw score. O(taints × tolerations)."""
    preferred = (taint for taint in taints if taint.effect == _PREFER_NO_SCHEDULE)
    return sum(1 for taint in preferred if not any(t.tolerates(taint) for t in tolerations))


def default_normalize(raw: Mapping[str, int], reverse: bool) -> dict[str, int]:
    """``helper.DefaultNormalizeScore(100, reverse, scores)``: each score × 100 / the maximum (reversed: 100
    minus it); with no positive score, the scores as they are (all 100 reversed). O(nodes)."""
    top = max(0, max(raw.values(), default=0))
    if top == 0:
        return dict.fromkeys(raw, 100) if reverse else dict(raw)
    if reverse:
        return {node: 100 - go_div(100 * score, top) for node, score in raw.items()}
    return {node: go_div(100 * score, top) for node, score in raw.items()}
