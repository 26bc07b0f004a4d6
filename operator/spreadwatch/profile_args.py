"""CLI options that shape the scoring profile: ``--profile auto``, ``--scheduler-config`` and ``--scheduler-name``.

``auto`` (:func:`auto_choice`) takes the profile of the cluster's kube-scheduler release
(:mod:`spreadwatch.scoring.releases`): from the API server's ``GET /version`` when the cluster is read live
(the operator asks it at start), else from the newest ``status.nodeInfo.kubeletVersion`` of the snapshot's
nodes; a snapshot with neither is one line on stderr, exit 2.

``--scheduler-config FILE`` reads a ``KubeSchedulerConfiguration`` (kubescheduler.config.k8s.io/v1 or v1beta3)
and replaces PodTopologySpread's default constraints (profile ``v1.29``; SelectorSpread profiles ignore them)
with those of the profile named by ``--scheduler-name`` (default ``default-scheduler``), and takes its
``percentageOfNodesToScore`` (every profile: the scheduler's window, scoring/window.py). An unreadable or
invalid file is one line on stderr, exit 2, and so is one nested deeper than :data:`MAX_CONFIG_DEPTH` levels
or holding an integer beyond 64 bits (refused before it is interpreted). O(size of the file).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from spreadwatch.errors import InputError, ProfileError
from spreadwatch.report import NAMESPACED_PARTIAL, ReportOptions
from spreadwatch.scoring import PROFILES, Profile, get_profile
from spreadwatch.scoring.releases import (
    AUTO_PROFILE,
    ProfileChoice,
    choose_from_kubelets,
    choose_profile,
    parse_release,
)
from spreadwatch.scoring.schedconfig import (
    DEFAULT_SCHEDULER_NAME,
    default_constraints_from_config,
    score_percentage_from_config,
)
from spreadwatch.scoring.scheduler_profile import SchedulerProfile, default_scheduler_profile, scheduler_profile
from spreadwatch.scoring.score_weights import ScoreWeights, score_weights
from spreadwatch.snapshot import Snapshot, read_documents

if TYPE_CHECKING:
    from spreadwatch.config import OperatorConfig

__all__ = [
    "MAX_CONFIG_DEPTH",
    "PREDICTION_PROFILE",
    "add_scheduler_config_args",
    "auto_choice",
    "check_profile_args",
    "load_profile",
    "load_scheduler_profile",
    "load_score_weights",
    "operator_profiles",
    "operator_report_options",
    "resolve_profile",
    "server_choice",
]

#: the spreading profile of the scheduler the prediction models (kube-scheduler v1.36: PodTopologySpread)
PREDICTION_PROFILE: Final = "v1.29"
#: The profile that reads every part of ``--scheduler-config`` (auto's is not known before the cluster is read).
_READS_EVERY_ARG: Final = "v1.29"
#: A KubeSchedulerConfiguration nests about 8 levels; one nested deeper than this is refused.
MAX_CONFIG_DEPTH: Final = 64
_INT64: Final = (-(2**63), 2**63 - 1)


def add_scheduler_config_args(p: argparse.ArgumentParser) -> None:
    """Add ``--scheduler-config`` and ``--scheduler-name`` (env SPREADWATCH_SCHEDULER_CONFIG / _NAME)."""
    p.add_argument(
        "--scheduler-config",
        default=os.environ.get("SPREADWATCH_SCHEDULER_CONFIG") or None,
        metavar="FILE",
        help="KubeSchedulerConfiguration whose PodTopologySpread defaultConstraints/defaultingType profile "
        "v1.29 uses (env SPREADWATCH_SCHEDULER_CONFIG)",
    )
    p.add_argument(
        "--scheduler-name",
        default=os.environ.get("SPREADWATCH_SCHEDULER_NAME") or DEFAULT_SCHEDULER_NAME,
        help=f"the scheduler profile read from --scheduler-config (default {DEFAULT_SCHEDULER_NAME}; "
        "env SPREADWATCH_SCHEDULER_NAME)",
    )


def load_profile(name: str, scheduler_config: str | None, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
    """Profile ``name`` with the ``percentageOfNodesToScore`` and (v1.29) the PodTopologySpread defaults of
    ``scheduler_config`` (when given)."""
    profile = get_profile(name)
    if not scheduler_config:
        return profile
    config = _config_document(scheduler_config)
    defaults = default_constraints_from_config(config, scheduler_config, scheduler_name)
    percentage = score_percentage_from_config(config, scheduler_config, scheduler_name)
    if not profile.pod_topology_spread:
        return dataclasses.replace(profile, score_percentage=percentage)
    return dataclasses.replace(profile, default_constraints=defaults, score_percentage=percentage)


def load_score_weights(profile: Profile, scheduler_config: str | None,
                       scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> ScoreWeights:  # fmt: skip
    """The score plugins and weights of the scheduler profile (``--scheduler-config``, else the default one)."""
    if not scheduler_config:
        return score_weights(profile)
    config = _config_document(scheduler_config)
    return score_weights(profile, config, scheduler_config, scheduler_name or DEFAULT_SCHEDULER_NAME)


def load_scheduler_profile(scheduler_config: str | None, scheduler_name: str = DEFAULT_SCHEDULER_NAME
                           ) -> SchedulerProfile:  # fmt: skip
    """kube-scheduler's profile the prediction runs: ``--scheduler-config``'s profile ``scheduler_name``, else the
    default profile. Raises InputError."""
    if not scheduler_config:
        return default_scheduler_profile()
    return scheduler_profile(_config_document(scheduler_config), scheduler_config,
                             scheduler_name or DEFAULT_SCHEDULER_NAME)  # fmt: skip


def _config_document(source: str) -> Mapping[str, Any]:
    """The one document of a scheduler configuration file, its bounds checked (:func:`_check_bounds`)."""
    docs = read_documents([source])
    if len(docs) != 1:
        raise InputError(f"{source}: expected one KubeSchedulerConfiguration, found {len(docs)} documents")
    _check_bounds(docs[0], source)
    return docs[0]


def _check_bounds(doc: Any, source: str) -> None:
    """InputError naming the path of the first value nested deeper than MAX_CONFIG_DEPTH or of an integer
    beyond 64 bits. Iterative: O(values)."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_CONFIG_DEPTH:
            raise InputError(f"{source}: {path[:80]}...: nested deeper than {MAX_CONFIG_DEPTH} levels")
        if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
            raise InputError(f"{source}: {path}: an integer of {value.bit_length()} bits (at most 64)")
        if isinstance(value, Mapping):
            stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))


def server_choice(version: str) -> ProfileChoice:
    """``--profile auto`` for an API server answering ``GET /version`` with ``version`` (InputError, one line,
    when it is no Kubernetes version). O(len(version))."""
    return choose_profile(parse_release(version, "kube-apiserver version"), "kube-apiserver")


class OperatorProfiles(NamedTuple):
    """The operator's profile, the one its reports are compared with (None: none), and, for ``--profile
    auto``, how the profile was chosen (None: named by the flag)."""

    profile: Profile
    compared: Profile | None
    choice: ProfileChoice | None


def operator_profiles(config: OperatorConfig, version: Callable[[], str]) -> OperatorProfiles:
    """``--profile`` and ``--compare-profile`` of the operator, with its scheduler configuration: ``auto`` is
    the profile of the API server's release (``version()``, called only then: ``GET /version``), the compared
    one :meth:`~spreadwatch.config.OperatorConfig.comparison`. InputError (one line) for a version that is none."""
    choice = server_choice(version()) if config.profile == AUTO_PROFILE else None
    profile = load_profile(choice.profile if choice else config.profile, config.scheduler_config, config.scheduler_name)
    compared = config.comparison(profile)
    other = load_profile(compared, config.scheduler_config, config.scheduler_name) if compared else None
    return OperatorProfiles(profile, other, choice)


def operator_report_options(config: OperatorConfig) -> ReportOptions:
    """The operator's report options: ``config.report`` with the scheduler profile its prediction uses
    (``--prediction``: read from ``--scheduler-config`` now, as the spreading profile is; a namespaced operator's
    predictions are partial). What the operator's index and every harness that checks its reports use.
    O(size of the file)."""
    if not config.prediction:
        return config.report
    scheduler = load_scheduler_profile(config.scheduler_config, config.scheduler_name)
    partial = (NAMESPACED_PARTIAL,) if config.namespaces else ()
    return dataclasses.replace(config.report, scheduler=scheduler, prediction_partial=partial)


def auto_choice(snapshot: Snapshot) -> ProfileChoice:
    """``--profile auto`` for a snapshot: the API server's version when it was read live, else the newest
    kubelet version of its nodes; InputError (one line) when it has neither. O(nodes)."""
    if snapshot.server_version:
        return server_choice(snapshot.server_version)
    found = choose_from_kubelets((node.name, node.kubelet_version) for node in snapshot.nodes)
    if found is None:
        raise InputError(
            "--profile auto cannot tell kube-scheduler's release: no node of the snapshot has "
            "status.nodeInfo.kubeletVersion; pass --profile (v1.29 for kube-scheduler v1.20 and later)"
        )
    return found


def _config_args(args: argparse.Namespace) -> tuple[str | None, str]:
    return getattr(args, "scheduler_config", None), getattr(args, "scheduler_name", "") or DEFAULT_SCHEDULER_NAME


def check_profile_args(args: argparse.Namespace) -> None:
    """Validate ``--profile`` and the scheduler configuration before any input is read (InputError, one line):
    a profile's name, or ``auto`` with a configuration any profile may use. O(size of the config file)."""
    name = args.profile
    if name != AUTO_PROFILE and name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)} or {AUTO_PROFILE}")
    load_profile(_READS_EVERY_ARG if name == AUTO_PROFILE else name, *_config_args(args))


def resolve_profile(args: argparse.Namespace, name: str | None = None) -> Profile:
    """The profile named by ``name`` (default ``args.profile``; ``auto`` resolved before, :func:`auto_choice`)
    with ``args``' scheduler config applied."""
    return load_profile(name or args.profile, *_config_args(args))
