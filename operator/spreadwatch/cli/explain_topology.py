"""``spreadwatch explain`` for profile ``v1.29``: PodTopologySpread's step table.

Prints the scoring constraints (key, maxSkew, selector, domain count and weight ``log(size + 2)``), the
ignored candidates, then one row per candidate: per constraint the pods charged (its own pods for the
hostname key, its domain's for the others) and the term ``count × weight + (maxSkew − 1)``, the float sum,
the rounded raw score and the normalized score ``100 × (max + min − raw) // max``. O(candidates × constraints).
"""

from __future__ import annotations

from typing import TextIO

from spreadwatch.cli.output import table
from spreadwatch.scoring import PodScores

__all__ = ["write_topology_explanation"]


def _fmt(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def write_topology_explanation(scores: PodScores, out: TextIO) -> bool:
    """Write the v1.29 part of ``explain``. Returns False when ``scores`` is not a PodTopologySpread result
    (nothing written)."""
    topo = scores.topology
    if topo is None:
        return False
    plan = topo.plan
    source = "the pod's own ScheduleAnyway constraints" if plan.source == "pod" else plan.source
    out.write(f"Constraints: {source}")
    out.write(" (nodes missing a key are ignored)\n" if plan.require_all else " (a node missing a key gets no term)\n")
    if topo.skipped:
        out.write(f"Skipped:     {plan.skip_reason}\n\n")
        return True
    state = topo.state
    assert state is not None
    for i, term in enumerate(plan.terms):
        what = "candidates" if term.hostname else "domains"
        policies = f"nodeAffinityPolicy {'Honor' if term.honor_affinity else 'Ignore'}, "
        policies += f"nodeTaintsPolicy {'Honor' if term.honor_taints else 'Ignore'}"
        out.write(
            f"  T{i + 1}: {term.topology_key} maxSkew {term.max_skew}, selector {term.selector or '<none>'}; "
            f"{state.sizes[i]} {what} -> weight log({state.sizes[i]}+2) = {_fmt(state.weights[i])}; {policies}\n"
        )
    if state.ignored:
        out.write(f"Ignored:     {', '.join(sorted(state.ignored))} (missing a topology key: score 0)\n")
    out.write(
        "Formula:     raw = round(sum of count*weight + (maxSkew-1) over the node's keys); "
        f"score = 100*(max+min-raw)//max with min {topo.min_raw}, max {topo.max_raw}"
        f"{' (max 0: every node 100)' if topo.max_raw == 0 else ''}\n\n"
    )
    header: list[object] = ["NODE"]
    for i in range(len(plan.terms)):
        header += [f"T{i + 1}-PODS", f"T{i + 1}-TERM"]
    header += ["SUM", "RAW", "SCORE"]
    rows: list[list[object]] = [header]
    for node in scores.candidates:
        name = node.name
        row: list[object] = [name]
        raw = topo.raw[name]
        if raw is None:
            row += ["-"] * (2 * len(plan.terms)) + ["-", "ignored", topo.scores[name]]
            rows.append(row)
            continue
        counts = state.term_counts(node, topo.own[name])
        for i, count in enumerate(counts):
            if count is None:
                row += ["-", "-"]
            else:
                term = plan.terms[i]
                row += [count, _fmt(float(count) * state.weights[i] + float(term.max_skew - 1))]
        row += [_fmt(state.raw_sum(node, topo.own[name])), raw, topo.scores[name]]
        rows.append(row)
    table(rows, out)
    out.write("\n")
    return True
