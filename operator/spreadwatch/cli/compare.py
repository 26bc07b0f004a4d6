"""The ``spreadwatch compare`` subcommand (flags and output); the comparison itself is :mod:`spreadwatch.compare`.

``--from``/``--to`` name the two profiles (default v1.28 → v1.29; ``--scheduler-config`` applies to a
PodTopologySpread side), ``-o table|json|yaml``, ``-n`` limits namespaces, ``--moved N`` how many
rank-moving nodes are listed per workload. Snapshot (``--cluster``) or live cluster, like ``analyze``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TextIO

from spreadwatch.analysis import explain_workload
from spreadwatch.cli.options import add_cluster_args, chosen_profile, snapshot_of
from spreadwatch.cli.output import table, write_json, write_yaml
from spreadwatch.compare import WorkloadComparison, compare_snapshot, node_causes
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot

__all__ = ["add_compare_args", "cmd_compare", "write_explain_comparison"]


def add_compare_args(p: argparse.ArgumentParser) -> None:
    """Every flag of ``compare``: the cluster, kubeconfig and profile flags, then its own."""
    add_cluster_args(p, cluster_required=False)
    p.add_argument("--from", dest="from_profile", default="v1.28", help="the current profile (default v1.28)")
    p.add_argument("--to", dest="to_profile", default="v1.29", help="the profile to compare with (default v1.29)")
    p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    p.add_argument("-n", "--namespace", action="append", default=[], help="only these namespaces")
    p.add_argument("--moved", type=int, default=3, help="rank-moving nodes listed per workload (default 3)")


def _summary(rows: Sequence[WorkloadComparison]) -> dict[str, int]:
    return {
        "workloads": len(rows),
        "bestNodesChanged": sum(1 for r in rows if r.changed),
        "bestNodesDisjoint": sum(1 for r in rows if not r.overlap),
    }


def _short(names: Sequence[str], limit: int = 3) -> str:
    if not names:
        return "-"
    more = f" +{len(names) - limit}" if len(names) > limit else ""
    return ",".join(names[:limit]) + more


def cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``compare``: the table, JSON or YAML of every workload's best nodes under both profiles."""
    snapshot = snapshot_of(args, args.namespace)
    source, _ = chosen_profile(args, snapshot, args.from_profile)
    target, _ = chosen_profile(args, snapshot, args.to_profile)
    rows = compare_snapshot(snapshot, source, target, args.namespace, max(0, args.moved))
    summary = _summary(rows)
    doc = {
        "from": source.name,
        "to": target.name,
        "summary": summary,
        "workloads": [r.to_dict() for r in rows],
    }
    if args.output in ("json", "yaml"):
        (write_json if args.output == "json" else write_yaml)(doc, out)
        return 0
    if not rows:
        out.write("No workloads found.\n")
        return 0
    lines: list[list[object]] = [
        ["NAMESPACE", "KIND", "NAME", f"BEST {source.name}", f"BEST {target.name}", "OVERLAP", "MOVED MOST"]
    ]
    for r in rows:
        moved = "; ".join(
            f"{m.node} #{m.from_rank}->#{m.to_rank}" + (f" ({', '.join(m.causes)})" if m.causes else "")
            for m in r.moved[:2]
        )
        lines.append(
            [
                r.namespace,
                r.kind,
                r.name,
                f"{r.from_best_score}:{_short(r.from_best)}",
                f"{r.to_best_score}:{_short(r.to_best)}",
                "yes" if r.overlap else "NO",
                moved or "-",
            ]
        )
    table(lines, out)
    out.write(
        f"\n{summary['workloads']} workloads: best nodes changed in {summary['bestNodesChanged']}, "
        f"disjoint in {summary['bestNodesDisjoint']}.\n"
    )
    for r in rows:
        if r.changed:
            out.write(f"  {r.kind}/{r.namespace}/{r.name}: {target.name} {r.spreading}\n")
    return 0


def write_explain_comparison(
    snapshot: Snapshot,
    workload: str,
    profile: Profile,
    other: Profile,
    out: TextIO,
) -> None:
    """``explain --compare PROFILE``: both profiles' scores of every candidate node side by side, with the
    rank change and the node's label causes. O(candidates × pods in the namespace) (two reference scorings)."""
    mine = explain_workload(snapshot, workload, profile).scores
    theirs = explain_workload(snapshot, workload, other).scores
    if mine is None or theirs is None:
        out.write("Compare:     not scored (invalid selector)\n\n")
        return
    a, b = dict(mine.scores), dict(theirs.scores)
    rank_a = {s: i + 1 for i, s in enumerate(sorted(set(a.values()), reverse=True))}
    rank_b = {s: i + 1 for i, s in enumerate(sorted(set(b.values()), reverse=True))}
    out.write(f"Compare:     {profile.name} vs {other.name}")
    if theirs.skipped:
        out.write(f" ({other.name} skips: {theirs.skip_reason})")
    out.write("\n\n")
    rows: list[list[object]] = [["NODE", profile.name, other.name, "RANK", "CAUSES"]]
    for node in mine.candidates:
        n = node.name
        rows.append(
            [
                n,
                a[n],
                b.get(n, 0),
                f"#{rank_a[a[n]]}->#{rank_b.get(b.get(n, 0), 0)}",
                ", ".join(node_causes(node)) or "-",
            ]
        )
    table(rows, out)
    out.write("\n")
