"""The what-if subcommands of ``spreadwatch``: ``simulate``, ``rebalance`` and ``summary``.

:func:`spreadwatch.cli.build_parser` registers them (:func:`add_whatif_parsers`, :data:`WHATIF_HANDLERS`);
they take the shared flags of :mod:`spreadwatch.cli.options`, so ``--cluster``, ``--kubeconfig``,
``--context``, ``--profile``, the report thresholds and the ``SPREADWATCH_*`` defaults behave exactly as in
``analyze`` and ``explain``. Everything here is read-only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Final, TextIO

from spreadwatch.analysis import WorkloadFilter
from spreadwatch.cli.argtypes import whole_number
from spreadwatch.cli.options import add_cluster_args, add_report_args, chosen_profile, report_options, snapshot_of
from spreadwatch.cli.output import table, write_json, write_yaml
from spreadwatch.errors import InputError
from spreadwatch.report import SpreadReport
from spreadwatch.selectors import parse_selector
from spreadwatch.whatif import (
    ClusterSummary,
    RebalancePlan,
    RunsSummary,
    Simulation,
    plan_rebalance,
    simulate_add,
    simulate_remove,
    simulate_runs,
    summarize_cluster,
)
from spreadwatch.whatif.rebalance import DEFAULT_MAX_STATES
from spreadwatch.whatif.simulate import PendingStep, PlacementStep

__all__ = ["WHATIF_HANDLERS", "add_whatif_parsers"]

Handler = Callable[[argparse.Namespace, TextIO], int]


def _count(text: str) -> int:
    return whole_number(text, minimum=1)


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")


def add_whatif_parsers(sub: Any) -> None:
    """Add the ``simulate``, ``rebalance`` and ``summary`` subparsers to ``sub`` (argparse subparsers)."""
    simulate = sub.add_parser("simulate", help="place (or remove) N replicas one by one and show the spread")
    add_cluster_args(simulate, cluster_required=False)
    add_report_args(simulate)
    simulate.add_argument("workload", metavar="KIND/NAMESPACE/NAME")
    how = simulate.add_mutually_exclusive_group(required=True)
    how.add_argument("--add", type=_count, metavar="N", help="scale up by N replicas")
    how.add_argument("--remove", type=_count, metavar="N", help="scale down by N replicas (the controller's order)")
    simulate.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="break ties among the best nodes at random (seeded), as kube-scheduler does; default: first by name",
    )
    simulate.add_argument(
        "--runs",
        type=_count,
        metavar="K",
        help="repeat --add with seeds S..S+K-1 (S default 0): final skew distribution",
    )
    _output(simulate)

    rebalance = sub.add_parser("rebalance", help="read-only plan: the fewest evictions that make the spread healthy")
    add_cluster_args(rebalance, cluster_required=False)
    add_report_args(rebalance)
    rebalance.add_argument("workload", metavar="KIND/NAMESPACE/NAME")
    rebalance.add_argument(
        "--max-evictions", type=whole_number, metavar="N", help="longest plan searched (default: the workload's pods)"
    )
    rebalance.add_argument(
        "--max-states",
        type=_count,
        default=DEFAULT_MAX_STATES,
        metavar="N",
        help=f"search budget in explored states (default {DEFAULT_MAX_STATES})",
    )
    _output(rebalance)

    summary = sub.add_parser("summary", help="workloads per health, the worst ones, zones, profile differences")
    add_cluster_args(summary, cluster_required=False)
    add_report_args(summary)
    summary.add_argument("-n", "--namespace", action="append", default=[], help="only these namespaces")
    summary.add_argument("-l", "--selector", help="only workloads whose labels match")
    summary.add_argument(
        "--worst", type=whole_number, default=5, metavar="N", help="list the N worst workloads (default 5)"
    )
    _output(summary)


def _namespace_of(ref: str) -> list[str]:
    parts = ref.split("/")
    return [parts[1]] if len(parts) == 3 and parts[1] else []


def _dump(data: dict[str, Any], fmt: str, out: TextIO) -> None:
    (write_json if fmt == "json" else write_yaml)(data, out)


def _spread(report: SpreadReport) -> str:
    return (
        f"{report.pods} pods, node skew {report.node_skew}, zone skew {report.zone_skew}, {report.health.value}"
        + "".join(f"\n  - {reason}" for reason in report.reasons)
    )


def _print_simulation(sim: Simulation, add: bool, out: TextIO) -> None:
    w = sim.workload
    out.write(f"Workload:  {w.kind} {w.namespace}/{w.name}\nProfile:   {sim.profile}\n")
    if add:
        choice = "first best node by name" if sim.seed is None else f"uniformly random among the best (seed {sim.seed})"
        out.write(f"Choice:    {choice}\n")
    out.write(f"Before:    {_spread(sim.initial)}\n\n")
    rows: list[list[object]] = [
        ["STEP", "BEST", "TIED", "BEST-NODES", "NODE", "ZONE"] if add else ["STEP", "POD", "NODE", "ZONE", "RANK"]
    ]
    for s in sim.steps:
        if isinstance(s, PlacementStep):
            more = s.best_node_count - len(s.best_nodes)
            tied = ",".join(s.best_nodes) + (f",+{more}" if more > 0 else "")
            rows.append([s.step, s.best_score, s.best_node_count, tied or "-", s.node, s.zone or "-"])
        elif isinstance(s, PendingStep):
            rows.append([s.step, "-", 0, "-", "(Pending)", "-"])
        else:
            rows.append([s.step, s.pod, s.node, s.zone or "-", s.rank])
    table(rows, out)
    pending = sim.pending
    if pending is not None:
        out.write(
            f"\nPending:   replica {pending.step} and every one after it would stay Pending "
            f"({pending.plugin}): {pending.reason}\n"
        )
    out.write(f"\nAfter:     {_spread(sim.final)}\n")


def _print_runs(runs: RunsSummary, count: int, out: TextIO) -> None:
    last = runs.first_seed + runs.runs - 1
    out.write(f"Runs:      {runs.runs} (seeds {runs.first_seed}-{last}), +{count} replicas each\n\n")
    head: list[object] = ["STEP", "SCORED", "BEST-NODE", "BEST-ZONE", "OTHER", "P(BEST-NODE)", "P(BEST-ZONE)"]
    pending = any(s.pending for s in runs.steps)  # (a column only when some replica would stay Pending)
    steps: list[list[object]] = [[*head, "PENDING"] if pending else head]
    steps += [
        [s.step, s.nodes_scored, s.best_node, s.best_zone, s.other, f"{s.p_best_node:.3f}", f"{s.p_best_zone:.3f}"]
        + ([s.pending] if pending else [])
        for s in runs.steps
    ]
    table(steps, out)
    out.write("\n")
    rows: list[list[object]] = [["FINAL", "VALUE", "RUNS"]]
    rows += [["node skew", k, v] for k, v in sorted(runs.node_skew.items())]
    rows += [["zone skew", k, v] for k, v in sorted(runs.zone_skew.items())]
    rows += [["health", k, v] for k, v in sorted(runs.health.items())]
    table(rows, out)


def _simulate(args: argparse.Namespace, out: TextIO) -> int:
    if args.remove is not None and (args.seed is not None or args.runs is not None):
        raise InputError("--seed and --runs apply to --add only (a scale-down follows the controller's order)")
    snapshot = snapshot_of(args, _namespace_of(args.workload))
    profile, _ = chosen_profile(args, snapshot)
    options = report_options(args)
    if args.runs is not None:
        runs = simulate_runs(snapshot, args.workload, profile, args.add, args.runs, options, args.seed or 0)
        if args.output == "table":
            _print_runs(runs, args.add, out)
        else:
            _dump(runs.to_dict(), args.output, out)
        return 0
    if args.add is not None:
        sim = simulate_add(snapshot, args.workload, profile, args.add, options, args.seed)
    else:
        sim = simulate_remove(snapshot, args.workload, profile, args.remove, options)
    if args.output == "table":
        _print_simulation(sim, args.add is not None, out)
    else:
        _dump(sim.to_dict(), args.output, out)
    return 0


def _print_plan(plan: RebalancePlan, out: TextIO) -> None:
    w = plan.workload
    out.write(f"Workload:  {w.kind} {w.namespace}/{w.name}\nProfile:   {plan.profile}\n")
    out.write(f"Before:    {_spread(plan.initial)}\n")
    out.write(f"Plan:      {plan.message}\n")
    if not plan.evictions:
        return
    rows: list[list[object]] = [
        ["STEP", "EVICT", "FROM", "ZONE", "REPLACEMENT", "ZONE", "NODE-SKEW", "ZONE-SKEW", "HEALTH"]
    ]
    for e in plan.evictions:
        r = e.report
        rows.append(
            [
                e.step,
                e.pod,
                e.node,
                e.zone or "-",
                e.replacement_node or "(Pending)",
                e.replacement_zone or "-",
                r.node_skew,
                r.zone_skew,
                r.health.value,
            ]
        )
    out.write("\n")
    table(rows, out)
    out.write(f"\nAfter:     {_spread(plan.final)}\n")
    out.write("\nCommands (a plan only: spreadwatch evicted nothing):\n")
    out.write("".join(f"  {c}\n" for c in plan.commands))


def _rebalance(args: argparse.Namespace, out: TextIO) -> int:
    snapshot = snapshot_of(args, _namespace_of(args.workload))
    profile, _ = chosen_profile(args, snapshot)
    plan = plan_rebalance(
        snapshot, args.workload, profile, report_options(args), args.max_evictions, args.max_states
    )
    if args.output == "table":
        _print_plan(plan, out)
    else:
        _dump(plan.to_dict(), args.output, out)
    return 0


def _print_summary(summary: ClusterSummary, out: TextIO) -> None:
    out.write(f"Workloads: {summary.workloads} (profile {summary.profile})\n\n")
    table([["HEALTH", "WORKLOADS"], *([h, n] for h, n in summary.health.items())], out)
    if summary.worst:
        out.write(f"\nWorst {len(summary.worst)}:\n")
        rows: list[list[object]] = [["NAMESPACE", "KIND", "NAME", "PODS", "NODE-SKEW", "ZONE-SKEW", "HEALTH"]]
        for r in summary.worst:
            w = r.workload
            rows.append([w.namespace, w.kind, w.name, r.pods, r.node_skew, r.zone_skew, r.health.value])
        table(rows, out)
    if summary.zones:
        out.write("\nZones:\n")
        zone_rows: list[list[object]] = [["ZONE", "REGION", "NODES", "CANDIDATES", "PODS"]]
        zone_rows += [[z.zone or "-", z.region or "-", z.nodes, z.candidate_nodes, z.pods] for z in summary.zones]
        table(zone_rows, out)
    if summary.changes:
        out.write("\nBest node set differs from the baseline:\n")
        change_rows: list[list[object]] = [["PROFILE", "BASELINE", "WORKLOADS", "CHANGED", "SHARE"]]
        change_rows += [
            [c.profile, c.baseline, c.workloads, c.changed, f"{100 * c.share:.0f}%"] for c in summary.changes
        ]
        table(change_rows, out)
    for note in summary.notes:
        out.write(f"\nNote: {note}\n")


def _summary(args: argparse.Namespace, out: TextIO) -> int:
    selector = parse_selector(args.selector) if args.selector else None
    snapshot = snapshot_of(args, args.namespace)
    profile, _ = chosen_profile(args, snapshot)
    summary = summarize_cluster(
        snapshot, profile, report_options(args), WorkloadFilter(args.namespace, selector), args.worst
    )
    if args.output == "table":
        _print_summary(summary, out)
    else:
        _dump(summary.to_dict(), args.output, out)
    return 0


#: The command functions, by subcommand name.
WHATIF_HANDLERS: Final[dict[str, Handler]] = {"simulate": _simulate, "rebalance": _rebalance, "summary": _summary}
