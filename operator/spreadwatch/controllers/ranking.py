"""Which pod the ReplicaSet controller deletes when a ReplicaSet or ReplicationController shrinks (pure).

``pkg/controller/replicaset`` ``getPodsToDelete`` ranks each active pod by the active related pods on its node
(:func:`colocated_ranks`: related are the pods of every ReplicaSet with the same controller, so all of a
Deployment's; a ReplicaSet or ReplicationController without a controller ranks every pod 0), sorts with
``controller.ActivePodsWithRanks.Less`` (:func:`less`) and deletes the first. ``Less``, first difference decides:

1. unassigned before assigned; 2. phase Pending < Unknown < Running; 3. not Ready before Ready;
4. lower ``controller.kubernetes.io/pod-deletion-cost`` first (not an int32: 0); 5. higher rank first;
6. both Ready, ready times differ: a zero time first, else the younger in ``log2(age)`` buckets first, the lower
   UID first within a bucket; 7. more container restarts first (then sidecar restarts);
8. creation times differ: as 6 with the creation time; otherwise neither goes first.

**Not a total order.** Equal timestamps fall through to rule 7 and 8 and may end in a tie, the UID decides
within a bucket: the relation is not transitive, and ``sort.Sort`` (pdqsort) of a list the pod lister returns in
no fixed order may put any of several pods first. And the buckets move with the clock. So
:func:`deletion_candidates` gives the set of pods that may come first **whatever the time** of the scale-down:

* rules 1-5 are a consistent order: only the pods with the best key there (the *tier*) can come first;
* at any time the youngest ``log2`` bucket of ready times holds a prefix of the tier's pods sorted youngest
  first, cut between two different ready times, and each such cut recurs at later and later times (once
  the bucket width exceeds the spread of the ready times, a boundary passes each gap in turn): the union over
  time is the union over the cuts;
* within a cut, pods with different ready times compare by UID and pods with the same ready time by rules 7
  and 8. The pods that may come first are the *initial strongly connected component* of the "may precede"
  graph (``x`` may precede ``y`` unless ``Less(y, x)``): every pod of it can be put first by some input order
  (insertion sort, which pdqsort uses below 13 pods, keeps an input already in order), no other can be
  first after an insertion sort, whose output is a path of that graph;
* rule 8's own buckets, inside a group of equal ready times, are not cut: a younger pod with the lower UID
  goes first at every time, any other pair may go either way (a sound superset; pods ready in the same
  second but created apart are rare). Pods that are not Ready are cut on their creation times instead,
  exactly as ready ones are on their ready times.

Costs: O(p log p) for p active pods, plus O(t²) for a tier of t pods whose timestamps tie (usually t ≤ 3).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from spreadwatch.model import INVALID_DELETION_COST, Pod, uid_text
from spreadwatch.scoring.gomath import go_log
from spreadwatch.timestamps import ZERO_TIME

__all__ = ["colocated_ranks", "deletion_candidates", "less", "time_bucket"]

_PHASES: Final = {"Pending": 0, "Unknown": 1, "Running": 2}  # (podPhaseToOrdinal: any other phase is 0)
_INV_LN2: Final = 1.4426950408889634074  # Go's constant 1/Ln2 as a float64
_NS: Final = 1_000_000_000

Less = Callable[[Pod, Pod], bool]


def colocated_ranks(pods: Sequence[Pod], related: Iterable[Pod]) -> list[int]:
    """``getPodsRankedByRelatedPodsOnSameNode``: each pod's rank is the number of active ``related`` pods on its
    node (unassigned pods count under the node ""). O(pods + related)."""
    on_node = Counter(p.node_name for p in related if p.active)
    return [on_node[p.node_name] for p in pods]


def _cost(pod: Pod) -> int:
    cost = pod.deletion_cost
    return 0 if cost == INVALID_DELETION_COST else cost


def _tier_key(pod: Pod, rank: int) -> tuple[int, int, int, int, int]:
    """Rules 1-5 as one key, smaller first. O(1)."""
    return (1 if pod.node_name else 0, _PHASES.get(pod.phase, 0), 1 if pod.ready else 0, _cost(pod), -rank)


def time_bucket(age_ns: int) -> int:
    """``logarithmicRankDiff``'s rank of an age in nanoseconds: ``int64(math.Log2(float64(d)))`` for d > 0, as
    Go computes ``Log2`` (``Frexp``, ``Log(frac)·(1/Ln2) + exp``, exact at powers of two), else -1. O(1)."""
    if age_ns <= 0:
        return -1
    frac, exp = math.frexp(float(age_ns))
    if frac == 0.5:
        return exp - 1
    return int(go_log(frac) * _INV_LN2 + float(exp))


def _timed_less(t1: int, t2: int, a: Pod, b: Pod, now_ns: int) -> bool:
    """Rule 6 or 8 for two different times: afterOrZero with a zero time, else log2 buckets, then the UID."""
    if ZERO_TIME in (t1, t2):
        return t1 == ZERO_TIME
    diff = time_bucket(now_ns - t1 * _NS) - time_bucket(now_ns - t2 * _NS)
    if diff == 0:
        return uid_text(a.uid) < uid_text(b.uid)
    return diff < 0


def less(a: Pod, rank_a: int, b: Pod, rank_b: int, now_ns: int) -> bool:
    """``ActivePodsWithRanks.Less`` at ``now_ns`` (Unix nanoseconds): whether ``a`` is deleted before ``b``, with
    pod-deletion-cost and LogarithmicScaleDown on (both GA). O(1)."""
    key_a, key_b = _tier_key(a, rank_a), _tier_key(b, rank_b)
    if key_a != key_b:
        if a.node_name != b.node_name and not (a.node_name and b.node_name):
            return not a.node_name
        for x, y in zip(key_a[1:], key_b[1:], strict=True):  # (rule 1 is settled: both assigned or both not)
            if x != y:
                return x < y
    if a.ready and b.ready and a.ready_time != b.ready_time:
        return _timed_less(a.ready_time, b.ready_time, a, b, now_ns)
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    if a.created != b.created:
        return _timed_less(a.created, b.created, a, b, now_ns)
    return False


# --- the pods that may come first, whatever the time --------------------------------------------------------


def _never(_a: Pod, _b: Pod) -> bool:
    return False


class _Tier:
    """The pods of one tier (equal on rules 1-5), their UIDs as text once each."""

    __slots__ = ("uids",)

    def __init__(self, pods: Iterable[Pod]) -> None:
        self.uids = {id(p): uid_text(p.uid) for p in pods}

    def uid(self, pod: Pod) -> str:
        return self.uids[id(pod)]

    def within_ready_group(self, a: Pod, b: Pod) -> bool:
        """Rules 7-8 between two pods Ready at the same second, true only where it holds at every time: more
        restarts; then a zero creation time; then younger with the lower UID (rule 8's buckets left uncut)."""
        if a.restarts != b.restarts:
            return a.restarts > b.restarts
        ca, cb = a.created, b.created
        if ca == cb:
            return False
        if ZERO_TIME in (ca, cb):
            return ca == ZERO_TIME
        return ca > cb and self.uid(a) < self.uid(b)

    def cut_first(self, groups: Sequence[Sequence[Pod]], less_in: Less) -> list[Pod]:
        """The pods that may come first in one bucket holding ``groups`` (pods of different groups compare by
        UID, pods of one group by ``less_in``). O(p log p + p·r + g²), r the pods found (usually 1), g the
        largest group."""
        members = sorted(((self.uid(p), gi, p) for gi, group in enumerate(groups) for p in group), key=_first)
        if len(members) == 1:
            return [members[0][2]]
        _, g_star, first = members[0]
        star = groups[g_star]
        # What the lowest UID reaches: every pod outside its group, through them its group's pods with a higher
        # UID than the lowest outside, and inside its group what may follow those.
        reached = {id(first)}
        lowest_out = next((uid for uid, gi, _ in members if gi != g_star), None)
        if lowest_out is not None:
            reached.update(id(p) for p in star if self.uid(p) > lowest_out)
        grew = True
        while grew:
            grew = False
            for y in star:
                if id(y) not in reached and any(id(x) in reached and not less_in(y, x) for x in star):
                    reached.add(id(y))
                    grew = True
        unreached = [p for p in star if id(p) not in reached]
        if unreached:  # they beat everything the lowest UID reaches: the first pods are among them
            return _initial_component(unreached, less_in)
        # The lowest UID reaches every pod: the first pods are those that reach it.
        group_of = {id(p): gi for _, gi, p in members}
        uids = [m[0] for m in members]
        found = {id(first): first}
        todo = [first]
        while todo:
            v = todo.pop()
            gv = group_of[id(v)]
            for _, gw, w in members[: bisect.bisect_left(uids, self.uid(v))]:  # other groups' lower UIDs
                if gw != gv and id(w) not in found:
                    found[id(w)] = w
                    todo.append(w)
            for w in groups[gv]:  # its group's pods it does not beat
                if id(w) not in found and not less_in(v, w):
                    found[id(w)] = w
                    todo.append(w)
        return list(found.values())

    def over_cuts(self, pods: Sequence[Pod], time_of: Callable[[Pod], int], less_in: Less) -> list[Pod]:
        """The union over every youngest-bucket cut of :meth:`cut_first`: pods grouped by equal ``time_of``,
        youngest first; zero times come first at every time (``afterOrZero``), by themselves. While every
        group so far holds one pod, a cut's first pod is the lowest UID so far: O(1) per cut."""
        zero = [p for p in pods if time_of(p) == ZERO_TIME]
        if zero:
            return _initial_component(zero, less_in)
        by_time: dict[int, list[Pod]] = {}
        for p in pods:
            by_time.setdefault(time_of(p), []).append(p)
        groups = [by_time[t] for t in sorted(by_time, reverse=True)]
        out: dict[int, Pod] = {}
        lowest: str | None = None
        single = True
        for g, group in enumerate(groups, start=1):
            single = single and len(group) == 1
            if single:
                uid = self.uid(group[0])
                if lowest is None or uid < lowest:
                    lowest = uid
                    out[id(group[0])] = group[0]
                continue
            for p in self.cut_first(groups[:g], less_in):
                out[id(p)] = p
        return list(out.values())


def _first(member: tuple[str, int, Pod]) -> str:
    return member[0]


def _initial_component(pods: Sequence[Pod], less_in: Less) -> list[Pod]:
    """The pods of the initial strongly connected component of "may precede" (``x`` may precede ``y`` unless
    ``less_in(y, x)``): those that reach every other pod. O(n²) comparisons; O(n) for all-tied pods."""
    n = len(pods)
    if n <= 1 or less_in is _never:
        return list(pods)
    beats = [[i != j and less_in(pods[i], pods[j]) for j in range(n)] for i in range(n)]
    # a pod beaten by the fewest others is in the initial component (it may precede the most)
    seed = min(range(n), key=lambda j: sum(beats[i][j] for i in range(n)))
    found = {seed}
    todo = [seed]
    while todo:  # every pod that may precede one found (is not beaten by it) reaches the seed
        v = todo.pop()
        for u in range(n):
            if u not in found and not beats[v][u]:
                found.add(u)
                todo.append(u)
    return [pods[i] for i in sorted(found)]


def deletion_candidates(pods: Sequence[Pod], ranks: Sequence[int]) -> list[Pod]:
    """The active pods, any of which the controller may delete first, whatever the time and the order the
    lister returns them in (see the module docstring), sorted by name. O(p log p) usually."""
    active = [(p, r) for p, r in zip(pods, ranks, strict=True) if p.active]
    if not active:
        return []
    best = min(_tier_key(p, r) for p, r in active)
    tier = [p for p, r in active if _tier_key(p, r) == best]
    if len(tier) > 1:
        t = _Tier(tier)
        if tier[0].ready:
            tier = t.over_cuts(tier, _ready_time, t.within_ready_group)
        else:  # rule 6 does not apply: the most restarts (rule 7), then cut on the creation times (rule 8)
            most = max(p.restarts for p in tier)
            tier = t.over_cuts([p for p in tier if p.restarts == most], _created, _never)
    return sorted(tier, key=_name)


def _ready_time(pod: Pod) -> int:
    return pod.ready_time


def _created(pod: Pod) -> int:
    return pod.created


def _name(pod: Pod) -> str:
    return pod.name
