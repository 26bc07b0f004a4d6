"""CLI options that shape the scoring profile: ``--scheduler-config`` and ``--scheduler-name``.

``--scheduler-config FILE`` reads a ``KubeSchedulerConfiguration`` (kubescheduler.config.k8s.io/v1 or v1beta3)
and replaces PodTopologySpread's default constraints (profile ``v1.29``; SelectorSpread profiles ignore them)
with those of the profile named by ``--scheduler-name`` (default ``default-scheduler``), and takes its
``percentageOfNodesToScore`` (every profile: the scheduler's window, scoring/window.py). An unreadable or
invalid file is one line on stderr, exit 2. O(size of the file).
"""

from __future__ import annotations

import argparse
import dataclasses
import os

from spreadwatch.errors import InputError
from spreadwatch.scoring import Profile, get_profile
from spreadwatch.scoring.schedconfig import (
    DEFAULT_SCHEDULER_NAME,
    default_constraints_from_config,
    score_percentage_from_config,
)
from spreadwatch.scoring.score_weights import ScoreWeights, score_weights
from spreadwatch.snapshot import read_documents

__all__ = ["add_scheduler_config_args", "load_profile", "load_score_weights", "resolve_profile"]


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
    docs = read_documents([scheduler_config])
    if len(docs) != 1:
        raise InputError(f"{scheduler_config}: expected one KubeSchedulerConfiguration, found {len(docs)} documents")
    defaults = default_constraints_from_config(docs[0], scheduler_config, scheduler_name)
    percentage = score_percentage_from_config(docs[0], scheduler_config, scheduler_name)
    if not profile.pod_topology_spread:
        return dataclasses.replace(profile, score_percentage=percentage)
    return dataclasses.replace(profile, default_constraints=defaults, score_percentage=percentage)


def load_score_weights(profile: Profile, scheduler_config: str | None,
                       scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> ScoreWeights:  # fmt: skip
    """The score plugins and weights of the scheduler profile (``--scheduler-config``, else the default one)."""
    if not scheduler_config:
        return score_weights(profile)
    docs = read_documents([scheduler_config])
    if len(docs) != 1:
        raise InputError(f"{scheduler_config}: expected one KubeSchedulerConfiguration, found {len(docs)} documents")
    return score_weights(profile, docs[0], scheduler_config, scheduler_name or DEFAULT_SCHEDULER_NAME)


def resolve_profile(args: argparse.Namespace, name: str | None = None) -> Profile:
    """The profile named by ``name`` (default ``args.profile``) with ``args``' scheduler config applied."""
    return load_profile(
        name or args.profile, getattr(args, "scheduler_config", None), getattr(args, "scheduler_name", "")
        or DEFAULT_SCHEDULER_NAME
    )
