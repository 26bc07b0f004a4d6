"""CLI options that shape the scoring profile: ``--scheduler-config`` and ``--scheduler-name``.

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
from collections.abc import Mapping
from typing import Any, Final

from spreadwatch.errors import InputError
from spreadwatch.scoring import Profile, get_profile
from spreadwatch.scoring.schedconfig import (
    DEFAULT_SCHEDULER_NAME,
    default_constraints_from_config,
    score_percentage_from_config,
)
from spreadwatch.scoring.scheduler_profile import SchedulerProfile, default_scheduler_profile, scheduler_profile
from spreadwatch.scoring.score_weights import ScoreWeights, score_weights
from spreadwatch.snapshot import read_documents

__all__ = [
    "MAX_CONFIG_DEPTH",
    "PREDICTION_PROFILE",
    "add_scheduler_config_args",
    "load_profile",
    "load_scheduler_profile",
    "load_score_weights",
    "resolve_profile",
]

#: the spreading profile of the scheduler the prediction models (kube-scheduler v1.36: PodTopologySpread)
PREDICTION_PROFILE: Final = "v1.29"

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


def resolve_profile(args: argparse.Namespace, name: str | None = None) -> Profile:
    """The profile named by ``name`` (default ``args.profile``) with ``args``' scheduler config applied."""
    return load_profile(
        name or args.profile, getattr(args, "scheduler_config", None), getattr(args, "scheduler_name", "")
        or DEFAULT_SCHEDULER_NAME
    )
