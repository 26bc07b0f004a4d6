"""Which pods a scale-down removes first, the way the controllers pick them.

ReplicaSet / ReplicationController (and so a Deployment's ReplicaSet): since Kubernetes v1.21
``pkg/controller/replicaset`` ``getPodsToDelete`` ranks every pod by the number of *active* related pods on
its node (``getPodsRankedByRelatedPodsOnSameNode``) once per scale-down, sorts with
``controller.ActivePodsWithRanks`` and deletes the first ``diff``. That order, rule by rule:

1. an unassigned pod before an assigned one;
2. phase Pending before Unknown before Running;
3. not ready before ready;
4. lower ``controller.kubernetes.io/pod-deletion-cost`` first;
5. **higher rank first** (more replicas of the same workload on the pod's node);
6. - 8. ready for less time, more restarts, newer creation time first.

The snapshot model keeps node, phase and deletion state only, so rules 1, 2 and 5 are applied; the rest are
replaced by the pod name (a deterministic stand-in, documented in ``docs/whatif.md``).

StatefulSet: the controller removes the highest ordinal first (``pkg/controller/statefulset``, it scales
down in reverse ordinal order), whatever the node.

Cost: O(p log p) for p pods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from spreadwatch.model import TERMINAL_PHASES, Pod

__all__ = ["rank_victims"]

_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def _ordinal(pod: Pod) -> int:
    """A StatefulSet pod's ordinal as the controller parses it (``strconv.ParseInt(tail, 10, 32)``: ASCII
    digits, int32), else -1; never converts more than 10 digits. O(len(name))."""
    _, _, tail = pod.name.rpartition("-")
    if not (tail.isascii() and tail.isdigit()) or len(tail.lstrip("0")) > 10:
        return -1
    ordinal = int(tail)
    return ordinal if ordinal < 2**31 else -1


def rank_victims(pods: Iterable[Pod], kind: str) -> list[Pod]:
    """``pods`` (a workload's active pods) in the order its controller deletes them on a scale-down."""
    active = [p for p in pods if not p.deleting and p.phase not in TERMINAL_PHASES]
    if kind == "StatefulSet":
        return sorted(active, key=lambda p: (-_ordinal(p), p.name))
    on_node = Counter(p.node_name for p in active)
    return sorted(
        active,
        key=lambda p: (bool(p.node_name), _PHASE_ORDER.get(p.phase, 0), -on_node[p.node_name], p.name),
    )
