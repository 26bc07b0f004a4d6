"""NodeAffinity's score (``pkg/scheduler/framework/plugins/nodeaffinity``, v1.36.4, with
``component-helpers/scheduling/corev1/nodeaffinity``): per node, the summed weights of the pod's preferred
node affinity terms it matches, plus those of the profile's ``addedAffinity``; NormalizeScore scales them to
the highest (``DefaultNormalizeScore(100, false)``). Terms of weight 0 and empty terms are dropped before
anything else. A pod with neither preferred terms nor added ones is skipped by PreScore; a term that does not
parse fails PreScore (the scheduler cannot place the pod). Pure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from spreadwatch.errors import SelectorError
from spreadwatch.model import Node, NodeSelectorTerm, PreferredSchedulingTerm
from spreadwatch.scoring.candidates import NODE_OPERATORS, node_term_matches
from spreadwatch.selectors import Requirement

__all__ = ["NODE_AFFINITY", "node_term_error", "preferred_error", "preferred_node_score"]

NODE_AFFINITY: Final = "NodeAffinity"


def node_term_error(term: NodeSelectorTerm) -> str:
    """Why ``newNodeSelectorTerm`` would not parse the term ("" when it does): an unknown operator, an
    invalid key or value, the wrong number of values, a field requirement other than In/NotIn with one
    value. O(requirements)."""
    for req in term.match_expressions:
        op = NODE_OPERATORS.get(req.operator)
        if op is None:
            return f"matchExpressions: {req.operator!r} is not a valid node selector operator"
        try:
            Requirement.new(req.key, op, req.values)
        except SelectorError as err:
            return f"matchExpressions: {err}"
    for req in term.match_fields:
        if req.operator not in ("In", "NotIn"):
            return f"matchFields: {req.operator!r} is not a valid field selector operator"
        if len(req.values) != 1:
            return "matchFields: In and NotIn need exactly one value"
    return ""


def _kept(terms: Iterable[PreferredSchedulingTerm]) -> list[PreferredSchedulingTerm]:
    return [t for t in terms if t.weight != 0 and (t.term.match_expressions or t.term.match_fields)]


def preferred_error(terms: Iterable[PreferredSchedulingTerm]) -> str:
    """Why ``NewPreferredSchedulingTerms`` fails for these terms ("" when it does not). O(requirements)."""
    for i, t in enumerate(_kept(terms)):
        error = node_term_error(t.term)
        if error:
            return f"preferred node affinity term {i}: {error}"
    return ""


def preferred_node_score(terms: Iterable[PreferredSchedulingTerm], node: Node) -> int:
    """``PreferredSchedulingTerms.Score``: the summed weights of the (valid) terms the node matches.
    O(requirements)."""
    return sum(t.weight for t in _kept(terms) if node_term_matches(t.term, node))
