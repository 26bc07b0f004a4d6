"""Kubernetes label selectors with apimachinery's semantics.

A :class:`Selector` is an AND of :class:`Requirement` s, like ``k8s.io/apimachinery/pkg/labels``'
``internalSelector``; the special :data:`NOTHING` selector (``labels.Nothing()``) matches no label set.

* :func:`selector_from_set` — ``labels.Set(m).AsSelector()`` (equality requirements, not validated, as
  upstream's ``AsSelectorPreValidated`` does for Service and ReplicationController selectors);
* :func:`from_label_selector` — ``metav1.LabelSelectorAsSelector``: ``None`` → :data:`NOTHING`, ``{}`` →
  :data:`EVERYTHING`, otherwise matchLabels and matchExpressions, validated (raises :class:`SelectorError`);
* :func:`parse_selector` — ``labels.Parse`` of the canonical string form (``a=b,c in (x,y),!d``);
* ``str(selector)`` — the canonical string form (requirements sorted by key, values sorted).

Matching a selector costs O(r) dictionary look-ups for r requirements.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from spreadwatch.errors import SelectorError

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "POSITIVE_OPERATORS",
    "Operator",
    "Requirement",
    "Selector",
    "from_label_selector",
    "from_match_labels",
    "parse_selector",
    "selector_from_set",
    "validate_label_key",
    "validate_label_value",
]


class Operator(StrEnum):
    """``selection.Operator``; the value is the token used in the string form."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    GREATER_THAN = ">"
    LESS_THAN = "<"


#: Operators a requirement is met under only when the label set has the key with one of its values.
POSITIVE_OPERATORS: Final = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN})
_NEGATIVE = frozenset({Operator.NOT_EQUALS, Operator.NOT_IN})
_NUMERIC = frozenset({Operator.GREATER_THAN, Operator.LESS_THAN})
_SINGLE = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})
_EQUALITY = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS})
_TOKENS: Final = {op: op.value for op in Operator}  # the string form's token of each operator
_BY_KEY: Final = operator.attrgetter("key")  # requirements sort by key (stable)

_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT64_RE = re.compile(r"^[+-]?[0-9]+$")


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an int, or None when Go would fail. Never converts more than 19
    significant digits (a 5,000-digit value is out of range, not a ValueError). O(len(text))."""
    if not _INT64_RE.match(text):
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return None
    value = -int(digits) if text.startswith("-") else int(digits)
    if not -(2**63) <= value < 2**63:
        return None
    return value


@functools.lru_cache(maxsize=4096)
def validate_label_key(key: str) -> str | None:
    """Return why ``key`` is not a qualified name (``[prefix/]name``), or None when it is valid. O(len(key)),
    O(1) for a recent key (label keys repeat: ``app``, ``pod-template-hash``, ...)."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return f"label key {key!r}: prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return f"label key {key!r}: prefix part must be a lowercase RFC 1123 subdomain"
    else:
        return f"label key {key!r}: a qualified name must have at most one '/'"
    if not name:
        return f"label key {key!r}: name part must be non-empty"
    if len(name) > 63:
        return f"label key {key!r}: name part must be no more than 63 characters"
    if not _NAME_RE.match(name):
        return (
            f"label key {key!r}: name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


def validate_label_value(value: str) -> str | None:
    """Return why ``value`` is not a valid label value (empty is valid), or None when it is valid."""
    if len(value) > 63:
        return f"label value {value!r}: must be no more than 63 characters"
    if value and not _NAME_RE.match(value):
        return (
            f"label value {value!r}: must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` term; ``values`` is sorted (it is a set upstream)."""

    key: str
    op: Operator
    values: tuple[str, ...] = ()

    @classmethod
    def new(cls, key: str, op: Operator, values: Iterable[str] = ()) -> Requirement:
        """``labels.NewRequirement``: validate key, operator arity and values; raise SelectorError."""
        vals = tuple(values)
        problems: list[str] = []
        key_problem = validate_label_key(key)
        if key_problem:
            problems.append(key_problem)
        if op in (Operator.IN, Operator.NOT_IN) and not vals:
            problems.append(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        elif op in _SINGLE and len(vals) != 1:
            problems.append(f"{key}: exact-match compatibility requires one single value")
        elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and vals:
            problems.append(f"{key}: values set must be empty for exists and does not exist")
        elif op in _NUMERIC:
            if len(vals) != 1:
                problems.append(f"{key}: for 'Gt', 'Lt' operators, exactly one value is required")
            problems.extend(
                f"{key}: for 'Gt', 'Lt' operators, the value must be an integer, got {v!r}"
                for v in vals
                if _parse_int64(v) is None
            )
        for value in vals:
            value_problem = validate_label_value(value)
            if value_problem:
                problems.append(value_problem)
        if problems:
            raise SelectorError("invalid selector: " + "; ".join(problems))
        return cls(key, op, tuple(sorted(set(vals))))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``Requirement.Matches``: O(1) for one label look-up."""
        op = self.op
        if op in POSITIVE_OPERATORS:
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in _NEGATIVE:
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if value is None or len(self.values) != 1:
            return False
        have, want = _parse_int64(value), _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.op
        if op in _EQUALITY:  # the common case first; the tokens from a dict (``op.value`` is a Python property)
            return self.key + _TOKENS[op] + ",".join(self.values)
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(self.values)
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {_TOKENS[op]} ({joined})"
        return self.key + _TOKENS[op] + joined


@dataclass(frozen=True, slots=True)
class Selector:
    """An AND of requirements, sorted by key; ``nothing`` marks ``labels.Nothing()``."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    # derived for fast matching and text: ``key=value`` terms as (key, value) pairs, and the other requirements
    _equals: tuple[tuple[str, str], ...] = field(default=(), init=False, repr=False, compare=False, hash=False)
    _others: tuple[Requirement, ...] = field(default=(), init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        requirements = self.requirements
        equals = Operator.EQUALS
        pairs = tuple([(r.key, r.values[0]) for r in requirements if r.op is equals and len(r.values) == 1])
        object.__setattr__(self, "_equals", pairs)
        if len(pairs) < len(requirements):  # else ``_others`` keeps its default, ()
            others = tuple([r for r in requirements if r.op is not equals or len(r.values) != 1])
            object.__setattr__(self, "_others", others)

    @property
    def empty(self) -> bool:
        """``Selector.Empty()``: True for the selector with no requirements (matches everything)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when every requirement matches; O(r) dictionary look-ups."""
        if self.nothing:
            return False
        get = labels.get
        for key, value in self._equals:
            if get(key) != value:
                return False
        others = self._others
        return not others or all(req.matches(labels) for req in others)

    def requires_only(self, label: tuple[str, str]) -> bool:
        """True when every requirement is the equality ``key=value`` of ``label`` (one or repeated): a label
        set having ``label`` matches, without a test. O(r)."""
        equals = self._equals
        return bool(equals) and not self._others and not self.nothing and equals.count(label) == len(equals)

    def add(self, *requirements: Requirement) -> Selector:
        """``Selector.Add``: a new selector with more requirements (stable sort by key)."""
        if self.nothing:
            return self
        return Selector(tuple(sorted((*self.requirements, *requirements), key=_BY_KEY)))

    def __str__(self) -> str:
        """The canonical string form; an equality requirement's text (``key=value``) made inline, all of them
        at once (in C) when every requirement is one."""
        if not self._others:
            return ",".join(map("=".join, self._equals))
        equals = Operator.EQUALS
        return ",".join(
            [r.key + "=" + r.values[0] if r.op is equals and len(r.values) == 1 else str(r) for r in self.requirements]
        )


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def selector_from_set(labels: Mapping[str, str], extra: tuple[Requirement, ...] = ()) -> Selector:
    """``labels.Set(labels).AsSelectorPreValidated()``: one equality requirement per key, unvalidated; with
    ``extra``, that selector's ``.Add(extra...)`` built at once (a stable sort by key of the set's requirements,
    already in key order, then ``extra``: what ``Add`` gives). One label equal to ``extra``'s first requirement
    (a Service's ``app=x`` merged with its controller's selector) shares that requirement instead of making one.
    O((labels + extra) log(labels + extra))."""
    if not labels and not extra:
        return EVERYTHING
    equals = Operator.EQUALS
    if len(labels) == 1:  # the usual merged set: one Service's one label
        [(key, value)] = labels.items()
        head = extra[0] if extra else None
        if head is not None and head.op is equals and head.key == key and head.values == (value,):
            requirements = [head]
        else:
            requirements = [Requirement(key, equals, (value,))]
    else:
        requirements = [Requirement(k, equals, (v,)) for k, v in sorted(labels.items())]
    if extra:
        requirements.extend(extra)
        requirements.sort(key=_BY_KEY)
    return Selector(tuple(requirements))


_LABEL_SELECTOR_OPS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def from_label_selector(spec: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: None → NOTHING, no terms → EVERYTHING; invalid → SelectorError."""
    if spec is None:
        return NOTHING
    if not isinstance(spec, Mapping):
        raise SelectorError(f"invalid selector: expected a mapping, got {type(spec).__name__}")
    match_labels = spec.get("matchLabels") or {}
    expressions = spec.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise SelectorError("invalid selector: matchLabels must be a mapping")
    if not isinstance(expressions, list):
        raise SelectorError("invalid selector: matchExpressions must be a list")
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SelectorError(f"invalid selector: matchLabels {key!r}: keys and values must be strings")
        if validate_label_key(key) is None and validate_label_value(value) is None:
            requirements.append(Requirement(key, Operator.EQUALS, (value,)))  # what new() returns when valid
        else:
            requirements.append(Requirement.new(key, Operator.EQUALS, (value,)))  # raises, naming the problems
    for expr in expressions:
        if not isinstance(expr, Mapping):
            raise SelectorError("invalid selector: each matchExpressions entry must be a mapping")
        key, op_name, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        op = _LABEL_SELECTOR_OPS.get(op_name) if isinstance(op_name, str) else None
        if op is None:
            raise SelectorError(f"invalid selector: {op_name!r} is not a valid label selector operator")
        if not isinstance(key, str) or not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise SelectorError(f"invalid selector: matchExpressions {key!r}: key and values must be strings")
        requirements.append(Requirement.new(key, op, values))
    return Selector(tuple(sorted(requirements, key=_BY_KEY)))  # EVERYTHING.add(*requirements)


def from_match_labels(
    labels: Mapping[str, str], requirements: dict[tuple[str, str], Requirement] | None = None
) -> Selector:
    """``from_label_selector({"matchLabels": labels})`` (the same selector, the same SelectorError) for a map
    of strings, without building that dict: one validated equality requirement per entry, sorted by key.
    ``requirements``, when given, caches the valid requirements by (key, value) across calls (a Deployment's
    ``app=x`` is also its ReplicaSets'). O(labels log labels); O(1) per cached requirement."""
    if not labels:
        return EVERYTHING
    cache = {} if requirements is None else requirements
    equals = Operator.EQUALS
    reqs: list[Requirement] = []
    for pair in labels.items():
        req = cache.get(pair)
        if req is None:
            key, value = pair
            if validate_label_key(key) is not None or validate_label_value(value) is not None:
                return from_label_selector({"matchLabels": dict(labels)})  # raises, naming the problems
            req = cache[pair] = Requirement(key, equals, (value,))
        reqs.append(req)
    if len(reqs) > 1:
        reqs.sort(key=_BY_KEY)
    return Selector(tuple(reqs))


# --- string form -----------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\s*(?:(?P<op>==|!=|=|!|\(|\)|,|>|<)|(?P<ident>[^\s!=(),<>]+))")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN_RE.match(text, pos)
        if match is None:  # pragma: no cover - the ident class accepts every other character
            raise SelectorError(f"invalid selector {text!r}: unexpected character at {pos}")
        tokens.append(match.group("op") or match.group("ident"))
        pos = match.end()
    return tokens


def parse_selector(text: str) -> Selector:
    """``labels.Parse``: the string form (``a=b,c!=d,e in (x,y),f notin (z),g,!h,i>1``) → Selector."""
    tokens = _tokenize(text)
    if not tokens:
        return EVERYTHING
    requirements: list[Requirement] = []
    pos = 0

    def fail(why: str) -> SelectorError:
        return SelectorError(f"invalid selector {text!r}: {why}")

    def take() -> str | None:
        nonlocal pos
        if pos >= len(tokens):
            return None
        pos += 1
        return tokens[pos - 1]

    while True:
        tok = take()
        if tok is None:
            raise fail("expected a requirement")
        if tok == "!":
            key = take()
            if key is None or key in "=!(),<>" or key in ("==", "!="):
                raise fail("expected a key after '!'")
            requirements.append(Requirement.new(key, Operator.DOES_NOT_EXIST))
        elif tok in ("=", "==", "!=", "(", ")", ",", ">", "<"):
            raise fail(f"expected a key, found {tok!r}")
        else:
            key = tok
            nxt = tokens[pos] if pos < len(tokens) else None
            if nxt is None or nxt == ",":
                requirements.append(Requirement.new(key, Operator.EXISTS))
            elif nxt in ("=", "==", "!=", ">", "<"):
                take()
                value = tokens[pos] if pos < len(tokens) else None
                if value is None or value == ",":
                    value = ""  # "a=" means the empty value, as upstream
                else:
                    take()
                    if value in ("=", "==", "!=", "(", ")", ">", "<", "!"):
                        raise fail(f"expected a value after {nxt!r}, found {value!r}")
                requirements.append(Requirement.new(key, Operator(nxt), (value,)))
            elif nxt in ("in", "notin"):
                take()
                if take() != "(":
                    raise fail(f"expected '(' after {nxt!r}")
                values: list[str] = []
                expect_value = True
                while True:
                    item = take()
                    if item is None:
                        raise fail("missing ')'")
                    if item == ")":
                        if expect_value:
                            values.append("")
                        break
                    if item == ",":
                        if expect_value:
                            values.append("")
                        expect_value = True
                        continue
                    if not expect_value or item in ("=", "==", "!=", "(", ">", "<", "!"):
                        raise fail(f"unexpected {item!r} in value list")
                    values.append(item)
                    expect_value = False
                requirements.append(Requirement.new(key, Operator(nxt), values))
            else:
                raise fail(f"expected an operator after {key!r}, found {nxt!r}")
        sep = take()
        if sep is None:
            break
        if sep != ",":
            raise fail(f"expected ',' found {sep!r}")
    return EVERYTHING.add(*requirements)
