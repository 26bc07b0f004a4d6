"""``spreadwatch explain``'s last section: how much the spreading plugin counts in the scheduler's profile.

kube-scheduler picks the node with the highest sum of every score plugin's score times its weight; spreadwatch
computes the spreading plugin's part. The section names that plugin's weight, the other score plugins, and,
when plugins scoring resource requests are enabled, that they can outweigh spreading. O(plugins).
"""

from __future__ import annotations

from typing import TextIO

from spreadwatch.scoring.score_weights import RESOURCE_PLUGINS, ScoreWeights

__all__ = ["write_score_weights"]


def write_score_weights(weights: ScoreWeights, out: TextIO) -> None:
    """Write the ``Weight:`` lines for ``weights`` (see the module docstring)."""
    plugin, weight = weights.plugin, weights.spread_weight
    if weight is None:
        out.write(f"Weight:      {plugin} is not a score plugin of {weights.source}: "
                  "these scores do not decide the placement\n")  # fmt: skip
        return
    if not weights.others:
        out.write(f"Weight:      {plugin} x{weight}, the only score plugin of {weights.source}: "
                  "kube-scheduler places the next pod on one of the best nodes above (among the nodes it scores)\n")
        return
    others = ", ".join(f"{name} x{w}" for name, w in weights.others)
    out.write(f"Weight:      {plugin} x{weight} in {weights.source}; the other score plugins: {others}\n")
    if weights.resource_scored:
        resource = " and ".join(name for name in RESOURCE_PLUGINS if name in weights.weights)
        out.write(f"             {resource} score the pod's CPU and memory requests (100m and 200Mi when unset) "
                  "against each node's: on unevenly filled nodes they can outweigh spreading, and "
                  "kube-scheduler may choose a node that is not among the best ones above\n")
