"""NodeResourcesFit (filter and score) and NodeResourcesBalancedAllocation, integer for integer.

Upstream: ``pkg/scheduler/framework/plugins/noderesources`` (v1.36.4) — ``fit.go`` (``fitsRequest``),
``resource_allocation.go`` (what each resource's allocatable and requested amounts are), ``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go`` (with ``helper.BuildBrokenLinearFunction``) and
``balanced_allocation.go``.

A node is described by :class:`NodeLoad`: its allocatable, the summed requests of the pods kube-scheduler's
cache holds on it (bound, not terminal; pods being deleted included), the same with each container's missing
CPU/memory request counted as 100m/200 MiB (``NonZeroRequested``), and the number of those pods. The incoming
pod by its :class:`~spreadwatch.model.PodNeeds`. Everything here is pure; O(resources) per node.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from spreadwatch.model import NO_RESOURCES, PodNeeds, Resources
from spreadwatch.model.spec_fields import is_extended_resource, is_scalar_resource
from spreadwatch.scoring.gomath import go_div, go_round

__all__ = [
    "BALANCED_ALLOCATION",
    "DEFAULT_RESOURCE_WEIGHTS",
    "LEAST_ALLOCATED",
    "MAX_NODE_SCORE",
    "MOST_ALLOCATED",
    "NODE_RESOURCES_FIT",
    "REQUESTED_TO_CAPACITY_RATIO",
    "FitStrategy",
    "NodeLoad",
    "balanced_allocation_score",
    "balanced_skips",
    "fit_copies",
    "fit_failures",
    "fit_score",
    "fit_terms",
    "ignored_resource",
    "node_load",
    "pod_request",
]

NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
MAX_NODE_SCORE: Final = 100
LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
#: the args' default resources (cpu and memory, weight 1 each) for both plugins
DEFAULT_RESOURCE_WEIGHTS: Final = (("cpu", 1), ("memory", 1))
_MAX_UTILIZATION: Final = 100
_MAX_CUSTOM_SCORE: Final = 10  # a shape point's score scale (config.MaxCustomPriorityScore)


class NodeLoad(NamedTuple):
    """A node as the resource plugins see it (``NodeInfo``): allocatable, requested, non-zero requested
    (cpu and memory only) and the pod count."""

    allocatable: Resources = NO_RESOURCES
    requested: Resources = NO_RESOURCES
    non_zero_cpu: int = 0
    non_zero_memory: int = 0
    pods: int = 0


@dataclass(frozen=True, slots=True)
class FitStrategy:
    """``NodeResourcesFitArgs``: the scoring strategy (type, resources with weights, the
    RequestedToCapacityRatio shape as (utilization, score 0-10) points) and the resources the filter
    ignores."""

    type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCE_WEIGHTS
    shape: tuple[tuple[int, int], ...] = ()
    ignored_resources: frozenset[str] = field(default_factory=frozenset)
    ignored_groups: frozenset[str] = field(default_factory=frozenset)


def ignored_resource(name: str, strategy: FitStrategy) -> bool:
    """Whether the filter skips a scalar resource: an extended one the args ignore, by name or by group."""
    return is_extended_resource(name) and (
        name in strategy.ignored_resources or name.partition("/")[0] in strategy.ignored_groups
    )


def fit_terms(requests: Resources, strategy: FitStrategy = FitStrategy()) -> tuple[tuple[str, int], ...]:
    """The resources ``fitsRequest`` checks for a pod of ``requests``, in its order, as (name, amount): cpu,
    memory and ephemeral storage when requested (above 0), then the scalar resources requested but the
    extended ones the args ignore. O(scalars)."""
    r = requests
    basic = (("cpu", r.milli_cpu), ("memory", r.memory), ("ephemeral-storage", r.ephemeral_storage))
    terms = [(name, amount) for name, amount in basic if amount > 0]
    terms.extend((name, amount) for name, amount in r.scalars
                 if amount > 0 and not ignored_resource(name, strategy))  # fmt: skip
    return tuple(terms)


def fit_failures(needs: PodNeeds, node: NodeLoad, strategy: FitStrategy = FitStrategy()) -> tuple[str, ...]:
    """``fitsRequest``: why the pod does not fit the node ("Too many pods", "Insufficient cpu", ...), empty
    when it does. O(scalar resources)."""
    out: list[str] = []
    if node.pods + 1 > node.allocatable.pods:
        out.append("Too many pods")
    for name, amount in fit_terms(needs.requests, strategy):
        capacity, used = _node_amounts(node, name, use_requested=True)
        if amount > capacity - used:
            out.append(f"Insufficient {name}")
    return tuple(out)


def fit_copies(needs: PodNeeds, node: NodeLoad, strategy: FitStrategy = FitStrategy()) -> int:
    """How many copies of the pod ``fitsRequest`` lets onto the node one after another (each counted in the
    node's pods and requested before the next is filtered): the pods left under the allowed pod number, and
    per resource it checks (:func:`fit_terms`) ``(allocatable - requested) // request``, the least of them;
    never below 0. At least 1 exactly when :func:`fit_failures` is empty; a pod requesting nothing is bounded
    by the pod number alone. The reference of :meth:`spreadwatch.index.loads.NodeLoads.copies`, which computes
    every node's at once. O(scalar resources)."""
    copies = max(0, node.allocatable.pods - node.pods)
    for name, amount in fit_terms(needs.requests, strategy):
        capacity, used = _node_amounts(node, name, use_requested=True)
        copies = min(copies, max(0, capacity - used) // amount)
    return copies


def pod_request(needs: PodNeeds, name: str, non_zero: bool) -> int:
    """The incoming pod's request of one resource (``calculatePodResourceRequest``): CPU and memory with the
    non-zero defaults for the Fit scorer (``non_zero``), plain for BalancedAllocation. O(scalars)."""
    requests = needs.requests
    if name == "cpu":
        return needs.score_cpu if non_zero else requests.milli_cpu
    if name == "memory":
        return needs.score_memory if non_zero else requests.memory
    if name == "ephemeral-storage":
        return requests.ephemeral_storage
    return requests.scalar(name)


def _node_amounts(node: NodeLoad, name: str, use_requested: bool) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: (allocatable, allocated) of one resource on the node; (0, 0)
    for a scalar resource the node does not have. O(scalars)."""
    alloc = node.allocatable
    if name == "cpu":
        return alloc.milli_cpu, node.requested.milli_cpu if use_requested else node.non_zero_cpu
    if name == "memory":
        return alloc.memory, node.requested.memory if use_requested else node.non_zero_memory
    if name == "ephemeral-storage":
        return alloc.ephemeral_storage, node.requested.ephemeral_storage
    for key, amount in alloc.scalars:
        if key == name:
            return amount, node.requested.scalar(name)
    return 0, 0


def _amounts(
    needs: PodNeeds, node: NodeLoad, resources: Iterable[tuple[str, int]], non_zero: bool
) -> tuple[list[int], list[int], list[int]]:
    """``calculateNodeAllocatableRequest``: per resource (requested with the pod, allocated, allocatable);
    a scalar resource the pod does not request, or that the node has none of, is left at 0 (skipped)."""
    requested, allocated, allocatable = [], [], []
    for name, _ in resources:
        pod = pod_request(needs, name, non_zero)
        total = used = capacity = 0
        if pod != 0 or not is_scalar_resource(name):
            capacity, used = _node_amounts(node, name, use_requested=not non_zero)
            if capacity == 0:
                used = 0
            else:
                total = used + pod
        requested.append(total)
        allocated.append(used)
        allocatable.append(capacity)
    return requested, allocated, allocatable


def _least(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _broken_linear(shape: tuple[tuple[int, int], ...], p: int) -> int:
    """``helper.BuildBrokenLinearFunction`` over points (utilization, score 0-100). O(points)."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            u0, s0 = shape[i - 1]
            return s0 + go_div((score - s0) * (p - u0), utilization - u0)
    return shape[-1][1]


def fit_score(needs: PodNeeds, node: NodeLoad, strategy: FitStrategy = FitStrategy()) -> int:
    """NodeResourcesFit's score (0-100) of the node for the pod under the strategy. O(resources)."""
    requested, _, allocatable = _amounts(needs, node, strategy.resources, non_zero=True)
    total = weights = 0
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = tuple((u, s * (MAX_NODE_SCORE // _MAX_CUSTOM_SCORE)) for u, s in strategy.shape)
        for (_, weight), req, cap in zip(strategy.resources, requested, allocatable, strict=True):
            if cap == 0:
                continue
            utilization = _MAX_UTILIZATION if req > cap else req * _MAX_UTILIZATION // cap
            score = _broken_linear(shape, utilization)
            if score > 0:
                total += score * weight
                weights += weight
        return go_round(total / weights) if weights else 0
    scorer = _most if strategy.type == MOST_ALLOCATED else _least
    for (_, weight), req, cap in zip(strategy.resources, requested, allocatable, strict=True):
        if cap == 0:
            continue
        total += scorer(req, cap) * weight
        weights += weight
    return total // weights if weights else 0


def _balance(requested: list[int], allocatable: list[int]) -> int:
    """``balancedResourceScore``: 100 × (1 − the standard deviation of the used fractions), in float64 as
    upstream orders it, truncated. O(resources)."""
    fractions: list[float] = []
    total = 0.0
    for req, cap in zip(requested, allocatable, strict=True):
        if cap == 0:
            continue
        fraction = min(float(req) / float(cap), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_skips(needs: PodNeeds, resources: Iterable[tuple[str, int]] = DEFAULT_RESOURCE_WEIGHTS) -> bool:
    """BalancedAllocation's PreScore skips a pod requesting none of its resources (a best-effort pod): the
    framework then runs neither its Score nor its NormalizeScore. O(resources)."""
    return all(pod_request(needs, name, non_zero=False) == 0 for name, _ in resources)


def balanced_allocation_score(
    needs: PodNeeds, node: NodeLoad, resources: Iterable[tuple[str, int]] = DEFAULT_RESOURCE_WEIGHTS
) -> int:
    """NodeResourcesBalancedAllocation's score (0-100): how much the pod improves the balance of the node's
    requested fractions, 50 ± half the change (``balancedResourceScorer``, v1.36). O(resources)."""
    requested, allocated, allocatable = _amounts(needs, node, tuple(resources), non_zero=False)
    with_pod = _balance(requested, allocatable)
    without = _balance(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + go_div(MAX_NODE_SCORE // 2 + with_pod - without, 2)


def node_load(allocatable: Resources, pods: Iterable[PodNeeds]) -> NodeLoad:
    """A node's :class:`NodeLoad` from its allocatable and the needs of the pods on it. O(pods × scalars)."""
    cpu = memory = ephemeral = non_zero_cpu = non_zero_memory = count = 0
    scalars: dict[str, int] = {}
    for needs in pods:
        r = needs.requests
        cpu += r.milli_cpu
        memory += r.memory
        ephemeral += r.ephemeral_storage
        for name, amount in r.scalars:
            scalars[name] = scalars.get(name, 0) + amount
        non_zero_cpu += needs.non_zero_cpu
        non_zero_memory += needs.non_zero_memory
        count += 1
    requested = Resources(cpu, memory, ephemeral, 0, tuple(sorted(scalars.items())))
    return NodeLoad(allocatable, requested, non_zero_cpu, non_zero_memory, count)
