"""Label selectors: apimachinery semantics, canonical string form, parsing, validation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spreadwatch.errors import SelectorError
from spreadwatch.selectors import (
    EVERYTHING,
    NOTHING,
    Operator,
    Requirement,
    Selector,
    from_label_selector,
    from_match_labels,
    parse_selector,
    selector_from_set,
)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a==b", {"a": "b"}, True),
        ("a!=b", {}, True),  # NotEquals matches a missing key
        ("a!=b", {"a": "b"}, False),
        ("a in (x,y)", {"a": "y"}, True),
        ("a in (x,y)", {}, False),
        ("a notin (x,y)", {}, True),  # NotIn matches a missing key
        ("a notin (x,y)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": ""}, False),
        ("!a", {"b": "1"}, True),
        ("a>5", {"a": "6"}, True),
        ("a>5", {"a": "5"}, False),
        ("a<5", {"a": "x"}, False),  # not an integer: no match
        ("a=b,c", {"a": "b", "c": "1"}, True),
        ("a=b,c", {"a": "b"}, False),
        ("", {"anything": "x"}, True),
    ],
)
def test_parse_and_match(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("b=1,a=2", "a=2,b=1"),  # sorted by key
        ("a in (z,x,y)", "a in (x,y,z)"),  # values sorted
        ("  a  notin ( q , p ) ", "a notin (p,q)"),
        ("!x,y", "!x,y"),
        ("a=", "a="),  # empty value
    ],
)
def test_canonical_string_form(text: str, canonical: str) -> None:
    assert str(parse_selector(text)) == canonical
    assert str(parse_selector(canonical)) == canonical


@pytest.mark.parametrize(
    "text",
    ["a in x", "a in (x", "=b", "a=b=c", "a b", "a in ()x", "bad key!=x", "a=" + "v" * 64, "-a=b", "a>x", "x/y/z=1"],
)
def test_parse_rejects_invalid(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(text)


def test_label_selector_nil_empty_and_terms() -> None:
    assert from_label_selector(None) is NOTHING
    assert not NOTHING.matches({})
    assert from_label_selector({}) == EVERYTHING
    assert EVERYTHING.empty and EVERYTHING.matches({"a": "b"})
    sel = from_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "team", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert str(sel) == "app=web,env notin (dev),!legacy,team,tier in (a,b)"
    assert sel.matches({"app": "web", "tier": "a", "team": "x"})
    assert not sel.matches({"app": "web", "tier": "a", "team": "x", "legacy": "1"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Within", "values": ["x"]}]}, "not a valid"),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "can't be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "must be empty"),
        ({"matchLabels": {"a": "has space"}}, "label value"),
        ({"matchLabels": {"Bad_Prefix.com/a": "x"}}, "prefix"),
    ],
)
def test_label_selector_invalid(spec: dict[str, object], message: str) -> None:
    with pytest.raises(SelectorError, match=message):
        from_label_selector(spec)


def test_set_selector_and_add_keep_requirements_sorted() -> None:
    sel = selector_from_set({"b": "2", "a": "1"}).add(Requirement("a", Operator.EXISTS))
    assert [r.key for r in sel.requirements] == ["a", "a", "b"]
    assert selector_from_set({}) == EVERYTHING
    assert NOTHING.add(Requirement("a", Operator.EXISTS)) is NOTHING


_names = st.from_regex(r"[a-z]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)


@given(st.dictionaries(_names, _names, max_size=4), st.dictionaries(_names, _names, max_size=4))
def test_string_form_round_trips(terms: dict[str, str], labels: dict[str, str]) -> None:
    """parse(str(s)) matches exactly what s matches, and prints the same."""
    sel = selector_from_set(terms)
    again = parse_selector(str(sel))
    assert str(again) == str(sel)
    assert again.matches(labels) == sel.matches(labels)


def to_label_selector(sel: Selector) -> dict[str, Any]:
    """``sel`` in the structured ``metav1.LabelSelector`` form (equality terms as matchLabels): the inverse of
    ``from_label_selector``, for the round trip below."""
    match_labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    names = {
        Operator.IN: "In",
        Operator.NOT_IN: "NotIn",
        Operator.EXISTS: "Exists",
        Operator.DOES_NOT_EXIST: "DoesNotExist",
    }
    for req in sel.requirements:
        if req.op in (Operator.EQUALS, Operator.DOUBLE_EQUALS) and req.key not in match_labels:
            match_labels[req.key] = req.values[0]
        elif req.op is Operator.NOT_EQUALS:
            expressions.append({"key": req.key, "operator": "NotIn", "values": list(req.values)})
        elif req.op in names:
            expressions.append({"key": req.key, "operator": names[req.op], "values": list(req.values)})
        else:
            expressions.append({"key": req.key, "operator": "In", "values": list(req.values)})
    out: dict[str, Any] = {}
    if match_labels:
        out["matchLabels"] = match_labels
    if expressions:
        out["matchExpressions"] = expressions
    return out


def test_structured_form_round_trips() -> None:
    sel = parse_selector("a=1,b in (x,y),!c,d")
    assert from_label_selector(to_label_selector(sel)) == sel


_LABEL_TEXT = st.sampled_from(["", "a", "b", "app", "x/y", "a/b/c", ":", "-a", "web-1", "k" * 64, "Z.z_9"])


@given(st.dictionaries(_LABEL_TEXT, _LABEL_TEXT, max_size=4), st.booleans())
def test_match_labels_selector_same_as_label_selector(labels: dict[str, str], cached: bool) -> None:
    cache: dict[tuple[str, str], Requirement] = {}
    outcomes = []
    for _ in range(2 if cached else 1):  # (the second time from the requirement cache)
        try:
            outcomes.append(("ok", from_match_labels(labels, cache if cached else None)))
        except SelectorError as err:
            outcomes.append(("error", str(err)))
    try:
        expected: tuple[str, object] = ("ok", from_label_selector({"matchLabels": labels}))
    except SelectorError as err:
        expected = ("error", str(err))
    assert outcomes == [expected] * len(outcomes)
