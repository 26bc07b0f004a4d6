"""Candidate nodes: the nodes kube-scheduler's filters would pass before scoring.

Implements the filters that depend on labels and taints only, in the scheduler's order:
NodeUnschedulable (cordoned nodes, unless the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule``),
TaintToleration (untolerated NoSchedule/NoExecute taints) and NodeAffinity (``nodeSelector`` and required
node affinity). Resource fit, ports, volumes and inter-pod affinity are out of scope.
Each excluded node gets a reason code: ``Unschedulable``, ``UntoleratedTaint`` or ``NodeAffinity``.
Cost: O(nodes × (taints × tolerations + affinity terms)).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from spreadwatch.model import Node, NodeSelectorRequirement, NodeSelectorTerm, PodTemplate, Taint
from spreadwatch.selectors import Operator, Requirement, validate_label_key

__all__ = [
    "NODE_OPERATORS",
    "REASON_NODE_AFFINITY",
    "REASON_UNSCHEDULABLE",
    "REASON_UNTOLERATED_TAINT",
    "affinity_label_keys",
    "exclusion_reason",
    "filter_nodes",
    "has_untolerated_taint",
    "node_affinity_matches",
    "node_term_matches",
    "taint_reason",
]

REASON_UNSCHEDULABLE: Final = "Unschedulable"
REASON_UNTOLERATED_TAINT: Final = "UntoleratedTaint"
REASON_NODE_AFFINITY: Final = "NodeAffinity"

_UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_FILTERED_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
#: A node selector requirement's operator by its name in the API (``nodeaffinity``'s parse of a term).
NODE_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


def _tolerated(taint: Taint, template: PodTemplate) -> bool:
    return any(t.tolerates(taint) for t in template.tolerations)


def _expression_matches(req: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool | None:
    """Match one matchExpressions entry; None when it is invalid (the term then matches nothing)."""
    op = NODE_OPERATORS.get(req.operator)
    if op is None or validate_label_key(req.key) is not None:
        return None
    if op in (Operator.IN, Operator.NOT_IN) and not req.values:
        return None
    if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and req.values:
        return None
    if op in (Operator.GREATER_THAN, Operator.LESS_THAN) and (
        len(req.values) != 1 or not req.values[0].lstrip("+-").isdigit()
    ):
        return None
    return Requirement(req.key, op, tuple(sorted(set(req.values)))).matches(labels)


def _field_matches(req: NodeSelectorRequirement, node: Node) -> bool | None:
    """Match one matchFields entry (only ``metadata.name`` with In/NotIn and one value is valid)."""
    if req.key != "metadata.name" or req.operator not in ("In", "NotIn") or len(req.values) != 1:
        return None
    return (node.name == req.values[0]) == (req.operator == "In")


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    if not term.match_expressions and not term.match_fields:
        return False  # an empty term selects no node
    for req in term.match_expressions:
        if _expression_matches(req, node.labels) is not True:
            return False
    return all(_field_matches(req, node) is True for req in term.match_fields)


def node_term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """One NodeSelectorTerm against a node: every expression and field matches (an empty term, or one with
    an invalid requirement, matches none). O(requirements)."""
    return _term_matches(term, node)


def _affinity_matches(node: Node, template: PodTemplate) -> bool:
    for key, value in template.node_selector:
        if node.labels.get(key) != value:
            return False
    if template.required_terms is None:
        return True
    return any(_term_matches(term, node) for term in template.required_terms)


def affinity_label_keys(template: PodTemplate) -> tuple[str, ...] | None:
    """The node label keys :func:`node_affinity_matches` reads for ``template`` (its result depends only on the
    node's values for them, a missing label being None), or None when a term has ``matchFields`` (it reads
    the node's name). O(nodeSelector + expressions)."""
    keys = [key for key, _ in template.node_selector]
    for term in template.required_terms or ():
        if term.match_fields:
            return None
        keys.extend(req.key for req in term.match_expressions)
    return tuple(dict.fromkeys(keys))


def node_affinity_matches(node: Node, template: PodTemplate) -> bool:
    """``RequiredNodeAffinity.Match``: the pod's nodeSelector and required node affinity. O(terms)."""
    return _affinity_matches(node, template)


def has_untolerated_taint(node: Node, template: PodTemplate) -> bool:
    """Whether the node has a NoSchedule/NoExecute taint the pod does not tolerate. O(taints × tolerations)."""
    return any(t.effect in _FILTERED_EFFECTS and not _tolerated(t, template) for t in node.taints)


def taint_reason(unschedulable: bool, taints: Iterable[Taint], template: PodTemplate) -> str | None:
    """The NodeUnschedulable and TaintToleration filters' reason for a node with these ``unschedulable`` and
    ``taints``; None if they pass it. Depends on nothing else of the node, so it can be shared by nodes with
    the same ones. O(taints × tolerations)."""
    if unschedulable and not _tolerated(_UNSCHEDULABLE_TAINT, template):
        return REASON_UNSCHEDULABLE
    for taint in taints:
        if taint.effect in _FILTERED_EFFECTS and not _tolerated(taint, template):
            return REASON_UNTOLERATED_TAINT
    return None


def exclusion_reason(node: Node, template: PodTemplate) -> str | None:
    """Why the scheduler would not consider ``node`` for a pod with ``template``; None if it would."""
    reason = taint_reason(node.unschedulable, node.taints, template)
    if reason is not None:
        return reason
    if not _affinity_matches(node, template):
        return REASON_NODE_AFFINITY
    return None


def filter_nodes(nodes: Iterable[Node], template: PodTemplate) -> tuple[list[Node], dict[str, str]]:
    """Split ``nodes`` into candidates (in input order) and excluded node name → reason."""
    candidates: list[Node] = []
    excluded: dict[str, str] = {}
    for node in nodes:
        reason = exclusion_reason(node, template)
        if reason is None:
            candidates.append(node)
        else:
            excluded[node.name] = reason
    return candidates, excluded
