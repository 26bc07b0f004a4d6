"""The flags of ``spreadwatch run`` (the operator), grouped by what they set; defaults from ``SPREADWATCH_*``.

The order of :func:`add_run_args` is the order ``run --help`` lists them. :mod:`spreadwatch.cli.run_config`
turns the parsed flags into an :class:`~spreadwatch.config.OperatorConfig`.
"""

from __future__ import annotations

import argparse
import os

from spreadwatch.cli.argtypes import flag_bool, port, positive_seconds, seconds, whole_number
from spreadwatch.cli.env import env, env_bool
from spreadwatch.cli.options import (
    add_kubeconfig_args,
    add_node_metrics_arg,
    add_number_arg,
    add_prediction_arg,
    add_profile_args,
    add_report_args,
)
from spreadwatch.config import DEFAULT_OPT_OUT_LABEL, LOG_FORMATS, default_identity
from spreadwatch.scoring.releases import AUTO_PROFILE, NO_COMPARISON

__all__ = ["add_run_args"]


def add_run_args(p: argparse.ArgumentParser) -> None:
    """Every flag of ``run``."""
    add_profile_args(p, default=AUTO_PROFILE)
    add_report_args(p)
    add_prediction_arg(p)
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
        default=env("COMPARE_PROFILE", AUTO_PROFILE),
        metavar="PROFILE",
        help="also score every workload under PROFILE: a comparison block in each SpreadReport status and "
        f"spreadwatch_workload_comparison_* metrics; {AUTO_PROFILE}: the other spreading plugin (v1.28 "
        f"SelectorSpread beside PodTopologySpread, v1.29 beside SelectorSpread); {NO_COMPARISON}: off (default "
        f"{AUTO_PROFILE}; env SPREADWATCH_COMPARE_PROFILE)",
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
    debounce = "a workload must be quiet this long before its report is written (default 1; env SPREADWATCH_DEBOUNCE)"
    add_number_arg(p, "--debounce", seconds, "DEBOUNCE", 1.0, debounce, "SECONDS")
    rate = "global API write rate limit (default 100; env SPREADWATCH_MAX_WRITES_PER_SECOND)"
    add_number_arg(p, "--max-writes-per-second", positive_seconds, "MAX_WRITES_PER_SECOND", 100.0, rate)
    burst = "writes allowed in a burst above the rate (default 200; env SPREADWATCH_WRITE_BURST)"
    add_number_arg(p, "--write-burst", whole_number, "WRITE_BURST", 200, burst)
    in_flight = "most API writes waiting on the server at once; below it the writes in flight follow the "
    in_flight += "measured latency (default 24; env SPREADWATCH_MAX_WRITES_IN_FLIGHT)"
    add_number_arg(p, "--max-writes-in-flight", whole_number, "MAX_WRITES_IN_FLIGHT", 24, in_flight)
    resync = "list the SpreadReports' metadata beside the writes, delete orphans, rewrite missing or altered "
    resync += "ones (default 300; 0: only at start; "
    resync += "env SPREADWATCH_RESYNC_PERIOD)"
    add_number_arg(p, "--resync-period", seconds, "RESYNC_PERIOD", 300.0, resync, "SECONDS")


def _add_servers(p: argparse.ArgumentParser) -> None:
    """The probe server and the /metrics server."""
    probes = "port of the plain-HTTP probes /healthz, /readyz and /statusz (default 8081; env SPREADWATCH_PORT)"
    add_number_arg(p, "--port", port, "PORT", 8081, probes)
    p.add_argument(
        "--bind-address",
        default=env("BIND_ADDRESS", "0.0.0.0"),
        help="address of the probe and metrics servers (default 0.0.0.0; env SPREADWATCH_BIND_ADDRESS)",
    )
    metrics = "port of /metrics (default 8443; env SPREADWATCH_METRICS_PORT)"
    add_number_arg(p, "--metrics-port", port, "METRICS_PORT", 8443, metrics)
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
    duration = "(default 15; env SPREADWATCH_LEASE_DURATION)"
    add_number_arg(p, "--lease-duration", positive_seconds, "LEASE_DURATION", 15.0, duration, "SECONDS")
    renew = "(default 2; env SPREADWATCH_RENEW_PERIOD)"
    add_number_arg(p, "--renew-period", positive_seconds, "RENEW_PERIOD", 2.0, renew, "SECONDS")
