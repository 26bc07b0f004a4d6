"""How many copies of a pod NodeResourcesFit's Filter lets onto a node (``fit_copies``): the room the
replacements of a lost zone or node need. Upstream's ``fitsRequest`` (fit.go, v1.36.4) filters one pod at a
time; the copies are the pods it passes one after another, each counted on the node before the next. The table
shows the arithmetic; the property test steps ``fit_failures`` (NodeResourcesFit's filter, proven on
upstream's tables) copy by copy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spreadwatch.model import PodNeeds, Resources
from spreadwatch.scoring.resource_fit import FitStrategy, NodeLoad, fit_copies, fit_failures

GI = 1024**3
MI = 1024**2
GPU = "nvidia.com/gpu"
HUGE = "hugepages-2Mi"


def _node(
    cpu: int = 0,
    memory: int = 0,
    pods: int = 110,
    used_cpu: int = 0,
    used_memory: int = 0,
    on: int = 0,
    ephemeral: int = 0,
    used_ephemeral: int = 0,
    scalars: tuple[tuple[str, int], ...] = (),
    used_scalars: tuple[tuple[str, int], ...] = (),
) -> NodeLoad:
    return NodeLoad(
        Resources(cpu, memory, ephemeral, pods, scalars),
        Resources(used_cpu, used_memory, used_ephemeral, 0, used_scalars),
        pods=on,
    )


def _needs(
    cpu: int = 0, memory: int = 0, ephemeral: int = 0, scalars: tuple[tuple[str, int], ...] = ()
) -> PodNeeds:
    return PodNeeds(Resources(cpu, memory, ephemeral, 0, scalars))


CASES = [
    pytest.param(_needs(cpu=250), _node(cpu=1000, used_cpu=300, on=100), FitStrategy(), 2,
                 id="cpu 1000-300 free / 250 req = 2 copies, pods 110-100=10 -> 2"),
    pytest.param(_needs(cpu=100), _node(cpu=1000, used_cpu=300, on=108), FitStrategy(), 2,
                 id="cpu 1000-300 free / 100 req = 7 copies, pods 110-108=2 -> 2"),
    pytest.param(_needs(cpu=250), _node(cpu=1000, used_cpu=500, on=0), FitStrategy(), 2,
                 id="cpu 1000-500 free / 250 req = 2 copies exactly (the last fills the node) -> 2"),
    pytest.param(_needs(cpu=500, memory=512 * MI), _node(cpu=4000, memory=8 * GI, used_memory=7 * GI),
                 FitStrategy(), 2, id="cpu 4000/500 = 8, memory 8Gi-7Gi free / 512Mi = 2 -> 2"),
    pytest.param(_needs(), _node(cpu=1000, used_cpu=5000, on=30), FitStrategy(), 80,
                 id="no requests: pods 110-30 = 80 (an overcommitted cpu not read) -> 80"),
    pytest.param(_needs(), _node(on=110), FitStrategy(), 0, id="no requests: pods 110-110 = 0 -> 0"),
    pytest.param(_needs(cpu=100), _node(cpu=1000, on=112), FitStrategy(), 0,
                 id="pods 110-112 below 0 -> 0"),
    pytest.param(_needs(cpu=100), _node(cpu=1000, used_cpu=1200), FitStrategy(), 0,
                 id="cpu 1000-1200 free below 0 / 100 -> 0"),
    pytest.param(_needs(cpu=2000), _node(cpu=1000), FitStrategy(), 0, id="cpu 1000 free / 2000 req = 0 -> 0"),
    pytest.param(_needs(memory=GI), _node(cpu=1000, used_cpu=3000, memory=4 * GI), FitStrategy(), 4,
                 id="cpu request 0 not checked (1000-3000 free), memory 4Gi/1Gi = 4 -> 4"),
    pytest.param(_needs(ephemeral=10 * GI), _node(ephemeral=100 * GI, used_ephemeral=75 * GI), FitStrategy(), 2,
                 id="ephemeral-storage 100Gi-75Gi free / 10Gi = 2 -> 2"),
    pytest.param(_needs(cpu=100, scalars=((GPU, 1),)),
                 _node(cpu=8000, scalars=((GPU, 4),), used_scalars=((GPU, 1),)), FitStrategy(), 3,
                 id="cpu 8000/100 = 80, nvidia.com/gpu 4-1 free / 1 = 3 -> 3"),
    pytest.param(_needs(cpu=100, scalars=((GPU, 1),)), _node(cpu=8000), FitStrategy(), 0,
                 id="nvidia.com/gpu 0-0 free on a node without it / 1 = 0 -> 0"),
    pytest.param(_needs(cpu=100, scalars=((GPU, 1),)), _node(cpu=8000, on=105),
                 FitStrategy(ignored_resources=frozenset({GPU})), 5,
                 id="nvidia.com/gpu ignored by name, cpu 8000/100 = 80, pods 110-105 = 5 -> 5"),
    pytest.param(_needs(cpu=100, scalars=((GPU, 1),)), _node(cpu=8000, on=105),
                 FitStrategy(ignored_groups=frozenset({"nvidia.com"})), 5,
                 id="nvidia.com/gpu ignored by group nvidia.com, pods 110-105 = 5 -> 5"),
    pytest.param(_needs(cpu=100, scalars=((HUGE, 2 * MI),)), _node(cpu=8000, scalars=((HUGE, 6 * MI),)),
                 FitStrategy(ignored_groups=frozenset({"hugepages-2Mi"})), 3,
                 id="hugepages-2Mi 6Mi/2Mi = 3 (not an extended resource: never ignored) -> 3"),
    pytest.param(_needs(scalars=((GPU, 0),)), _node(on=100), FitStrategy(), 10,
                 id="nvidia.com/gpu request 0 skipped, pods 110-100 = 10 -> 10"),
]  # fmt: skip


@pytest.mark.parametrize(("needs", "node", "strategy", "copies"), CASES)
def test_fit_copies(needs: PodNeeds, node: NodeLoad, strategy: FitStrategy, copies: int) -> None:
    assert fit_copies(needs, node, strategy) == copies
    assert (copies >= 1) == (not fit_failures(needs, node, strategy))


def _with_copies(node: NodeLoad, needs: PodNeeds, k: int) -> NodeLoad:
    """The node with ``k`` more copies of the pod on it (as kube-scheduler's cache adds a bound pod)."""
    used, want = node.requested, needs.requests
    scalars = dict(used.scalars)
    for name, amount in want.scalars:
        scalars[name] = scalars.get(name, 0) + k * amount
    requested = Resources(
        used.milli_cpu + k * want.milli_cpu,
        used.memory + k * want.memory,
        used.ephemeral_storage + k * want.ephemeral_storage,
        0,
        tuple(sorted(scalars.items())),
    )
    return node._replace(requested=requested, pods=node.pods + k)


_amount = st.sampled_from([0, 0, 1, 2, 3, 5, 7, 100, 250])
_scalars = st.lists(st.tuples(st.sampled_from([GPU, HUGE, "example.com/foo"]), _amount),
                    max_size=2, unique_by=lambda p: p[0]).map(lambda s: tuple(sorted(s)))  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    want=st.tuples(_amount, _amount, _amount, _scalars),
    alloc=st.tuples(st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 2000), st.integers(0, 40), _scalars),
    used=st.tuples(st.integers(0, 2500), st.integers(0, 2500), st.integers(0, 2500), st.integers(0, 45), _scalars),
    ignored=st.sampled_from([frozenset(), frozenset({GPU}), frozenset({"example.com"})]),
)
def test_copies_are_the_pods_the_filter_passes_one_after_another(
    want: tuple[int, int, int, tuple[tuple[str, int], ...]],
    alloc: tuple[int, int, int, int, tuple[tuple[str, int], ...]],
    used: tuple[int, int, int, int, tuple[tuple[str, int], ...]],
    ignored: frozenset[str],
) -> None:
    needs = PodNeeds(Resources(want[0], want[1], want[2], 0, want[3]))
    node = NodeLoad(Resources(*alloc), Resources(used[0], used[1], used[2], 0, used[4]), pods=used[3])
    strategy = FitStrategy(ignored_resources=ignored & {GPU}, ignored_groups=ignored - {GPU})
    k = fit_copies(needs, node, strategy)
    assert k <= max(0, alloc[3] - used[3])
    for i in range(k):
        assert not fit_failures(needs, _with_copies(node, needs, i), strategy), i
    assert fit_failures(needs, _with_copies(node, needs, k), strategy)
