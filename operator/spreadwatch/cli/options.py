"""The flags several commands share, each declared once, and what they resolve to.

``--cluster`` (or the live cluster through ``--kubeconfig``/``--context``), ``--profile`` with the scheduler
configuration, the report thresholds and ``--node-metrics``; :func:`snapshot_of`, :func:`report_options`
and :func:`metrics_options` turn the parsed flags into what the analysis takes. Defaults come from
``SPREADWATCH_*`` (:mod:`spreadwatch.cli.env`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from spreadwatch.cli.argtypes import checked_number, whole_number
from spreadwatch.cli.env import env, env_bool, env_choice, env_float, env_int
from spreadwatch.cli.output import write_notes
from spreadwatch.config import NODE_SERIES_MODES, MetricsOptions
from spreadwatch.errors import InputError
from spreadwatch.profile_args import add_scheduler_config_args, auto_choice, load_scheduler_profile, resolve_profile
from spreadwatch.report import DEFAULT_MAX_NODES, DEFAULT_TOP_N, NAMESPACED_PARTIAL, HealthThresholds, ReportOptions
from spreadwatch.scoring import DEFAULT_PROFILE, PROFILES, Profile
from spreadwatch.scoring.releases import AUTO_PROFILE
from spreadwatch.scoring.window import DEFAULT_WINDOW_SAMPLES
from spreadwatch.snapshot import Snapshot, load_snapshot

__all__ = [
    "NAMESPACED_PARTIAL",
    "add_cluster_args",
    "add_kubeconfig_args",
    "add_node_metrics_arg",
    "add_number_arg",
    "add_percentage_arg",
    "add_prediction_arg",
    "add_profile_args",
    "add_report_args",
    "add_window_args",
    "chosen_profile",
    "metrics_options",
    "report_options",
    "snapshot_of",
]


def add_cluster_args(p: argparse.ArgumentParser, cluster_required: bool = True) -> None:
    """``--cluster`` (without it, when not required: the kubeconfig flags), ``--profile`` and the scheduler
    configuration: what every command that reads a cluster takes."""
    p.add_argument(
        "--cluster",
        action="append",
        required=cluster_required,
        metavar="FILE",
        help="snapshot: kubectl get -o yaml|json output, multi-document YAML or a directory (repeatable; - for stdin)"
        + ("" if cluster_required else "; without it the live cluster is read through the kubeconfig"),
    )
    if not cluster_required:
        add_kubeconfig_args(p)
    add_profile_args(p)


def add_profile_args(p: argparse.ArgumentParser, default: str = DEFAULT_PROFILE) -> None:
    """``--profile`` (env SPREADWATCH_PROFILE; ``default`` when unset), ``--scheduler-config`` and
    ``--scheduler-name``."""
    p.add_argument(
        "--profile",
        default=env("PROFILE", default),
        help=f"scoring generation: {', '.join(PROFILES)}, or {AUTO_PROFILE}: the one of the cluster's kube-scheduler "
        "release (the API server's /version; a snapshot's newest node kubeletVersion; docs/scoring.md §14) "
        f"(default {default}; env SPREADWATCH_PROFILE)",
    )
    add_scheduler_config_args(p)


def _asks_auto(args: argparse.Namespace) -> bool:
    """Whether a profile flag of ``args`` is ``auto`` (the live cluster's version is then read). O(1)."""
    names = ("profile", "from_profile", "to_profile", "compare")
    return any(getattr(args, name, None) == AUTO_PROFILE for name in names)


def chosen_profile(args: argparse.Namespace, snapshot: Snapshot, name: str | None = None) -> tuple[Profile, str]:
    """The profile ``name`` (default ``--profile``) with the scheduler configuration, and why it is the one
    (``--profile v1.28``, or auto's :attr:`~spreadwatch.scoring.releases.ProfileChoice.why`). ``auto`` is
    resolved from ``snapshot`` (docs/scoring.md §14), the choice written to stderr as a note (and a warning
    for a release spreadwatch does not know). O(nodes)."""
    asked = name or args.profile
    if asked != AUTO_PROFILE:
        return resolve_profile(args, asked), f"--profile {asked}"
    choice = auto_choice(snapshot)
    write_notes([f"--profile auto: {choice.describe()}", *([choice.warning] if choice.warning else [])])
    return resolve_profile(args, choice.profile), choice.why


def add_kubeconfig_args(p: argparse.ArgumentParser) -> None:
    """``--kubeconfig`` and ``--context`` (env SPREADWATCH_KUBECONFIG, SPREADWATCH_CONTEXT)."""
    p.add_argument(
        "--kubeconfig",
        default=env("KUBECONFIG", "") or None,
        metavar="FILE",
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster; env SPREADWATCH_KUBECONFIG)",
    )
    p.add_argument(
        "--context", default=env("CONTEXT", "") or None, help="kubeconfig context (env SPREADWATCH_CONTEXT)"
    )


def add_node_metrics_arg(p: argparse.ArgumentParser) -> None:
    """``--node-metrics`` (env SPREADWATCH_NODE_METRICS)."""
    p.add_argument(
        "--node-metrics",
        choices=NODE_SERIES_MODES,
        default=env_choice("NODE_METRICS", "default", NODE_SERIES_MODES),
        help="per-node metric series: default (node_pods where the workload has pods, node_score on the "
        "--top-nodes best candidates), none, or all (every candidate node; large) (env SPREADWATCH_NODE_METRICS)",
    )


def add_number_arg(
    p: argparse.ArgumentParser,
    flag: str,
    convert: Callable[[str], float],
    env_name: str,
    default: float,
    help_text: str,
    metavar: str | None = None,
) -> None:
    """A numeric ``flag`` read by ``convert`` (an argtypes converter); its default is ``SPREADWATCH_<env_name>``
    (an integer when ``default`` is one, else a number) or ``default``."""
    env_default = env_int(env_name, default) if isinstance(default, int) else env_float(env_name, default)
    p.add_argument(flag, type=convert, default=env_default, metavar=metavar, help=help_text)


_MAX_NODES_HELP = "cap on nodes with matching pods listed per report"


def add_report_args(p: argparse.ArgumentParser) -> None:
    """The report's size and health thresholds: ``--top-nodes``, ``--max-report-nodes``, ``--max-node-skew``,
    ``--max-zone-skew``, ``--spof-min-pods``; and the window's flags (:func:`add_window_args`)."""
    for flag, env_name, default, what in (
        ("--top-nodes", "TOP_NODES", DEFAULT_TOP_N, "best-scoring candidate nodes listed per report"),
        ("--max-report-nodes", "MAX_REPORT_NODES", DEFAULT_MAX_NODES, _MAX_NODES_HELP),
        ("--max-node-skew", "MAX_NODE_SKEW", 1, "node skew above this is Imbalanced"),
        ("--max-zone-skew", "MAX_ZONE_SKEW", 1, "zone skew above this is Imbalanced"),
        ("--spof-min-pods", "SPOF_MIN_PODS", 2, "pods needed before all-on-one-node/zone is a SinglePointOfFailure"),
    ):
        add_number_arg(p, flag, whole_number, env_name, default, f"{what} (env SPREADWATCH_{env_name})")
    add_window_args(p)


def _percentage(text: str) -> int:
    """``text`` as a percentage of nodes to score (0-100); ArgumentTypeError otherwise."""
    return checked_number(text, int, "a whole number", lambda v: 0 <= v <= 100, "between 0 and 100")


def add_window_args(p: argparse.ArgumentParser) -> None:
    """The scheduler's window: ``--percentage-of-nodes-to-score`` and ``--window-samples``."""
    add_percentage_arg(p)
    add_number_arg(
        p,
        "--window-samples",
        whole_number,
        "WINDOW_SAMPLES",
        DEFAULT_WINDOW_SAMPLES,
        "window starts averaged for the best-node probabilities (all of them, exactly, in clusters with no more "
        "nodes; 0: none) (env SPREADWATCH_WINDOW_SAMPLES)",
    )


def add_percentage_arg(p: argparse.ArgumentParser) -> None:
    """``--percentage-of-nodes-to-score`` (env SPREADWATCH_PERCENTAGE_OF_NODES_TO_SCORE)."""
    raw = env("PERCENTAGE_OF_NODES_TO_SCORE", "")
    try:
        default = _percentage(raw) if raw else None
    except argparse.ArgumentTypeError as err:
        raise InputError(f"SPREADWATCH_PERCENTAGE_OF_NODES_TO_SCORE={raw!r}: {err}") from None
    p.add_argument(
        "--percentage-of-nodes-to-score",
        type=_percentage,
        default=default,
        metavar="PCT",
        help="kube-scheduler's percentageOfNodesToScore: 1-100 (100: every node is scored), 0 for its adaptive "
        "default max(5, 50 - nodes/125); default: --scheduler-config's, else 0 (env "
        "SPREADWATCH_PERCENTAGE_OF_NODES_TO_SCORE)",
    )



def add_prediction_arg(p: argparse.ArgumentParser) -> None:
    """``--prediction``/``--no-prediction`` (env SPREADWATCH_PREDICTION, default on)."""
    p.add_argument(
        "--prediction",
        action=argparse.BooleanOptionalAction,
        default=env_bool("PREDICTION", True),
        help="add where kube-scheduler's whole profile (--scheduler-config, else its default profile) puts each "
        "workload's next pod to the reports (profile v1.29; env SPREADWATCH_PREDICTION)",
    )


def report_options(args: argparse.Namespace, namespaced: bool = False, load: bool = True) -> ReportOptions:
    """The report flags as :class:`~spreadwatch.report.ReportOptions` (the prediction's scheduler profile read
    from ``--scheduler-config`` when ``--prediction`` and ``load``; ``namespaced``: only some namespaces are
    seen). ``run`` reads the configuration when the operator starts (``load`` False)."""
    scheduler = None
    if load and getattr(args, "prediction", False):
        scheduler = load_scheduler_profile(getattr(args, "scheduler_config", None),
                                           getattr(args, "scheduler_name", "") or "default-scheduler")  # fmt: skip
    return ReportOptions(
        top_n=args.top_nodes,
        max_nodes=args.max_report_nodes,
        thresholds=HealthThresholds(args.max_node_skew, args.max_zone_skew, args.spof_min_pods),
        window_samples=args.window_samples,
        score_percentage=args.percentage_of_nodes_to_score,
        scheduler=scheduler,
        prediction_partial=(NAMESPACED_PARTIAL,) if namespaced and scheduler is not None else (),
    )


def metrics_options(args: argparse.Namespace) -> MetricsOptions:
    """``--node-metrics`` and ``--top-nodes`` as :class:`~spreadwatch.config.MetricsOptions`."""
    return MetricsOptions(node_series=args.node_metrics, top_n=args.top_nodes)


def snapshot_of(args: argparse.Namespace, namespaces: Sequence[str] = ()) -> Snapshot:
    """The ``--cluster`` snapshot, or the live cluster (only ``namespaces`` when given) via the kubeconfig.

    Live: every list page is decoded straight into records (:func:`spreadwatch.kube.iter_cluster_records`),
    O(objects), and, when a profile flag is ``auto``, the API server's version is read (``GET /version``); the
    Kubernetes client is imported only here (it is slow to import).
    """
    if args.cluster:
        snapshot = load_snapshot(args.cluster)
        write_notes(snapshot.notes)
        return snapshot
    from spreadwatch import kube  # noqa: PLC0415 - the client is slow to import; only live mode needs it

    try:
        api = kube.load_api_client(args.kubeconfig, args.context)
    except InputError as err:
        if args.kubeconfig:
            raise
        raise InputError(f"--cluster FILE or a usable kubeconfig is required ({err})") from None
    try:
        snapshot = Snapshot.from_decoded(item for _, item in kube.iter_cluster_records(api, namespaces))
        if _asks_auto(args):
            snapshot.server_version = kube.server_version(api)
        return snapshot
    finally:
        api.close()
