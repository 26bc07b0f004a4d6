"""A workload's safety forecasts from the index's sparse state (pure): failure tolerance and the next scale-down.

**Resilience** (:func:`resilience_of`). For the loss of a zone (all its nodes) or a node, the *budget* is the
workload's PodDisruptionBudget — its ``currentHealthy`` minus the healthy pods it selects there must stay at
least its ``desiredHealthy`` — or, without one, one Ready replica left. The worst zone (node) is the one whose
loss leaves the fewest healthy pods under the budget (then the fewest Ready replicas, then by name);
``tolerated`` counts how many zones (nodes) can be lost at once within the budget: losses add up, so the worst
set of k is the k worst one by one, and the count is the longest run of them the budget survives (all the
zones, or nodes, holding its pods when even all of those do; 0 when the budget does not hold now).
``roomForReplacements``: the candidate nodes left outside the lost zone (node) can take the replacements (its
lost Ready replicas, each a copy of its next pod): with the resource model (the prediction on), the copies
NodeResourcesFit lets onto each of them — given its free allocatable and its pod number left
(:func:`~spreadwatch.scoring.resource_fit.fit_copies`; :class:`RoomCounts`, summed per zone by the index) —
add up to the replacements; without it, any candidate node left does (:func:`replacement_room`). A workload
is **ZoneOutageUnsafe** when the worst zone's loss breaks the budget (without a budget: leaves no Ready replica
of a workload of at least ``min_replicas``) while it has candidate nodes in another zone.

**Scale-down** (:func:`scale_down_of`): the candidates the controller may delete next
(:mod:`spreadwatch.controllers`), and the node and zone skew and the spread verdict after each, the worst
of them reported; a candidate that counts for the workload's spread (bound to a candidate node, matching its
spreading selector) leaves one pod fewer on its node (:func:`spread_facts` mirrors ``build_report``'s).

Costs: O(nodes with the workload's or its budget's pods × log + zones) for the resilience (the room from the
copies per zone: O(zones)), O(distinct candidate nodes × busy nodes) for the scale-down.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, NamedTuple

import msgspec

from spreadwatch.controllers import BudgetStatus
from spreadwatch.model import Pod
from spreadwatch.report.build import CandidateLayout
from spreadwatch.report.safety import Candidate, Loss, Resilience, ScaleDown
from spreadwatch.report.spread_report import SpreadReport
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.scoring import ZoneKey

__all__ = [
    "MAX_CANDIDATES",
    "Budget",
    "RoomCounts",
    "SpreadState",
    "replacement_room",
    "resilience_of",
    "scale_down_of",
    "spread_facts",
    "with_safety",
    "zone_outage",
]

#: scaleDown.candidates lists at most this many pods (by name); candidateCount counts them all
MAX_CANDIDATES: Final = 20
#: the spread verdicts after a scale-down, worst first
_AFTER_ORDER: Final = (
    Health.UNSCHEDULABLE,  # (no candidate node at all)
    Health.SINGLE_POINT_OF_FAILURE,
    Health.IMBALANCED,
    Health.BALANCED,
    Health.SKIPPED,
)


class Budget(NamedTuple):
    """The workload's PodDisruptionBudget: its name, its status as the disruption controller computes it, the
    healthy pods it selects per node, and how many budgets select the workload (``selecting``)."""

    name: str
    status: BudgetStatus
    healthy_on: Mapping[str, int]
    selecting: int


class RoomCounts(NamedTuple):
    """How many copies of the workload's next pod its candidate nodes take (NodeResourcesFit, one after
    another: :func:`~spreadwatch.scoring.resource_fit.fit_copies`): in total per zone of its candidate layout
    (None: the zoneless ones), and on one node (``on_node``: 0 for a node that is not a candidate)."""

    by_zone: Mapping[ZoneKey | None, int]
    on_node: Callable[[str], int]


def replacement_room(outside_candidates: int, replacements: int, copies: int | None = None) -> bool:
    """Whether the replacements of ``replacements`` lost Ready replicas can be placed on the
    ``outside_candidates`` candidate nodes left outside the lost zone (node): with the resource model, the
    ``copies`` of the workload's next pod those nodes take add up to them; without it (None: the prediction is
    off) any candidate node left does. O(1)."""
    if replacements == 0:
        return True
    return outside_candidates > 0 if copies is None else copies >= replacements


def _by_zone(counts: Mapping[str, int], node_zone: Mapping[str, ZoneKey | None]) -> dict[str, int]:
    """Pods per zone name from pods per node (zoneless nodes left out). O(nodes)."""
    out: dict[str, int] = {}
    get = node_zone.get
    for node, c in counts.items():
        z = get(node)
        if z is not None and c > 0:
            out[z[1]] = out.get(z[1], 0) + c
    return out


def _loss(
    ready: Mapping[str, int],
    healthy: Mapping[str, int],
    ready_total: int,
    desired: int,
    status: BudgetStatus | None,
    room: Callable[[str, int], bool],
) -> Loss:
    """The worst unit's loss and the units tolerated (see the module docstring), from the Ready pods and the
    budget's healthy pods per zone (node). O(units log units)."""
    if status is None:  # the budget is one Ready replica: every unit holding one but the last can go
        if not ready:
            return Loss("", ready_total, desired, None, True, 0)
        worst, lost = "", 0
        for unit, count in ready.items():
            if count > lost or (count == lost and unit < worst):
                worst, lost = unit, count
        # (all of them when Ready pods outside every unit, on zoneless nodes, are left)
        tolerated = 0 if ready_total < 1 else len(ready) - (ready_total - sum(ready.values()) < 1)
        return Loss(worst, ready_total - lost, desired, None, room(worst, lost), tolerated)
    have, need, losses = status.current_healthy, status.desired_healthy, healthy
    names = ready.keys() | healthy.keys()
    tolerated = 0
    if have >= need:
        left = have
        for lost in sorted(losses.values(), reverse=True):
            left -= lost
            if left < need:
                break
            tolerated += 1
        else:  # every zone (node) holding its pods can be lost
            tolerated = len(names)
    if not names:
        return Loss("", ready_total, desired, have >= need, True, tolerated)
    worst = min(names, key=lambda u: (-healthy.get(u, 0), -ready.get(u, 0), u))
    lost = ready.get(worst, 0)
    satisfied = status.current_healthy - healthy.get(worst, 0) >= need
    return Loss(worst, ready_total - lost, desired, satisfied, room(worst, lost), tolerated)


def resilience_of(
    ready_on: Mapping[str, int],
    desired: int,
    node_zone: Mapping[str, ZoneKey | None],
    layout: CandidateLayout,
    candidates: AbstractSet[str],
    budget: Budget | None,
    room: RoomCounts | None = None,
) -> Resilience:
    """The workload's resilience: ``ready_on`` its Ready replicas per node, ``desired`` its replicas;
    ``node_zone`` the nodes' zones; ``layout`` and ``candidates`` its candidate nodes; ``room`` the copies of
    its next pod they take (None: no resource model, any candidate node left is room). No zone loss where
    neither its pods nor its candidate nodes have a zone. O(nodes with pods × log + zones)."""
    healthy_on = budget.healthy_on if budget is not None else {}
    status = budget.status if budget is not None else None
    ready_total = sum(ready_on.values())
    zone_ready = _by_zone(ready_on, node_zone)
    zone_healthy = _by_zone(healthy_on, node_zone) if healthy_on else {}
    zone_loss = None

    def zone_room(name: str, lost: int) -> bool:
        zone = next((z for z in layout.zones if z[1] == name), None)
        outside = layout.total - (layout.sizes.get(zone, 0) if zone is not None else 0)
        copies = None
        if room is not None:
            copies = sum(c for z, c in room.by_zone.items() if z is None or z[1] != name)
        return replacement_room(outside, lost, copies)

    def node_room(name: str, lost: int) -> bool:
        inside = name in candidates
        copies = None
        if room is not None:
            copies = sum(room.by_zone.values()) - (room.on_node(name) if inside else 0)
        return replacement_room(layout.total - (1 if inside else 0), lost, copies)

    if layout.zones or zone_ready or zone_healthy:
        zone_loss = _loss(zone_ready, zone_healthy, ready_total, desired, status, zone_room)
    node_loss = _loss(ready_on, healthy_on, ready_total, desired, status, node_room)
    if budget is None:
        return Resilience(zone_loss, node_loss)
    s = budget.status
    return Resilience(
        zone_loss,
        node_loss,
        budget.name,
        s.expected_pods,
        s.current_healthy,
        s.desired_healthy,
        s.disruptions_allowed,
        budget.selecting,
    )


def zone_outage(
    resilience: Resilience, ready_total: int, desired: int, layout: CandidateLayout, thresholds: HealthThresholds
) -> str | None:
    """The ``ZoneOutageUnsafe`` reason when losing the worst zone breaks the budget while another zone has
    candidate nodes (None: safe, or nothing to judge). O(1)."""
    loss = resilience.zone_loss
    if loss is None or not loss.worst or len(layout.zones) < 2:
        return None
    if loss.pdb_satisfied is not None:
        if loss.pdb_satisfied:
            return None
        return (
            f"ZoneOutageUnsafe: losing zone {loss.worst} leaves {loss.ready_after} of {desired} replicas Ready "
            f"and breaks PodDisruptionBudget {resilience.pdb_name} (desiredHealthy {resilience.desired_healthy})"
        )
    if desired < thresholds.min_replicas or ready_total == 0 or loss.ready_after > 0:
        return None
    return f"ZoneOutageUnsafe: losing zone {loss.worst} leaves none of {desired} replicas Ready"


def spread_facts(
    busy: Mapping[str, int], layout: CandidateLayout, node_zone: Mapping[str, ZoneKey | None]
) -> SpreadFacts:
    """``build_report``'s facts for the verdict from the matching pods per candidate node (``busy``: only
    candidate nodes, counts > 0): the same skews, busiest node and zone, and zone counts. O(busy nodes)."""
    pods_on = list(busy.values())
    max_node = max(pods_on, default=0)
    min_node = min(pods_on, default=0)
    busy_per_group: dict[ZoneKey | None, int] = {}
    zone_counts: dict[ZoneKey | None, int] = dict.fromkeys(layout.zones, 0)
    for node, count in busy.items():
        z = node_zone.get(node)
        busy_per_group[z] = busy_per_group.get(z, 0) + 1
        if z in zone_counts and z is not None:
            zone_counts[z] += count
    empty_left = any(layout.sizes[z] > busy_per_group.get(z, 0) for z in layout.by_zone)
    node_skew = max_node - (0 if empty_left or not busy else min_node)
    max_zone = max(zone_counts.values(), default=0)
    zone_skew = (max_zone - min(zone_counts.values())) if zone_counts else 0
    busiest_zone = next((z[1] for z, c in zone_counts.items() if c == max_zone and z is not None), "")
    return SpreadFacts(
        sum(pods_on),
        layout.total,
        len(busy),
        next((n for n, c in busy.items() if c == max_node), ""),
        len(busy_per_group) if zone_counts else 0,
        busiest_zone,
        len(layout.by_zone) if zone_counts else 0,
        node_skew,
        zone_skew,
    )


class SpreadState:
    """The inputs of the spread verdict from the matching pods per candidate node, kept so that the verdict
    after taking one pod off a node costs O(zones), not a rebuild (``spread_facts``' arithmetic): the highest
    and lowest node counts with how many nodes hold them and the runner-up, the zones' counts, the zone groups
    with an empty candidate node left."""

    __slots__ = (
        "busy",
        "by_group",
        "groups",
        "high",
        "high_2",
        "high_n",
        "layout",
        "low",
        "low_2",
        "low_n",
        "node_zone",
        "pods",
        "room",
        "zone_counts",
    )  # fmt: skip

    def __init__(self, busy: Mapping[str, int], layout: CandidateLayout, node_zone: Mapping[str, ZoneKey | None]):
        self.busy, self.layout, self.node_zone = busy, layout, node_zone
        by_group: dict[ZoneKey | None, int] = {}  # busy nodes per zone (None: zoneless)
        zone_counts: dict[ZoneKey | None, int] = dict.fromkeys(layout.zones, 0)
        get = node_zone.get
        for node, count in busy.items():
            z = get(node)
            if z in by_group:
                by_group[z] += 1
            else:
                by_group[z] = 1
            if z in zone_counts:  # (a zone of the layout: never None)
                zone_counts[z] += count
        self.by_group, self.zone_counts = by_group, zone_counts
        self.pods = sum(busy.values())
        self.groups = len(layout.by_zone)
        sizes = layout.sizes
        self.room = sum(1 for g in layout.by_zone if sizes[g] > by_group.get(g, 0))  # groups with an empty node
        values = sorted(busy.values())
        if values:
            high, low = values[-1], values[0]
            self.high, self.high_n, self.low, self.low_n = high, values.count(high), low, values.count(low)
            self.high_2 = values[-1 - self.high_n] if self.high_n < len(values) else 0  # the runner-ups
            self.low_2 = values[self.low_n] if self.low_n < len(values) else 0
        else:
            self.high = self.high_n = self.high_2 = self.low = self.low_n = self.low_2 = 0

    def facts_without(self, node: str) -> SpreadFacts:
        """The facts with one pod fewer on ``node`` ("": none fewer). O(zones)."""
        layout = self.layout
        count = self.busy.get(node, 0)
        nodes = len(self.busy)
        high, low, room, zones_busy = self.high, self.low, self.room, len(self.by_group)
        zone_counts = self.zone_counts
        if count:
            z = self.node_zone.get(node)
            left = count - 1
            if count == high and self.high_n == 1:  # the one highest node: now left, or the runner-up
                high = max(left, self.high_2)
            if left == 0:
                nodes -= 1
                if count == low and self.low_n == 1:
                    low = self.low_2  # (0 when no node is left)
                held = self.by_group[z]
                if held == layout.sizes.get(z, 0):  # its zone gains an empty candidate node
                    room += 1
                if held == 1:
                    zones_busy -= 1
            else:
                low = min(low, left)
            if z is not None and z in zone_counts:
                zone_counts = {**zone_counts, z: zone_counts[z] - 1}
        node_skew = high - (0 if room or not nodes else low)
        zone_skew = (max(zone_counts.values()) - min(zone_counts.values())) if zone_counts else 0
        return SpreadFacts(
            self.pods - (1 if count else 0),
            layout.total,
            nodes,
            "",
            zones_busy if zone_counts else 0,
            "",
            self.groups if zone_counts else 0,
            node_skew,
            zone_skew,
        )


def scale_down_of(
    report: SpreadReport,
    candidates: Sequence[Pod],
    replicas_after: int,
    counted: Callable[[Pod], bool],
    busy: Mapping[str, int],
    layout: CandidateLayout,
    node_zone: Mapping[str, ZoneKey | None],
    thresholds: HealthThresholds,
    replica_set: str = "",
) -> ScaleDown | None:
    """The next scale-down: ``candidates`` (sorted by name), the spread after deleting each — ``busy`` the
    matching pods per candidate node now, ``counted`` whether a pod is one of them — and the worst of those.
    None without a candidate. O(busy nodes + distinct candidate nodes × (busy nodes + zones))."""
    if not candidates:
        return None
    spread = SpreadState(busy, layout, node_zone)
    worst_node = worst_zone = 0
    worst = len(_AFTER_ORDER) - 1
    seen: set[str] = set()
    for pod in candidates:
        node = pod.node_name if counted(pod) and busy.get(pod.node_name, 0) > 0 else ""
        if node in seen:
            continue
        seen.add(node)
        facts = spread.facts_without(node)
        worst_node, worst_zone = max(worst_node, facts.node_skew), max(worst_zone, facts.zone_skew)
        health = Health.SKIPPED if report.skipped else judge(facts, thresholds)[0]
        worst = min(worst, _AFTER_ORDER.index(health))
    shown = tuple(
        Candidate(p.name, p.node_name, _zone_name(node_zone.get(p.node_name))) for p in candidates[:MAX_CANDIDATES]
    )
    return ScaleDown(
        max(0, replicas_after), shown, len(candidates), worst_node, worst_zone, _AFTER_ORDER[worst].value, replica_set
    )


def _zone_name(zone: ZoneKey | None) -> str:
    return "" if zone is None else zone[1]


def with_safety(
    report: SpreadReport,
    resilience: Resilience | None,
    scale_down: ScaleDown | None,
    unsafe: str | None,
    notes: Iterable[str],
) -> SpreadReport:
    """``report`` with its forecasts: health ZoneOutageUnsafe (``unsafe``, its reason) where it was Balanced or
    Imbalanced; the reason added to any scored report; ``notes`` (bad input: a budget the controller cannot
    sync, a budget shared by several workloads, an invalid pod-deletion-cost) added as they are. O(reasons)."""
    reasons = report.reasons
    health = report.health
    if unsafe is not None and health not in (Health.SKIPPED, Health.ERROR):
        reasons = (*reasons, unsafe)
        if health in (Health.BALANCED, Health.IMBALANCED):
            health = Health.ZONE_OUTAGE_UNSAFE
    extra = tuple(notes)
    if extra:
        reasons = (*reasons, *extra)
    return msgspec.structs.replace(
        report, resilience=resilience, scale_down=scale_down, health=health, reasons=tuple(reasons)
    )
