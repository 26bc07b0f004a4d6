"""Grafana's dashboard-linter rules (dashboard_lint.py) on the shipped dashboard, and on broken examples so that
each rule is shown to catch what it is about.

Before this test existed the linter reported on the dashboard: 94 series selectors without an `instance`
matcher and no `instance` variable, panels without a unit, one panel without a description, the `job`
variable not multi-select, and `editable: true`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dashboard_lint import (
    DASHBOARD_RULES,
    TARGET_RULES,
    check_counter_aggregation,
    check_matchers,
    check_rate_interval,
    parse_target,
)
from monitoring_helpers import dashboard_targets, load_dashboard

TARGETS = dashboard_targets(load_dashboard())


@pytest.mark.parametrize("rule", sorted(DASHBOARD_RULES))
def test_dashboard_rule(rule: str) -> None:
    problems = DASHBOARD_RULES[rule](load_dashboard())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("target", TARGETS, ids=[f"{t.panel}[{t.ref}]" for t in TARGETS])
def test_query_rules(target: Any) -> None:
    node = parse_target(target.expr)  # target-promql-rule: raises ValueError if the query does not parse
    problems = [f"{name}: {p}" for name, rule in TARGET_RULES.items() for p in rule(node)]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- the rules catch what they are about


def _broken(change: Any) -> dict[str, Any]:
    dashboard = copy.deepcopy(load_dashboard())
    change(dashboard)
    return dashboard


def _var(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(v for v in d["templating"]["list"] if v["name"] == name)


def _panel(d: dict[str, Any], title: str) -> dict[str, Any]:
    return next(p for p in d["panels"] if p["title"] == title)


BROKEN_DASHBOARDS = [
    ("uneditable-dashboard-rule", lambda d: d.update(editable=True), "editable is not false"),
    ("template-job-rule", lambda d: _var(d, "job").update(multi=False), "job: not multi-select"),
    ("template-job-rule", lambda d: _var(d, "job").update(allValue=".*"), "allValue '.*'"),
    ("template-instance-rule", lambda d: d["templating"]["list"].remove(_var(d, "instance")),
     "no 'instance' variable"),
    ("template-instance-rule", lambda d: _var(d, "instance").update(label="Pod"), "label 'Pod'"),
    ("template-datasource-rule", lambda d: _var(d, "datasource").update(name="ds"), "named 'ds'"),
    ("template-on-time-change-reload", lambda d: _var(d, "namespace").update(refresh=1), "namespace: refresh 1"),
    ("template-label-promql-rule", lambda d: _var(d, "workload")["query"].update(query="label_values(up{, x)"),
     "differs from the query"),
    ("panel-units-rule", lambda d: _panel(d, "Zones")["fieldConfig"]["defaults"].pop("unit"), "Zones: unit None"),
    ("panel-units-rule", lambda d: _panel(d, "Leader")["fieldConfig"]["defaults"].update(unit="furlongs"),
     "'furlongs'"),
    ("panel-title-description-rule", lambda d: _panel(d, "Ready").update(description=""), "('Ready')"),
    ("panel-datasource-rule", lambda d: _panel(d, "Ready").update(datasource={"type": "prometheus", "uid": "abc"}),
     "Ready: datasource"),
    ("panel-no-targets-rule", lambda d: _panel(d, "Ready").update(targets=[]), "Ready: no queries"),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "change", "expected"), BROKEN_DASHBOARDS,
                         ids=[f"{r}: {e}" for r, _, e in BROKEN_DASHBOARDS])  # fmt: skip
def test_dashboard_rules_catch_broken_dashboards(rule: str, change: Any, expected: str) -> None:
    problems = DASHBOARD_RULES[rule](_broken(change))
    assert any(expected in p for p in problems), problems


BROKEN_QUERIES = [
    # (rule, query, expected problem)
    (check_matchers, 'up{job=~"$job"}', 'up{job=~"$job"}: no instance matcher'),
    (check_matchers, 'up{job="$job", instance=~"$instance"}', 'job matcher is not job=~"$job"'),
    (check_matchers, 'sum(a{job=~"$job", instance=~"$instance"}) / sum(b{job=~"$job"})', "b{"),
    (check_matchers, 'rate(a_total{instance=~"$instance"}[$__rate_interval])', "no job matcher"),
    (check_rate_interval, 'rate(a_total{job=~"$job"}[5m])', "should use [$__rate_interval]"),
    (check_rate_interval, 'irate(a_total[$__interval])', "should use [$__rate_interval]"),
    (check_counter_aggregation, "a_total", "counter a_total"),
    (check_counter_aggregation, "max_over_time(a_total[$__rate_interval])", "counter a_total"),
    (check_counter_aggregation, "sum(a_total) by (x)", "counter a_total"),
]


@pytest.mark.parametrize(("rule", "expr", "expected"), BROKEN_QUERIES, ids=[q for _, q, _ in BROKEN_QUERIES])
def test_query_rules_catch_broken_queries(rule: Any, expr: str, expected: str) -> None:
    problems = rule(parse_target(expr))
    assert any(expected in p for p in problems), problems


GOOD_QUERIES = [
    'sum by (le) (rate(a_bucket{job=~"$job", instance=~"$instance"}[$__rate_interval]))',
    'increase(a_total{job=~"$job", instance=~"$instance"}[1h])',  # increase may take any range
    'max_over_time(a{job=~"$job", instance=~"$instance"}[$__range])',
    'count(a{job=~"$job", instance=~"$instance"} > 1) or vector(0)',
]


@pytest.mark.parametrize("expr", GOOD_QUERIES)
def test_query_rules_accept_good_queries(expr: str) -> None:
    node = parse_target(expr)
    assert [p for rule in TARGET_RULES.values() for p in rule(node)] == []


def test_a_query_that_does_not_parse_is_reported() -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_target('sum(up{job=~"$job"')

