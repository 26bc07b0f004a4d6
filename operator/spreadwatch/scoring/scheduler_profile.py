"""A kube-scheduler profile as the prediction runs it: its filter and score plugins, weights and plugin args.

Without ``--scheduler-config``: kube-scheduler v1.36.4's default profile (``apis/config/v1/default_plugins.go``
with the feature gates' defaults: DynamicResources enabled, NodeDeclaredFeatures enabled). With one, the named
profile of a ``KubeSchedulerConfiguration`` is merged as kube-scheduler merges it:

* ``mergePlugins``: each extension point's ``disabled`` (``*``: every default) is taken out of the defaults,
  a default re-listed in ``enabled`` is replaced in place (with the weight given there), others appended;
* the framework's ``expandMultiPointPlugins``: a multiPoint plugin joins each point it implements unless that
  point disables it (or ``*``); a plugin also listed at the point keeps that point's entry;
* ``getValidScoreWeights``: a score plugin's weight is the first given in the score point's list, then in
  multiPoint's, and 0 (or none) counts as 1;
* plugin args (``pluginConfig``), defaulted and validated as kube-scheduler does: NodeResourcesFit's
  scoring strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio with its shape), resources and
  weights, ignored resources; BalancedAllocation's resources; InterPodAffinity's ``hardPodAffinityWeight``
  and ``ignorePreferredTermsOfExistingPods``; NodeAffinity's ``addedAffinity``; PodTopologySpread's
  defaults (``schedconfig.py``) and ``percentageOfNodesToScore``.

Anything unusable is one :class:`~spreadwatch.errors.InputError` naming the file and field. Pure; O(size of
the document).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from spreadwatch.errors import InputError
from spreadwatch.model import PreferredSchedulingTerm
from spreadwatch.model.parse import node_selector_terms
from spreadwatch.model.reader import FieldReader
from spreadwatch.model.records import NodeSelectorTerm
from spreadwatch.model.spec_fields import node_selector_requirements
from spreadwatch.scoring.node_affinity_score import node_term_error, preferred_error
from spreadwatch.scoring.resource_fit import (
    DEFAULT_RESOURCE_WEIGHTS,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    FitStrategy,
)
from spreadwatch.scoring.schedconfig import DEFAULT_SCHEDULER_NAME, config_error, config_list, config_mapping

__all__ = [
    "DEFAULT_MULTIPOINT",
    "FILTER",
    "MODELLED_FILTERS",
    "MODELLED_SCORES",
    "PLUGIN_POINTS",
    "PRE_FILTER",
    "PRE_SCORE",
    "SCORE",
    "SchedulerProfile",
    "default_scheduler_profile",
    "scheduler_profile",
]

PRE_FILTER, FILTER, PRE_SCORE, SCORE = "PreFilter", "Filter", "PreScore", "Score"
_F, _PF, _PS, _S = FILTER, PRE_FILTER, PRE_SCORE, SCORE
#: the extension points the in-tree plugins implement (those the prediction looks at), v1.36.4
PLUGIN_POINTS: Final[Mapping[str, frozenset[str]]] = {
    "SchedulingGates": frozenset(),
    "PrioritySort": frozenset(),
    "NodeUnschedulable": frozenset({_F}),
    "NodeName": frozenset({_F}),
    "TaintToleration": frozenset({_F, _PS, _S}),
    "NodeAffinity": frozenset({_PF, _F, _PS, _S}),
    "NodePorts": frozenset({_PF, _F}),
    "NodeResourcesFit": frozenset({_PF, _F, _PS, _S}),
    "VolumeRestrictions": frozenset({_PF, _F}),
    "NodeVolumeLimits": frozenset({_PF, _F}),
    "VolumeBinding": frozenset({_PF, _F, _PS, _S}),
    "VolumeZone": frozenset({_PF, _F}),
    "PodTopologySpread": frozenset({_PF, _F, _PS, _S}),
    "InterPodAffinity": frozenset({_PF, _F, _PS, _S}),
    "DefaultPreemption": frozenset(),
    "NodeResourcesBalancedAllocation": frozenset({_PS, _S}),
    "ImageLocality": frozenset({_S}),
    "DefaultBinder": frozenset(),
    "DynamicResources": frozenset({_PF, _F, _S}),
    "NodeDeclaredFeatures": frozenset({_PF, _F}),
    "GangScheduling": frozenset(),
}
#: kube-scheduler v1.36.4's default multiPoint plugins and weights (feature gates at their defaults)
DEFAULT_MULTIPOINT: Final = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),
)
#: the filters the prediction computes; the other default ones (VolumeRestrictions, NodeVolumeLimits,
#: DynamicResources, NodeDeclaredFeatures) pass every pod without the volumes, claims or features they check
MODELLED_FILTERS: Final = frozenset({
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "VolumeRestrictions",
    "NodeVolumeLimits", "DynamicResources", "NodeDeclaredFeatures",
})  # fmt: skip
#: the score plugins the prediction computes (VolumeBinding's PreScore skips without capacity scoring;
#: DynamicResources scores 0 for a pod without claims)
MODELLED_SCORES: Final = frozenset({
    "TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
    "InterPodAffinity", "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality",
})  # fmt: skip
_POINTS: Final = {"preFilter": PRE_FILTER, "filter": FILTER, "preScore": PRE_SCORE, "score": SCORE}
_MAX_WEIGHT_TOTAL: Final = (2**63 - 1) // 100  # MaxTotalScore / MaxNodeScore: score weights must stay below it


@dataclass(frozen=True, slots=True)
class SchedulerProfile:
    """The plugins of one kube-scheduler profile, as the framework runs them (see the module docstring).

    ``filters`` in the framework's order; ``scores`` (name, weight) likewise; ``unmodelled``: enabled filter
    or score plugins the prediction cannot compute (out-of-tree ones: a prediction is partial with them)."""

    source: str
    filters: tuple[str, ...]
    scores: tuple[tuple[str, int], ...]
    fit: FitStrategy = field(default_factory=FitStrategy)
    balanced_resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCE_WEIGHTS
    hard_pod_affinity_weight: int = 1
    ignore_existing_preferred: bool = False
    added_required: tuple[NodeSelectorTerm, ...] | None = None
    added_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    unmodelled: tuple[str, ...] = ()
    #: score plugin -> weight (from ``scores``; read per prediction)
    weights: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.scores)))


def _int(value: object, source: str, path: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise config_error(source, path, f"must be an integer between {low} and {high}, got {value!r}")
    return value


def _plugins(value: object, source: str, path: str) -> list[tuple[str, int]]:
    """The (name, weight) entries of an ``enabled``/``disabled`` list (weight 0 when absent)."""
    out = []
    for i, raw in enumerate(config_list(value, source, path)):
        entry = config_mapping(raw, source, f"{path}[{i}]")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise config_error(source, f"{path}[{i}].name", "is required")
        weight = entry.get("weight")
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int) or weight < 0):
            raise config_error(source, f"{path}[{i}].weight", f"must be a non-negative integer, got {weight!r}")
        out.append((name, weight or 0))
    return out


def _merge(defaults: list[tuple[str, int]], custom: Mapping[str, Any], source: str, path: str
           ) -> tuple[list[tuple[str, int]], set[str]]:  # fmt: skip
    """``mergePluginSet``: the enabled (name, weight) list and the disabled names of one extension point."""
    disabled = {name for name, _ in _plugins(custom.get("disabled"), source, f"{path}.disabled")}
    enabled = _plugins(custom.get("enabled"), source, f"{path}.enabled")
    by_name = {name: (i, weight) for i, (name, weight) in enumerate(enabled)}
    replaced: set[int] = set()
    out: list[tuple[str, int]] = []
    if "*" not in disabled:
        for name, default_weight in defaults:
            if name in disabled:
                continue
            weight = default_weight
            if name in by_name:
                i, weight = by_name[name]
                replaced.add(i)
            out.append((name, weight))
    out.extend(entry for i, entry in enumerate(enabled) if i not in replaced)
    return out, disabled


def _expand(point: str, multi: list[tuple[str, int]], own: list[tuple[str, int]], disabled: set[str],
            source: str) -> list[tuple[str, int]]:  # fmt: skip
    """``expandMultiPointPlugins`` for one point: (name, weight given there) in the framework's order (an
    out-of-tree plugin, whose points are unknown, joins every point: it is reported as unmodelled)."""
    if "*" in disabled:
        return list(own)
    own_names = {name for name, _ in own}
    overrides: list[str] = []
    expanded: list[tuple[str, int]] = []
    seen: set[str] = set()
    for name, weight in multi:
        points = PLUGIN_POINTS.get(name)
        if points is not None and point not in points:
            continue
        if name in disabled:
            continue
        if name in own_names:
            overrides.append(name)
            continue
        if name in seen:
            raise config_error(source, "", f"plugin {name!r} is enabled twice at {point}")
        seen.add(name)
        expanded.append((name, weight))
    first = [entry for entry in own if entry[0] in overrides]
    rest = [entry for entry in own if entry[0] not in overrides]
    return first + expanded + rest


def _weights(point_entries: list[tuple[str, int]], score_own: list[tuple[str, int]],
             multi: list[tuple[str, int]], source: str) -> tuple[tuple[str, int], ...]:  # fmt: skip
    """``getValidScoreWeights``: each score plugin's weight, the score point's entry first, 0 counting as 1."""
    chosen: dict[str, int] = {}
    for name, weight in (*score_own, *multi):
        if name not in chosen:
            chosen[name] = weight or 1
    total = 0
    out = []
    for name, _ in point_entries:
        weight = chosen.get(name, 1)
        total += weight
        if total > _MAX_WEIGHT_TOTAL:
            raise config_error(source, "", "total score of Score plugins could overflow")
        out.append((name, weight))
    return tuple(out)


def _resources(value: object, source: str, path: str, exactly_one: bool) -> tuple[tuple[str, int], ...]:
    """A ``resources`` list of (name, weight); weight 0 or absent is 1, then 1-100 (BalancedAllocation: 1)."""
    out: list[tuple[str, int]] = []
    for i, raw in enumerate(config_list(value, source, path)):
        entry = config_mapping(raw, source, f"{path}[{i}]")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise config_error(source, f"{path}[{i}].name", "is required")
        weight = _int(entry.get("weight"), source, f"{path}[{i}].weight", 0, 0, 100) or 1
        if exactly_one and weight != 1:
            raise config_error(source, f"{path}[{i}].weight", "must be 1")
        if exactly_one and any(name == seen for seen, _ in out):
            raise config_error(source, f"{path}[{i}].name", f"duplicate resource {name!r}")
        out.append((name, weight))
    return tuple(out) or DEFAULT_RESOURCE_WEIGHTS


def _fit(args: Mapping[str, Any], source: str, path: str) -> FitStrategy:
    strategy = config_mapping(args.get("scoringStrategy"), source, f"{path}.scoringStrategy")
    kind = strategy.get("type") or LEAST_ALLOCATED
    kinds = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
    if kind not in kinds:
        raise config_error(source, f"{path}.scoringStrategy.type", f"must be one of {', '.join(kinds)}, got {kind!r}")
    resources = _resources(strategy.get("resources"), source, f"{path}.scoringStrategy.resources", False)
    shape: list[tuple[int, int]] = []
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        where = f"{path}.scoringStrategy.requestedToCapacityRatio"
        ratio = strategy.get("requestedToCapacityRatio")
        if ratio is None:
            raise config_error(source, where, "must be specified when type is RequestedToCapacityRatio")
        points = config_list(config_mapping(ratio, source, where).get("shape"), source, f"{where}.shape")
        if not points:
            raise config_error(source, f"{where}.shape", "at least one point must be specified")
        for i, raw in enumerate(points):
            point = config_mapping(raw, source, f"{where}.shape[{i}]")
            shape.append((_int(point.get("utilization"), source, f"{where}.shape[{i}].utilization", 0, 0, 100),
                          _int(point.get("score"), source, f"{where}.shape[{i}].score", 0, 0, 10)))  # fmt: skip
        if any(a[0] >= b[0] for a, b in itertools.pairwise(shape)):
            raise config_error(source, f"{where}.shape", "utilization values must be sorted in increasing order")
    ignored = config_list(args.get("ignoredResources"), source, f"{path}.ignoredResources")
    groups = config_list(args.get("ignoredResourceGroups"), source, f"{path}.ignoredResourceGroups")
    if not all(isinstance(x, str) for x in (*ignored, *groups)) or any("/" in g for g in groups):
        raise config_error(source, f"{path}.ignoredResources", "expected resource names (groups without '/')")
    return FitStrategy(str(kind), resources, tuple(shape), frozenset(ignored), frozenset(groups))


def _added_affinity(args: Mapping[str, Any], source: str, path: str
                    ) -> tuple[tuple[NodeSelectorTerm, ...] | None, tuple[PreferredSchedulingTerm, ...]]:  # fmt: skip
    """NodeAffinityArgs' ``addedAffinity``: required terms (None: none) and preferred terms, validated."""
    added = config_mapping(args.get("addedAffinity"), source, f"{path}.addedAffinity")
    r = FieldReader({"kind": "KubeSchedulerConfiguration", "metadata": {"name": source}})
    where = f"{path}.addedAffinity"
    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: list[PreferredSchedulingTerm] = []
    try:
        req_key = "requiredDuringSchedulingIgnoredDuringExecution"
        if added.get(req_key) is not None:
            required = node_selector_terms(r, r.mapping(added, req_key, where), f"{where}.{req_key}")
        key = "preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(r.items(added, key, f"{where}.{key}")):
            p = f"{where}.{key}[{i}]"
            pref = r.mapping(t, "preference", f"{p}.preference")
            term = NodeSelectorTerm(node_selector_requirements(r, pref, "matchExpressions", f"{p}.preference"),
                                    node_selector_requirements(r, pref, "matchFields", f"{p}.preference"))
            preferred.append(PreferredSchedulingTerm(r.integer(t, "weight", f"{p}.weight", 0), term))
    except InputError as err:
        raise config_error(source, "", str(err)) from None
    for term in required or ():
        error = node_term_error(term) if term.match_expressions or term.match_fields else ""
        if error:
            raise config_error(source, f"{where}.requiredDuringSchedulingIgnoredDuringExecution", error)
    error = preferred_error(preferred)
    if error:
        raise config_error(source, f"{where}.preferredDuringSchedulingIgnoredDuringExecution", error)
    return required, tuple(preferred)


def default_scheduler_profile() -> SchedulerProfile:
    """kube-scheduler v1.36.4's default profile."""
    return scheduler_profile(None, "kube-scheduler's default profile")


def scheduler_profile(
    config: Mapping[str, Any] | None, source: str, scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> SchedulerProfile:
    """The :class:`SchedulerProfile` of profile ``scheduler_name`` of a parsed KubeSchedulerConfiguration
    (None: the default profile); ``source`` names the file in messages. Raises InputError."""
    plugins: Mapping[str, Any] = {}
    plugin_config: list[Any] = []
    base = ""
    if config is not None:
        profiles = config_list(config.get("profiles"), source, "profiles") or [{}]
        for i, raw in enumerate(profiles):
            entry = config_mapping(raw, source, f"profiles[{i}]")
            if str(entry.get("schedulerName") or DEFAULT_SCHEDULER_NAME) == scheduler_name:
                base = f"profiles[{i}]"
                plugins = config_mapping(entry.get("plugins"), source, f"{base}.plugins")
                plugin_config = config_list(entry.get("pluginConfig"), source, f"{base}.pluginConfig")
                break
        else:
            raise config_error(source, "profiles", f"no profile with schedulerName {scheduler_name!r}")
    multi_path = f"{base}.plugins.multiPoint"
    multi, _ = _merge(list(DEFAULT_MULTIPOINT), config_mapping(plugins.get("multiPoint"), source, multi_path), source,
                      multi_path)  # fmt: skip
    points: dict[str, tuple[list[tuple[str, int]], list[tuple[str, int]]]] = {}
    for key, point in _POINTS.items():
        path = f"{base}.plugins.{key}"
        own, disabled = _merge([], config_mapping(plugins.get(key), source, path), source, path)
        points[point] = (_expand(point, multi, own, disabled, source), own)
    filters = tuple(name for name, _ in points[FILTER][0])
    scores = _weights(points[SCORE][0], points[SCORE][1], multi, source)
    args: dict[str, Mapping[str, Any]] = {}
    for j, raw in enumerate(plugin_config):
        entry = config_mapping(raw, source, f"{base}.pluginConfig[{j}]")
        name = entry.get("name")
        if isinstance(name, str):
            args[name] = config_mapping(entry.get("args"), source, f"{base}.pluginConfig[{j}].args")
    where = f"{base}.pluginConfig"
    fit = _fit(args.get("NodeResourcesFit", {}), source, f"{where}[NodeResourcesFit].args")
    balanced = _resources(args.get("NodeResourcesBalancedAllocation", {}).get("resources"), source,
                          f"{where}[NodeResourcesBalancedAllocation].args.resources", True)  # fmt: skip
    ipa = args.get("InterPodAffinity", {})
    hard = _int(ipa.get("hardPodAffinityWeight"), source, f"{where}[InterPodAffinity].args.hardPodAffinityWeight",
                1, 0, 100)  # fmt: skip
    ignore = ipa.get("ignorePreferredTermsOfExistingPods") is True
    required, preferred = _added_affinity(args.get("NodeAffinity", {}), source, f"{where}[NodeAffinity].args")
    unmodelled = tuple(
        name for name in (*filters, *(n for n, _ in scores))
        if name not in MODELLED_FILTERS and name not in MODELLED_SCORES
    )  # fmt: skip
    return SchedulerProfile(source, filters, scores, fit, balanced, hard, ignore, required, preferred,
                            tuple(dict.fromkeys(unmodelled)))  # fmt: skip
