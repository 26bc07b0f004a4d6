"""``spreadwatch explain`` for profile ``v1.29``: PodTopologySpread's Filter, domain by domain.

For each DoNotSchedule constraint: its key, maxSkew, minDomains, selector and selfMatch, the eligible domains
and the global minimum (0 when fewer domains than minDomains), then one row per domain — matching pods, the
skew ``pods + self − minimum`` and the verdict against maxSkew, with the domain's candidates — and last the
candidates the Filter rejects. Domains without pods all pass (their skew is ``self − minimum`` ≤ 1): without
``--all-nodes`` at most three are shown, the rest as one row. O(domains × constraints).
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from spreadwatch.cli.output import table
from spreadwatch.scoring import PodScores
from spreadwatch.scoring.topology_filter import MISSING_LABEL

__all__ = ["write_filter_explanation"]

_EMPTY_SHOWN = 3


def write_filter_explanation(scores: PodScores, all_nodes: bool, out: TextIO) -> None:
    """Write the Filter part of ``explain`` (nothing when PodTopologySpread's Filter does not apply)."""
    state = scores.filter
    if state is None:
        return
    plan = state.plan
    source = "the pod's own DoNotSchedule constraints" if plan.source == "pod" else f"{plan.source} (DoNotSchedule)"
    out.write(f"Filter:      PodTopologySpread, {source}; a node missing any of {', '.join(plan.keys)} is rejected\n")
    # the candidates of the other filters, per domain (rejected ones included)
    others = [*scores.candidates, *scores.rejected_nodes]
    rejected = scores.rejected
    for i, (term, t) in enumerate(zip(plan.terms, state.terms, strict=True)):
        if t.domains < term.min_domains:
            minimum = f"{t.domains} domains < minDomains {term.min_domains}: minimum 0"
        else:
            minimum = f"minimum {t.minimum} (the least pods of a domain)"
        out.write(
            f"  F{i + 1}: {term.topology_key} maxSkew {term.max_skew}, minDomains {term.min_domains}, selector "
            f"{term.selector or '<none>'}, selfMatch {term.self_match}; {t.domains} eligible domains, {minimum}\n"
        )
        per_domain: Counter[str] = Counter()
        for node in others:
            value = node.labels.get(term.topology_key)
            if value is not None:
                per_domain[value] += 1
        rows: list[list[object]] = [["DOMAIN", "PODS", "SKEW", "VERDICT", "CANDIDATES"]]
        hidden = 0
        shown = 0
        for value in sorted(t.counts, key=lambda v: (-t.counts[v], v)):
            count = t.counts[value]
            if count == 0 and not all_nodes:
                shown += 1
                if shown > _EMPTY_SHOWN:
                    hidden += 1
                    continue
            skew = count + term.self_match - t.minimum
            verdict = "pass" if skew <= term.max_skew else f"reject (> {term.max_skew})"
            rows.append(
                [value or '""', count, f"{count}+{term.self_match}-{t.minimum}={skew}", verdict, per_domain[value]]
            )
        if hidden:
            rows.append([f"(+{hidden} more domains without pods)", 0, f"0+{term.self_match}-{t.minimum}", "pass", ""])
        table(rows, out, indent="    ")
    if rejected:
        missing = sorted(n for n, why in rejected.items() if why == MISSING_LABEL)
        skewed = sorted(n for n, why in rejected.items() if why != MISSING_LABEL)
        if skewed:
            out.write(f"Rejected:    {len(skewed)} node(s) over maxSkew: {', '.join(skewed)}\n")
        if missing:
            out.write(f"Rejected:    {len(missing)} node(s) missing a key: {', '.join(missing)}\n")
    else:
        out.write("Rejected:    none\n")
    out.write("\n")
