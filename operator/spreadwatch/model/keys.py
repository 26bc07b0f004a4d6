"""Workload identity: the kinds spreadwatch reports on and :class:`WorkloadKey`, the one key of a workload."""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["WORKLOAD_KINDS", "WorkloadKey"]

#: Workload kinds spreadwatch reports on, in report order.
WORKLOAD_KINDS: Final = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


class WorkloadKey(NamedTuple):
    """The identity of a workload (or any controller): namespace, kind, name. Sorts by namespace, then kind,
    then name; ``str`` gives its one text form, ``namespace/Kind/name`` (logs, messages). O(1)."""

    namespace: str
    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"
