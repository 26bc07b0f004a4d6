"""The Grafana dashboard: valid JSON, importable standalone, every panel queries contract metrics only."""

from __future__ import annotations

import re
from typing import Any

from monitoring_helpers import (
    ALLOWED_SERIES,
    CONTRACT_COUNTERS,
    CONTRACT_GAUGES,
    CONTRACT_HISTOGRAMS,
    dashboard_targets,
    iter_panels,
    load_dashboard,
    series_names,
    substitute,
)


def _variables(dashboard: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard["templating"]["list"]}


def _datasource_refs(node: Any) -> list[Any]:
    """Every value of a "datasource" key anywhere in the document."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                found.append(value)
            found.extend(_datasource_refs(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_datasource_refs(item))
    return found


def test_identity_and_schema() -> None:
    d = load_dashboard()
    assert d["uid"] == "spreadwatch"
    assert d["title"] == "spreadwatch"
    assert d["schemaVersion"] >= 36
    assert "id" not in d or d["id"] is None  # an id would clash on import
    assert "__inputs" not in d  # no import-time datasource prompt: the datasource variable picks it


def test_variables() -> None:
    variables = _variables(load_dashboard())
    ds = variables["datasource"]
    assert ds["type"] == "datasource"
    assert ds["query"] == "prometheus"
    assert list(variables) == ["datasource", "job", "instance", "namespace", "workload"]  # the order they narrow in
    for name in ("job", "instance", "namespace", "workload"):
        var = variables[name]
        assert var["type"] == "query"
        assert var["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        metric = {"job": "spreadwatch_build_info", "instance": "up"}.get(name, "spreadwatch_workload_pods")
        assert var["definition"].startswith(f"label_values({metric}")
        assert var["definition"].endswith(f", {name})")
        assert var["query"]["query"] == var["definition"]
    assert 'job=~"$job"' in variables["instance"]["definition"]
    assert 'instance=~"$instance"' in variables["namespace"]["definition"]
    assert 'namespace="$namespace"' in variables["workload"]["definition"]


def test_no_hard_coded_datasource_uid() -> None:
    d = load_dashboard()
    refs = _datasource_refs(d["panels"]) + _datasource_refs(d["templating"])
    assert refs
    for ref in refs:
        if isinstance(ref, dict) and ref.get("type") == "datasource":
            continue  # the datasource variable's own "datasource" is absent; guard anyway
        assert ref == {"type": "prometheus", "uid": "${datasource}"}, ref


def test_panel_ids_unique_and_layout_within_grid() -> None:
    panels = list(iter_panels(load_dashboard()["panels"]))
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    cells: set[tuple[int, int]] = set()
    for p in panels:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p['title']} overlaps another panel at {(x, y)}"
                cells.add((x, y))


def test_every_panel_has_targets_with_contract_metrics_only() -> None:
    d = load_dashboard()
    used: set[str] = set()
    for panel in iter_panels(d["panels"]):
        if panel["type"] == "row":
            continue
        targets = panel.get("targets", [])
        assert targets, f"panel {panel['title']!r} has no targets"
        refs = [t["refId"] for t in targets]
        assert len(refs) == len(set(refs)), panel["title"]
        for t in targets:
            assert t["expr"].strip(), f"{panel['title']}/{t['refId']}: empty expr"
            names = series_names(t["expr"])
            assert names, f"{panel['title']}/{t['refId']}: no metric in {t['expr']!r}"
            assert names <= ALLOWED_SERIES, f"{panel['title']}: unknown series {sorted(names - ALLOWED_SERIES)}"
            used |= names
    # the dashboard covers the contract: every family but the redundant `skipped` flag (health state Skipped)
    covered = {re.sub(r"_(bucket|sum|count)$", "", n) for n in used}
    expected = (CONTRACT_GAUGES | CONTRACT_COUNTERS | CONTRACT_HISTOGRAMS) - {"spreadwatch_workload_skipped"}
    assert expected <= covered, f"not on the dashboard: {sorted(expected - covered)}"


def test_required_panels_present() -> None:
    titles = {p["title"] for p in iter_panels(load_dashboard()["panels"])}
    for title in (
        "Workloads by health",
        "Worst-spread workloads (top 25)",
        "Pods per zone",
        "Zones",
        "Pods per node",
        "Node scores",
        "Node and zone skew over time",
        "Scrape targets up",
        "Leader",
        "Ready",
        "Watch events by kind",
        "Report writes by result",
        "API errors by HTTP status",
        "Pending reports",
        "Oldest pending change",
        "Report computation duration",
        "Reconcile duration",
        "Index objects",
        "Last resync age",
    ):
        assert title in titles, title


def test_workload_panels_use_the_variables_and_substitution_covers_everything() -> None:
    d = load_dashboard()
    variables = set(_variables(d))
    for t in dashboard_targets(d):
        used = set(re.findall(r"\$\{?(\w+)", t.expr)) - {"__rate_interval", "__interval", "__range"}
        assert used <= variables, f"{t.panel}: undefined variables {used - variables}"
        if "workload=" in t.expr:
            assert 'namespace="$namespace"' in t.expr and 'workload="$workload"' in t.expr, t.panel
        substituted = substitute(t.expr, {"job": "spreadwatch", "instance": ".+", "namespace": "ns", "workload": "w"})
        assert "$" not in substituted
