"""Counting pods: label groups, the workloads each group's pods count for, and per-workload node counts.

Counting pods (bound, not deleting, not terminal) are grouped by their exact label set (pods of one
ReplicaSet share one), each group with a node → count map and a cached list of the workloads whose spreading
selector matches it (valid while the namespace's epoch is unchanged). A pod event costs O(labels + A) (A:
workloads the pod matches); a workload's counts are rebuilt from the groups its anchors point at, found
through the group index, which has an entry only for labels some workload is anchored on (a bulk load
files pods before any workload exists, so it builds none; a new anchor's entry is built in one pass, or when
first needed: the first workloads of a namespace are counted in one pass over its groups, without it).

:class:`PodCounts` is one part of the index (owned by :mod:`~spreadwatch.index.workloads`, which tells it
each workload's change): it keeps the label groups in the index's namespace states, given what it reads
and ``touch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from spreadwatch.index.state import IndexRecords, LabelGroup, LabelKey, NamespaceState, Workload
from spreadwatch.model import TERMINAL_PHASES, Pod, WorkloadKey
from spreadwatch.model import label_key as label_key_of

__all__ = ["PodCounts"]


#: a workload counted by :meth:`PodCounts.count_first`: its counts, and its selector's test (None: none needed)
_Entry = tuple[dict[str, int], Callable[[Mapping[str, str]], bool] | None]


def _index_group(group_index: dict[tuple[str, str], set[LabelKey]], label_key: LabelKey) -> None:
    """File a new label group under the index entries of its labels (only anchors have one). O(labels)."""
    for item in label_key.items():
        keys = group_index.get(item)
        if keys is not None:
            keys.add(label_key)


def _groups_with(ns: NamespaceState, item: tuple[str, str]) -> set[LabelKey]:
    """The namespace's label groups that have the label ``item``, from the group index; an anchor without an
    entry gets one (found without the index, O(groups)). O(1) once the entry exists."""
    found = ns.group_index.get(item)
    if found is None:
        found = {label_key for label_key in ns.groups if item in label_key.items()}
        if item in ns.anchor_index:  # (a one-off workload is not filed: its labels get no entry)
            ns.group_index[item] = found
    return found


def _add_nodes(counts: dict[str, int], nodes: dict[str, int]) -> None:
    """Add one label group's node counts into a workload's. O(nodes)."""
    if not counts:  # the first matching group (often the only one): copied in C
        counts.update(nodes)
        return
    for node, c in nodes.items():
        counts[node] = counts.get(node, 0) + c


class PodCounts:
    """Pods, label groups and the per-workload sparse node → matching-pod counts (see the module docstring).
    O(1) to create.

    Given the index's records (:class:`~spreadwatch.index.state.IndexRecords`: its namespaces, whose pods,
    label groups and group index it keeps), ``ns_of`` (a namespace's state, made if new) and ``touch`` (dirty
    a workload's report).
    """

    __slots__ = ("_ns", "_ns_of", "_touch")

    def __init__(
        self,
        records: IndexRecords,
        ns_of: Callable[[str], NamespaceState],
        touch: Callable[[Workload, WorkloadKey], None],
    ) -> None:
        self._ns, self._ns_of, self._touch = records.namespaces, ns_of, touch

    def apply_pod(self, pod: Pod) -> None:
        """A pod added or changed: filed, and counted (or uncounted) where its node or labels changed.
        O(labels + A)."""
        ns = self._ns_of(pod.namespace)
        old = ns.pods.get(pod.name)
        ns.pods[pod.name] = pod
        if old is not None:
            if old.counts and pod.counts and old.node_name == pod.node_name and old.labels == pod.labels:
                return
            self.shift(ns, old, -1)
        self.shift(ns, pod, 1)

    def count_bulk(self, pods: Iterable[Pod], held_pod: Callable[[Pod], None]) -> None:
        """File and count pods while no workload exists yet (bulk load): a pod only joins its label group,
        without the per-event look-up of matching workloads (they are counted from the groups when added).
        A pod already held takes the event path (``held_pod``: the index's). O(pods), a few dictionary
        operations each (``Pod.counts`` is inlined: this loop runs once per pod of the cluster)."""
        ns_name: str | None = None
        held: dict[str, Pod] = {}
        groups: dict[LabelKey, LabelGroup] = {}
        group_index: dict[tuple[str, str], set[LabelKey]] = {}
        last_labels: object = None  # consecutive pods often share one interned label map, hence one group
        nodes: dict[str, int] = {}  # the node counts of last_labels' group
        terminal = TERMINAL_PHASES
        for pod in pods:
            if pod.namespace != ns_name:
                ns_name = pod.namespace
                ns = self._ns_of(ns_name)
                held, groups, group_index = ns.pods, ns.groups, ns.group_index
                last_labels = None
            name = pod.name
            if name in held:
                held_pod(pod)
                last_labels = None
                continue
            held[name] = pod
            node = pod.node_name
            if not node or pod.deleting or pod.phase in terminal:  # not pod.counts
                continue
            labels = pod.labels
            if labels is not last_labels:
                label_key = label_key_of(labels)
                found = groups.get(label_key)
                if found is None:
                    found = groups[label_key] = LabelGroup(labels)
                    if group_index:  # (empty while no workload is anchored: a fresh load)
                        _index_group(group_index, label_key)
                nodes, last_labels = found.nodes, labels
            nodes[node] = nodes.get(node, 0) + 1

    def group_matches(self, ns: NamespaceState, group: LabelGroup) -> list[WorkloadKey]:
        """The workloads whose selector matches the group's labels, cached until the namespace's epoch
        changes. O(1) cached, else O(labels + anchored candidates)."""
        cached = group.matches
        if cached is not None and group.epoch == ns.epoch:
            return cached
        candidates: set[WorkloadKey] = set(ns.unanchored)
        for item in group.labels.items():
            found = ns.anchor_index.get(item)
            if found:
                candidates |= found
        matches = []
        for key in candidates:
            w = ns.workloads[key]
            if w.counting and w.selector is not None and w.selector.matches(group.labels):
                matches.append(key)
        group.matches, group.epoch = matches, ns.epoch
        return matches

    def shift(self, ns: NamespaceState, pod: Pod, delta: int) -> None:
        """Count (``delta`` 1) or uncount (-1) one pod: its label group's node count and every matching
        workload's; a group left with no pods is dropped. O(workloads matching the group) once the group's
        match list is cached."""
        if not pod.counts:
            return
        label_key = label_key_of(pod.labels)
        group = ns.groups.get(label_key)
        if group is None:
            if delta < 0:
                return
            group = ns.groups[label_key] = LabelGroup(pod.labels)
            _index_group(ns.group_index, label_key)
        node = pod.node_name
        left = group.nodes.get(node, 0) + delta
        if left > 0:
            group.nodes[node] = left
        else:
            group.nodes.pop(node, None)
        for key in self.group_matches(ns, group):
            w = ns.workloads[key]
            c = w.counts.get(node, 0) + delta
            if c > 0:
                w.counts[node] = c
            else:
                w.counts.pop(node, None)
            self._touch(w, key)
        if not group.nodes:
            del ns.groups[label_key]
            group_index = ns.group_index
            for item in label_key.items():
                keys = group_index.get(item)
                if keys is not None:
                    keys.discard(label_key)  # (an empty entry stays while its anchor has workloads)

    @staticmethod
    def index_groups(ns: NamespaceState, items: Iterable[tuple[str, str]]) -> None:
        """Add the label-group index entries of anchors that have none, in one pass over the namespace's
        groups (the index has an entry for exactly the labels some workload is anchored on: a label group
        is looked up only by anchors). O(groups × min(labels, items))."""
        wanted = set(items)
        group_index = ns.group_index
        for item in wanted:
            group_index[item] = set()
        for label_key in ns.groups:
            for item in wanted.intersection(label_key.items()):
                group_index[item].add(label_key)

    def count_first(self, ns: NamespaceState, added: Iterable[Workload]) -> None:
        """Count the first workloads of a namespace (it had none: bulk load) in one pass over its label
        groups, each group's labels looking up the workloads anchored on them, instead of building the
        group index for their anchors and recounting each workload from it (those entries are made when
        first needed). A workload with several anchors, or none, is recounted as :meth:`recount` does.
        A group of a workload whose selector is exactly its anchor matches without a test.
        O(groups × labels + matching groups × their nodes)."""
        by_label: dict[str, dict[str, list[_Entry]]] = {}  # anchor key -> value -> entries (the key: usually app)
        for w in added:
            anchored = w.anchors
            selector = w.selector
            if anchored is None or len(anchored) != 1 or selector is None or len(selector.selectors) != 1:
                self.recount(ns, w)
                continue
            counts: dict[str, int] = {}
            w.counts = counts
            if w.counting:
                item = anchored[0]
                sel = selector.selectors[0]
                entry = (counts, None if sel.requires_only(item) else sel.matches)
                by_value = by_label.get(item[0])
                if by_value is None:
                    by_value = by_label[item[0]] = {}
                found = by_value.get(item[1])
                if found is None:
                    by_value[item[1]] = [entry]
                else:
                    found.append(entry)
        if not by_label:
            return
        anchored_on = list(by_label.items())
        for group in ns.groups.values():
            labels = group.labels
            for key, by_value in anchored_on:
                value = labels.get(key)
                found = by_value.get(value) if value is not None else None
                if found is None:
                    continue
                for counts, matches in found:
                    if matches is None or matches(labels):
                        _add_nodes(counts, group.nodes)

    @staticmethod
    def invalidate_groups(ns: NamespaceState) -> None:
        """O(1): every group's cached workload list is stale from now on."""
        ns.epoch += 1

    @staticmethod
    def recount(ns: NamespaceState, w: Workload) -> None:
        """Counts from the label groups the workload's anchors point at (all groups if unanchored); a selector
        that is exactly its one anchor matches them without a test.
        O(those groups × (selector requirements + their nodes)), plus O(groups) for an anchor's new entry."""
        counts: dict[str, int] = {}
        selector = w.selector
        if w.counting and selector is not None:
            keys: Iterable[LabelKey]
            anchored = w.anchors
            anchor = anchored[0] if anchored is not None and len(anchored) == 1 else None
            if anchored is None:
                keys = ns.groups
            elif anchor is not None:  # the usual case: that label's groups
                keys = _groups_with(ns, anchor)
            else:
                keys = set().union(*[_groups_with(ns, item) for item in anchored])
            groups = ns.groups
            selectors = selector.selectors
            if anchor is not None and len(selectors) == 1 and selectors[0].requires_only(anchor):
                for key in keys:
                    _add_nodes(counts, groups[key].nodes)
            else:
                matches = selectors[0].matches if len(selectors) == 1 else selector.matches
                for key in keys:
                    group = groups[key]
                    if matches(group.labels):
                        _add_nodes(counts, group.nodes)
        w.counts = counts

    def term_counts(self, w: Workload) -> list[dict[str, int]]:
        """v1.29 with different selectors: per constraint, node -> matching pods, from the label groups.
        O(groups in the namespace × constraints)."""
        assert w.plan is not None
        terms = w.plan.terms
        out: list[dict[str, int]] = [{} for _ in terms]
        ns = self._ns.get(w.ctrl.namespace)
        if ns is None:
            return out
        for group in ns.groups.values():
            for i, term in enumerate(terms):
                if not term.selector.empty and term.selector.matches(group.labels):
                    per_node = out[i]
                    for node, c in group.nodes.items():
                        per_node[node] = per_node.get(node, 0) + c
        return out
