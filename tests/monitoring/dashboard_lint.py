"""The rules of Grafana's dashboard linter (github.com/grafana/dashboard-linter), written again for the tests.

Each rule is a function of the dashboard (or of one panel or one query) that returns a list of problems, one
readable line each; an empty list passes. The PromQL rules work on the parsed query (the `promql-parser`
package, a Rust port of Prometheus' parser), not on regular expressions. As in the linter, a variable inside a
label value stays as written (`job=~"$job"` must read exactly that) and Grafana's interval variables in range
selectors are replaced by unusual durations before parsing, so `[$__rate_interval]` can still be recognised.

Rules (the linter's names):

* template-datasource-rule: one variable of type datasource, named ``datasource``, labelled ``Data source``;
* template-job-rule / template-instance-rule: query variables ``job`` and ``instance`` on ``${datasource}``,
  labelled ``Job`` / ``Instance``, multi-select, with an *All* option whose value is ``.+``;
* template-on-time-change-reload: every query variable refreshes on time-range change (``refresh: 2``);
* template-label-promql-rule: ``label_values(<selector>, <label>)`` variable queries parse as PromQL;
* panel-datasource-rule: every panel and query uses the datasource variable;
* panel-title-description-rule: every panel has a title and a description (the linter checks only some panel
  types; here every panel but rows);
* panel-units-rule: every panel sets a unit Grafana knows (``fieldConfig.defaults.unit``);
* panel-no-targets-rule: every panel but rows has queries;
* target-promql-rule: every query parses;
* target-job-rule / target-instance-rule: every series selector has ``job=~"$job"`` and ``instance=~"$instance"``;
* target-rate-interval-rule: ``rate``/``irate`` take ``[$__rate_interval]``;
* target-counter-agg-rule: a counter (``*_total``) is only read through ``rate``, ``irate`` or ``increase``;
* uneditable-dashboard-rule: ``editable: false``.

Costs: every rule is O(size of the dashboard); the PromQL rules parse each query once per call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any

import promql_parser
from grafana_foundation_sdk.models import units as grafana_units

__all__ = [
    "DASHBOARD_RULES",
    "GRAFANA_UNITS",
    "RATE_INTERVAL",
    "TARGET_RULES",
    "check_counter_aggregation",
    "check_datasource_variable",
    "check_matchers",
    "check_not_editable",
    "check_panel_datasources",
    "check_panel_titles_and_descriptions",
    "check_panel_units",
    "check_panels_have_targets",
    "check_rate_interval",
    "check_required_variable",
    "check_variable_queries",
    "check_variables_reload_on_time_change",
    "parse_target",
    "query_variables",
]

#: Every unit id Grafana knows: the string constants of the Grafana 11 schema's `units` module.
GRAFANA_UNITS = frozenset(v for k, v in vars(grafana_units).items() if not k.startswith("_") and isinstance(v, str))

#: Unusual durations standing in for Grafana's interval variables while parsing (the linter does the same).
RATE_INTERVAL = timedelta(seconds=8869)
_INTERVALS = {"__rate_interval": "8869s", "__interval": "4423s", "__range": "2221s"}
_DATASOURCE_REFS = ({"type": "prometheus", "uid": "${datasource}"}, {"type": "prometheus", "uid": "$datasource"})
_COUNTER_FUNCTIONS = frozenset({"rate", "irate", "increase"})
_LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>[A-Za-z_][A-Za-z0-9_]*)\)$", re.S)


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def _content_panels(dashboard: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel but rows (rows carry no queries, units or descriptions)."""
    return (p for p in _panels(dashboard["panels"]) if p["type"] != "row")


def _variables(dashboard: Mapping[str, Any]) -> list[dict[str, Any]]:
    variables: list[dict[str, Any]] = dashboard.get("templating", {}).get("list", [])
    return variables


def query_variables(dashboard: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [v for v in _variables(dashboard) if v.get("type") == "query"]


def parse_target(expr: str) -> Any:
    """The PromQL AST of a query, Grafana's interval variables replaced; raises ValueError if it does not parse.
    O(len(expr))."""
    text = expr
    for name, duration in _INTERVALS.items():
        text = re.sub(rf"\$\{{{name}\}}|\${name}\b", duration, text)
    return promql_parser.parse(text)


def _walk(node: Any, parents: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every node of a parsed query with its ancestors (innermost last), depth first. O(nodes)."""
    yield node, parents
    below = (*parents, node)
    if isinstance(node, promql_parser.BinaryExpr):
        children = [node.lhs, node.rhs]
    elif isinstance(node, promql_parser.AggregateExpr):
        children = [c for c in (node.param, node.expr) if c is not None]
    elif isinstance(node, promql_parser.Call):
        children = list(node.args)
    elif isinstance(node, promql_parser.MatrixSelector):
        children = [node.vector_selector]
    elif isinstance(node, promql_parser.ParenExpr | promql_parser.UnaryExpr | promql_parser.SubqueryExpr):
        children = [node.expr]
    else:  # VectorSelector, NumberLiteral, StringLiteral
        children = []
    for child in children:
        yield from _walk(child, below)


def _selectors(node: Any) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    return ((n, p) for n, p in _walk(node) if isinstance(n, promql_parser.VectorSelector))


# --------------------------------------------------------------------------- dashboard rules


def check_datasource_variable(dashboard: Mapping[str, Any]) -> list[str]:
    """template-datasource-rule."""
    found = [v for v in _variables(dashboard) if v.get("type") == "datasource"]
    if len(found) != 1:
        return [f"expected one datasource variable, found {len(found)}"]
    [var] = found
    problems = []
    if var.get("name") != "datasource":
        problems.append(f"datasource variable named {var.get('name')!r}, should be 'datasource'")
    if var.get("label") != "Data source":
        problems.append(f"datasource variable labelled {var.get('label')!r}, should be 'Data source'")
    if var.get("query") != "prometheus":
        problems.append(f"datasource variable of type {var.get('query')!r}, should be 'prometheus'")
    return problems


def check_required_variable(dashboard: Mapping[str, Any], name: str) -> list[str]:
    """template-job-rule / template-instance-rule for the variable `name`."""
    found = [v for v in _variables(dashboard) if v.get("name") == name]
    if not found:
        return [f"no {name!r} variable"]
    var = found[0]
    problems = []
    if var.get("type") != "query":
        problems.append(f"{name}: type {var.get('type')!r}, should be 'query'")
    if var.get("datasource", {}).get("uid") not in ("${datasource}", "$datasource"):
        problems.append(f"{name}: datasource {var.get('datasource')!r}, should be the datasource variable")
    if var.get("label") != name.title():
        problems.append(f"{name}: label {var.get('label')!r}, should be {name.title()!r}")
    if not var.get("multi"):
        problems.append(f"{name}: not multi-select")
    if not var.get("includeAll"):
        problems.append(f"{name}: no All option")
    if var.get("allValue") != ".+":
        problems.append(f"{name}: allValue {var.get('allValue')!r}, should be '.+'")
    return problems


def check_variables_reload_on_time_change(dashboard: Mapping[str, Any]) -> list[str]:
    """template-on-time-change-reload."""
    return [f"{v['name']}: refresh {v.get('refresh')!r}, should be 2 (on time range change)"
            for v in query_variables(dashboard) if v.get("refresh") != 2]  # fmt: skip


def check_variable_queries(dashboard: Mapping[str, Any]) -> list[str]:
    """template-label-promql-rule, plus: the query editor's text and the stored query agree, and every variable
    but `job` itself narrows by the job (and all but `job`/`instance` by the instance) like the panels do."""
    problems = []
    for var in query_variables(dashboard):
        name = var["name"]
        query = var.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        if var.get("definition", text) != text:
            problems.append(f"{name}: definition {var.get('definition')!r} differs from the query {text!r}")
        m = _LABEL_VALUES.match(text or "")
        if m is None:
            problems.append(f"{name}: {text!r} is not label_values(<selector>, <label>)")
            continue
        try:
            node = parse_target(m["selector"])
        except ValueError as err:
            problems.append(f"{name}: {m['selector']!r} does not parse: {err}")
            continue
        required = {"job": (), "instance": ("job",)}.get(name, ("job", "instance"))
        problems += [f"{name}: {p}" for p in _matcher_problems(node, required)]
    return problems


def check_not_editable(dashboard: Mapping[str, Any]) -> list[str]:
    """uneditable-dashboard-rule."""
    return [] if dashboard.get("editable") is False else ["editable is not false"]


# --------------------------------------------------------------------------- panel rules


def check_panel_datasources(dashboard: Mapping[str, Any]) -> list[str]:
    """panel-datasource-rule (panels and their queries)."""
    problems = []
    for panel in _content_panels(dashboard):
        if panel.get("datasource") not in _DATASOURCE_REFS:
            problems.append(f"{panel['title']}: datasource {panel.get('datasource')!r}")
        for target in panel.get("targets", []):
            if target.get("datasource", _DATASOURCE_REFS[0]) not in _DATASOURCE_REFS:
                problems.append(f"{panel['title']} [{target.get('refId')}]: datasource {target.get('datasource')!r}")
    return problems


def check_panel_titles_and_descriptions(dashboard: Mapping[str, Any]) -> list[str]:
    """panel-title-description-rule (every panel but rows)."""
    return [f"panel {p.get('id')} ({p.get('title')!r}): missing title or description"
            for p in _content_panels(dashboard)
            if not p.get("title", "").strip() or not p.get("description", "").strip()]  # fmt: skip


def check_panel_units(dashboard: Mapping[str, Any]) -> list[str]:
    """panel-units-rule: a default unit Grafana knows, and known units in overrides."""
    problems = []
    for panel in _content_panels(dashboard):
        field_config = panel.get("fieldConfig", {})
        unit = field_config.get("defaults", {}).get("unit")
        if unit not in GRAFANA_UNITS:
            problems.append(f"{panel['title']}: unit {unit!r}")
        for override in field_config.get("overrides", []):
            for prop in override.get("properties", []):
                if prop.get("id") == "unit" and prop.get("value") not in GRAFANA_UNITS:
                    problems.append(f"{panel['title']}: override unit {prop.get('value')!r}")
    return problems


def check_panels_have_targets(dashboard: Mapping[str, Any]) -> list[str]:
    """panel-no-targets-rule."""
    return [f"{p['title']}: no queries" for p in _content_panels(dashboard) if not p.get("targets")]


DASHBOARD_RULES: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "template-datasource-rule": check_datasource_variable,
    "template-job-rule": lambda d: check_required_variable(d, "job"),
    "template-instance-rule": lambda d: check_required_variable(d, "instance"),
    "template-on-time-change-reload": check_variables_reload_on_time_change,
    "template-label-promql-rule": check_variable_queries,
    "panel-datasource-rule": check_panel_datasources,
    "panel-title-description-rule": check_panel_titles_and_descriptions,
    "panel-units-rule": check_panel_units,
    "panel-no-targets-rule": check_panels_have_targets,
    "uneditable-dashboard-rule": check_not_editable,
}


# --------------------------------------------------------------------------- query rules


def _matcher_problems(node: Any, required: tuple[str, ...]) -> list[str]:
    problems = []
    for selector, _ in _selectors(node):
        matchers = {m.name: m for m in selector.matchers.matchers}
        for label in required:
            m = matchers.get(label)
            if m is None:
                problems.append(f"{selector}: no {label} matcher")
            elif m.op != promql_parser.MatchOp.Re or m.value != f"${label}":
                problems.append(f"{selector}: {label} matcher is not {label}=~\"${label}\"")
    return problems


def check_matchers(node: Any) -> list[str]:
    """target-job-rule and target-instance-rule: every series selector has both variable matchers."""
    return _matcher_problems(node, ("job", "instance"))


def check_rate_interval(node: Any) -> list[str]:
    """target-rate-interval-rule: the range of every rate()/irate() is $__rate_interval."""
    problems = []
    for matrix, parents in _walk(node):
        if not isinstance(matrix, promql_parser.MatrixSelector) or not parents:
            continue
        call = parents[-1]
        is_rate = isinstance(call, promql_parser.Call) and call.func.name in ("rate", "irate")
        if is_rate and matrix.range != RATE_INTERVAL:
            problems.append(f"{call}: should use [$__rate_interval]")
    return problems


def check_counter_aggregation(node: Any) -> list[str]:
    """target-counter-agg-rule: a `*_total` series only as the range argument of rate/irate/increase."""
    problems = []
    for selector, parents in _selectors(node):
        if not (selector.name or "").endswith("_total"):
            continue
        ok = (len(parents) >= 2 and isinstance(parents[-1], promql_parser.MatrixSelector)
              and isinstance(parents[-2], promql_parser.Call)
              and parents[-2].func.name in _COUNTER_FUNCTIONS)  # fmt: skip
        if not ok:
            problems.append(f"counter {selector} is not read through rate, irate or increase")
    return problems


TARGET_RULES: dict[str, Callable[[Any], list[str]]] = {
    "target-job-instance-rule": check_matchers,
    "target-rate-interval-rule": check_rate_interval,
    "target-counter-agg-rule": check_counter_aggregation,
}
