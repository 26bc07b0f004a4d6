"""What ``score``, ``analyze`` and ``explain`` print, from their results (no computation here).

``score``: the JSON document or the node table; ``analyze``: the reports as a table, JSON (orjson), YAML or
OpenMetrics; ``explain``: the SelectorSpread step table (PodTopologySpread's is
:mod:`spreadwatch.cli.explain_topology`) and the health verdict. Each is O(size of the output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from spreadwatch.analysis import WorkloadExplanation
from spreadwatch.cli.explain_filter import write_filter_explanation
from spreadwatch.cli.explain_topology import write_topology_explanation
from spreadwatch.cli.output import fmt, table, write_json, write_yaml
from spreadwatch.report import SpreadReport
from spreadwatch.scoring import PodScores, Profile
from spreadwatch.scoring.window import MIN_FEASIBLE_NODES, adaptive_percentage

__all__ = [
    "score_document",
    "write_analyze_table",
    "write_explain_health",
    "write_explain_scores",
    "write_reports",
    "write_score_table",
]

_Zone = tuple[str, str] | None


def _zone_name(zone: _Zone) -> str:
    return zone[1] if zone else ""


def _region_name(zone: _Zone) -> str:
    return zone[0] if zone else ""


# --- score ------------------------------------------------------------------------------------------------


def score_document(result: PodScores) -> dict[str, Any]:
    """``score -o json``: the profile, the pod, every candidate node's zone, region, pods and score."""
    zones = result.zones
    return {
        "profile": result.profile.name,
        "pod": {"namespace": result.pod.namespace, "name": result.pod.name},
        "skipped": result.skipped,
        "skipReason": result.skip_reason,
        "selector": result.selector_text,
        "scores": dict(result.scores),
        "excluded": dict(result.excluded),
        "nodes": [
            {
                "node": n,
                "zone": _zone_name(zones[n]),
                "region": _region_name(zones[n]),
                "pods": result.counts[n],
                "score": s,
            }
            for n, s in result.scores.items()
        ],
    }


def write_score_table(result: PodScores, out: TextIO) -> None:
    """``score``'s table: the pod, the profile, the selector, then one row per candidate node."""
    data = score_document(result)
    out.write(f"Pod:       {result.pod.namespace}/{result.pod.name}\n")
    out.write(f"Profile:   {result.profile.name} (kube-scheduler {result.profile.releases})\n")
    out.write(f"Selector:  {data['selector'] or '<none>'}\n")
    if result.skipped:
        out.write(f"Skipped:   {result.skip_reason}\n")
    rows: list[list[object]] = [["NODE", "ZONE", "REGION", "PODS", "SCORE"]]
    rows += [[e["node"], e["zone"] or "-", e["region"] or "-", e["pods"], e["score"]] for e in data["nodes"]]
    out.write("\n")
    table(rows, out)
    if result.excluded:
        out.write("\nExcluded:  " + ", ".join(f"{n} ({r})" for n, r in result.excluded.items()) + "\n")


# --- analyze ----------------------------------------------------------------------------------------------


def write_analyze_table(reports: Sequence[SpreadReport], out: TextIO) -> None:
    """One row per report (``kubectl get spreadreports`` columns)."""
    if not reports:
        out.write("No workloads found.\n")
        return
    rows: list[list[object]] = [
        ["NAMESPACE", "KIND", "NAME", "PODS", "NODES", "ZONES", "NODE-SKEW", "ZONE-SKEW", "BEST", "HEALTH"]
    ]
    for r in reports:
        rows.append(
            [
                r.workload.namespace,
                r.workload.kind,
                r.workload.name,
                r.pods,
                r.candidate_nodes,
                len(r.zones),
                r.node_skew,
                r.zone_skew,
                r.best_score,
                r.health.value,
            ]
        )
    table(rows, out)


def write_reports(reports: Sequence[SpreadReport], output: str, out: TextIO) -> None:
    """``{"reports": [...]}`` as JSON or YAML (each report's dict built once), or the table."""
    if output in ("json", "yaml"):
        doc = {"reports": [r.to_dict() for r in reports]}
        (write_json if output == "json" else write_yaml)(doc, out)
    else:
        write_analyze_table(reports, out)


# --- explain ----------------------------------------------------------------------------------------------


def write_explain_scores(
    exp: WorkloadExplanation, profile: Profile, all_nodes: bool, out: TextIO, why: str = ""
) -> None:
    """The workload, its profile (and ``why``: how it was chosen), selector and candidates, then how each
    candidate node scores.

    Without ``all_nodes`` at most 3 empty nodes are listed per zone (the rest as one ``+N more`` row).
    """
    ctrl, report, scores = exp.workload, exp.report, exp.scores
    out.write(f"Workload:    {ctrl.kind} {ctrl.namespace}/{ctrl.name}\n")
    out.write(f"Profile:     {profile.name} (kube-scheduler {profile.releases}, scores 0-{profile.max_score})\n")
    if why:
        out.write(f"Chosen by:   {why}\n")
    out.write(f"Selector:    {report.selector or '<none>'}\n")
    out.write(f"Candidates:  {report.candidate_nodes} nodes")
    if report.excluded_nodes:
        out.write(" (excluded: " + ", ".join(f"{c} {r}" for r, c in report.excluded_nodes.items()) + ")")
    out.write("\n")
    _write_window(exp, out)
    if scores is None:
        return
    if profile.pod_topology_spread:
        write_filter_explanation(scores, all_nodes, out)
        write_topology_explanation(scores, out)
    elif scores.skipped:
        out.write(f"Skipped:     {scores.skip_reason}\n\n")
    else:
        _write_selector_spread_steps(scores, profile, all_nodes, out)


def _write_window(exp: WorkloadExplanation, out: TextIO) -> None:
    """How many nodes kube-scheduler scores for the next pod, and the odds that it picks a best node."""
    odds, n = exp.window, exp.all_nodes
    if odds is None:
        return
    if n < MIN_FEASIBLE_NODES:
        why = f"{n} nodes < {MIN_FEASIBLE_NODES}: all scored"
    elif exp.percentage:
        why = f"{n} nodes, percentageOfNodesToScore {exp.percentage}"
    else:
        why = f"{n} nodes, adaptive percentageOfNodesToScore max(5, 50-{n}/125) = {adaptive_percentage(n)}"
    out.write(
        f"Window:      kube-scheduler scores {odds.nodes_scored} of {exp.report.candidate_nodes} candidates ({why})\n"
    )
    if odds.best_node is None or odds.best_zone is None:
        return
    if odds.nodes_scored >= exp.report.candidate_nodes:
        out.write("Next pod:    on one of the best nodes below (every candidate is scored)\n")
        return
    how = "exact, every window start" if odds.exact else "sampled window starts"
    out.write(
        f"Next pod:    on a best node with probability {odds.best_node:.3f}, in a best node's zone "
        f"{odds.best_zone:.3f} ({how}; scores are window-local, docs/scoring.md §11)\n"
    )


def _write_selector_spread_steps(scores: PodScores, profile: Profile, all_nodes: bool, out: TextIO) -> None:
    s = scores.summary
    out.write(
        f"Maxima:      {s.max_node} matching pods on the busiest node, {s.max_zone} in the busiest zone"
        f"{'' if s.have_zones else ' (no candidate node has a zone: node part only)'}\n"
    )
    out.write(
        f"Formula:     node = {profile.max_score}*(maxNode-pods)/maxNode; "
        f"zone = {profile.max_score}*(maxZone-zonePods)/maxZone; "
        "score = int(node*1/3 + zone*2/3), or int(node) without a zone\n\n"
    )
    rows: list[list[object]] = [
        ["NODE", "ZONE", "PODS", "NODE-SCORE", "ZONE-PODS", "ZONE-SCORE", "NODE-PART", "ZONE-PART", "SCORE"]
    ]
    shown_empty: dict[_Zone, int] = {}
    hidden: dict[_Zone, list[int]] = {}
    for node in scores.candidates:
        name = node.name
        zone = scores.zones[name]
        count = scores.counts[name]
        b = scores.breakdown(name)
        if count == 0 and not all_nodes:
            shown_empty[zone] = shown_empty.get(zone, 0) + 1
            if shown_empty[zone] > 3:
                hidden.setdefault(zone, [0, b.final])[0] += 1
                continue
        zone_pods = s.zone_counts.get(zone, 0) if zone is not None else None
        rows.append(
            [
                name,
                zone[1] if zone else "-",
                count,
                fmt(b.node_score),
                "-" if zone_pods is None or not s.have_zones else zone_pods,
                fmt(b.zone_score),
                fmt(b.node_part),
                fmt(b.zone_part) if b.zone_score is not None else "-",
                b.final,
            ]
        )
    for hidden_zone, (n, final) in hidden.items():
        rows.append([f"(+{n} more empty nodes)", _zone_name(hidden_zone) or "-", 0, "", "", "", "", "", final])
    table(rows, out)
    out.write("\n")


def write_explain_health(report: SpreadReport, out: TextIO) -> None:
    """The health verdict, its reasons, the spread figures, whether the next pod can be placed and the
    DoNotSchedule constraints' compliance."""
    out.write(f"Health:      {report.health.value}\n")
    for reason in report.reasons:
        out.write(f"  - {reason}\n")
    if report.next_pod_schedulable is False:
        out.write(f"Next pod:    stays Pending ({report.unschedulable_plugin}): {report.unschedulable_reason}\n")
    for c in report.constraints or ():
        verdict = "kept" if c.satisfied else "VIOLATED"
        domains = "ok" if c.eligible_domains >= c.min_domains else "fewer: the minimum counts as 0"
        out.write(
            f"Constraint:  {c.topology_key} (DoNotSchedule): skew {c.skew} vs maxSkew {c.max_skew}: {verdict}; "
            f"{c.eligible_domains} eligible domains vs minDomains {c.min_domains}: {domains}\n"
        )
    if report.filtered_nodes:
        shown = ", ".join(f"{e.node} ({e.pods})" for e in report.filtered_nodes)
        out.write(f"Filtered:    nodes with pods the Filter rejects (pods): {shown}\n")
    out.write(
        f"Spread:      {report.pods} matching pods, node skew {report.node_skew}, zone skew {report.zone_skew}, "
        f"best score {report.best_score} on {report.best_node_count} node(s)\n"
    )
