"""The report's prediction (``status.prediction``): where kube-scheduler's whole profile puts the next pod.

JSON (camelCase, a contract: docs/report.md)::

    prediction: {bestScore, bestNodes, bestNodeCount, feasibleNodes, nodes [{node, score, plugins {Plugin: n}}],
                 excludedNodes {Plugin: count}, [bestNodeProbability], spreadingAgrees, partial, [partialReasons]}

``nodes`` are the best-scoring feasible nodes (up to ``--top-nodes``, by total then name), each with every
score plugin's weighted score; ``excludedNodes`` counts the nodes each filter plugin rejected;
``bestNodeProbability`` is the chance the next pod lands on one of the best nodes when the scheduler scores
only a window of the feasible nodes (1 when it scores them all). ``spreadingAgrees`` is false when no best
node of the prediction is a best node of the spreading report: the other plugins (resources, images,
affinity) are defeating the spread. ``partial`` says the operator cannot see
everything the scheduler sees (``partialReasons``: ``Code: sentence``). No feasible node: ``bestNodes`` and
``nodes`` are empty and ``excludedNodes`` says why. A template the prediction cannot read (requests or affinity
terms the API server would refuse) makes the whole report Error instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import msgspec

__all__ = [
    "NAMESPACED_PARTIAL",
    "PREDICTION_PLACEMENTS",
    "PredictedNode",
    "Prediction",
    "json_number",
    "prediction_form",
]

#: the ``profile`` of spreadwatch_placements_total whose outcomes judge bindings against the prediction
PREDICTION_PLACEMENTS: Final = "prediction"
#: why every prediction is partial when the operator sees only some namespaces' pods
NAMESPACED_PARTIAL: Final = (
    "NamespacedMode: only the pods of the watched namespaces are seen (--namespace); pods of other namespaces "
    "also take nodes' resources and ports and match pod affinity terms"
)


class PredictedNode(NamedTuple):
    """One listed feasible node: its total and each score plugin's weighted score (in the profile's order)."""

    node: str
    score: int
    plugins: tuple[tuple[str, int], ...]


class Prediction(msgspec.Struct, frozen=True, gc=False):
    """The whole profile's prediction of one workload's next pod (see the module docstring)."""

    best_score: int = 0
    best_nodes: tuple[str, ...] = ()
    best_node_count: int = 0
    feasible_nodes: int = 0
    nodes: tuple[PredictedNode, ...] = ()
    excluded_nodes: Mapping[str, int] = msgspec.field(default_factory=dict)
    best_node_probability: float | None = None
    partial_reasons: tuple[str, ...] = ()
    spreading_agrees: bool = True

    @property
    def partial(self) -> bool:
        return bool(self.partial_reasons)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form. O(listed nodes × plugins)."""
        return prediction_form(self)


def json_number(value: float) -> float | int:
    """A probability as the API server stores it: an integral one (0, 1) as an integer, so a status read back
    has the same content digest as the one written (``1.0`` comes back as ``1``). O(1)."""
    return int(value) if value.is_integer() else value


def prediction_form(p: Prediction) -> dict[str, Any]:
    """:meth:`Prediction.to_dict` (a function: the report's JSON form calls it per report). O(listed nodes)."""
    out: dict[str, Any] = {
        "bestScore": p.best_score,
        "bestNodes": list(p.best_nodes),
        "bestNodeCount": p.best_node_count,
        "feasibleNodes": p.feasible_nodes,
        "nodes": [{"node": n.node, "score": n.score, "plugins": dict(n.plugins)} for n in p.nodes],
        "excludedNodes": dict(p.excluded_nodes),
    }
    if p.best_node_probability is not None:
        out["bestNodeProbability"] = json_number(p.best_node_probability)
    out["spreadingAgrees"] = p.spreading_agrees
    out["partial"] = p.partial
    if p.partial_reasons:
        out["partialReasons"] = list(p.partial_reasons)
    return out
