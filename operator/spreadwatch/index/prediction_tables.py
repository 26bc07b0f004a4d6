"""Nodes that score alike, per request shape: what lets a prediction skip most nodes.

Most workloads' next pods meet only the per-node scores that depend on the node and the pod's requests
(NodeResourcesFit, BalancedAllocation: the *base*), a per-group constant (PodTopologySpread's score of a
node without matching pods depends only on its topology domains; TaintToleration's only on how many of its
PreferNoSchedule taints the pod does not tolerate) and a few nodes of their own (the nodes holding the
workload's pods, those holding its images). A :class:`ShapeTable` holds, for one candidate set, one request
shape and one state of the loads, the feasible nodes split into *classes* (spreading group × untolerated
taints), each sorted by base score, highest first (ties by name). A prediction then reads each class's head,
skipping its own nodes: O(classes + own nodes) instead of O(nodes).

:func:`split_classes` builds the classes in numpy, O(feasible × log feasible); a table is cached by the index
until the loads or the nodes change (a batch of stale predictions shares it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from spreadwatch.scoring.topology_groups import CandidateGroups

__all__ = ["HEAD", "ShapeTable", "split_classes"]

Int64s = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
#: slots of each class kept as Python lists (a prediction reads a class's head; deeper only past own nodes)
HEAD: Final = 48


@dataclass(slots=True)
class ShapeTable:
    """The feasible nodes of one (candidate set, request shape, topology keys, tolerations) and their classes.

    ``feasible`` by slot; ``fit_failed``: candidates NodeResourcesFit rejects; ``fit``/``balanced``: the two
    plugins' normalised scores by slot (None: not run); ``base``: their weighted sum; ``groups``: the feasible
    nodes' PodTopologySpread groups (None: no constraint); ``group_of``/``taint``: each slot's group and
    untolerated PreferNoSchedule taints; per class (``keys``: (group, taints)) its slots sorted by base then
    name (``slots``), their bases, the head of both as lists and how many share the highest base (``ties``);
    ``positions``: the feasible nodes' positions in the scheduler's order, ascending, and their prefix gaps
    (the window, built on demand)."""

    feasible: Bools
    count: int
    fit_failed: int
    fit: Int64s | None
    balanced: Int64s | None
    base: Int64s
    groups: CandidateGroups | None
    group_of: Int64s
    taint: Int64s
    taint_top: int
    #: ``feasible``, ``base``, ``group_of`` and ``taint`` as lists (a prediction reads single slots)
    feasible_list: list[bool] = field(default_factory=list)
    base_list: list[int] = field(default_factory=list)
    group_list: list[int] = field(default_factory=list)
    taint_list: list[int] = field(default_factory=list)
    keys: list[tuple[int, int]] = field(default_factory=list)
    slots: list[Int64s] = field(default_factory=list)
    bases: list[Int64s] = field(default_factory=list)
    head_slots: list[list[int]] = field(default_factory=list)
    head_bases: list[list[int]] = field(default_factory=list)
    ties: list[int] = field(default_factory=list)
    positions: Int64s | None = None
    prefix: Int64s | None = None


def split_classes(table: ShapeTable, rank: Int64s) -> None:
    """Fill ``table``'s classes from its feasible mask, groups, taints and bases (``rank``: each slot's rank in
    name order). O(feasible × log feasible) in numpy."""
    table.feasible_list = table.feasible.tolist()
    table.base_list = table.base.tolist()
    table.group_list = table.group_of.tolist()
    table.taint_list = table.taint.tolist()
    chosen = np.flatnonzero(table.feasible)
    if len(chosen) == 0:
        return
    group = table.group_of[chosen]
    taint = table.taint[chosen]
    width = int(taint.max()) + 1
    key = group * width + taint
    order = np.lexsort((rank[chosen], -table.base[chosen], key))
    chosen, key = chosen[order], key[order]
    cuts = np.flatnonzero(np.diff(key)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [len(chosen)]))
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        slots = chosen[start:end]
        bases = table.base[slots]
        k = int(key[start])
        table.keys.append((k // width, k % width))
        table.slots.append(slots)
        table.bases.append(bases)
        table.head_slots.append(slots[:HEAD].tolist())
        table.head_bases.append(bases[:HEAD].tolist())
        table.ties.append(int(np.count_nonzero(bases == bases[0])))
