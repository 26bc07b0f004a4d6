"""Candidate groups minus the nodes PodTopologySpread's Filter rejects, as views: O(groups + rejected busy nodes).

A workload with DoNotSchedule constraints shares its candidate set (and its candidate groups, grouped also by
the hard constraints' keys: ``group_candidates(..., split=plan.keys)``) with every workload of the same
scheduling constraints; the Filter then takes away (:func:`rejections`)

* whole groups: those missing a hard key, and those whose domain of a non-hostname hard constraint is rejected
  (every candidate of a group has the same value for each split key);
* single nodes: the candidates in a rejected domain of a hostname constraint — always nodes with matching pods
  (a domain without pods always passes, scoring/topology_filter.py), so there are no more of them than busy nodes.

:func:`restrict_groups` then gives a :class:`~spreadwatch.scoring.topology_groups.CandidateGroups` over what is
left without copying the name lists: a rejected group's names become ``()``, a group losing single nodes a
:class:`NameView` of its sorted names, and ``group_of`` a :class:`GroupOfView`. Everything that scores and
builds reports from candidate groups runs on it unchanged (a group without nodes counts as ignored: no domain,
no score). Cost O(groups + removed nodes) to build; reading a view's first names costs O(those + dropped ones
among them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import filterfalse, islice
from typing import overload

from spreadwatch.scoring.topology import HOSTNAME_KEY
from spreadwatch.scoring.topology_filter import DomainTable, FilterPlan
from spreadwatch.scoring.topology_groups import CandidateGroups

__all__ = ["GroupOfView", "NameView", "rejections", "restrict_groups"]


class NameView(Sequence[str]):
    """A sorted sequence of names minus those ``drop`` says, of known length: a prefix costs O(its length +
    dropped names before its end), membership O(log n)."""

    __slots__ = ("_base", "_drop", "_len")

    def __init__(self, base: Sequence[str], drop: Callable[[str], bool], length: int) -> None:
        self._base = base
        self._drop = drop
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        return filterfalse(self._drop, self._base)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        base = self._base
        i = bisect_left(base, name)
        return i < len(base) and base[i] == name and not self._drop(name)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            if index.start is None and index.step is None and index.stop is not None and index.stop >= 0:
                return tuple(islice(self, index.stop))  # a prefix: the usual read
            return tuple(self)[index]
        if 0 <= index < self._len:
            return next(islice(self, index, None))
        return tuple(self)[index]


class GroupOfView(Mapping[str, int]):
    """A candidate -> group map minus the candidates of rejected groups and the ``removed`` ones. ``get`` is
    O(1); iteration walks the base map."""

    __slots__ = ("_base", "_kept", "_len", "_removed")

    def __init__(self, base: Mapping[str, int], kept: Sequence[bool], removed: AbstractSet[str], length: int) -> None:
        self._base = base
        self._kept = kept
        self._removed = removed
        self._len = length

    def get(self, name: str, default: int | None = None) -> int | None:  # type: ignore[override]
        g = self._base.get(name)
        if g is None or not self._kept[g] or name in self._removed:
            return default
        return g

    def __getitem__(self, name: str) -> int:
        g = self.get(name)
        if g is None:
            raise KeyError(name)
        return g

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (name for name, g in self._base.items() if self._kept[g] and name not in self._removed)

    def __len__(self) -> int:
        return self._len


def rejections(
    groups: CandidateGroups,
    plan: FilterPlan,
    rejected: Sequence[AbstractSet[str]],
    tables: Sequence[DomainTable],
    counts: Sequence[Mapping[str, int]],
) -> tuple[tuple[bool, ...], dict[int, set[str]]]:
    """Which groups the Filter keeps, and per kept group the single candidates it removes (hostname
    constraints), from the rejected domains of each constraint (``rejected_values``). ``groups`` must be split
    by ``plan.keys`` (a hostname key by presence). O(groups × constraints + nodes with matching pods)."""
    keys = plan.keys
    by_group: list[tuple[int, AbstractSet[str]]] = []  # (split index, rejected domains) of group-wise terms
    for i, term in enumerate(plan.terms):
        if term.topology_key != HOSTNAME_KEY and rejected[i]:
            by_group.append((keys.index(term.topology_key), rejected[i]))
    kept = tuple(
        not (any(v is None or v is False for v in split) or any(split[k] in out for k, out in by_group))
        for split in groups.splits
    )
    removed: dict[int, set[str]] = {}
    group_of = groups.group_of
    for i, term in enumerate(plan.terms):
        out = rejected[i]
        if term.topology_key != HOSTNAME_KEY or not out:
            continue
        value_of, shared = tables[i].value_of, tables[i].shared
        names = [name for name in counts[i] if value_of.get(name) in out]
        names.extend(name for value in out for name in shared.get(value, ()))
        for name in names:
            g = group_of.get(name)
            if g is not None and kept[g]:
                removed.setdefault(g, set()).add(name)
    return kept, removed


def restrict_groups(
    groups: CandidateGroups, kept: Sequence[bool], removed: Mapping[int, AbstractSet[str]]
) -> CandidateGroups:
    """``groups`` minus the rejected groups and the removed candidates, as views (see the module docstring).
    O(groups + removed)."""
    names: list[Sequence[str]] = []
    for g, base in enumerate(groups.names):
        if not kept[g]:
            names.append(())
        elif g in removed:
            out = removed[g]
            names.append(NameView(base, out.__contains__, len(base) - len(out)))
        else:
            names.append(base)
    gone: set[str] = set().union(*removed.values()) if removed else set()
    total = sum(len(n) for n in names)
    return CandidateGroups(
        groups.keys,
        groups.zones,
        groups.places,
        groups.zone_labels,
        groups.region_labels,
        groups.sigs,
        tuple(names),
        GroupOfView(groups.group_of, kept, gone, total),
        groups.present,
        groups.by_zone,
        total,
        groups.zone_index,
        groups.single,
        min((len(n) for n in names), default=0),
        groups.splits,
    )
