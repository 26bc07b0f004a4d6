"""What kube-scheduler's cache sums per node, kept current pod by pod: :class:`NodeLoads`.

Every node name met (a node, or a pod bound to a node not seen yet: the scheduler keeps those pods on a
node-less NodeInfo until the node comes) has a *slot*; per slot, numpy ``int64`` arrays hold the node's
allocatable (CPU in millicores, memory and ephemeral storage in bytes, pods), the summed requests of the pods
the cache holds there (bound, not terminal; pods being deleted included), the same with the non-zero CPU and
memory defaults (``NonZeroRequested``) and the pod count; scalar resources (extended, hugepages) get a pair
of arrays each when first seen. Host ports in use are kept per node (only nodes with some). The prediction
reads the arrays whole (vector arithmetic over every node, :mod:`~spreadwatch.index.predicting`).

Costs: a pod event O(1) (+ O(scalars + ports) of its needs); a node event O(scalars); ``load`` O(pods) in
one pass; the copies of a pod each node takes (the room for a lost zone's replacements) O(slots) in numpy;
memory ~80 bytes a slot plus 16 per scalar resource and slot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import numpy as np
import numpy.typing as npt

from spreadwatch.model import NO_RESOURCES, TERMINAL_PHASES, Node, Pod, PodNeeds, Resources
from spreadwatch.scoring.node_ports import UsedPorts, add_ports
from spreadwatch.scoring.resource_fit import FitStrategy, fit_terms

__all__ = ["Int64s", "NodeLoads"]

Int64s = npt.NDArray[np.int64]
_FIELDS: Final = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "alloc_pods",
    "req_cpu",
    "req_memory",
    "req_ephemeral",
    "nz_cpu",
    "nz_memory",
    "pods",
)
_START: Final = 64


class NodeLoads:
    """Per-node allocatable and requested resources by slot (see the module docstring)."""

    def __init__(self) -> None:
        self.slot: dict[str, int] = {}
        self.names: list[str] = []
        self.present = np.zeros(_START, dtype=np.bool_)  # a Node record is held for the slot
        self.alloc_cpu = np.zeros(_START, dtype=np.int64)
        self.alloc_memory = np.zeros(_START, dtype=np.int64)
        self.alloc_ephemeral = np.zeros(_START, dtype=np.int64)
        self.alloc_pods = np.zeros(_START, dtype=np.int64)
        self.req_cpu = np.zeros(_START, dtype=np.int64)
        self.req_memory = np.zeros(_START, dtype=np.int64)
        self.req_ephemeral = np.zeros(_START, dtype=np.int64)
        self.nz_cpu = np.zeros(_START, dtype=np.int64)
        self.nz_memory = np.zeros(_START, dtype=np.int64)
        self.pods = np.zeros(_START, dtype=np.int64)
        #: scalar resource -> (allocatable, requested) by slot
        self.scalars: dict[str, tuple[Int64s, Int64s]] = {}
        self.ports: dict[str, UsedPorts] = {}
        #: bumped on every change of a load (caches of derived vectors compare it)
        self.version = 0

    def __len__(self) -> int:
        return len(self.names)

    def _grow(self) -> None:
        size = 2 * len(self.present)
        self.present = np.concatenate([self.present, np.zeros(size - len(self.present), dtype=np.bool_)])
        for name in _FIELDS:
            old: Int64s = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros(size - len(old), dtype=np.int64)]))
        for key, (alloc, req) in list(self.scalars.items()):
            pad = np.zeros(size - len(alloc), dtype=np.int64)
            self.scalars[key] = (np.concatenate([alloc, pad]), np.concatenate([req, pad]))

    def slot_of(self, name: str) -> int:
        """The slot of a node name (a new one for a name not met). O(1) amortised."""
        found = self.slot.get(name)
        if found is not None:
            return found
        if len(self.names) == len(self.present):
            self._grow()
        found = self.slot[name] = len(self.names)
        self.names.append(name)
        return found

    def _scalar(self, name: str) -> tuple[Int64s, Int64s]:
        found = self.scalars.get(name)
        if found is None:
            size = len(self.present)
            found = self.scalars[name] = (np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64))
        return found

    def set_node(self, name: str, node: Node | None) -> None:
        """A node added, changed (its allocatable) or removed (None: its pods stay, node-less). O(scalars)."""
        i = self.slot_of(name)
        alloc = node.allocatable if node is not None else NO_RESOURCES
        self.present[i] = node is not None
        self.alloc_cpu[i] = alloc.milli_cpu
        self.alloc_memory[i] = alloc.memory
        self.alloc_ephemeral[i] = alloc.ephemeral_storage
        self.alloc_pods[i] = alloc.pods
        held = dict(alloc.scalars)
        for key, (values, _) in self.scalars.items():
            values[i] = held.pop(key, 0)
        for key, amount in held.items():
            self._scalar(key)[0][i] = amount
        self.version += 1

    def add(self, pod: Pod, sign: int) -> None:
        """Count a pod the cache holds on its node in (``sign`` 1) or out (-1). O(scalars + ports)."""
        i = self.slot_of(pod.node_name)
        needs = pod.needs
        r = needs.requests
        self.req_cpu[i] += sign * r.milli_cpu
        self.req_memory[i] += sign * r.memory
        self.req_ephemeral[i] += sign * r.ephemeral_storage
        self.nz_cpu[i] += sign * needs.non_zero_cpu
        self.nz_memory[i] += sign * needs.non_zero_memory
        self.pods[i] += sign
        for key, amount in r.scalars:
            self._scalar(key)[1][i] += sign * amount
        if needs.host_ports:
            used = self.ports.setdefault(pod.node_name, {})
            add_ports(used, needs.host_ports, sign)
            if not used:
                del self.ports[pod.node_name]
        self.version += 1

    def pod_changed(self, old: Pod | None, new: Pod | None) -> None:
        """A pod event: the old record counted out, the new one in, when either is in the cache and they
        differ in what the cache sums. O(1) when nothing it sums changed."""
        was = old is not None and old.in_node_info
        now = new is not None and new.in_node_info
        if was and now and old.node_name == new.node_name and old.needs is new.needs:  # type: ignore[union-attr]
            return
        if was:
            self.add(old, -1)  # type: ignore[arg-type]
        if now:
            self.add(new, 1)  # type: ignore[arg-type]

    def add_all(self, pods: Iterable[Pod]) -> None:
        """Count many pods in (a load): one pass collecting each pod's slot and needs (shared per template),
        then per needs one scattered addition. O(pods) in Python + O(pods) in numpy."""
        slots: list[int] = []
        kinds: list[int] = []
        seen: dict[int, int] = {}
        needs_of: list[PodNeeds] = []
        slot, slot_of = self.slot, self.slot_of
        for pod in pods:
            name = pod.node_name
            if not name or pod.phase in TERMINAL_PHASES:
                continue
            i = slot.get(name)
            slots.append(slot_of(name) if i is None else i)
            needs = pod.needs
            k = seen.get(id(needs))
            if k is None:
                k = seen[id(needs)] = len(needs_of)
                needs_of.append(needs)
            kinds.append(k)
            if needs.host_ports:
                add_ports(self.ports.setdefault(name, {}), needs.host_ports, 1)
        if not slots:
            return
        at = np.array(slots, dtype=np.int64)
        kind = np.array(kinds, dtype=np.int64)
        columns = (
            (self.req_cpu, [n.requests.milli_cpu for n in needs_of]),
            (self.req_memory, [n.requests.memory for n in needs_of]),
            (self.req_ephemeral, [n.requests.ephemeral_storage for n in needs_of]),
            (self.nz_cpu, [n.non_zero_cpu for n in needs_of]),
            (self.nz_memory, [n.non_zero_memory for n in needs_of]),
        )
        for target, per_kind in columns:
            np.add.at(target, at, np.array(per_kind, dtype=np.int64)[kind])
        np.add.at(self.pods, at, 1)
        for k, needs in enumerate(needs_of):
            if needs.requests.scalars:
                mine = at[kind == k]
                for key, amount in needs.requests.scalars:
                    np.add.at(self._scalar(key)[1], mine, amount)
        self.version += 1

    def allocatable(self, i: int) -> Resources:
        """A slot's allocatable as a record (explain, tests). O(scalars)."""
        scalars = tuple(sorted((k, int(a[i])) for k, (a, _) in self.scalars.items() if a[i]))
        return Resources(int(self.alloc_cpu[i]), int(self.alloc_memory[i]), int(self.alloc_ephemeral[i]),
                         int(self.alloc_pods[i]), scalars)  # fmt: skip

    def amounts(self, name: str, use_requested: bool = True) -> tuple[Int64s, Int64s]:
        """(allocatable, allocated) of one resource per slot (``calculateResourceAllocatableRequest``): CPU and
        memory allocated as requested, or with the non-zero defaults (``use_requested`` False); zeros for a
        scalar resource no node has. O(1) (views), O(slots) for such a scalar resource."""
        n = len(self.names)
        if name == "cpu":
            return self.alloc_cpu[:n], (self.req_cpu if use_requested else self.nz_cpu)[:n]
        if name == "memory":
            return self.alloc_memory[:n], (self.req_memory if use_requested else self.nz_memory)[:n]
        if name == "ephemeral-storage":
            return self.alloc_ephemeral[:n], self.req_ephemeral[:n]
        pair = self.scalars.get(name)
        if pair is None:
            zero = np.zeros(n, dtype=np.int64)
            return zero, zero
        return pair[0][:n], pair[1][:n]

    def copies(self, requests: Resources, strategy: FitStrategy) -> Int64s:
        """Per slot, how many copies of a pod of ``requests`` NodeResourcesFit lets onto the node one after
        another (:func:`~spreadwatch.scoring.resource_fit.fit_copies`, every slot at once; 0 on a slot without
        a Node record). O(slots × requested resources) in numpy."""
        n = len(self.names)
        out = np.maximum(self.alloc_pods[:n] - self.pods[:n], 0)
        for name, amount in fit_terms(requests, strategy):
            capacity, used = self.amounts(name)
            out = np.minimum(out, np.maximum(capacity - used, 0) // amount)
        return np.where(self.present[:n], out, 0)


def needs_key(needs: PodNeeds) -> tuple[object, ...]:
    """What the resource plugins read of a pod's needs: the key their per-needs vectors are cached by."""
    return (needs.requests, needs.score_cpu, needs.score_memory)
