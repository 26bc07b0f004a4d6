"""The dashboard against Grafana's own schema: a round trip through the `grafana-foundation-sdk` package pinned to
the Grafana 11.x schema (pyproject.toml's `test` extra), as a schema check.

* Parsing: `Dashboard.from_json` with the SDK's panel and query plugins registered. Every panel type must be one
  the schema knows (its options and field config become that panel type's classes, not a raw dict) and every
  query a Prometheus query.
* Types: the parsed model is walked against the SDK's type annotations (str/int/float/bool, Literal values, enums,
  lists, nested schema classes): a wrong type or an unknown enum value anywhere fails with its path.
* Round trip: every key and value of the file comes back from the SDK's JSON encoder unchanged (keys the schema
  does not have would be dropped: a misspelt key fails here), except `templating.list[].definition`, which
  Grafana writes for query variables but the 11.x schema does not model. Keys the SDK adds are schema defaults.
* A second round trip of the SDK's output is a fixed point.
"""

from __future__ import annotations

import copy
import enum
import json
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from grafana_foundation_sdk.cog import variants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.cog.runtime import UnknownDataquery
from grafana_foundation_sdk.models import prometheus
from grafana_foundation_sdk.models.dashboard import Dashboard, Panel, RowPanel
from monitoring_helpers import iter_panels, load_dashboard

#: Paths (list indexes as [*]) the Grafana 11.x schema does not model; dropped by the round trip.
NOT_IN_SCHEMA = frozenset({"templating.list[*].definition"})


@pytest.fixture(scope="module", autouse=True)
def _sdk_plugins() -> None:
    register_default_plugins()


def _encode(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(model, cls=JSONEncoder))
    return data


def _lost(source: Any, result: Any, path: str = "") -> Iterator[str]:
    """Paths where `result` lacks or changes a value of `source` (extra keys in `result` are fine). O(size)."""
    if isinstance(source, dict) and isinstance(result, dict):
        for key, value in source.items():
            sub = f"{path}.{key}" if path else key
            if key not in result:
                yield f"{sub}: dropped"
            else:
                yield from _lost(value, result[key], sub)
    elif isinstance(source, list) and isinstance(result, list) and len(source) == len(result):
        for i, (a, b) in enumerate(zip(source, result, strict=True)):
            yield from _lost(a, b, f"{path}[{i}]")
    elif source != result or (type(source) is not type(result) and not _same_number(source, result)):
        yield f"{path}: {source!r} became {result!r}"


def _same_number(a: Any, b: Any) -> bool:
    numbers = (int, float)
    return isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and a == b


def _generic(path: str) -> str:
    """`templating.list[2].definition` -> `templating.list[*].definition`."""
    return re.sub(r"\[\d+\]", "[*]", path)


def _type_errors(value: Any, hint: Any, path: str) -> Iterator[str]:
    """Where `value` does not fit the annotation `hint` of the SDK's model (recursing into schema classes)."""
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        if hasattr(value, "to_json") and not isinstance(value, type):
            yield from _model_errors(value, path)
        return
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return
        options = tuple(o for o in options if o is not type(None))
        matching = [o for o in options if isinstance(o, type) and hasattr(o, "to_json") and isinstance(value, o)]
        results = [list(_type_errors(value, option, path)) for option in matching or options]
        if not any(not r for r in results):
            yield min(results, key=len)[0] if results else f"{path}: {value!r} fits none of {hint}"
        return
    if value is None:
        yield f"{path}: null where {hint} is required"
        return
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            yield f"{path}: {value!r} is not one of {typing.get_args(hint)}"
        return
    if origin is list:
        if not isinstance(value, list):
            yield f"{path}: {value!r} is not a list"
            return
        [item_hint] = typing.get_args(hint)
        for i, item in enumerate(value):
            yield from _type_errors(item, item_hint, f"{path}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            yield f"{path}: {value!r} is not an object"
            return
        _, value_hint = typing.get_args(hint)
        for key, item in value.items():
            yield from _type_errors(item, value_hint, f"{path}.{key}")
        return
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if value not in {m.value for m in hint} and not isinstance(value, hint):
            yield f"{path}: {value!r} is not one of {[m.value for m in hint]}"
        return
    if hint is bool:
        if not isinstance(value, bool):
            yield f"{path}: {value!r} is not a boolean"
        return
    if hint in (int, float):
        wrong = isinstance(value, bool) or not isinstance(value, int | float)
        if wrong or (hint is int and not float(value).is_integer()):
            yield f"{path}: {value!r} is not {'an integer' if hint is int else 'a number'}"
        return
    if hint is str:
        if not isinstance(value, str):
            yield f"{path}: {value!r} is not a string"
        return
    if isinstance(hint, type) and hasattr(hint, "from_json") and isinstance(value, dict):
        # the SDK's from_json leaves some nested objects (panel transformations) as plain JSON: parse them here
        yield from _model_errors(hint.from_json(value), path)
        yield from (f"{path}.{p}" for p in _lost(value, _encode(hint.from_json(value))))
        return
    if isinstance(hint, type):
        if not isinstance(value, hint):
            yield f"{path}: {type(value).__name__} where {hint.__name__} is expected"
        elif hasattr(value, "to_json"):
            yield from _model_errors(value, path)


def _model_errors(model: Any, path: str) -> Iterator[str]:
    if isinstance(model, UnknownDataquery):
        yield f"{path}: query of no known datasource type"
        return
    hints = typing.get_type_hints(type(model))
    for name, hint in hints.items():
        yield from _type_errors(getattr(model, name, None), hint, f"{path}.{name}" if path else name)


def test_panels_and_queries_are_known_to_the_schema() -> None:
    source = load_dashboard()
    model = Dashboard.from_json(source)
    assert model.panels is not None
    flat = list(model.panels)
    assert len(flat) == len(list(iter_panels(source["panels"])))  # no collapsed rows hiding panels
    for panel, raw in zip(flat, source["panels"], strict=True):
        if raw["type"] == "row":
            assert isinstance(panel, RowPanel)
            continue
        assert isinstance(panel, Panel)
        # a panel type the schema knows parses into its own classes (an unknown type stays a dict)
        assert not isinstance(panel.options, dict), f"{raw['title']}: panel type {raw['type']!r} unknown"
        assert panel.field_config is not None and panel.field_config.defaults is not None
        custom = panel.field_config.defaults.custom
        assert custom is None or not isinstance(custom, dict), f"{raw['title']}: fieldConfig.defaults.custom"
        assert panel.targets, raw["title"]
        for target in panel.targets:
            assert isinstance(target, prometheus.Dataquery), (raw["title"], type(target))
            assert isinstance(target, variants.Dataquery)


def test_every_value_has_the_schema_type() -> None:
    errors = list(_model_errors(Dashboard.from_json(load_dashboard()), ""))
    assert not errors, "\n".join(errors)


def test_round_trip_keeps_every_key_and_value() -> None:
    source = load_dashboard()
    result = _encode(Dashboard.from_json(source))
    lost = [p for p in _lost(source, result) if _generic(p.split(":")[0]) not in NOT_IN_SCHEMA]
    assert not lost, "\n".join(lost)
    assert result["uid"] == source["uid"] and result["editable"] is False


def test_round_trip_is_a_fixed_point() -> None:
    once = _encode(Dashboard.from_json(load_dashboard()))
    assert _encode(Dashboard.from_json(copy.deepcopy(once))) == once


# --------------------------------------------------------------------------- the check can fail


BROKEN = [
    ("unknown key", lambda d: d["panels"][1].update(fieldconfig={}), "panels[1].fieldconfig: dropped"),
    ("misspelt target key", lambda d: d["panels"][1]["targets"][0].update(legend="x"), "targets[0].legend: dropped"),
    ("wrong type", lambda d: d["panels"][1]["gridPos"].update(w="wide"), "grid_pos.w: 'wide' is not"),
    ("bad enum", lambda d: d.update(graphTooltip=7), "graph_tooltip: 7 is not one of"),
    ("bad literal", lambda d: d["panels"][1]["options"].update(graphMode="loud"), "graph_mode: 'loud'"),
    ("unknown panel type", lambda d: d["panels"][1].update(type="sparkles"), "panel type 'sparkles' unknown"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "expected"), [(c, e) for _, c, e in BROKEN], ids=[n for n, _, _ in BROKEN])
def test_the_schema_check_catches_broken_dashboards(change: Any, expected: str) -> None:
    broken = copy.deepcopy(load_dashboard())
    change(broken)
    model = Dashboard.from_json(broken)
    problems = [*_model_errors(model, ""), *_lost(broken, _encode(model))]
    for panel, raw in zip(model.panels or [], broken["panels"], strict=True):
        if raw["type"] != "row" and isinstance(panel.options, dict):
            problems.append(f"panel type {raw['type']!r} unknown")
    assert any(expected in p for p in problems), "\n".join(problems)
