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
from typing import Any, Final

from spreadwatch.model import INVALID_DELETION_COST, TERMINAL_PHASES, Pod, uid_text
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
    """The pods of one tier (equal on rules 1-5) and their UIDs as keys ordered as Go orders the text: the
    integers of canonical UUIDs as they are (no text made) when every UID is one, else the texts."""

    __slots__ = ("uid",)

    def __init__(self, pods: Sequence[Pod]) -> None:
        if all(isinstance(p.uid, int) for p in pods):
            self.uid: Callable[[Pod], Any] = _uid_int
        else:
            texts = {id(p): uid_text(p.uid) for p in pods}
            self.uid = lambda pod: texts[id(pod)]

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
        return self.first_and_reach(groups, less_in)[0]

    def first_and_reach(self, groups: Sequence[Sequence[Pod]], less_in: Less) -> tuple[list[Pod], bool]:
        """:meth:`cut_first`, and whether the lowest UID reaches every pod (then the first pods are exactly those
        that reach it, and stay so as groups with higher UIDs join)."""
        members = sorted(((self.uid(p), gi, p) for gi, group in enumerate(groups) for p in group), key=_first)
        if len(members) == 1:
            return [members[0][2]], True
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
            return _initial_component(unreached, less_in), False
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
        return list(found.values()), True

    def over_cuts(self, pods: Sequence[Pod], time_of: Callable[[Pod], int], less_in: Less) -> list[Pod]:
        """The union over every youngest-bucket cut of :meth:`cut_first`: pods grouped by equal ``time_of``,
        youngest first; zero times come first at every time (``afterOrZero``), by themselves. While every
        group so far holds one pod, a cut's first pod is the lowest UID so far: O(1) per cut."""
        zero = [p for p in pods if time_of(p) == ZERO_TIME]
        if zero:
            return _initial_component(zero, less_in)
        order = sorted(pods, key=time_of, reverse=True)  # youngest first
        groups: list[list[Pod]] = []
        i, n = 0, len(order)
        while i < n:
            t = time_of(order[i])
            j = i + 1
            while j < n and time_of(order[j]) == t:
                j += 1
            groups.append(order[i:j])
            i = j
        if less_in is _never or all(_tied(g) for g in groups):
            return self.tied_cuts(groups)
        out: dict[int, Pod] = {}
        uid = self.uid
        lowest: Any = None  # the lowest UID of the cut so far, and whether its pod is alone in its group
        alone = True
        found: dict[int, Pod] | None = None  # the previous cut's first pods, when its lowest UID reached all
        group_of: dict[int, int] = {}
        for g, group in enumerate(groups):
            for p in group:
                group_of[id(p)] = g
            head = group[0] if len(group) == 1 else min(group, key=uid)
            if lowest is None or uid(head) < uid(lowest):
                lowest, alone, found = head, len(group) == 1, None
            if alone:
                # A pod alone in its group with the lowest UID of the cut goes first there: pods of other groups
                # follow it by UID, and the pods added by later cuts have higher UIDs.
                out[id(lowest)] = lowest
                continue
            if found is None:
                first, reaches_all = self.first_and_reach(groups[: g + 1], less_in)
                found = {id(p): p for p in first} if reaches_all else None
                out.update((id(p), p) for p in first)
                continue
            # The lowest UID is unchanged and still reaches every pod: the new group's pods that reach a pod found
            # (a higher UID in another group) join, with the pods that reach them in turn.
            ceiling = max(uid(v) for v in found.values())
            todo = [w for w in group if uid(w) < ceiling]
            for w in todo:
                found[id(w)] = w
            cut = [p for h in groups[: g + 1] for p in h]
            while todo:
                v = todo.pop()
                gv, uv = group_of[id(v)], uid(v)
                for w in cut:
                    if id(w) in found:
                        continue
                    gw = group_of[id(w)]
                    if (gw != gv and uid(w) < uv) or (gw == gv and not less_in(v, w)):
                        found[id(w)] = w
                        todo.append(w)
            out.update(found)
        return list(out.values())

    def tied_cuts(self, groups: Sequence[Sequence[Pod]]) -> list[Pod]:
        """:meth:`over_cuts` where the pods of a group all tie: in each cut the lowest UID reaches every pod (its
        group by the ties, the rest by UID), and the pods that reach it are those with a UID below the highest of
        the pods found, with their groups, as far as that goes. Kept cut by cut: a group joins when one of its
        pods is below that bound (raising it), a new lowest UID starts afresh. O(p log p)."""
        uid = self.uid
        keys: list[Any] = []  # the cut's UIDs, sorted
        owner: dict[Any, int] = {}  # UID -> its group
        top: list[Any] = []  # each group's highest UID
        found: set[int] = set()  # the groups found in the current cut
        bound: Any = None  # the highest UID of the pods found: every pod below it is found
        lowest: Any = None
        out: list[Pod] = []
        emitted: set[int] = set()

        def join(g: int) -> None:
            nonlocal bound
            start = 0 if bound is None else bisect.bisect_left(keys, bound)
            found.add(g)
            if bound is None or top[g] > bound:
                bound = top[g]
            while start < len(keys) and keys[start] < bound:  # the pods below the bound, and their groups
                h = owner[keys[start]]
                if h not in found:
                    found.add(h)
                    bound = max(bound, top[h])
                start += 1

        for g, group in enumerate(groups):
            group_keys = [uid(p) for p in group]
            top.append(max(group_keys))
            for key in group_keys:
                owner[key] = g
                bisect.insort(keys, key)
            head = min(group_keys)
            if lowest is None or head < lowest:
                lowest, bound = head, None
                found.clear()
                join(g)
            elif head < bound:
                join(g)
            for h in found - emitted:
                emitted.add(h)
                out.extend(groups[h])
        return out


def _tied(group: Sequence[Pod]) -> bool:
    """Whether the pods of a group of equal Ready times all tie on rules 7 and 8 (restarts, creation). O(g)."""
    first = group[0]
    return all(p.restarts == first.restarts and p.created == first.created for p in group)


def _first(member: tuple[Any, int, Pod]) -> Any:
    return member[0]


def _uid_int(pod: Pod) -> Any:
    return pod.uid


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


def deletion_candidates(pods: Sequence[Pod], ranks: Sequence[int] | None = None) -> list[Pod]:
    """The active pods, any of which the controller may delete first, whatever the time and the order the
    lister returns them in (see the module docstring), sorted by name; ``ranks`` None: every pod ranks 0 (no
    related pods). O(p log p) usually."""
    best: tuple[int, int, int, int, int] | None = None
    tier: list[Pod] = []
    terminal = TERMINAL_PHASES
    for p, rank in zip(pods, ranks, strict=True) if ranks is not None else ((p, 0) for p in pods):
        if p.deleting or p.phase in terminal:
            continue
        key = _tier_key(p, rank)
        if best is None or key < best:
            best, tier = key, [p]
        elif key == best:
            tier.append(p)
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
