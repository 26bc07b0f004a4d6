"""The ``spreadwatch`` command line: ``score``, ``analyze``, ``explain``, ``compare``, ``run``, and the what-if
commands ``simulate``, ``rebalance`` and ``summary``.

Every flag has an environment-variable default (``SPREADWATCH_<FLAG>``, e.g. ``SPREADWATCH_PROFILE``).
Unusable input ends with one line on stderr and exit code 2; a workload with an invalid selector only
gets a report with health ``Error``.

``analyze`` and ``explain`` read a snapshot (``--cluster``) or, without ``--cluster``, the live cluster
through the kubeconfig (``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``, or in-cluster). ``run``
starts the operator (docs/operator.md). The Kubernetes client and kopf are imported only by the commands
that need them, so the offline commands start fast.

Modules: :mod:`~spreadwatch.cli.options` (the shared flags, each declared once), :mod:`~.env`
(``SPREADWATCH_*`` defaults), :mod:`~.argtypes` (flag value converters), :mod:`~.commands` (``score``,
``analyze``, ``explain``), :mod:`~.render` and :mod:`~.output` (what they print; JSON through orjson only),
:mod:`~.compare`, :mod:`~.whatif`, :mod:`~.run_flags` and :mod:`~.run_config` (``run``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from spreadwatch import __version__
from spreadwatch.cli.argtypes import whole_number
from spreadwatch.cli.commands import cmd_analyze, cmd_explain, cmd_predict, cmd_score
from spreadwatch.cli.compare import add_compare_args, cmd_compare
from spreadwatch.cli.env import env
from spreadwatch.cli.options import (
    add_cluster_args,
    add_kubeconfig_args,
    add_node_metrics_arg,
    add_number_arg,
    add_percentage_arg,
    add_prediction_arg,
    add_report_args,
)
from spreadwatch.cli.run_config import cmd_run, operator_config
from spreadwatch.cli.run_flags import add_run_args
from spreadwatch.cli.whatif import WHATIF_HANDLERS, add_whatif_parsers
from spreadwatch.errors import SpreadwatchError
from spreadwatch.profile_args import add_scheduler_config_args, check_profile_args

__all__ = ["EXIT_INPUT", "build_parser", "main", "operator_config"]

#: Exit code of unusable input (flags, environment, snapshot, objects).
EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for docs and tests)."""
    parser = _Parser(prog="spreadwatch", description="kube-scheduler SelectorSpread scores and spread health")
    parser.add_argument("--version", action="version", version=f"spreadwatch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    score = sub.add_parser("score", help="score one incoming pod on every candidate node")
    add_cluster_args(score)
    score.add_argument("--pod", required=True, metavar="FILE", help="the incoming pod (YAML or JSON)")
    score.add_argument("--nodes", metavar="N1,N2,...", help="exactly these candidate nodes, in this order, unfiltered")
    score.add_argument("-o", "--output", choices=("table", "json"), default=env("OUTPUT", "table"))

    analyze = sub.add_parser("analyze", help="spread report of every workload in a snapshot or the live cluster")
    add_cluster_args(analyze, cluster_required=False)
    add_report_args(analyze)
    add_prediction_arg(analyze)
    analyze.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml", "openmetrics"),
        default=env("OUTPUT", "table"),
        help="openmetrics: the workload, zone and node metric families (docs/metrics.md)",
    )
    add_node_metrics_arg(analyze)
    analyze.add_argument("-n", "--namespace", action="append", default=[], help="only these namespaces")
    analyze.add_argument("-l", "--selector", help="only workloads whose labels match (e.g. 'tier=web,env!=dev')")

    explain = sub.add_parser("explain", help="step-by-step score table of one workload's next pod")
    add_cluster_args(explain, cluster_required=False)
    add_report_args(explain)
    add_prediction_arg(explain)
    explain.add_argument("workload", metavar="KIND/NAMESPACE/NAME")
    explain.add_argument("--all-nodes", action="store_true", help="list every empty candidate node too")
    explain.add_argument("--compare", metavar="PROFILE", help="also print PROFILE's score of every candidate node")
    explain.add_argument("--node", action="append", default=[], metavar="NODE",
                         help="also show NODE in the prediction's per-plugin table, or the plugin that filtered it "
                         "(repeatable)")  # fmt: skip

    predict = sub.add_parser("predict", help="where kube-scheduler's whole profile puts a pod: filters, scores, totals")
    predict.add_argument(
        "--cluster", action="append", metavar="FILE",
        help="snapshot (as analyze reads it; include pv and pvc); without it the live cluster is read",
    )  # fmt: skip
    add_kubeconfig_args(predict)
    add_scheduler_config_args(predict)
    predict.add_argument("workload", nargs="?", metavar="KIND/NAMESPACE/NAME", help="predict this workload's next pod")
    predict.add_argument("--pod", metavar="FILE", help="predict this incoming pod (YAML or JSON) instead")
    add_number_arg(predict, "--top-nodes", whole_number, "TOP_NODES", 10, "nodes listed (env SPREADWATCH_TOP_NODES)")
    predict.add_argument("--all-nodes", action="store_true", help="list every feasible node")
    predict.add_argument("--node", action="append", default=[], metavar="NODE",
                         help="also show NODE in the table, or the plugin that filtered it (repeatable)")
    add_percentage_arg(predict)
    predict.add_argument("-o", "--output", choices=("table", "json"), default=env("OUTPUT", "table"))

    compare = sub.add_parser("compare", help="what a scheduler upgrade changes: best nodes under two profiles")
    add_compare_args(compare)

    run = sub.add_parser("run", help="run the operator: one SpreadReport per workload, kept current")
    add_run_args(run)
    add_whatif_parsers(sub)
    return parser


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "score": cmd_score,
    "predict": cmd_predict,
    "analyze": cmd_analyze,
    "explain": cmd_explain,
    "compare": cmd_compare,
    "run": cmd_run,
    **WHATIF_HANDLERS,
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
        with contextlib.redirect_stderr(stderr):  # (notes on what was skipped go to ``err`` too)
            if hasattr(args, "profile"):
                check_profile_args(args)
            return _COMMANDS[args.command](args, stdout)
    except SpreadwatchError as exc:
        stderr.write(f"spreadwatch: error: {exc}\n")
        return EXIT_INPUT
    except BrokenPipeError:  # pragma: no cover - e.g. `spreadwatch analyze | head`
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        return 130
