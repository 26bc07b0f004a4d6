"""The ReplicaSet controller's scale-down order: upstream's tables and the candidate set against a brute force.

* ``TestSortingActivePodsWithRanks`` (pkg/controller/controller_utils_test.go, v1.36.4): ``less`` on every pair
  of its equality and inequality tables (the row with the PodDeletionCost gate off is not modelled: the gate
  is on in every supported release);
* ``TestGetPodsToDelete`` (pkg/controller/replicaset/replica_set_test.go): the first ``diff`` pods, taken one
  candidate set at a time (each set a single pod there);
* ``deletion_candidates`` against Go's ``sort.Sort`` as it runs on fewer than 13 pods (pdqsort's insertion
  sort): over every input order and a sweep of times (each gap between two ready times cut by a log2 bucket
  boundary, at small and large ages), the pods sorted first are exactly the candidates (a subset when pods
  ready in one second were created apart, where the candidates may hold more).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from spreadwatch.controllers import colocated_ranks, deletion_candidates, less, time_bucket
from spreadwatch.controllers.ranking import _ready_time, _Tier  # (the shortcut and the general search)
from spreadwatch.model import INVALID_DELETION_COST, Pod, intern_labels
from spreadwatch.timestamps import ZERO_TIME

NS = 1_000_000_000
NOW = 1_795_780_800  # 2026-11-27T12:00:00Z
HOUR = 3600
MONTH = NOW - 1_793_102_400  # AddDate(0, -1, 0) from NOW: 2026-10-27T12:00:00Z
LABELS = intern_labels({"app": "web"})


def pod(
    name: str,
    node: str = "node",
    phase: str = "Running",
    *,
    ready: bool = False,
    ready_at: int = ZERO_TIME,
    created: int = ZERO_TIME,
    restarts: int = 0,
    sidecar: int = 0,
    cost: int = 0,
    uid: str = "",
) -> Pod:
    return Pod("ns", name, LABELS, node, phase, False, None, uid=uid, created=created,
               ready_after=ready_at - created if ready else None, restarts=restarts << 32 | sidecar,
               deletion_cost=cost)  # fmt: skip


# --- TestSortingActivePodsWithRanks ---------------------------------------------------------------------------

UNSCHEDULED = pod("unscheduled", "", "Pending")
SCHEDULED_PENDING = pod("pending", "node", "Pending")
UNKNOWN_PHASE = pod("unknown-phase", "node", "Unknown")
RUNNING_NOT_READY = pod("not-ready")
READY_NO_LAST_TRANSITION = pod("ready-no-last-transition-time", ready=True)
READY_NOW = pod("ready-now", ready=True, ready_at=NOW, created=NOW)
READY_THEN = pod("ready-then", ready=True, ready_at=NOW - MONTH, created=NOW - MONTH)
READY_NOW_HIGH_RESTARTS = pod("ready-high-restarts", ready=True, ready_at=NOW, created=NOW, restarts=9001)
READY_NOW_HIGH_SIDE_RESTARTS = pod("ready-high-restarts", ready=True, ready_at=NOW, created=NOW, restarts=9001,
                                   sidecar=9001)  # fmt: skip
READY_NOW_CREATED_THEN = pod("ready-now-created-then", ready=True, ready_at=NOW, created=NOW - MONTH)
LOW_COST = pod("low-deletion-cost", ready=True, ready_at=NOW, created=NOW - MONTH, cost=10)
HIGH_COST = pod("high-deletion-cost", ready=True, ready_at=NOW, created=NOW - MONTH, cost=100)
UNSCHEDULED_5H = pod("unscheduled-5-hours", "", "Pending", created=NOW - 5 * HOUR)
UNSCHEDULED_8H = pod("unscheduled-10-hours", "", "Pending", created=NOW - 8 * HOUR)
READY_2H = pod("ready-2-hours", "", ready=True, ready_at=NOW - 2 * HOUR, created=NOW - MONTH)
READY_5H = pod("ready-5-hours", "", ready=True, ready_at=NOW - 5 * HOUR, created=NOW - MONTH)
READY_10H = pod("ready-10-hours", "", ready=True, ready_at=NOW - 8 * HOUR, created=NOW - MONTH)

EQUAL = [
    (UNSCHEDULED, UNSCHEDULED), (SCHEDULED_PENDING, SCHEDULED_PENDING), (UNKNOWN_PHASE, UNKNOWN_PHASE),
    (RUNNING_NOT_READY, RUNNING_NOT_READY), (READY_NOW_CREATED_THEN, READY_NOW_CREATED_THEN),
    (READY_NOW, READY_NOW), (READY_THEN, READY_THEN), (READY_NOW_HIGH_RESTARTS, READY_NOW_HIGH_RESTARTS),
    (UNSCHEDULED_5H, UNSCHEDULED_8H),  # same log2 bucket of creation age, equal (empty) UIDs
    (READY_5H, READY_10H),  # same log2 bucket of ready age, equal (empty) UIDs
]  # fmt: skip

# (lesser, its rank, greater, its rank): the row's rule in its id
LESS = [
    pytest.param(UNSCHEDULED, 1, SCHEDULED_PENDING, 2, id="1-unassigned-first-whatever-the-rank"),
    pytest.param(UNSCHEDULED, 2, SCHEDULED_PENDING, 1, id="1-unassigned-first"),
    pytest.param(SCHEDULED_PENDING, 1, UNKNOWN_PHASE, 2, id="2-pending-before-unknown"),
    pytest.param(UNKNOWN_PHASE, 1, RUNNING_NOT_READY, 2, id="2-unknown-before-running"),
    pytest.param(RUNNING_NOT_READY, 1, READY_NO_LAST_TRANSITION, 1, id="3-not-ready-first"),
    pytest.param(READY_NO_LAST_TRANSITION, 1, READY_NOW, 1, id="6-zero-ready-time-first"),
    pytest.param(READY_NOW, 2, READY_NO_LAST_TRANSITION, 1, id="5-higher-rank-before-zero-ready-time"),
    pytest.param(READY_NOW, 1, READY_THEN, 1, id="6-ready-now-before-a-month"),
    pytest.param(READY_NOW, 2, READY_THEN, 1, id="5-higher-rank-first"),
    pytest.param(READY_NOW_HIGH_RESTARTS, 1, READY_NOW, 1, id="7-9001-restarts-first"),
    pytest.param(READY_NOW_HIGH_SIDE_RESTARTS, 1, READY_NOW_HIGH_RESTARTS, 1, id="7-then-sidecar-restarts"),
    pytest.param(READY_NOW, 2, READY_NOW_HIGH_RESTARTS, 1, id="5-rank-before-restarts"),
    pytest.param(READY_NOW, 1, READY_NOW_CREATED_THEN, 1, id="8-created-now-first"),
    pytest.param(READY_NOW_CREATED_THEN, 2, READY_NOW, 1, id="5-rank-before-creation"),
    pytest.param(LOW_COST, 2, HIGH_COST, 1, id="4-cost-10-before-100-whatever-the-rank"),
    pytest.param(READY_2H, 1, READY_5H, 1, id="6-ready-2h-before-5h-(buckets-42-vs-44)"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL, ids=[f"{a.name}~{b.name}" for a, b in EQUAL])
def test_upstream_equality(a: Pod, b: Pod) -> None:
    assert not less(a, 1, b, 1, NOW * NS)
    assert not less(b, 1, a, 1, NOW * NS)


@pytest.mark.parametrize(("lesser", "rank_l", "greater", "rank_g"), LESS)
def test_upstream_inequality(lesser: Pod, rank_l: int, greater: Pod, rank_g: int) -> None:
    assert less(lesser, rank_l, greater, rank_g, NOW * NS)
    assert not less(greater, rank_g, lesser, rank_l, NOW * NS)


@pytest.mark.parametrize(("age_ns", "bucket"), [
    (0, -1), (-5, -1), (1, 0), (2, 1), (3, 1), (4, 2), (2 * HOUR * NS, 42), (5 * HOUR * NS, 44), (8 * HOUR * NS, 44),
    (2**40, 40), (2**40 - 1, 39), (2**40 + 1, 40), (2**41 - 2**20, 40),
    (2**60 - 2**8, 60),  # Log(frac)·(1/Ln2) + exp rounds to exp within an ulp below a power of two
], ids=str)  # fmt: skip
def test_time_bucket_is_gos_int64_log2(age_ns: int, bucket: int) -> None:
    assert time_bucket(age_ns) == bucket


def test_an_invalid_deletion_cost_ranks_as_zero() -> None:
    invalid = pod("invalid", ready=True, ready_at=NOW, created=NOW, cost=INVALID_DELETION_COST)
    zero = pod("zero", ready=True, ready_at=NOW, created=NOW, cost=0)
    one = pod("one", ready=True, ready_at=NOW, created=NOW, cost=1)
    assert not less(invalid, 1, zero, 1, NOW * NS) and not less(zero, 1, invalid, 1, NOW * NS)
    assert less(invalid, 1, one, 1, NOW * NS)


# --- TestGetPodsToDelete ---------------------------------------------------------------------------------------

UNSCHEDULED_PENDING = pod("unscheduled-pending-pod", "", "Pending")
SCHEDULED_PENDING_POD = pod("scheduled-pending-pod", "fake-node", "Pending")
NOT_READY_POD = pod("scheduled-running-not-ready-pod", "fake-node")
READY_ON_1 = pod("scheduled-running-ready-pod-on-node-1", "fake-node-1", ready=True)
READY_ON_2 = pod("scheduled-running-ready-pod-on-node-2", "fake-node-2", ready=True)


def first_pods(pods: Sequence[Pod], related: Sequence[Pod], diff: int) -> list[set[str]]:
    """The candidate sets of the first ``diff`` deletions, ranks computed once (as getPodsToDelete does)."""
    ranks = dict(zip((id(p) for p in pods), colocated_ranks(pods, related), strict=True))
    left = list(pods)
    out = []
    for _ in range(diff):
        found = deletion_candidates(left, [ranks[id(p)] for p in left])
        out.append({p.name for p in found})
        left.remove(found[0])
    return out


@pytest.mark.parametrize(("pods", "related", "diff", "expected"), [
    pytest.param([READY_ON_1, NOT_READY_POD], None, 1, [NOT_READY_POD], id="diff<len:not-ready-first"),
    pytest.param([SCHEDULED_PENDING_POD, UNSCHEDULED_PENDING], None, 1, [UNSCHEDULED_PENDING],
                 id="scheduled-vs-unscheduled"),
    pytest.param([READY_ON_1, NOT_READY_POD, NOT_READY_POD], None, 2, [NOT_READY_POD, NOT_READY_POD],
                 id="ready-vs-not-ready"),
    pytest.param([READY_ON_1, READY_ON_2], [READY_ON_1, READY_ON_2, READY_ON_2], 1, [READY_ON_2],
                 id="colocated-with-another-ready-pod-first"),
    pytest.param([SCHEDULED_PENDING_POD, NOT_READY_POD], None, 1, [SCHEDULED_PENDING_POD], id="pending-vs-running"),
    pytest.param([READY_ON_1, READY_ON_2, NOT_READY_POD, SCHEDULED_PENDING_POD, UNSCHEDULED_PENDING], None, 3,
                 [UNSCHEDULED_PENDING, SCHEDULED_PENDING_POD, NOT_READY_POD], id="various-phases"),
])  # fmt: skip
def test_upstream_pods_to_delete(pods: list[Pod], related: list[Pod] | None, diff: int, expected: list[Pod]) -> None:
    assert first_pods(pods, pods if related is None else related, diff) == [{p.name} for p in expected]


def test_a_bare_replicaset_ranks_every_pod_zero() -> None:
    """getReplicaSetsWithSameController returns nothing without a controller: no related pods, rank 0."""
    doubled = [pod("a", "n1", ready=True), pod("b", "n1", ready=True), pod("c", "n2", ready=True)]
    assert colocated_ranks(doubled, []) == [0, 0, 0]
    assert colocated_ranks(doubled, doubled) == [2, 2, 1]


# --- the candidate set against Go's sort ----------------------------------------------------------------------


def insertion_first(pods: Sequence[Pod], ranks: Sequence[int], now_ns: int) -> Pod:
    """Go's ``insertionSort`` (``sort.Sort`` below 13 elements) with ``Less`` at ``now_ns``: the first pod."""
    data = list(zip(pods, ranks, strict=True))
    for i in range(1, len(data)):
        j = i
        while j > 0 and less(data[j][0], data[j][1], data[j - 1][0], data[j - 1][1], now_ns):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1
    return data[0][0]


def sweep(pods: Sequence[Pod]) -> list[int]:
    """Times that cut every gap between two different timestamps with a log2 boundary, at small and large
    ages: each timestamp plus 2^k ns, and one ns before (2^54 ns is far wider than any spread here)."""
    stamps = {p.ready_time for p in pods if p.ready} | {p.created for p in pods}
    stamps.discard(ZERO_TIME)
    out = {NOW * NS}
    for t in stamps:
        for k in (30, 36, 42, 48, 52, 54):
            out.update((t * NS + 2**k - 1, t * NS + 2**k))
    return sorted(out)


def random_tier(rng: random.Random, n: int, created_apart: bool) -> list[Pod]:
    base = NOW - rng.choice([60, 3600, 86_400 * 30])
    pods = []
    ready_times = [base + rng.randrange(0, 40) for _ in range(n)]  # often equal: pods ready in one second
    for i in range(n):
        created = ready_times[i] - (rng.randrange(0, 30) if created_apart else 5)
        if not created_apart:
            created = base - 5
        ready = rng.random() < 0.8
        uid = f"{rng.randrange(16**8):08x}-0000-4000-8000-000000000000"
        pods.append(pod(f"p{i}", rng.choice(["n1", "n2"]), ready=ready, ready_at=ready_times[i], created=created,
                        restarts=rng.choice([0, 0, 0, 1]), uid=uid))  # fmt: skip
    return pods


@pytest.mark.parametrize("seed", range(40))
def test_candidates_are_exactly_the_pods_go_can_sort_first(seed: int) -> None:
    rng = random.Random(seed)
    created_apart = seed % 3 == 0
    pods = random_tier(rng, rng.randrange(2, 6), created_apart)
    ranks = [0] * len(pods)  # rules 1-5 are a plain order: the tier is what matters
    first = {insertion_first(order, ranks, now).name for now in sweep(pods)
             for order in itertools.permutations(pods)}  # fmt: skip
    candidates = {p.name for p in deletion_candidates(pods, ranks)}
    assert first <= candidates
    if not created_apart:
        assert first == candidates


def test_a_lower_uid_ready_later_goes_first_once_the_buckets_widen() -> None:
    """Ready 100 s apart: now the younger goes first; within about 15 minutes both share a bucket and the lower
    UID goes first: both are candidates, and one ready a month ago with a higher UID never is."""
    tail = "-0000-4000-8000-000000000000"
    young = pod("young", ready=True, ready_at=NOW - 100, created=NOW - 200, uid="b" * 8 + tail)
    old = pod("old", ready=True, ready_at=NOW - 200, created=NOW - 300, uid="a" * 8 + tail)
    ancient = pod("ancient", ready=True, ready_at=NOW - MONTH, created=NOW - MONTH,
                  uid="c" * 8 + tail)  # fmt: skip
    assert less(young, 0, old, 0, NOW * NS)
    assert less(old, 0, young, 0, (NOW - 100) * NS + 2**40)
    assert [p.name for p in deletion_candidates([young, old, ancient], [0, 0, 0])] == ["old", "young"]


@pytest.mark.parametrize("seed", range(200))
def test_tied_groups_shortcut_equals_the_general_search(seed: int) -> None:
    """Pods Ready (or created) in the same second tie on rules 7 and 8 when their restarts and creation match:
    over_cuts' shortcut for that case gives what the general search over every cut gives, at sizes a brute
    force cannot reach (up to 40 pods)."""
    rng = random.Random(seed)
    n = rng.randrange(2, 41)
    spread = rng.choice([3, 10, 40])
    pods = [pod(f"p{i}", ready=True, ready_at=NOW - rng.randrange(spread), created=NOW - 100,
                uid=f"{rng.randrange(16**8):08x}-0000-4000-8000-000000000000") for i in range(n)]  # fmt: skip
    tier = _Tier(pods)
    shortcut = {p.name for p in tier.over_cuts(pods, _ready_time, tier.within_ready_group)}
    groups: dict[int, list[Pod]] = {}
    for p in sorted(pods, key=_ready_time, reverse=True):
        groups.setdefault(p.ready_time, []).append(p)
    ordered = list(groups.values())
    general = {p.name for g in range(1, len(ordered) + 1) for p in tier.cut_first(ordered[:g], tier.within_ready_group)}
    assert shortcut == general
