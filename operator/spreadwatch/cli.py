"""The ``spreadwatch`` command line: ``score``, ``analyze``, ``explain``.

Every flag has an environment-variable default (``SPREADWATCH_<FLAG>``, e.g. ``SPREADWATCH_PROFILE``).
Unusable input ends with one line on stderr and exit code 2; a workload with an invalid selector only
gets a report with health ``Error``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

import yaml

from spreadwatch import __version__
from spreadwatch.analysis import analyze_snapshot, explain_workload, score_objects
from spreadwatch.errors import InputError, SpreadwatchError
from spreadwatch.model import object_ref
from spreadwatch.report import DEFAULT_MAX_NODES, DEFAULT_TOP_N, HealthThresholds, ReportOptions, SpreadReport
from spreadwatch.scoring import DEFAULT_PROFILE, PROFILES, PodScores, get_profile
from spreadwatch.selectors import parse_selector
from spreadwatch.snapshot import load_snapshot, read_documents

__all__ = ["build_parser", "main"]

EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def _env(name: str, default: str) -> str:
    return os.environ.get(f"SPREADWATCH_{name}", default)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected an integer") from None


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _add_common(p: argparse.ArgumentParser, cluster_required: bool = True) -> None:
    p.add_argument(
        "--cluster",
        action="append",
        required=cluster_required,
        metavar="FILE",
        help="snapshot: kubectl get -o yaml|json output, multi-document YAML or a directory (repeatable; - for stdin)",
    )
    p.add_argument(
        "--profile",
        default=_env("PROFILE", DEFAULT_PROFILE),
        help=f"scoring generation: {', '.join(PROFILES)} (default {DEFAULT_PROFILE}; env SPREADWATCH_PROFILE)",
    )


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--top-nodes",
        type=_non_negative,
        default=_env_int("TOP_NODES", DEFAULT_TOP_N),
        help="best-scoring candidate nodes listed per report (env SPREADWATCH_TOP_NODES)",
    )
    p.add_argument(
        "--max-report-nodes",
        type=_non_negative,
        default=_env_int("MAX_REPORT_NODES", DEFAULT_MAX_NODES),
        help="cap on nodes with matching pods listed per report (env SPREADWATCH_MAX_REPORT_NODES)",
    )
    p.add_argument(
        "--max-node-skew",
        type=_non_negative,
        default=_env_int("MAX_NODE_SKEW", 1),
        help="node skew above this is Imbalanced (env SPREADWATCH_MAX_NODE_SKEW)",
    )
    p.add_argument(
        "--max-zone-skew",
        type=_non_negative,
        default=_env_int("MAX_ZONE_SKEW", 1),
        help="zone skew above this is Imbalanced (env SPREADWATCH_MAX_ZONE_SKEW)",
    )
    p.add_argument(
        "--spof-min-pods",
        type=_non_negative,
        default=_env_int("SPOF_MIN_PODS", 2),
        help="pods needed before all-on-one-node/zone is a SinglePointOfFailure (env SPREADWATCH_SPOF_MIN_PODS)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    parser = _Parser(prog="spreadwatch", description="kube-scheduler SelectorSpread scores and spread health")
    parser.add_argument("--version", action="version", version=f"spreadwatch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    score = sub.add_parser("score", help="score one incoming pod on every candidate node")
    _add_common(score)
    score.add_argument("--pod", required=True, metavar="FILE", help="the incoming pod (YAML or JSON)")
    score.add_argument("--nodes", metavar="N1,N2,...", help="exactly these candidate nodes, in this order, unfiltered")
    score.add_argument("-o", "--output", choices=("table", "json"), default=_env("OUTPUT", "table"))

    analyze = sub.add_parser("analyze", help="spread report of every workload in a snapshot")
    _add_common(analyze)
    _add_report_options(analyze)
    analyze.add_argument("-o", "--output", choices=("table", "json", "yaml"), default=_env("OUTPUT", "table"))
    analyze.add_argument("-n", "--namespace", action="append", default=[], help="only these namespaces")
    analyze.add_argument("-l", "--selector", help="only workloads whose labels match (e.g. 'tier=web,env!=dev')")

    explain = sub.add_parser("explain", help="step-by-step score table of one workload's next pod")
    _add_common(explain)
    _add_report_options(explain)
    explain.add_argument("workload", metavar="KIND/NAMESPACE/NAME")
    explain.add_argument("--all-nodes", action="store_true", help="list every empty candidate node too")
    return parser


def _options(args: argparse.Namespace) -> ReportOptions:
    return ReportOptions(
        top_n=args.top_nodes,
        max_nodes=args.max_report_nodes,
        thresholds=HealthThresholds(args.max_node_skew, args.max_zone_skew, args.spof_min_pods),
    )


def _table(rows: Sequence[Sequence[object]], out: TextIO) -> None:
    """kubectl-style columns: upper-case header, 3 spaces between columns."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for row in cells:
        out.write("   ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}".rstrip("0").rstrip(".")


# --- score ------------------------------------------------------------------------------------------------


def _zone_name(zone: tuple[str, str] | None) -> str:
    return zone[1] if zone else ""


def _region_name(zone: tuple[str, str] | None) -> str:
    return zone[0] if zone else ""


def _score_json(result: PodScores) -> dict[str, Any]:
    zones = result.zones
    return {
        "profile": result.profile.name,
        "pod": {"namespace": result.pod.namespace, "name": result.pod.name},
        "skipped": result.skipped,
        "skipReason": result.skip_reason,
        "selector": str(result.selector) if result.selector is not None else "",
        "scores": dict(result.scores),
        "excluded": dict(result.excluded),
        "nodes": [
            {
                "node": n,
                "zone": _zone_name(zones[n]),
                "region": _region_name(zones[n]),
                "pods": result.counts[n],
                "score": s,
            }
            for n, s in result.scores.items()
        ],
    }


def _cmd_score(args: argparse.Namespace, out: TextIO) -> int:
    pods = read_documents([args.pod])
    if len(pods) != 1:
        raise InputError(f"{args.pod}: expected exactly one Pod, found {len(pods)} objects")
    if pods[0].get("kind") != "Pod":
        raise InputError(f"{args.pod}: expected a Pod, found {object_ref(pods[0])}")
    nodes = [n.strip() for n in args.nodes.split(",") if n.strip()] if args.nodes else None
    result = score_objects(read_documents(args.cluster), pods[0], profile=args.profile, nodes=nodes)
    if args.output == "json":
        out.write(json.dumps(_score_json(result), indent=2) + "\n")
        return 0
    data = _score_json(result)
    out.write(f"Pod:       {result.pod.namespace}/{result.pod.name}\n")
    out.write(f"Profile:   {result.profile.name} (kube-scheduler {result.profile.releases})\n")
    out.write(f"Selector:  {data['selector'] or '<none>'}\n")
    if result.skipped:
        out.write(f"Skipped:   {result.skip_reason}\n")
    rows: list[list[object]] = [["NODE", "ZONE", "REGION", "PODS", "SCORE"]]
    rows += [[e["node"], e["zone"] or "-", e["region"] or "-", e["pods"], e["score"]] for e in data["nodes"]]
    out.write("\n")
    _table(rows, out)
    if result.excluded:
        out.write("\nExcluded:  " + ", ".join(f"{n} ({r})" for n, r in result.excluded.items()) + "\n")
    return 0


# --- analyze ----------------------------------------------------------------------------------------------


def _analyze_table(reports: Sequence[SpreadReport], out: TextIO) -> None:
    if not reports:
        out.write("No workloads found.\n")
        return
    rows: list[list[object]] = [
        ["NAMESPACE", "KIND", "NAME", "PODS", "NODES", "ZONES", "NODE-SKEW", "ZONE-SKEW", "BEST", "HEALTH"]
    ]
    for r in reports:
        rows.append(
            [
                r.workload.namespace,
                r.workload.kind,
                r.workload.name,
                r.pods,
                r.candidate_nodes,
                len(r.zones),
                r.node_skew,
                r.zone_skew,
                r.best_score,
                r.health.value,
            ]
        )
    _table(rows, out)


def _cmd_analyze(args: argparse.Namespace, out: TextIO) -> int:
    profile = get_profile(args.profile)
    selector = parse_selector(args.selector) if args.selector else None
    snapshot = load_snapshot(args.cluster)
    reports = analyze_snapshot(snapshot, profile, _options(args), args.namespace, selector)
    if args.output == "json":
        out.write(json.dumps({"reports": [r.to_dict() for r in reports]}, indent=2) + "\n")
    elif args.output == "yaml":
        out.write(yaml.safe_dump({"reports": [r.to_dict() for r in reports]}, sort_keys=False))
    else:
        _analyze_table(reports, out)
    return 0


# --- explain ----------------------------------------------------------------------------------------------


def _cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    profile = get_profile(args.profile)
    snapshot = load_snapshot(args.cluster)
    exp = explain_workload(snapshot, args.workload, profile, _options(args))
    ctrl, report, scores = exp.workload, exp.report, exp.scores
    out.write(f"Workload:    {ctrl.kind} {ctrl.namespace}/{ctrl.name}\n")
    out.write(f"Profile:     {profile.name} (kube-scheduler {profile.releases}, scores 0-{profile.max_score})\n")
    out.write(f"Selector:    {report.selector or '<none>'}\n")
    out.write(f"Candidates:  {report.candidate_nodes} nodes")
    if report.excluded_nodes:
        out.write(" (excluded: " + ", ".join(f"{c} {r}" for r, c in report.excluded_nodes.items()) + ")")
    out.write("\n")
    if scores is not None and not scores.skipped:
        s = scores.summary
        out.write(
            f"Maxima:      {s.max_node} matching pods on the busiest node, {s.max_zone} in the busiest zone"
            f"{'' if s.have_zones else ' (no candidate node has a zone: node part only)'}\n"
        )
        out.write(
            f"Formula:     node = {profile.max_score}*(maxNode-pods)/maxNode; "
            f"zone = {profile.max_score}*(maxZone-zonePods)/maxZone; "
            "score = int(node*1/3 + zone*2/3), or int(node) without a zone\n\n"
        )
        rows: list[list[object]] = [
            ["NODE", "ZONE", "PODS", "NODE-SCORE", "ZONE-PODS", "ZONE-SCORE", "NODE-PART", "ZONE-PART", "SCORE"]
        ]
        shown_empty: dict[tuple[str, str] | None, int] = {}
        hidden: dict[tuple[str, str] | None, list[int]] = {}
        for node in scores.candidates:
            name = node.name
            zone = scores.zones[name]
            count = scores.counts[name]
            b = scores.breakdown(name)
            if count == 0 and not args.all_nodes:
                shown_empty[zone] = shown_empty.get(zone, 0) + 1
                if shown_empty[zone] > 3:
                    hidden.setdefault(zone, [0, b.final])[0] += 1
                    continue
            zone_pods = s.zone_counts.get(zone, 0) if zone is not None else None
            rows.append(
                [
                    name,
                    zone[1] if zone else "-",
                    count,
                    _fmt(b.node_score),
                    "-" if zone_pods is None or not s.have_zones else zone_pods,
                    _fmt(b.zone_score),
                    _fmt(b.node_part),
                    _fmt(b.zone_part) if b.zone_score is not None else "-",
                    b.final,
                ]
            )
        for hidden_zone, (n, final) in hidden.items():
            rows.append([f"(+{n} more empty nodes)", _zone_name(hidden_zone) or "-", 0, "", "", "", "", "", final])
        _table(rows, out)
        out.write("\n")
    elif scores is not None:
        out.write(f"Skipped:     {scores.skip_reason}\n\n")
    out.write(f"Health:      {report.health.value}\n")
    for reason in report.reasons:
        out.write(f"  - {reason}\n")
    out.write(
        f"Spread:      {report.pods} matching pods, node skew {report.node_skew}, zone skew {report.zone_skew}, "
        f"best score {report.best_score} on {report.best_node_count} node(s)\n"
    )
    return 0


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "score": _cmd_score,
    "analyze": _cmd_analyze,
    "explain": _cmd_explain,
}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 unusable input)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    try:
        try:
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
                args = build_parser().parse_args(argv)
        except SystemExit as exc:  # usage errors (2), --help and --version (0)
            return int(exc.code) if isinstance(exc.code, int) else 0
        if hasattr(args, "profile"):
            get_profile(args.profile)
        return _COMMANDS[args.command](args, stdout)
    except SpreadwatchError as exc:
        stderr.write(f"spreadwatch: error: {exc}\n")
        return EXIT_INPUT
    except BrokenPipeError:  # pragma: no cover - e.g. `spreadwatch analyze | head`
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
