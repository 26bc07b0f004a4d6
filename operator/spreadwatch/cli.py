"""The ``spreadwatch`` command line: ``score``, ``analyze``, ``explain``, ``run``; ``simulate``, ``rebalance``
and ``summary`` come from :mod:`spreadwatch.cli_whatif`.

Every flag has an environment-variable default (``SPREADWATCH_<FLAG>``, e.g. ``SPREADWATCH_PROFILE``).
Unusable input ends with one line on stderr and exit code 2; a workload with an invalid selector only
gets a report with health ``Error``.

``analyze`` and ``explain`` read a snapshot (``--cluster``) or, without ``--cluster``, the live cluster
through the kubeconfig (``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``, or in-cluster). ``run``
starts the operator (docs/operator.md). The Kubernetes client and kopf are imported only by the commands
that need them, so the offline commands start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO, TypeVar

import orjson
import yaml

from spreadwatch import __version__
from spreadwatch.analysis import analyze_index, explain_workload, score_objects
from spreadwatch.argtypes import whole_number
from spreadwatch.cli_whatif import WhatIfHooks, add_whatif_parsers, whatif_handlers
from spreadwatch.compare_cli import add_compare_args, cmd_compare, write_explain_comparison
from spreadwatch.config import (
    DEFAULT_OPT_OUT_LABEL,
    LOG_FORMATS,
    NODE_SERIES_MODES,
    LeaderElection,
    MetricsOptions,
    OperatorConfig,
    default_identity,
    parse_label_requirement,
)
from spreadwatch.errors import InputError, SpreadwatchError
from spreadwatch.explain_topology import write_topology_explanation
from spreadwatch.model import object_ref
from spreadwatch.profile_args import add_scheduler_config_args, resolve_profile
from spreadwatch.report import DEFAULT_MAX_NODES, DEFAULT_TOP_N, HealthThresholds, ReportOptions, SpreadReport
from spreadwatch.scoring import DEFAULT_PROFILE, PROFILES, PodScores
from spreadwatch.selectors import parse_selector
from spreadwatch.snapshot import Snapshot, load_snapshot, read_documents

__all__ = ["build_parser", "main"]

EXIT_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


_Num = TypeVar("_Num", int, float)


def _env(name: str, default: str) -> str:
    return os.environ.get(f"SPREADWATCH_{name}", default)


def _env_number(name: str, default: _Num, convert: Callable[[str], _Num], what: str) -> _Num:
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    try:
        return convert(raw)
    except ValueError:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected {what}") from None


def _env_int(name: str, default: int) -> int:
    return _env_number(name, default, int, "an integer")


def _env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number")


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise InputError(f"SPREADWATCH_{name}={raw!r}: expected true or false")


def _env_list(name: str) -> list[str]:
    return _split_list(os.environ.get(f"SPREADWATCH_{name}", ""))


def _split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value < 0 or math.isnan(value):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _positive(text: str) -> float:
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _port(text: str) -> int:
    value = whole_number(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, got {text!r}")
    return value


def _add_common(p: argparse.ArgumentParser, cluster_required: bool = True) -> None:
    p.add_argument(
        "--cluster",
        action="append",
        required=cluster_required,
        metavar="FILE",
        help="snapshot: kubectl get -o yaml|json output, multi-document YAML or a directory (repeatable; - for stdin)"
        + ("" if cluster_required else "; without it the live cluster is read through the kubeconfig"),
    )
    if not cluster_required:
        _add_kubeconfig(p)
    p.add_argument(
        "--profile",
        default=_env("PROFILE", DEFAULT_PROFILE),
        help=f"scoring generation: {', '.join(PROFILES)} (default {DEFAULT_PROFILE}; env SPREADWATCH_PROFILE)",
    )
    add_scheduler_config_args(p)


def _add_kubeconfig(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kubeconfig",
        default=_env("KUBECONFIG", "") or None,
        metavar="FILE",
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster; env SPREADWATCH_KUBECONFIG)",
    )
    p.add_argument(
        "--context", default=_env("CONTEXT", "") or None, help="kubeconfig context (env SPREADWATCH_CONTEXT)"
    )


def _env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    raw = os.environ.get(f"SPREADWATCH_{name}")
    if raw is None:
        return default
    if raw not in choices:
        raise InputError(f"SPREADWATCH_{name}={raw!r}: expected one of {', '.join(choices)}")
    return raw


def _add_node_metrics(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--node-metrics",
        choices=NODE_SERIES_MODES,
        default=_env_choice("NODE_METRICS", "default", NODE_SERIES_MODES),
        help="per-node metric series: default (node_pods where the workload has pods, node_score on the "
        "--top-nodes best candidates), none, or all (every candidate node; large) (env SPREADWATCH_NODE_METRICS)",
    )


def _add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--top-nodes",
        type=whole_number,
        default=_env_int("TOP_NODES", DEFAULT_TOP_N),
        help="best-scoring candidate nodes listed per report (env SPREADWATCH_TOP_NODES)",
    )
    p.add_argument(
        "--max-report-nodes",
        type=whole_number,
        default=_env_int("MAX_REPORT_NODES", DEFAULT_MAX_NODES),
        help="cap on nodes with matching pods listed per report (env SPREADWATCH_MAX_REPORT_NODES)",
    )
    p.add_argument(
        "--max-node-skew",
        type=whole_number,
        default=_env_int("MAX_NODE_SKEW", 1),
        help="node skew above this is Imbalanced (env SPREADWATCH_MAX_NODE_SKEW)",
    )
    p.add_argument(
        "--max-zone-skew",
        type=whole_number,
        default=_env_int("MAX_ZONE_SKEW", 1),
        help="zone skew above this is Imbalanced (env SPREADWATCH_MAX_ZONE_SKEW)",
    )
    p.add_argument(
        "--spof-min-pods",
        type=whole_number,
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

    analyze = sub.add_parser("analyze", help="spread report of every workload in a snapshot or the live cluster")
    _add_common(analyze, cluster_required=False)
    _add_report_options(analyze)
    analyze.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml", "openmetrics"),
        default=_env("OUTPUT", "table"),
        help="openmetrics: the workload, zone and node metric families (docs/metrics.md)",
    )
    _add_node_metrics(analyze)
    analyze.add_argument("-n", "--namespace", action="append", default=[], help="only these namespaces")
    analyze.add_argument("-l", "--selector", help="only workloads whose labels match (e.g. 'tier=web,env!=dev')")

    explain = sub.add_parser("explain", help="step-by-step score table of one workload's next pod")
    _add_common(explain, cluster_required=False)
    _add_report_options(explain)
    explain.add_argument("workload", metavar="KIND/NAMESPACE/NAME")
    explain.add_argument("--all-nodes", action="store_true", help="list every empty candidate node too")
    explain.add_argument("--compare", metavar="PROFILE", help="also print PROFILE's score of every candidate node")

    compare = sub.add_parser("compare", help="what a scheduler upgrade changes: best nodes under two profiles")
    _add_common(compare, cluster_required=False)
    add_compare_args(compare)

    run = sub.add_parser("run", help="run the operator: one SpreadReport per workload, kept current")
    _add_run_options(run)
    add_whatif_parsers(sub, _WHATIF_HOOKS)
    return parser


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        default=_env("PROFILE", DEFAULT_PROFILE),
        help=f"scoring generation: {', '.join(PROFILES)} (default {DEFAULT_PROFILE}; env SPREADWATCH_PROFILE)",
    )
    add_scheduler_config_args(p)
    _add_report_options(p)
    _add_node_metrics(p)
    _add_kubeconfig(p)
    p.add_argument(
        "--compare-profile",
        default=_env("COMPARE_PROFILE", ""),
        metavar="PROFILE",
        help="also score every workload under PROFILE: a comparison block in each SpreadReport status and "
        "spreadwatch_workload_comparison_* metrics (default off; env SPREADWATCH_COMPARE_PROFILE)",
    )
    p.add_argument(
        "-n",
        "--namespace",
        action="append",
        default=[],
        metavar="NS[,NS...]",
        help="watch only these namespaces (repeatable; default all; env SPREADWATCH_NAMESPACE, comma-separated)",
    )
    p.add_argument(
        "--skip-namespace",
        action="append",
        default=[],
        metavar="NS[,NS...]",
        help="never report on these namespaces (repeatable; env SPREADWATCH_SKIP_NAMESPACE, comma-separated)",
    )
    p.add_argument(
        "--opt-out-label",
        default=_env("OPT_OUT_LABEL", DEFAULT_OPT_OUT_LABEL),
        metavar="KEY[=VALUE]",
        help=f"workloads and namespaces with this label get no report (default {DEFAULT_OPT_OUT_LABEL}; "
        "empty: off; env SPREADWATCH_OPT_OUT_LABEL)",
    )
    p.add_argument(
        "--debounce",
        type=_seconds,
        default=_env_float("DEBOUNCE", 1.0),
        metavar="SECONDS",
        help="a workload must be quiet this long before its report is written (default 1; env SPREADWATCH_DEBOUNCE)",
    )
    p.add_argument(
        "--max-writes-per-second",
        type=_positive,
        default=_env_float("MAX_WRITES_PER_SECOND", 20.0),
        help="global API write rate limit (default 20; env SPREADWATCH_MAX_WRITES_PER_SECOND)",
    )
    p.add_argument(
        "--write-burst",
        type=whole_number,
        default=_env_int("WRITE_BURST", 20),
        help="writes allowed in a burst above the rate (default 20; env SPREADWATCH_WRITE_BURST)",
    )
    p.add_argument(
        "--resync-period",
        type=_seconds,
        default=_env_float("RESYNC_PERIOD", 300.0),
        metavar="SECONDS",
        help="list SpreadReports, delete orphans, rewrite missing ones (default 300; 0: only at start; "
        "env SPREADWATCH_RESYNC_PERIOD)",
    )
    p.add_argument(
        "--port",
        type=_port,
        default=_env_int("PORT", 8081),
        help="port of the plain-HTTP probes /healthz, /readyz and /statusz (default 8081; env SPREADWATCH_PORT)",
    )
    p.add_argument(
        "--bind-address",
        default=_env("BIND_ADDRESS", "0.0.0.0"),
        help="address of the probe and metrics servers (default 0.0.0.0; env SPREADWATCH_BIND_ADDRESS)",
    )
    _add_metrics_server(p)
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=_env("LOG_FORMAT", "text"),
        help="text or json (env SPREADWATCH_LOG_FORMAT)",
    )
    p.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        default=_env("LOG_LEVEL", "INFO").upper(),
        help="(env SPREADWATCH_LOG_LEVEL)",
    )
    p.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=_env_bool("LEADER_ELECT", True),
        help="only the holder of a coordination.k8s.io Lease writes (default on; env SPREADWATCH_LEADER_ELECT)",
    )
    p.add_argument(
        "--lease-name",
        default=_env("LEASE_NAME", "spreadwatch-leader"),
        help="(env SPREADWATCH_LEASE_NAME)",
    )
    p.add_argument(
        "--lease-namespace",
        default=_env("LEASE_NAMESPACE", os.environ.get("POD_NAMESPACE", "") or "default"),
        help="(default $POD_NAMESPACE or default; env SPREADWATCH_LEASE_NAMESPACE)",
    )
    p.add_argument(
        "--identity",
        default=_env("IDENTITY", "") or default_identity(),
        help="leader-election identity (default $POD_NAME or the host name; env SPREADWATCH_IDENTITY)",
    )
    p.add_argument(
        "--lease-duration",
        type=_positive,
        default=_env_float("LEASE_DURATION", 15.0),
        metavar="SECONDS",
        help="(default 15; env SPREADWATCH_LEASE_DURATION)",
    )
    p.add_argument(
        "--renew-period",
        type=_positive,
        default=_env_float("RENEW_PERIOD", 2.0),
        metavar="SECONDS",
        help="(default 2; env SPREADWATCH_RENEW_PERIOD)",
    )
    p.add_argument(
        "--events",
        action=argparse.BooleanOptionalAction,
        default=_env_bool("EVENTS", True),
        help="post an Event on a SpreadReport when its health changes (default on; env SPREADWATCH_EVENTS)",
    )


def _add_metrics_server(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metrics-port",
        type=_port,
        default=_env_int("METRICS_PORT", 8443),
        help="port of /metrics (default 8443; env SPREADWATCH_METRICS_PORT)",
    )
    p.add_argument(
        "--metrics-secure",
        nargs="?",
        const=True,
        type=_bool,
        default=_env_bool("METRICS_SECURE", True),
        metavar="true|false",
        help="/metrics over HTTPS, each request authenticated (TokenReview) and authorized (SubjectAccessReview: "
        "get on /metrics) by the API server (default true; false: plain HTTP, open; env SPREADWATCH_METRICS_SECURE)",
    )
    p.add_argument(
        "--no-metrics-secure",
        dest="metrics_secure",
        action="store_false",
        help="same as --metrics-secure=false",
    )
    p.add_argument(
        "--metrics-cert-dir",
        default=_env("METRICS_CERT_DIR", "") or None,
        metavar="DIR",
        help="directory with tls.crt and tls.key for /metrics (default: a self-signed certificate generated at "
        "start under $TMPDIR; env SPREADWATCH_METRICS_CERT_DIR)",
    )


def _options(args: argparse.Namespace) -> ReportOptions:
    return ReportOptions(
        top_n=args.top_nodes,
        max_nodes=args.max_report_nodes,
        thresholds=HealthThresholds(args.max_node_skew, args.max_zone_skew, args.spof_min_pods),
    )


def _metrics_options(args: argparse.Namespace) -> MetricsOptions:
    return MetricsOptions(node_series=args.node_metrics, top_n=args.top_nodes)


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
        "selector": result.selector_text,
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
    result = score_objects(read_documents(args.cluster), pods[0], profile=resolve_profile(args), nodes=nodes)
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


def _snapshot(args: argparse.Namespace, namespaces: Sequence[str] = ()) -> Snapshot:
    """The ``--cluster`` snapshot, or the live cluster (only ``namespaces`` when given) via the kubeconfig."""
    if args.cluster:
        return load_snapshot(args.cluster)
    from spreadwatch import kube  # noqa: PLC0415 - the client is slow to import; only live mode needs it

    try:
        api = kube.load_api_client(args.kubeconfig, args.context)
    except InputError as err:
        if args.kubeconfig:
            raise
        raise InputError(f"--cluster FILE or a usable kubeconfig is required ({err})") from None
    try:
        return Snapshot.from_objects(kube.iter_cluster_objects(api, namespaces))
    finally:
        api.close()


def _cmd_analyze(args: argparse.Namespace, out: TextIO) -> int:
    profile = resolve_profile(args)
    selector = parse_selector(args.selector) if args.selector else None
    snapshot = _snapshot(args, args.namespace)
    index, reports = analyze_index(snapshot, profile, _options(args), args.namespace, selector)
    if args.output == "openmetrics":
        from spreadwatch.metrics import registry_for, render  # noqa: PLC0415 - only this output needs it

        keys = {r.workload.key for r in reports}
        out.write(render(registry_for(index, _metrics_options(args), workloads=keys), openmetrics=True).decode())
    elif args.output == "json":
        out.write(orjson.dumps({"reports": [r.to_dict() for r in reports]}, option=orjson.OPT_INDENT_2).decode())
        out.write("\n")
    elif args.output == "yaml":
        out.write(yaml.safe_dump({"reports": [r.to_dict() for r in reports]}, sort_keys=False))
    else:
        _analyze_table(reports, out)
    return 0


# --- explain ----------------------------------------------------------------------------------------------


def _cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    profile = resolve_profile(args)
    parts = args.workload.split("/")
    snapshot = _snapshot(args, [parts[1]] if len(parts) == 3 and parts[1] else [])
    exp = explain_workload(snapshot, args.workload, profile, _options(args))
    ctrl, report, scores = exp.workload, exp.report, exp.scores
    out.write(f"Workload:    {ctrl.kind} {ctrl.namespace}/{ctrl.name}\n")
    out.write(f"Profile:     {profile.name} (kube-scheduler {profile.releases}, scores 0-{profile.max_score})\n")
    out.write(f"Selector:    {report.selector or '<none>'}\n")
    out.write(f"Candidates:  {report.candidate_nodes} nodes")
    if report.excluded_nodes:
        out.write(" (excluded: " + ", ".join(f"{c} {r}" for r, c in report.excluded_nodes.items()) + ")")
    out.write("\n")
    if profile.pod_topology_spread and scores is not None:
        write_topology_explanation(scores, out, _table)
    elif scores is not None and not scores.skipped:
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
    if args.compare:
        write_explain_comparison(snapshot, args.workload, profile, resolve_profile(args, args.compare), out, _table)
    out.write(f"Health:      {report.health.value}\n")
    for reason in report.reasons:
        out.write(f"  - {reason}\n")
    out.write(
        f"Spread:      {report.pods} matching pods, node skew {report.node_skew}, zone skew {report.zone_skew}, "
        f"best score {report.best_score} on {report.best_node_count} node(s)\n"
    )
    return 0


# --- run --------------------------------------------------------------------------------------------------


def operator_config(args: argparse.Namespace) -> OperatorConfig:
    """The operator's settings from ``run``'s flags (validated; InputError on unusable values)."""

    def listed(flag_values: list[str], env_name: str) -> tuple[str, ...]:
        values = [v for item in flag_values for v in _split_list(item)] or _env_list(env_name)
        return tuple(dict.fromkeys(values))

    return OperatorConfig(
        namespaces=listed(args.namespace, "NAMESPACE"),
        skip_namespaces=listed(args.skip_namespace, "SKIP_NAMESPACE"),
        opt_out=parse_label_requirement(args.opt_out_label),
        profile=args.profile,
        scheduler_config=args.scheduler_config,
        scheduler_name=args.scheduler_name,
        compare_profile=args.compare_profile,
        report=_options(args),
        debounce=args.debounce,
        max_writes_per_second=args.max_writes_per_second,
        write_burst=max(1, args.write_burst),
        resync_period=args.resync_period,
        port=args.port,
        host=args.bind_address,
        metrics_port=args.metrics_port,
        metrics_secure=args.metrics_secure,
        metrics_cert_dir=args.metrics_cert_dir,
        log_format=args.log_format,
        log_level=args.log_level,
        kubeconfig=args.kubeconfig,
        context=args.context,
        leader=LeaderElection(
            enabled=args.leader_elect,
            lease_name=args.lease_name,
            lease_namespace=args.lease_namespace,
            identity=args.identity,
            lease_duration=args.lease_duration,
            renew_period=args.renew_period,
        ),
        events=args.events,
        metrics=_metrics_options(args),
    ).validate()


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    config = operator_config(args)
    from spreadwatch.handlers.logs import configure_logging  # noqa: PLC0415 - kopf is slow to import
    from spreadwatch.handlers.runtime import run_operator  # noqa: PLC0415

    configure_logging(config.log_format, config.log_level)
    run_operator(config)
    return 0


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "score": _cmd_score,
    "analyze": _cmd_analyze,
    "explain": _cmd_explain,
    "run": _cmd_run,
    "compare": lambda args, out: cmd_compare(args, out, _snapshot, _table),
}
_WHATIF_HOOKS = WhatIfHooks(_add_common, _add_report_options, _snapshot, _options, _table)
_COMMANDS.update(whatif_handlers(_WHATIF_HOOKS))


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
            resolve_profile(args)
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
