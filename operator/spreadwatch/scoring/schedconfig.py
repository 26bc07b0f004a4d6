"""PodTopologySpread's default constraints and ``percentageOfNodesToScore`` from a
``KubeSchedulerConfiguration`` (``--scheduler-config``).

Reads ``kubescheduler.config.k8s.io/v1`` (or ``v1beta3``, kube-scheduler v1.28's: the same fields): the
profile whose ``schedulerName`` is asked for (a file without ``profiles`` has the one ``default-scheduler``
profile), its ``pluginConfig`` entry named ``PodTopologySpread`` and that entry's ``args``:
``defaultingType`` (``System``, the default, or ``List``) and ``defaultConstraints``, validated as
kube-scheduler validates them (maxSkew > 0, a topologyKey, a valid whenUnsatisfiable, no labelSelector, no
duplicate key/action pair; System with constraints is an error). No PodTopologySpread args: the system
defaults. ``percentageOfNodesToScore`` (an integer 0-100; 0 is the adaptive default) is the profile's when
it sets one, else the top level's, else 0. Anything unusable raises :class:`InputError` with one line naming
the file and field. Pure: the caller parses the YAML. O(size of the document).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from spreadwatch.errors import InputError
from spreadwatch.model import SpreadConstraint
from spreadwatch.scoring.profiles import SYSTEM_DEFAULT_CONSTRAINTS, DefaultConstraints
from spreadwatch.selectors import EVERYTHING

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "config_error",
    "config_list",
    "config_mapping",
    "default_constraints_from_config",
    "score_percentage_from_config",
]

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
_API_VERSIONS: Final = (API_VERSION, "kubescheduler.config.k8s.io/v1beta3")
_PERCENTAGE_FIELD: Final = "percentageOfNodesToScore"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
_ACTIONS: Final = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES: Final = ("Honor", "Ignore")


def config_error(source: str, path: str, problem: str) -> InputError:
    """One line naming the configuration ``source``, the field's ``path`` and the ``problem``."""
    return InputError(f"{source}: {path}: {problem}" if path else f"{source}: {problem}")


def config_mapping(value: object, source: str, path: str) -> Mapping[str, Any]:
    """``value`` as a mapping (None: empty); InputError naming ``path`` for anything else. O(1)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise config_error(source, path, f"expected a mapping, got {type(value).__name__}")
    return value


def config_list(value: object, source: str, path: str) -> list[Any]:
    """``value`` as a list (None: empty); InputError naming ``path`` for anything else. O(1)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise config_error(source, path, f"expected a list, got {type(value).__name__}")
    return value


def _constraint(raw: object, source: str, path: str) -> SpreadConstraint:
    c = config_mapping(raw, source, path)
    skew = c.get("maxSkew")
    if isinstance(skew, bool) or not isinstance(skew, int) or skew <= 0:
        raise config_error(source, f"{path}.maxSkew", f"must be an integer greater than 0, got {skew!r}")
    key = c.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise config_error(source, f"{path}.topologyKey", "is required")
    action = c.get("whenUnsatisfiable")
    if action not in _ACTIONS:
        raise config_error(source, f"{path}.whenUnsatisfiable", f"must be one of {', '.join(_ACTIONS)}, got {action!r}")
    if c.get("labelSelector") is not None:
        raise config_error(source, f"{path}.labelSelector", "default constraints must not define a selector")
    policies = {}
    for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = c.get(field)
        if value is not None and value not in _POLICIES:
            raise config_error(source, f"{path}.{field}", f"must be Honor or Ignore, got {value!r}")
        policies[field] = value or ""
    return SpreadConstraint(
        max_skew=skew,
        topology_key=key,
        when_unsatisfiable=str(action),
        selector=EVERYTHING,  # replaced by the pod's default selector
        node_affinity_policy=policies["nodeAffinityPolicy"],
        node_taints_policy=policies["nodeTaintsPolicy"],
    )


def _config(doc: object, source: str) -> tuple[Mapping[str, Any], list[tuple[str, str, Mapping[str, Any]]]]:
    """The checked document and its profiles as ``(name, path, profile)`` (a file without ``profiles`` has
    the one ``default-scheduler`` profile); duplicate names raise InputError. O(profiles)."""
    config = config_mapping(doc, source, "")
    if config.get("kind") != "KubeSchedulerConfiguration" or config.get("apiVersion") not in _API_VERSIONS:
        raise config_error(
            source,
            "",
            f"expected kind KubeSchedulerConfiguration, apiVersion {' or '.join(_API_VERSIONS)}; "
            f"got kind {config.get('kind')!r}, apiVersion {config.get('apiVersion')!r}",
        )
    raw_profiles = config_list(config.get("profiles"), source, "profiles")
    raw_profiles = raw_profiles or [{"schedulerName": DEFAULT_SCHEDULER_NAME}]
    profiles: list[tuple[str, str, Mapping[str, Any]]] = []
    for i, raw in enumerate(raw_profiles):
        profile = config_mapping(raw, source, f"profiles[{i}]")
        name = str(profile.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        if any(name == seen for seen, _, _ in profiles):
            raise config_error(source, f"profiles[{i}].schedulerName", f"duplicate profile {name!r}")
        profiles.append((name, f"profiles[{i}]", profile))
    return config, profiles


def _named(profiles: list[tuple[str, str, Mapping[str, Any]]], source: str, scheduler_name: str) -> int:
    """The index of profile ``scheduler_name``; InputError naming the profiles found. O(profiles)."""
    for i, (name, _, _) in enumerate(profiles):
        if name == scheduler_name:
            return i
    found = ", ".join(name for name, _, _ in profiles)
    raise config_error(source, "profiles", f"no profile with schedulerName {scheduler_name!r} (found: {found})")


def default_constraints_from_config(
    doc: object, source: str, scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> DefaultConstraints:
    """The PodTopologySpread defaults of profile ``scheduler_name`` in a parsed KubeSchedulerConfiguration
    (``source`` names the file in messages). Raises InputError."""
    _, profiles = _config(doc, source)
    # kube-scheduler validates every profile, not only the one it runs
    found = [
        _profile_defaults(profile, source, f"{path}.pluginConfig", f"{source} (profile {name})")
        for name, path, profile in profiles
    ]
    return found[_named(profiles, source, scheduler_name)]


def _percentage(value: object, source: str, path: str) -> int | None:
    """A ``percentageOfNodesToScore`` (None when unset); InputError unless an integer 0-100. O(1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise config_error(source, path, f"must be an integer between 0 and 100, got {value!r}")
    return value


def score_percentage_from_config(doc: object, source: str, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> int:
    """``percentageOfNodesToScore`` for profile ``scheduler_name``: the profile's, else the top level's, else
    0 (adaptive), as ``numFeasibleNodesToFind`` chooses. Raises InputError. O(profiles)."""
    config, profiles = _config(doc, source)
    top = _percentage(config.get(_PERCENTAGE_FIELD), source, _PERCENTAGE_FIELD)
    own = [_percentage(p.get(_PERCENTAGE_FIELD), source, f"{path}.{_PERCENTAGE_FIELD}") for _, path, p in profiles]
    chosen = own[_named(profiles, source, scheduler_name)]
    if chosen is not None:
        return chosen
    return top or 0


def _profile_defaults(profile: Mapping[str, Any], source: str, base: str, where: str) -> DefaultConstraints:
    """One profile's PodTopologySpread defaults (validated)."""
    args: Mapping[str, Any] | None = None
    for j, raw in enumerate(config_list(profile.get("pluginConfig"), source, base)):
        entry = config_mapping(raw, source, f"{base}[{j}]")
        if entry.get("name") == "PodTopologySpread":
            args = config_mapping(entry.get("args"), source, f"{base}[{j}].args")
            base = f"{base}[{j}].args"
    if args is None:
        return DefaultConstraints(SYSTEM_DEFAULT_CONSTRAINTS.constraints, True, f"system defaults of {where}")
    kind = args.get("defaultingType") or "System"
    if kind not in ("System", "List"):
        raise config_error(source, f"{base}.defaultingType", f"must be System or List, got {kind!r}")
    raw_constraints = config_list(args.get("defaultConstraints"), source, f"{base}.defaultConstraints")
    constraints = []
    seen: set[tuple[str, str]] = set()
    for k, raw in enumerate(raw_constraints):
        c = _constraint(raw, source, f"{base}.defaultConstraints[{k}]")
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise config_error(source, f"{base}.defaultConstraints[{k}]", f"duplicate {pair[0]}/{pair[1]} constraint")
        seen.add(pair)
        constraints.append(c)
    if kind == "System":
        if raw_constraints:
            raise config_error(source, f"{base}.defaultConstraints", "must be empty when defaultingType is System")
        return DefaultConstraints(SYSTEM_DEFAULT_CONSTRAINTS.constraints, True, f"system defaults of {where}")
    return DefaultConstraints(tuple(constraints), False, f"List defaults of {where}")
