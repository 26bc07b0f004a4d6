"""``spreadwatch rebalance``: the fewest evictions that make a workload's spread healthy — a plan only.

An eviction deletes one of the workload's bound pods; its controller then creates a replacement, which the
scheduler places like any new replica: this module binds it (Ready when the evicted pod was) to the first
best node by name under the profile (:meth:`~spreadwatch.whatif.simulate.WhatIf.next_step`, the documented
default choice). The goal is
health ``Balanced`` under the report thresholds (node skew ≤ ``max_node_skew``, zone skew ≤
``max_zone_skew``, no single point of failure).

Search: breadth-first over eviction sequences, so the first plan found is a shortest one. Only the
workload's pods that exist now are evicted (a command line can name them), each at most once; pods on the
same node with the same labels are interchangeable, and two sequences that leave the same pods (as
node/label groups) and the same replacement nodes lead to the same state, which is explored once. The
search stops after ``max_evictions`` (default: all the workload's pods) or ``max_states`` explored states.
Cost: O(states × depth × (candidate nodes + index update)).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from spreadwatch.errors import InputError
from spreadwatch.model import Pod, label_key
from spreadwatch.report import Health, ReportOptions, SpreadReport
from spreadwatch.scoring import Profile, WorkloadRef
from spreadwatch.snapshot import Snapshot
from spreadwatch.whatif.simulate import PlacementStep, WhatIf

__all__ = ["DEFAULT_MAX_STATES", "Eviction", "RebalancePlan", "plan_rebalance"]

DEFAULT_MAX_STATES: Final = 20_000

_StateKey = tuple[tuple[tuple[object, int], ...], tuple[tuple[str, int], ...]]


@dataclass(frozen=True, slots=True)
class Eviction:
    """One step of a plan: the pod to delete, where its replacement lands, and the report afterwards."""

    step: int
    pod: str
    node: str
    zone: str
    replacement_node: str  # "" when no candidate node is left (the replacement would stay Pending)
    replacement_zone: str
    report: SpreadReport

    def command(self, namespace: str) -> str:
        return f"kubectl delete pod {self.pod} -n {namespace}"

    def to_dict(self, namespace: str) -> dict[str, Any]:
        return {
            "step": self.step,
            "pod": self.pod,
            "node": self.node,
            "zone": self.zone,
            "replacementNode": self.replacement_node,
            "replacementZone": self.replacement_zone,
            "command": self.command(namespace),
            "report": self.report.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class RebalancePlan:
    """A shortest eviction plan (``found``), or why there is none (``message``)."""

    workload: WorkloadRef
    profile: str
    found: bool
    message: str
    initial: SpreadReport
    evictions: tuple[Eviction, ...]
    states_explored: int

    @property
    def final(self) -> SpreadReport:
        return self.evictions[-1].report if self.evictions else self.initial

    @property
    def commands(self) -> list[str]:
        return [e.command(self.workload.namespace) for e in self.evictions]

    def to_dict(self) -> dict[str, Any]:
        ns = self.workload.namespace
        return {
            "found": self.found,
            "message": self.message,
            "statesExplored": self.states_explored,
            "initial": self.initial.to_dict(),
            "evictions": [e.to_dict(ns) for e in self.evictions],
            "commands": self.commands,
            "final": self.final.to_dict(),
        }


def _healthy(report: SpreadReport) -> bool:
    return report.health is Health.BALANCED


class _Search:
    """Evict and undo eviction sequences on one :class:`WhatIf`."""

    def __init__(self, sim: WhatIf) -> None:
        self.sim = sim
        self.originals = {name: pod for name, pod in sorted(sim.pods.items()) if pod.node_name}  # evictable
        self.groups = {name: (pod.node_name, label_key(pod.labels)) for name, pod in self.originals.items()}

    def evict(self, path: Sequence[str]) -> list[tuple[Pod, Pod | None, str]]:
        """Evict the pods of ``path`` in order, binding each replacement; (victim, replacement, node) each."""
        done = []
        for i, name in enumerate(path, start=1):
            victim = self.originals[name]
            self.sim.unbind(victim)
            step = self.sim.next_step(i, None)
            node = step.node if isinstance(step, PlacementStep) else ""  # (a replacement that stays Pending: none)
            # (a replacement of a Ready pod is Ready before the next eviction, as a plan run one command at a
            # time waits for; one of a pod not Ready is not)
            ready = victim.ready_after is not None
            done.append((victim, self.sim.bind(node, ready=ready) if node else None, node))
        return done

    def undo(self, done: Sequence[tuple[Pod, Pod | None, str]]) -> None:
        for victim, replacement, _ in reversed(done):
            if replacement is not None:
                self.sim.unbind(replacement)
            self.sim.rebind(victim)

    def choices(self, path: Sequence[str]) -> list[str]:
        """One pod per (node, labels) group among the pods not evicted yet (the first by name)."""
        evicted = set(path)
        seen: set[object] = set()
        out = []
        for name, group in self.groups.items():
            if name not in evicted and group not in seen:
                seen.add(group)
                out.append(name)
        return out

    def key(self, path: Sequence[str], done: Sequence[tuple[Pod, Pod | None, str]]) -> _StateKey:
        evicted = Counter(self.groups[name] for name in path)
        placed = Counter(node for _, _, node in done)
        return (tuple(sorted(evicted.items(), key=repr)), tuple(sorted(placed.items())))


def plan_rebalance(
    snapshot: Snapshot,
    workload: str,
    profile: Profile,
    options: ReportOptions | None = None,
    max_evictions: int | None = None,
    max_states: int = DEFAULT_MAX_STATES,
) -> RebalancePlan:
    """The shortest eviction plan that makes ``workload`` Balanced (read-only; see the module docstring)."""
    if max_evictions is not None and max_evictions < 0:
        raise InputError(f"--max-evictions must be >= 0, got {max_evictions}")
    sim = WhatIf(snapshot, workload, profile, options)
    initial = sim.report()
    ref = sim.ref

    def plan(found: bool, message: str, evictions: tuple[Eviction, ...] = (), explored: int = 0) -> RebalancePlan:
        return RebalancePlan(ref, profile.name, found, message, initial, evictions, explored)

    if initial.health is Health.SKIPPED:
        return plan(False, f"no plan: the profile skips this workload ({initial.skip_reason})")
    if _healthy(initial):
        return plan(True, "already Balanced: nothing to evict")
    search = _Search(sim)
    depth_limit = len(search.originals) if max_evictions is None else min(max_evictions, len(search.originals))
    frontier: list[tuple[str, ...]] = [()]
    seen: set[_StateKey] = {search.key((), [])}
    explored = 0
    for _depth in range(depth_limit):
        next_frontier: list[tuple[str, ...]] = []
        for path in frontier:
            base = search.evict(path)
            for victim in search.choices(path):
                explored += 1
                if explored > max_states:
                    search.undo(base)
                    return plan(
                        False,
                        f"no plan found within the search budget of {max_states} states "
                        f"(all plans of up to {len(path)} evictions were tried)",
                        explored=explored - 1,
                    )
                new_path = (*path, victim)
                step = search.evict((victim,))
                done = [*base, *step]
                state = search.key(new_path, done)
                if state not in seen:
                    seen.add(state)
                    if _healthy(sim.report()):
                        search.undo(done)
                        return plan(
                            True, f"{len(new_path)} eviction(s) make it Balanced", _replay(search, new_path), explored
                        )
                    next_frontier.append(new_path)
                search.undo(step)
            search.undo(base)
        frontier = next_frontier
        if not frontier:
            break
    limit = "" if max_evictions is None else f" of at most {depth_limit}"
    return plan(
        False,
        f"no plan exists: no sequence{limit} of evictions of the current pods (each replacement placed by "
        f"profile {profile.name}) makes it Balanced",
        explored=explored,
    )


def _replay(search: _Search, path: Sequence[str]) -> tuple[Eviction, ...]:
    """Apply ``path`` again step by step, recording each report; leaves the index as it found it."""
    sim = search.sim
    out: list[Eviction] = []
    done: list[tuple[Pod, Pod | None, str]] = []
    for i, name in enumerate(path, start=1):
        step = search.evict((name,))
        done.extend(step)
        victim, _, node = step[0]
        out.append(
            Eviction(
                i, name, victim.node_name, sim.zone_name(victim.node_name), node, sim.zone_name(node), sim.report()
            )
        )
    search.undo(done)
    return tuple(out)
