"""``kubectl spreadwatch``: the kubectl plugin (console script ``kubectl-spreadwatch``).

kubectl finds any ``kubectl-*`` executable on ``PATH`` and runs it with the remaining arguments, so
``kubectl spreadwatch analyze -A --sort-by zone-skew`` runs ``kubectl-spreadwatch analyze -A --sort-by
zone-skew``. This module applies kubectl's conventions and hands the work to the ``spreadwatch``
subcommands (:mod:`spreadwatch.cli`), in process:

* namespace: ``-n NS``; ``-A/--all-namespaces`` (wins over ``-n``, as in kubectl); otherwise the namespace of
  the kubeconfig context (``--context``, ``--kubeconfig``, ``$KUBECONFIG``), ``default`` when it sets none;
* workloads are named ``TYPE/NAME`` in that namespace (``deploy/web``, ``sts/db``), or ``TYPE/NS/NAME``;
* ``analyze``: ``-o wide|name|json|yaml``, ``--no-headers``, ``--sort-by health|node-skew|zone-skew|pods|
  best-score`` (ascending like kubectl; health sorts the worst first; ``.nodeSkew``/``{.zoneSkew}`` also
  accepted), ``-l SELECTOR``, ``-w/--watch`` (re-lists the live cluster every ``--watch-interval`` seconds
  and prints the rows whose report changed; Ctrl-C exits 0);
* ``explain``, ``simulate``, ``rebalance``, ``compare``, ``summary`` take the flags of the ``spreadwatch``
  command of the same name; no sub-command means ``summary``;
* ``--cluster FILE`` reads a snapshot instead of the live cluster, as everywhere in spreadwatch.

Every error is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import io
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn, TextIO

import orjson

from spreadwatch import __version__, cli
from spreadwatch.cli.argtypes import checked_number
from spreadwatch.cli.output import table, write_json, write_yaml
from spreadwatch.errors import InputError, SpreadwatchError
from spreadwatch.model import WorkloadKey
from spreadwatch.whatif import HEALTH_ORDER

__all__ = ["COMMANDS", "SORT_KEYS", "main"]

COMMANDS: Final = ("analyze", "explain", "simulate", "rebalance", "compare", "summary")
_WORKLOAD_COMMANDS: Final = frozenset({"explain", "simulate", "rebalance", "compare"})
_PROG: Final = "kubectl spreadwatch"
_HEALTH_RANK: Final = {h.value: i for i, h in enumerate(HEALTH_ORDER)}
_WORKLOAD_RE: Final = re.compile(r"^[A-Za-z]+/[^/\s]+(/[^/\s]+)?$")
_API_GROUPS: Final = {
    "Deployment": "deployment.apps",
    "StatefulSet": "statefulset.apps",
    "ReplicaSet": "replicaset.apps",
    "ReplicationController": "replicationcontroller",
}

_Report = dict[str, Any]


def _health_key(r: _Report) -> tuple[int, ...]:
    return (_HEALTH_RANK.get(r["health"], len(_HEALTH_RANK)),)


SORT_KEYS: Final[dict[str, Callable[[_Report], tuple[int, ...]]]] = {
    "health": _health_key,
    "node-skew": lambda r: (r["nodeSkew"],),
    "zone-skew": lambda r: (r["zoneSkew"],),
    "pods": lambda r: (r["pods"],),
    "best-score": lambda r: (r["bestScore"],),
}
_SORT_ALIASES: Final = {
    "health": "health",
    "nodeskew": "node-skew",
    "zoneskew": "zone-skew",
    "pods": "pods",
    "bestscore": "best-score",
    "best": "best-score",
}

_USAGE = f"""\
usage: {_PROG} [analyze|explain|simulate|rebalance|compare|summary] [flags]

Spread of every workload's replicas as kube-scheduler's SelectorSpread scores it (spreadwatch {__version__}).

Commands:
  analyze     one row per workload (-o wide|name|json|yaml, --no-headers, --sort-by, -l, -w)
  explain     TYPE/NAME: why each node scores what it scores
  simulate    TYPE/NAME --add N | --remove N [--seed S] [--runs K]: where the next replicas land
  rebalance   TYPE/NAME: the fewest evictions that make the spread healthy (a plan; evicts nothing)
  compare     compare profiles (when this build has the command)
  summary     workloads per health, the worst ones, zones, profile differences (the default)

Flags of every command:
  -n, --namespace NS       namespace (default: the kubeconfig context's, else default)
  -A, --all-namespaces     every namespace (analyze, summary)
      --context NAME       kubeconfig context
      --kubeconfig FILE    kubeconfig file
      --cluster FILE       read a snapshot (kubectl get -o yaml|json output) instead of the live cluster
      --profile NAME       scoring generation (v1.28 default; auto: the cluster's kube-scheduler's)
Run '{_PROG} COMMAND --help' for a command's own flags.
"""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors become InputError (one line, exit code 2, printed by :func:`main`)."""

    def error(self, message: str) -> NoReturn:
        raise InputError(message)


def _global_parser() -> _Parser:
    p = _Parser(prog=_PROG, add_help=False, allow_abbrev=False)
    p.add_argument("-n", "--namespace")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("--context")
    p.add_argument("--kubeconfig")
    p.add_argument("--cluster", action="append", default=[])
    p.add_argument("--profile")
    return p


def _analyze_parser() -> _Parser:
    p = _Parser(prog=f"{_PROG} analyze", add_help=False, allow_abbrev=False)
    p.add_argument("-o", "--output", choices=("table", "wide", "name", "json", "yaml"), default="table")
    p.add_argument("--sort-by", type=_sort_key)
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("-l", "--selector")
    p.add_argument("-w", "--watch", action="store_true")
    p.add_argument("--watch-interval", type=_interval, default=2.0)
    return p


def _sort_key(text: str) -> str:
    key = _SORT_ALIASES.get(text.strip("{}").lstrip(".").replace("-", "").replace("_", "").lower())
    if key is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(SORT_KEYS)}")
    return key


def _interval(text: str) -> float:
    """``--watch-interval``: seconds > 0."""
    return checked_number(text, float, "seconds", lambda v: v > 0, "> 0")


def _available_commands() -> set[str]:
    """The subcommands this build of ``spreadwatch`` has (``compare`` arrives with the v1.29 profile)."""
    for action in cli.build_parser()._actions:  # argparse has no public accessor for its subcommands
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _namespace(args: argparse.Namespace) -> str | None:
    """None for all namespaces; else ``-n`` or the kubeconfig context's namespace."""
    if args.all_namespaces:
        return None
    if args.namespace:
        return str(args.namespace)
    from spreadwatch import kube  # noqa: PLC0415 - the client is slow to import; only this needs it

    return kube.context_namespace(args.kubeconfig, args.context)


def _common(args: argparse.Namespace) -> list[str]:
    """The flags every forwarded spreadwatch command takes."""
    out = [f"--cluster={c}" for c in args.cluster]
    if args.kubeconfig:
        out.append(f"--kubeconfig={args.kubeconfig}")
    if args.context:
        out.append(f"--context={args.context}")
    if args.profile:
        out.append(f"--profile={args.profile}")
    return out


def _workload(ref: str, namespace: str | None) -> str:
    parts = ref.split("/")
    if len(parts) == 3:
        return ref
    if namespace is None:
        raise InputError(f"{ref}: name the namespace with -n, or write TYPE/NAMESPACE/NAME (-A names no namespace)")
    return f"{parts[0]}/{namespace}/{parts[1]}"


def _forward(command: str, args: argparse.Namespace, rest: list[str], out: TextIO, err: TextIO) -> int:
    argv = [command, *_common(args)]
    if command == "summary":
        namespace = _namespace(args)
        if namespace is not None:
            argv.append(f"--namespace={namespace}")
    elif command in _WORKLOAD_COMMANDS:
        refs = [i for i, a in enumerate(rest) if _WORKLOAD_RE.match(a) and (i == 0 or not rest[i - 1].startswith("-"))]
        if refs:
            namespace = _namespace(args)
            rest = [_workload(a, namespace) if i in refs else a for i, a in enumerate(rest)]
    return cli.main([*argv, *rest], out, err)


# --- analyze ----------------------------------------------------------------------------------------------


def _reports(
    args: argparse.Namespace, opts: argparse.Namespace, namespace: str | None, rest: list[str], err: TextIO
) -> list[_Report] | int:
    """The reports as ``spreadwatch analyze -o json`` gives them, sorted by ``--sort-by`` (an exit code on
    failure). One full listing of the namespace (or cluster) per call."""
    argv = ["analyze", *_common(args), "--output=json"]
    if namespace is not None:
        argv.append(f"--namespace={namespace}")
    if opts.selector:
        argv.append(f"--selector={opts.selector}")
    buf = io.StringIO()
    code = cli.main([*argv, *rest], buf, err)
    if code != 0:
        return code
    reports: list[_Report] = orjson.loads(buf.getvalue())["reports"]
    if opts.sort_by:
        reports.sort(key=SORT_KEYS[opts.sort_by])  # stable: ties stay in namespace/kind/name order
    return reports


def _name(r: _Report) -> str:
    w = r["workload"]
    return f"{_API_GROUPS.get(w['kind'], w['kind'].lower())}/{w['name']}"


def _rows(reports: Sequence[_Report], wide: bool, all_namespaces: bool) -> list[list[object]]:
    head = ["KIND", "NAME", "PODS", "NODES", "ZONES", "NODE-SKEW", "ZONE-SKEW", "BEST", "HEALTH"]
    if wide:
        head += ["PROFILE", "REPLICAS", "BEST-NODES", "REASONS"]
    rows: list[list[object]] = [[*(["NAMESPACE"] if all_namespaces else []), *head]]
    for r in reports:
        w = r["workload"]
        row: list[object] = [w["namespace"]] if all_namespaces else []
        row += [w["kind"], w["name"], r["pods"], r["candidateNodes"], r["zoneCount"], r["nodeSkew"], r["zoneSkew"]]
        row += [r["bestScore"], r["health"]]
        if wide:
            more = r["bestNodeCount"] - len(r["bestNodes"])
            best = ",".join(r["bestNodes"]) + (f",+{more}" if more > 0 else "")
            row += [r["profile"], r["replicas"], best or "<none>", "; ".join(r["reasons"]) or "<none>"]
        rows.append(row)
    return rows


def _print(
    reports: Sequence[_Report], opts: argparse.Namespace, namespace: str | None, headers: bool, out: TextIO
) -> None:
    """Print ``reports`` in the ``-o`` format (``namespace`` None: all namespaces, with a NAMESPACE column)."""
    fmt = opts.output
    if fmt == "name":
        out.write("".join(_name(r) + "\n" for r in reports))
    elif fmt == "json":
        write_json({"reports": list(reports)}, out)
    elif fmt == "yaml":
        write_yaml({"reports": list(reports)}, out)
    elif reports:
        rows = _rows(reports, fmt == "wide", namespace is None)
        table(rows if headers else rows[1:], out)
    elif headers:  # kubectl's wording for an empty list
        out.write("No workloads found.\n" if namespace is None else f"No workloads found in {namespace} namespace.\n")
    out.flush()


def _key(r: _Report) -> WorkloadKey:
    w = r["workload"]
    return WorkloadKey(w["namespace"], w["kind"], w["name"])


def _analyze(args: argparse.Namespace, rest: list[str], out: TextIO, err: TextIO) -> int:
    opts, extra = _analyze_parser().parse_known_args(rest)
    if opts.watch and args.cluster:
        raise InputError("--watch needs the live cluster (not --cluster)")
    namespace = _namespace(args)
    reports = _reports(args, opts, namespace, extra, err)
    if isinstance(reports, int):
        return reports
    _print(reports, opts, namespace, not opts.no_headers, out)
    if not opts.watch:
        return 0
    stop = threading.Event()  # Ctrl-C ends the watch after the listing in flight, with exit code 0
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    try:
        seen = {_key(r): r for r in reports}
        while not stop.wait(opts.watch_interval):
            latest = _reports(args, opts, namespace, extra, err)
            if isinstance(latest, int):
                return 0 if stop.is_set() else latest
            changed = [r for r in latest if seen.get(_key(r)) != r]
            seen = {_key(r): r for r in latest}
            if changed:
                _print(changed, opts, namespace, False, out)
        return 0
    finally:
        signal.signal(signal.SIGINT, previous)


# --- entry point ------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the plugin; returns the exit code (0 ok, 2 unusable input)."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    raw = list(sys.argv[1:] if argv is None else argv)
    try:
        if raw[:1] in (["-h"], ["--help"]) or raw == ["help"]:
            stdout.write(_USAGE)
            return 0
        if raw[:1] == ["--version"]:
            stdout.write(f"kubectl-spreadwatch {__version__}\n")
            return 0
        args, rest = _global_parser().parse_known_args(raw)
        command = rest[0] if rest and not rest[0].startswith("-") else "summary"
        if rest and rest[0] == command:
            rest = rest[1:]
        if command not in COMMANDS:
            raise InputError(f"unknown command {command!r}: choose one of {', '.join(COMMANDS)}")
        if command not in _available_commands():
            raise InputError(f"{command}: this build of spreadwatch has no {command!r} command")
        if command == "analyze":
            return _analyze(args, rest, stdout, stderr)
        return _forward(command, args, rest, stdout, stderr)
    except SpreadwatchError as exc:
        stderr.write(f"{_PROG}: error: {exc}\n")
        return cli.EXIT_INPUT
    except KeyboardInterrupt:  # Ctrl-C ends --watch (and anything else) quietly, as kubectl does
        return 0
    except BrokenPipeError:  # pragma: no cover - e.g. `kubectl spreadwatch analyze | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
