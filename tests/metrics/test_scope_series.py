"""The operator's scope on /metrics: an opted-out workload (or one in an opted-out namespace) has no series."""

from __future__ import annotations

from typing import Any

import pytest
from metrics_fixture import BAD, CACHE, DB, SOLO, SPREAD, index

from spreadwatch.config import LabelRequirement, Scope
from spreadwatch.metrics import MetricsOptions, WorkloadCollector, registry_for, render
from spreadwatch.model import WorkloadKey, parse_object

OPT_OUT = LabelRequirement("spreadwatch.io/ignore", "true")
EVERY = {DB, CACHE, SPREAD, BAD, SOLO}


def _series_workloads(text: str) -> set[WorkloadKey]:
    """The workload of every sample line that names one."""
    out = set()
    for line in text.splitlines():
        if line.startswith("#") or 'workload="' not in line:
            continue
        labels = dict(part.split("=", 1) for part in line[line.index("{") + 1 : line.index("}")].split(","))
        out.add(WorkloadKey(labels["namespace"].strip('"'), labels["kind"].strip('"'), labels["workload"].strip('"')))
    return out


def _namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _opted_out_cache() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "cache", "namespace": "shop", "labels": {"spreadwatch.io/ignore": "true"}},
        "spec": {"replicas": 2, "selector": {"app": "cache"}, "template": {"metadata": {"labels": {"app": "cache"}}}},
    }


@pytest.mark.parametrize(
    ("scope", "namespace_labels", "opt_out_cache", "expected"),
    [
        (None, {"spreadwatch.io/ignore": "true"}, True, EVERY),  # no scope (analyze): every workload
        (Scope(opt_out=OPT_OUT), {}, False, EVERY),
        (Scope(opt_out=OPT_OUT), {}, True, EVERY - {CACHE}),
        (Scope(opt_out=OPT_OUT), {"spreadwatch.io/ignore": "true"}, False, EVERY - {SOLO}),
        (Scope(opt_out=OPT_OUT), {"spreadwatch.io/ignore": "true"}, True, EVERY - {SOLO, CACHE}),
        (Scope(opt_out=OPT_OUT), {"spreadwatch.io/ignore": "no"}, False, EVERY),
        (Scope(), {"spreadwatch.io/ignore": "true"}, True, EVERY),  # opt-out turned off
        (Scope(skip_namespaces=frozenset({"other"})), {}, False, EVERY - {SOLO}),
        (Scope(namespaces=frozenset({"other"})), {}, False, {SOLO}),
    ],
)
def test_workloads_out_of_scope_have_no_series(
    scope: Scope | None,
    namespace_labels: dict[str, str],
    opt_out_cache: bool,
    expected: set[WorkloadKey],
) -> None:
    idx = index()
    record = parse_object(_namespace("other", namespace_labels))
    assert record is not None
    idx.apply(record)
    if opt_out_cache:
        cache = parse_object(_opted_out_cache())
        assert cache is not None
        idx.apply(cache)
    text = render(registry_for(idx, MetricsOptions(node_series="all"), scope=scope)).decode()
    assert _series_workloads(text) == expected
    view = WorkloadCollector(idx, MetricsOptions(), scope=scope).view()
    assert {r.report.workload.key for r in view.rows} == expected
