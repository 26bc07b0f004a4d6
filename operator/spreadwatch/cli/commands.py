"""``score``, ``analyze`` and ``explain``: read the input, compute, print (:mod:`spreadwatch.cli.render`).

Each handler takes the parsed flags and the output stream and returns the exit code; unusable input raises
a :class:`~spreadwatch.errors.SpreadwatchError` (one line on stderr, exit 2, in :func:`spreadwatch.cli.main`).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from spreadwatch.analysis import WorkloadFilter, analyze_index, explain_workload, predict_incoming, predict_workload
from spreadwatch.cli.compare import write_explain_comparison
from spreadwatch.cli.explain_prediction import prediction_document, write_prediction
from spreadwatch.cli.explain_weights import write_score_weights
from spreadwatch.cli.options import chosen_profile, metrics_options, report_options, snapshot_of
from spreadwatch.cli.output import write_json
from spreadwatch.cli.render import (
    score_document,
    write_explain_health,
    write_explain_scores,
    write_reports,
    write_score_table,
)
from spreadwatch.errors import InputError, ObjectError
from spreadwatch.model import Pod, object_ref, parse_pod
from spreadwatch.profile_args import PREDICTION_PROFILE, load_profile, load_scheduler_profile, load_score_weights
from spreadwatch.scoring import score_pod
from spreadwatch.scoring.topology_filter import check_constraints
from spreadwatch.selectors import parse_selector
from spreadwatch.snapshot import paused_gc, read_documents

__all__ = ["cmd_analyze", "cmd_explain", "cmd_predict", "cmd_score"]


def _pod_file(path: str) -> Pod:
    """The one Pod of a file (YAML or JSON); InputError / ObjectError naming the file otherwise."""
    pods = read_documents([path])
    if len(pods) != 1:
        raise InputError(f"{path}: expected exactly one Pod, found {len(pods)} objects")
    if pods[0].get("kind") != "Pod":
        raise InputError(f"{path}: expected a Pod, found {object_ref(pods[0])}")
    try:
        return parse_pod(pods[0])
    except ObjectError as err:  # (named with its file, as the snapshot's objects are)
        raise ObjectError(f"{path}: {err.ref}", err.path, err.problem) from None


def cmd_predict(args: argparse.Namespace, out: TextIO) -> int:
    """kube-scheduler's whole profile for the ``--pod`` or a workload's next pod: feasible nodes, each score
    plugin's weighted score per node, totals and the best nodes (the reference path)."""
    if bool(args.pod) == bool(args.workload):
        raise InputError("predict: give either --pod FILE or one workload KIND/NAMESPACE/NAME")
    scheduler = load_scheduler_profile(args.scheduler_config, args.scheduler_name)
    spread = load_profile(PREDICTION_PROFILE, args.scheduler_config, args.scheduler_name)
    with paused_gc():
        if args.pod:
            pod = _pod_file(args.pod)
            check_constraints(pod.template.spread_constraints)  # what the API server refuses: one line, exit 2
            snapshot = snapshot_of(args)
            percentage = args.percentage_of_nodes_to_score
            prediction = predict_incoming(snapshot, pod, scheduler, spread, percentage=percentage)
            name = f"{pod.namespace}/{pod.name}"
        else:
            parts = args.workload.split("/")
            snapshot = snapshot_of(args, [parts[1]] if len(parts) == 3 and parts[1] else [])
            ctrl, prediction = predict_workload(snapshot, args.workload, scheduler, spread,
                                                args.percentage_of_nodes_to_score)  # fmt: skip
            name = f"{ctrl.namespace}/{ctrl.kind}/{ctrl.name} (its next pod)"
    if args.output == "json":
        write_json(prediction_document(prediction, name, scheduler), out)
    else:
        out.write(f"Pod:         {name}\n")
        write_prediction(prediction, scheduler, out, 0 if args.all_nodes else args.top_nodes, args.node)
    return 0


def cmd_score(args: argparse.Namespace, out: TextIO) -> int:
    """Score the ``--pod`` on every candidate node of the ``--cluster`` (read as ``analyze`` reads it)."""
    pod = _pod_file(args.pod)
    check_constraints(pod.template.spread_constraints)  # what the API server refuses: one line, exit 2
    nodes = [n.strip() for n in args.nodes.split(",") if n.strip()] if args.nodes else None
    snapshot = snapshot_of(args)
    profile, _ = chosen_profile(args, snapshot)
    result = score_pod(pod, snapshot.nodes, snapshot.pods, snapshot, profile, nodes)
    if args.output == "json":
        write_json(score_document(result), out)
    else:
        write_score_table(result, out)
    return 0


def cmd_analyze(args: argparse.Namespace, out: TextIO) -> int:
    """Every workload's report (``-n``/``-l`` narrow the list) as a table, JSON, YAML or OpenMetrics.

    The snapshot, index, reports and output are built with the cyclic GC paused (they hold no cycles; reference
    counting frees them): O(objects + workloads × candidate nodes).
    """
    only = WorkloadFilter(args.namespace, parse_selector(args.selector) if args.selector else None)
    with paused_gc():
        snapshot = snapshot_of(args, args.namespace)
        profile, _ = chosen_profile(args, snapshot)
        live = not args.cluster and bool(args.namespace)
        index, reports = analyze_index(snapshot, profile, report_options(args, namespaced=live), only)
        if args.output == "openmetrics":
            from spreadwatch.metrics import registry_for, render  # noqa: PLC0415 - only this output needs it

            keys = {r.workload.key for r in reports}
            out.write(render(registry_for(index, metrics_options(args), workloads=keys), openmetrics=True).decode())
        else:
            write_reports(reports, args.output, out)
    return 0


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    """The step-by-step score table of one workload's next pod (after the profile and why it is the one), then
    its health."""
    parts = args.workload.split("/")
    snapshot = snapshot_of(args, [parts[1]] if len(parts) == 3 and parts[1] else [])
    profile, why = chosen_profile(args, snapshot)
    exp = explain_workload(snapshot, args.workload, profile, report_options(args))
    write_explain_scores(exp, profile, args.all_nodes, out, why)
    if args.compare:
        other, _ = chosen_profile(args, snapshot, args.compare)
        write_explain_comparison(snapshot, args.workload, profile, other, out)
    write_explain_health(exp.report, out)
    write_score_weights(load_score_weights(profile, args.scheduler_config, args.scheduler_name), out)
    options = report_options(args)
    if options.scheduler is not None and profile.pod_topology_spread:
        _, prediction = predict_workload(snapshot, args.workload, options.scheduler, profile,
                                         args.percentage_of_nodes_to_score)  # fmt: skip
        out.write("\nWhole scheduler profile (status.prediction; the reference computation):\n")
        write_prediction(prediction, options.scheduler, out, 0 if args.all_nodes else args.top_nodes, args.node)
    elif args.node:
        out.write("\n--node: the prediction needs --profile v1.29 and --prediction\n")
    return 0
