"""The shared JSON form of records: camelCase keys in field order, renames, converters, omitted Nones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest

from spreadwatch.jsonform import camel, each, json_form


class _Pair(NamedTuple):
    left_side: int
    right: str


@dataclass(frozen=True)
class _Record:
    node_name: str
    best_nodes: tuple[str, ...]
    pairs: tuple[_Pair, ...]
    extra: _Pair | None = None

    @property
    def node_count(self) -> int:
        return len(self.best_nodes)


_PAIR = json_form(_Pair)
_RECORD = json_form(
    _Record,
    ("node_name", "node_count", "best_nodes", "pairs", "extra"),
    rename={"pairs": "allPairs"},
    convert={"best_nodes": list, "pairs": each(_PAIR), "extra": _PAIR},
    omit_none=("extra",),
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("pods", "pods"), ("best_node_count", "bestNodeCount"), ("api_version", "apiVersion"), ("zone_skew", "zoneSkew")],
)
def test_camel(name: str, expected: str) -> None:
    assert camel(name) == expected


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            _Record("a", ("x", "y"), (_Pair(1, "r"),)),
            {"nodeName": "a", "nodeCount": 2, "bestNodes": ["x", "y"], "allPairs": [{"leftSide": 1, "right": "r"}]},
        ),
        (
            _Record("b", (), (), _Pair(2, "s")),
            {"nodeName": "b", "nodeCount": 0, "bestNodes": [], "allPairs": [], "extra": {"leftSide": 2, "right": "s"}},
        ),
    ],
)
def test_form_keys_order_and_values(record: _Record, expected: dict[str, Any]) -> None:
    out = _RECORD(record)
    assert out == expected
    assert list(out) == list(expected)


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    [
        (_Pair, {"rename": {"nope": "x"}}, "not attributes"),
        (_Pair, {"convert": {"nope": list}}, "not attributes"),
        (_Record, {"omit_none": ("node_name",)}, "must come last"),
        (_Pair, {"fields": ("left-side",)}, "not attributes"),
        (int, {}, "neither a dataclass nor a NamedTuple"),
    ],
)
def test_bad_form_is_refused(cls: type, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        json_form(cls, **kwargs)
