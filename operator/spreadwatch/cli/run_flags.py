"""The flags of ``spreadwatch run`` (the operator), grouped by what they set; defaults from ``SPREADWATCH_*``.

The order of :func:`add_run_args` is the order ``run --help`` lists them. :mod:`spreadwatch.cli.run_config`
turns the parsed flags into an :class:`~spreadwatch.config.OperatorConfig`.
"""

from __future__ import annotations

import argparse
import os

from spreadwatch.cli.argtypes import flag_bool, port, positive_seconds, seconds, whole_number
from spreadwatch.cli.env import env, env_bool, env_float, env_int
from spreadwatch.cli.options import add_kubeconfig_args, add_node_metrics_arg, add_profile_args, add_report_args
from spreadwatch.config import DEFAULT_OPT_OUT_LABEL, LOG_FORMATS, default_identity

__all__ = ["add_run_args"]


def add_run_args(p: argparse.ArgumentParser) -> None:
    """Every flag of ``run``."""
    add_profile_args(p)
    add_report_args(p)
    add_node_metrics_arg(p)
    add_kubeconfig_args(p)
    _add_comparison(p)
    _add_scope(p)
    _add_writes(p)
    _add_servers(p)
    _add_logging(p)
    _add_leader_election(p)
    p.add_argument(
        "--events",
        action=argparse.BooleanOptionalAction,
        default=env_bool("EVENTS", True),
        help="post an Event on a SpreadReport when its health changes (default on; env SPREADWATCH_EVENTS)",
    )


def _add_comparison(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--compare-profile",
        default=env("COMPARE_PROFILE", ""),
        metavar="PROFILE",
        help="also score every workload under PROFILE: a comparison block in each SpreadReport status and "
        "spreadwatch_workload_comparison_* metrics (default off; env SPREADWATCH_COMPARE_PROFILE)",
    )


def _add_scope(p: argparse.ArgumentParser) -> None:
    """Which namespaces and workloads get reports."""
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
        default=env("OPT_OUT_LABEL", DEFAULT_OPT_OUT_LABEL),
        metavar="KEY[=VALUE]",
        help=f"workloads and namespaces with this label get no report (default {DEFAULT_OPT_OUT_LABEL}; "
        "empty: off; env SPREADWATCH_OPT_OUT_LABEL)",
    )


def _add_writes(p: argparse.ArgumentParser) -> None:
    """How SpreadReports are written: debounce, rate limit, resync."""
    p.add_argument(
        "--debounce",
        type=seconds,
        default=env_float("DEBOUNCE", 1.0),
        metavar="SECONDS",
        help="a workload must be quiet this long before its report is written (default 1; env SPREADWATCH_DEBOUNCE)",
    )
    p.add_argument(
        "--max-writes-per-second",
        type=positive_seconds,
        default=env_float("MAX_WRITES_PER_SECOND", 20.0),
        help="global API write rate limit (default 20; env SPREADWATCH_MAX_WRITES_PER_SECOND)",
    )
    p.add_argument(
        "--write-burst",
        type=whole_number,
        default=env_int("WRITE_BURST", 20),
        help="writes allowed in a burst above the rate (default 20; env SPREADWATCH_WRITE_BURST)",
    )
    p.add_argument(
        "--resync-period",
        type=seconds,
        default=env_float("RESYNC_PERIOD", 300.0),
        metavar="SECONDS",
        help="list SpreadReports, delete orphans, rewrite missing ones (default 300; 0: only at start; "
        "env SPREADWATCH_RESYNC_PERIOD)",
    )


def _add_servers(p: argparse.ArgumentParser) -> None:
    """The probe server and the /metrics server."""
    p.add_argument(
        "--port",
        type=port,
        default=env_int("PORT", 8081),
        help="port of the plain-HTTP probes /healthz, /readyz and /statusz (default 8081; env SPREADWATCH_PORT)",
    )
    p.add_argument(
        "--bind-address",
        default=env("BIND_ADDRESS", "0.0.0.0"),
        help="address of the probe and metrics servers (default 0.0.0.0; env SPREADWATCH_BIND_ADDRESS)",
    )
    p.add_argument(
        "--metrics-port",
        type=port,
        default=env_int("METRICS_PORT", 8443),
        help="port of /metrics (default 8443; env SPREADWATCH_METRICS_PORT)",
    )
    p.add_argument(
        "--metrics-secure",
        nargs="?",
        const=True,
        type=flag_bool,
        default=env_bool("METRICS_SECURE", True),
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
        default=env("METRICS_CERT_DIR", "") or None,
        metavar="DIR",
        help="directory with tls.crt and tls.key for /metrics (default: a self-signed certificate generated at "
        "start under $TMPDIR; env SPREADWATCH_METRICS_CERT_DIR)",
    )


def _add_logging(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=env("LOG_FORMAT", "text"),
        help="text or json (env SPREADWATCH_LOG_FORMAT)",
    )
    p.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        default=env("LOG_LEVEL", "INFO").upper(),
        help="(env SPREADWATCH_LOG_LEVEL)",
    )


def _add_leader_election(p: argparse.ArgumentParser) -> None:
    """The coordination.k8s.io Lease only whose holder writes."""
    p.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=env_bool("LEADER_ELECT", True),
        help="only the holder of a coordination.k8s.io Lease writes (default on; env SPREADWATCH_LEADER_ELECT)",
    )
    p.add_argument("--lease-name", default=env("LEASE_NAME", "spreadwatch-leader"), help="(env SPREADWATCH_LEASE_NAME)")
    p.add_argument(
        "--lease-namespace",
        default=env("LEASE_NAMESPACE", os.environ.get("POD_NAMESPACE", "") or "default"),
        help="(default $POD_NAMESPACE or default; env SPREADWATCH_LEASE_NAMESPACE)",
    )
    p.add_argument(
        "--identity",
        default=env("IDENTITY", "") or default_identity(),
        help="leader-election identity (default $POD_NAME or the host name; env SPREADWATCH_IDENTITY)",
    )
    p.add_argument(
        "--lease-duration",
        type=positive_seconds,
        default=env_float("LEASE_DURATION", 15.0),
        metavar="SECONDS",
        help="(default 15; env SPREADWATCH_LEASE_DURATION)",
    )
    p.add_argument(
        "--renew-period",
        type=positive_seconds,
        default=env_float("RENEW_PERIOD", 2.0),
        metavar="SECONDS",
        help="(default 2; env SPREADWATCH_RENEW_PERIOD)",
    )
