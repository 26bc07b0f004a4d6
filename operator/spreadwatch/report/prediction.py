"""The report's prediction (``status.prediction``): where kube-scheduler's whole profile puts the next pod.

JSON (camelCase, a contract: docs/report.md)::

    prediction: {bestScore, bestNodes, bestNodeCount, feasibleNodes, nodes [{node, score, plugins {Plugin: n}}],
                 excludedNodes {Plugin: count}, [bestNodeProbability], partial, [partialReasons], [error]}

``nodes`` are the best-scoring feasible nodes (up to ``--top-nodes``, by total then name), each with every
score plugin's weighted score; ``excludedNodes`` counts the nodes each filter plugin rejected;
``bestNodeProbability`` is the chance the next pod lands on one of the best nodes when the scheduler scores
only a window of the feasible nodes (1 when it scores them all). ``partial`` says the operator cannot see
everything the scheduler sees (``partialReasons``: ``Code: sentence``); ``error`` why the scheduler cannot
place the pod at all (then nothing else is set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import msgspec

__all__ = ["PredictedNode", "Prediction", "prediction_form"]


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
    error: str = ""

    @property
    def partial(self) -> bool:
        return bool(self.partial_reasons)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form. O(listed nodes × plugins)."""
        return prediction_form(self)


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def prediction_form(p: Prediction) -> dict[str, Any]:
    """:meth:`Prediction.to_dict` (a function: the report's JSON form calls it per report). O(listed nodes)."""
    if p.error:
        return {"error": p.error, "partial": p.partial, **({"partialReasons": list(p.partial_reasons)}
                                                            if p.partial_reasons else {})}  # fmt: skip
    out: dict[str, Any] = {
        "bestScore": p.best_score,
        "bestNodes": list(p.best_nodes),
        "bestNodeCount": p.best_node_count,
        "feasibleNodes": p.feasible_nodes,
        "nodes": [{"node": n.node, "score": n.score, "plugins": dict(n.plugins)} for n in p.nodes],
        "excludedNodes": dict(p.excluded_nodes),
    }
    if p.best_node_probability is not None:
        out["bestNodeProbability"] = _number(p.best_node_probability)
    out["partial"] = p.partial
    if p.partial_reasons:
        out["partialReasons"] = list(p.partial_reasons)
    return out
