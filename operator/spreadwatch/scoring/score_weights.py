"""How much spreading counts: the score plugins of a kube-scheduler profile and their weights.

kube-scheduler sums, per node, every enabled score plugin's normalised score (0-100) times its weight and picks
a node with the highest sum. spreadwatch computes the spreading plugin's part exactly; whether the scheduler
follows it depends on the other plugins. Without ``--scheduler-config`` the weights are those of kube-scheduler's
default profile (v1.22-v1.36: ``pkg/scheduler/apis/config/v1/default_plugins.go``); with one, the named
profile's ``plugins.multiPoint`` and ``plugins.score`` (``disabled`` names or ``*``, then ``enabled`` with their
weights; a missing or 0 weight is 1, as the framework's getScoreWeights makes it: an enabled entry replaces the
default one, weight included) are applied to those defaults. Plugins
behind feature gates (DynamicResources, VolumeBinding's capacity scoring) are not listed. Pure; O(plugins).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from spreadwatch.errors import InputError
from spreadwatch.scoring.profiles import Profile
from spreadwatch.scoring.schedconfig import DEFAULT_SCHEDULER_NAME

__all__ = ["DEFAULT_SCORE_WEIGHTS", "RESOURCE_PLUGINS", "ScoreWeights", "score_weights", "spread_plugin"]

#: the score plugins of kube-scheduler's default profile (v1.22-v1.36) and their weights
DEFAULT_SCORE_WEIGHTS: Final[Mapping[str, int]] = MappingProxyType({
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
})  # fmt: skip
#: score plugins that read the pods' resource requests and the nodes' allocatable resources
RESOURCE_PLUGINS: Final = ("NodeResourcesFit", "NodeResourcesBalancedAllocation")
_SELECTOR_SPREAD_WEIGHT: Final = 1  # its weight in the default profiles up to v1.21
_KNOWN_SCORE_PLUGINS: Final = frozenset(DEFAULT_SCORE_WEIGHTS) | {"SelectorSpread"}


@dataclass(frozen=True, slots=True)
class ScoreWeights:
    """The enabled score plugins of a scheduler profile → weight, and where that profile comes from."""

    plugin: str  # the spreading plugin spreadwatch computes
    weights: Mapping[str, int]
    source: str

    @property
    def spread_weight(self) -> int | None:
        """The spreading plugin's weight; None when the profile does not enable it."""
        return self.weights.get(self.plugin)

    @property
    def others(self) -> tuple[tuple[str, int], ...]:
        """The other enabled score plugins, heaviest first, then by name."""
        return tuple(sorted(((n, w) for n, w in self.weights.items() if n != self.plugin),
                            key=lambda item: (-item[1], item[0])))  # fmt: skip

    @property
    def resource_scored(self) -> bool:
        """A plugin scoring resource requests is enabled (it can outweigh spreading on unevenly filled nodes)."""
        return any(name in self.weights for name in RESOURCE_PLUGINS)


def spread_plugin(profile: Profile) -> str:
    """The plugin whose scores the profile reproduces."""
    return "PodTopologySpread" if profile.pod_topology_spread else "SelectorSpread"


def _mapping(value: object, source: str, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{source}: {path}: expected a mapping, got {type(value).__name__}")
    return value


def _plugins(value: object, source: str, path: str) -> list[tuple[str, int]]:
    """(name, weight) of a ``enabled``/``disabled`` list (weight 0 when absent)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{source}: {path}: expected a list, got {type(value).__name__}")
    out = []
    for i, raw in enumerate(value):
        entry = _mapping(raw, source, f"{path}[{i}]")
        name, weight = entry.get("name"), entry.get("weight") or 0
        if not isinstance(name, str) or not name:
            raise InputError(f"{source}: {path}[{i}].name: is required")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise InputError(f"{source}: {path}[{i}].weight: must be a non-negative integer, got {weight!r}")
        out.append((name, weight))
    return out


def _apply(weights: dict[str, int], point: Mapping[str, Any], only_known: bool, source: str, path: str) -> None:
    """Apply one extension point's ``disabled`` then ``enabled`` lists to ``weights`` (in place)."""
    disabled = [name for name, _ in _plugins(point.get("disabled"), source, f"{path}.disabled")]
    if "*" in disabled:
        weights.clear()
    for name in disabled:
        weights.pop(name, None)
    for name, weight in _plugins(point.get("enabled"), source, f"{path}.enabled"):
        if only_known and name not in _KNOWN_SCORE_PLUGINS:
            continue  # multiPoint also enables filter and bind plugins
        weights[name] = weight or 1  # (kube-scheduler v1.36.4's framework, checked by its oracle)


def score_weights(profile: Profile, config: Mapping[str, Any] | None = None, source: str = "",
                  scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> ScoreWeights:  # fmt: skip
    """The score plugins and weights the profile's pods meet: kube-scheduler's default profile, or the profile
    ``scheduler_name`` of a ``KubeSchedulerConfiguration`` document (already parsed) read from ``source``.

    A SelectorSpread profile without a configuration gets SelectorSpread at weight 1 next to the default
    profile's other plugins (kube-scheduler v1.22-v1.28 runs it only where a profile enables it)."""
    plugin = spread_plugin(profile)
    weights = dict(DEFAULT_SCORE_WEIGHTS)
    if config is None:
        if plugin == "SelectorSpread":
            del weights["PodTopologySpread"]
            weights[plugin] = _SELECTOR_SPREAD_WEIGHT
            return ScoreWeights(plugin, weights, "a profile enabling it next to the default score plugins")
        return ScoreWeights(plugin, weights, "kube-scheduler's default profile")
    profiles = config.get("profiles")
    if profiles is None:
        profiles = [{}]
    if not isinstance(profiles, list):
        raise InputError(f"{source}: profiles: expected a list, got {type(profiles).__name__}")
    for i, raw in enumerate(profiles):
        entry = _mapping(raw, source, f"profiles[{i}]")
        if str(entry.get("schedulerName") or DEFAULT_SCHEDULER_NAME) != scheduler_name:
            continue
        plugins = _mapping(entry.get("plugins"), source, f"profiles[{i}].plugins")
        for point, only_known in (("multiPoint", True), ("score", False)):
            path = f"profiles[{i}].plugins.{point}"
            _apply(weights, _mapping(plugins.get(point), source, path), only_known, source, path)
        return ScoreWeights(plugin, weights, f"{source} (profile {scheduler_name})")
    raise InputError(f"{source}: profiles: no profile with schedulerName {scheduler_name!r}")
