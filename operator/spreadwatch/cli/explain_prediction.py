"""The whole scheduler profile's prediction as ``spreadwatch predict`` and ``explain`` print it.

The table has one row per feasible node (best first): its total and each score plugin's weighted score, then
the excluded nodes counted by the filter plugin that rejected them, what the prediction cannot see
(``partial``) and why the scheduler cannot place the pod (``error``). The JSON document
(:func:`prediction_document`) holds every node's plugin scores and every excluded node. O(nodes × plugins).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, TextIO

from spreadwatch.cli.output import table
from spreadwatch.scoring.prediction import PodPrediction
from spreadwatch.scoring.scheduler_profile import SchedulerProfile

__all__ = ["prediction_document", "ranked_nodes", "write_prediction"]


def ranked_nodes(prediction: PodPrediction) -> list[str]:
    """The feasible nodes by total (highest first), then name. O(n log n)."""
    return sorted(prediction.totals, key=lambda n: (-prediction.totals[n], n))


def prediction_document(prediction: PodPrediction, pod: str, scheduler: SchedulerProfile) -> dict[str, Any]:
    """The JSON form: ``pod``, ``profile`` (its ``filters`` in order and score plugin ``weights``),
    ``bestScore``, ``bestNodes`` (all, sorted), ``bestNodeCount``, ``nodes`` (every feasible node, best first:
    ``{node, score, plugins}``), ``plugins`` (the score plugins that ran), ``excluded`` (node → plugin),
    ``excludedNodes`` (plugin → count), ``bestNodeProbability`` (the scheduler's window), ``partial``,
    ``error``."""
    best = prediction.best_nodes
    return {
        "pod": pod,
        "profile": {"source": scheduler.source, "filters": list(scheduler.filters), "weights": dict(scheduler.scores)},
        "bestScore": prediction.best_score,
        "bestNodes": list(best),
        "bestNodeCount": len(best),
        "nodes": [
            {"node": n, "score": prediction.totals[n], "plugins": dict(prediction.scores[n])}
            for n in ranked_nodes(prediction)
        ],
        "plugins": list(prediction.plugins),
        "excluded": dict(sorted(prediction.excluded.items())),
        "excludedNodes": dict(sorted(Counter(prediction.excluded.values()).items())),
        "bestNodeProbability": prediction.probability,
        "partial": list(prediction.partial),
        "error": prediction.error,
    }


def write_prediction(
    prediction: PodPrediction, scheduler: SchedulerProfile, out: TextIO, limit: int = 0, nodes: Sequence[str] = ()
) -> None:
    """The per-plugin table (at most ``limit`` rows, 0: every feasible node; ``nodes``: shown too, wherever
    they rank, or the plugin that filtered them), the excluded nodes and what the prediction cannot see."""
    weights = ", ".join(f"{name} x{w}" for name, w in scheduler.scores)
    out.write(f"Profile:     {scheduler.source}: {weights}\n")
    if prediction.error:
        out.write(f"Error:       {prediction.error} (kube-scheduler cannot place the pod)\n")
        return
    excluded = Counter(prediction.excluded.values())
    if excluded:
        out.write("Excluded:    " + ", ".join(f"{p} {n}" for p, n in sorted(excluded.items())) + "\n")
    for reason in prediction.partial:
        out.write(f"Partial:     {reason}\n")
    if not prediction.totals:
        out.write("Prediction:  no feasible node: the pod stays Pending\n")
        for node in dict.fromkeys(nodes):
            where = prediction.excluded.get(node)
            out.write(f"{node}: filtered by {where}\n" if where else f"{node}: not a node of the cluster\n")
        return
    best = prediction.best_nodes
    shown = ", ".join(best[:5]) + (f" (+{len(best) - 5} more)" if len(best) > 5 else "")
    out.write(f"Prediction:  {shown} (total {prediction.best_score}; the scheduler picks one of these)\n")
    if prediction.probability is not None and prediction.probability < 1:
        out.write(f"Window:      the scheduler scores only part of the feasible nodes: P(a best node in its window) "
                  f"= {prediction.probability:g}\n")  # fmt: skip
    skipped = [name for name, _ in scheduler.scores if name not in prediction.plugins]
    if skipped:
        out.write(f"Skipped:     {', '.join(skipped)} (PreScore skips them for this pod)\n")
    out.write("\n")
    rows: list[list[object]] = [["NODE", "TOTAL", *prediction.plugins]]
    ranked = ranked_nodes(prediction)
    listed = ranked[:limit] if limit else ranked
    extra = [n for n in dict.fromkeys(nodes) if n in prediction.totals and n not in listed]
    for node in [*listed, *sorted(extra, key=ranked.index)]:
        by_plugin = prediction.scores[node]
        rows.append([node, prediction.totals[node], *(by_plugin.get(p, "-") for p in prediction.plugins)])
    table(rows, out)
    if limit and len(ranked) > len(listed) + len(extra):
        out.write(f"... {len(ranked) - len(listed) - len(extra)} more feasible nodes (--all-nodes lists them)\n")
    for node in dict.fromkeys(nodes):
        if node in prediction.excluded:
            out.write(f"{node}: filtered by {prediction.excluded[node]}\n")
        elif node not in prediction.totals:
            out.write(f"{node}: not a node of the cluster\n")
    out.write("\n")
