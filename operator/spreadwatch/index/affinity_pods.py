"""Pods with pod affinity terms, as InterPodAffinity reads them from the scheduler's cache: :class:`AffinityPods`.

The pods the cache holds (bound, not terminal, being deleted or not) whose spec has pod affinity or
anti-affinity terms are grouped by (namespace, scheduling template): pods of one ReplicaSet share one group,
with a node → pod count map. Each group is filed under an *anchor* of each of its terms' label selectors (one
``key=value`` every pod the term selects carries, as the workloads' anchors in
:mod:`~spreadwatch.index.workloads`); :meth:`AffinityPods.selecting` finds the groups whose terms may select
an incoming pod from its labels alone, O(labels + those groups). A pod event costs O(terms) when its group
is new, O(1) otherwise.

:meth:`AffinityPods.deleting` are the pods being deleted that the cache still holds (the label groups of the
spread index count no such pod; InterPodAffinity does): per namespace, their labels and node.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from spreadwatch.model import Pod, PodAffinityTerm, PodTemplate
from spreadwatch.selectors import POSITIVE_OPERATORS

__all__ = ["AffinityGroup", "AffinityPods"]

_GroupKey = tuple[str, PodTemplate]


class AffinityGroup:
    """The cached pods of one namespace and template that carry pod affinity terms: node → count."""

    __slots__ = ("namespace", "nodes", "template")

    def __init__(self, namespace: str, template: PodTemplate) -> None:
        self.namespace = namespace
        self.template = template
        self.nodes: dict[str, int] = {}


def _terms(template: PodTemplate) -> Iterator[PodAffinityTerm]:
    yield from template.required_affinity
    yield from template.required_anti_affinity
    for weighted in (*template.preferred_affinity, *template.preferred_anti_affinity):
        yield weighted.term


def _anchors(template: PodTemplate) -> list[tuple[str, str]] | None:
    """One (key, value) per term that every pod the term selects carries; None when a term has none."""
    out: list[tuple[str, str]] = []
    for term in _terms(template):
        if term.selector.nothing:
            continue  # (selects nothing: needs no anchor)
        anchor = next(
            ((r.key, r.values[0]) for r in term.selector.requirements if r.op in POSITIVE_OPERATORS
             and len(r.values) == 1), None,
        )  # fmt: skip
        if anchor is None:
            return None
        out.append(anchor)
    return out


class AffinityPods:
    """Groups of cached pods with pod affinity terms, anchored (see the module docstring)."""

    def __init__(self) -> None:
        self.groups: dict[_GroupKey, AffinityGroup] = {}
        self._by_anchor: dict[tuple[str, str], set[_GroupKey]] = {}
        self._unanchored: set[_GroupKey] = set()
        #: namespace -> pod name -> (labels, node) of the cached pods being deleted
        self._deleting: dict[str, dict[str, tuple[Mapping[str, str], str]]] = {}
        #: bumped on every change (caches of what depends on existing pods' terms compare it)
        self.version = 0

    def _file(self, key: _GroupKey) -> None:
        anchors = _anchors(key[1])
        if anchors is None:
            self._unanchored.add(key)
            return
        for anchor in set(anchors):
            self._by_anchor.setdefault(anchor, set()).add(key)

    def _unfile(self, key: _GroupKey) -> None:
        self._unanchored.discard(key)
        for anchor in set(_anchors(key[1]) or ()):
            keys = self._by_anchor.get(anchor)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_anchor[anchor]

    def _add(self, pod: Pod, sign: int) -> None:
        if pod.deleting:
            held = self._deleting.setdefault(pod.namespace, {})
            if sign > 0:
                held[pod.name] = (pod.labels, pod.node_name)
            else:
                held.pop(pod.name, None)
                if not held:
                    del self._deleting[pod.namespace]
        if not pod.template.has_pod_affinity:
            return
        key = (pod.namespace, pod.template)
        group = self.groups.get(key)
        if group is None:
            if sign < 0:
                return
            group = self.groups[key] = AffinityGroup(pod.namespace, pod.template)
            self._file(key)
        left = group.nodes.get(pod.node_name, 0) + sign
        if left > 0:
            group.nodes[pod.node_name] = left
        else:
            group.nodes.pop(pod.node_name, None)
            if not group.nodes:
                del self.groups[key]
                self._unfile(key)
        self.version += 1

    def pod_changed(self, old: Pod | None, new: Pod | None) -> None:
        """A pod event. O(1) unless the pod has affinity terms or is being deleted."""
        was = old is not None and old.in_node_info and (old.deleting or old.template.has_pod_affinity)
        now = new is not None and new.in_node_info and (new.deleting or new.template.has_pod_affinity)
        if was:
            self._add(old, -1)  # type: ignore[arg-type]
        if now:
            self._add(new, 1)  # type: ignore[arg-type]

    def add_all(self, pods: Iterable[Pod]) -> None:
        """Every pod of a load. O(pods)."""
        for pod in pods:
            if pod.in_node_info and (pod.deleting or pod.template.has_pod_affinity):
                self._add(pod, 1)

    def selecting(self, labels: Mapping[str, str]) -> list[AffinityGroup]:
        """The groups one of whose terms may select a pod with ``labels`` (a superset). O(labels + groups
        found)."""
        keys = set(self._unanchored)
        by_anchor = self._by_anchor
        for item in labels.items():
            found = by_anchor.get(item)
            if found:
                keys |= found
        return [self.groups[k] for k in keys]

    def deleting(self, namespace: str) -> Mapping[str, tuple[Mapping[str, str], str]]:
        """The cached pods of ``namespace`` being deleted: name → (labels, node). O(1)."""
        return self._deleting.get(namespace, {})

    @property
    def deleting_namespaces(self) -> Iterable[str]:
        return self._deleting.keys()
