"""``spreadwatch run``: the operator's :class:`~spreadwatch.config.OperatorConfig` assembled from the parsed
flags (:mod:`spreadwatch.cli.run_flags`), validated, and the operator started. kopf and the Kubernetes
client are imported only when the operator starts (they are slow to import)."""

from __future__ import annotations

import argparse
from typing import TextIO

from spreadwatch.cli.env import env_list, split_list
from spreadwatch.cli.options import metrics_options, report_options
from spreadwatch.config import LeaderElection, OperatorConfig, parse_label_requirement

__all__ = ["cmd_run", "operator_config"]


def _listed(flag_values: list[str], env_name: str) -> tuple[str, ...]:
    """Comma-separated, repeatable flag values (or ``SPREADWATCH_<env_name>`` when none), deduplicated."""
    values = [v for item in flag_values for v in split_list(item)] or env_list(env_name)
    return tuple(dict.fromkeys(values))


def operator_config(args: argparse.Namespace) -> OperatorConfig:
    """The operator's settings from ``run``'s flags (validated; InputError on unusable values)."""
    namespaces = _listed(args.namespace, "NAMESPACE")
    return OperatorConfig(
        namespaces=namespaces,
        skip_namespaces=_listed(args.skip_namespace, "SKIP_NAMESPACE"),
        opt_out=parse_label_requirement(args.opt_out_label),
        profile=args.profile,
        scheduler_config=args.scheduler_config,
        scheduler_name=args.scheduler_name,
        compare_profile=args.compare_profile,
        report=report_options(args, namespaced=bool(namespaces), load=False),
        prediction=args.prediction,
        debounce=args.debounce,
        max_writes_per_second=args.max_writes_per_second,
        write_burst=max(1, args.write_burst),
        max_writes_in_flight=args.max_writes_in_flight,
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
        metrics=metrics_options(args),
    ).validate()


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the operator until it is stopped; exit code 0."""
    config = operator_config(args)
    from spreadwatch.runtime.logs import configure_logging  # noqa: PLC0415 - kopf is slow to import
    from spreadwatch.runtime.process import run_operator  # noqa: PLC0415

    configure_logging(config.log_format, config.log_level)
    run_operator(config)
    return 0
