"""The chance that kube-scheduler's window of scored nodes holds one of the prediction's best nodes.

From 100 nodes on, kube-scheduler (``findNodesThatPassFilters`` and ``numFeasibleNodesToFind`` in
pkg/scheduler/schedule_one.go, v1.36.4) examines the nodes in its snapshot's order (:func:`~spreadwatch.
scoring.window.scheduler_order`) from a start index that rotates from pod to pod, stops once ``window``
nodes passed every filter, and scores only those. The model (as the spreading report's, docs/scoring.md §11):
the start is uniform over the ``n`` nodes, the window is the first ``window`` feasible nodes at or after it
(cyclic), and the pod lands on a best node when the window holds one. That treats every node's total as the
window's: NodeResourcesFit, BalancedAllocation and ImageLocality are per node, but TaintToleration,
NodeAffinity, InterPodAffinity and PodTopologySpread normalise over the nodes scored, so inside a window the
order of nearly equal nodes can differ; the figure is the window's reach, not a simulation of each window.

:func:`window_hit_probability` is the reference (pure Python, O(feasible nodes)); the index computes the same
in numpy from cached prefix sums (:func:`prefix_gaps`, :func:`hit_probability`), and a property test keeps
the two equal.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["few_hit_probability", "hit_probability", "prefix_gaps", "window_hit_probability"]

Int64s = npt.NDArray[np.int64]


def window_hit_probability(feasible: Sequence[int], best: Sequence[int], all_nodes: int, window: int) -> float | None:
    """The share of start positions whose window holds a best node. ``feasible``: the feasible nodes'
    positions in the scheduler's order, ascending; ``best``: the best nodes' (a subset); ``all_nodes``: the
    nodes in the order; ``window``: nodes scored per pod. 1.0 when every feasible node is scored; None without
    a feasible node. O(feasible)."""
    count = len(feasible)
    if count == 0:
        return None
    if window >= count:
        return 1.0
    is_best = set(best)
    marks = [p in is_best for p in feasible]
    # distance (in feasible nodes) from each feasible index to the next best one at or after it, cyclic
    distance = [count] * count
    nearest = None
    for j in range(2 * count - 1, -1, -1):
        i = j % count
        if marks[i]:
            nearest = j
        if nearest is not None and j < count:
            distance[i] = nearest - j
    hit = 0
    for j in range(count):
        # the starts that land on feasible index j: the positions after the previous feasible node up to it
        gap = feasible[j] - feasible[j - 1] if j else feasible[0] + all_nodes - feasible[-1]
        if distance[j] < window:
            hit += gap
    return hit / all_nodes


def prefix_gaps(feasible: Int64s, all_nodes: int) -> Int64s:
    """Prefix sums of the starts landing on each feasible index, over the feasible order laid twice (so a
    cyclic range is one slice): ``out[j + 1] - out[i]`` starts land on indexes ``i..j``. O(feasible)."""
    gaps = np.empty(len(feasible), dtype=np.int64)
    if len(feasible):
        gaps[0] = feasible[0] + all_nodes - feasible[-1]
        gaps[1:] = np.diff(feasible)
    return np.concatenate(([0], np.cumsum(np.concatenate((gaps, gaps)))))


def hit_probability(feasible: Int64s, prefix: Int64s, best: Int64s, all_nodes: int, window: int) -> float | None:
    """:func:`window_hit_probability` from ``feasible`` (ascending positions), its :func:`prefix_gaps` and the
    best nodes' positions (any order). O(best log best) in numpy."""
    count = len(feasible)
    if count == 0:
        return None
    if window >= count:
        return 1.0
    b = np.sort(np.searchsorted(feasible, best))
    if len(b) == 0:
        return 0.0
    # the start indexes whose window reaches b[i]: (b[i] - window, b[i]], cut at the previous best one
    previous = np.concatenate(([b[-1] - count], b[:-1]))
    low = np.maximum(b - window + 1, previous + 1)
    high = b + 1
    shift = np.where(low < 0, count, 0)  # a range starting before index 0 is read in the second lap
    hit = prefix[high + shift] - prefix[low + shift]
    return float(hit.sum()) / all_nodes


def few_hit_probability(
    feasible: Sequence[int] | Int64s, prefix: Sequence[int] | Int64s, best: Sequence[int], all_nodes: int, window: int
) -> float | None:
    """:func:`hit_probability` in Python for a few best nodes (no array operation). O(best × log feasible)."""
    count = len(feasible)
    if count == 0:
        return None
    if window >= count:
        return 1.0
    b = sorted(bisect_left(feasible, p) for p in best)
    if not b:
        return 0.0
    hit = 0
    previous = b[-1] - count
    for j in b:
        low = max(j - window + 1, previous + 1)
        shift = count if low < 0 else 0
        hit += int(prefix[j + 1 + shift]) - int(prefix[low + shift])
        previous = j
    return hit / all_nodes
