"""``config.Scope``: the one place that decides which namespaces and workloads get reports and series."""

from __future__ import annotations

import pytest

from spreadwatch.config import LabelRequirement, OperatorConfig, Scope, parse_label_requirement

OPT_OUT = LabelRequirement("spreadwatch.io/ignore", "true")
IGNORED = {"spreadwatch.io/ignore": "true"}
NOT_IGNORED = {"spreadwatch.io/ignore": "false"}
ALL = Scope(opt_out=OPT_OUT)
ONLY_SHOP = Scope(namespaces=frozenset({"shop"}), opt_out=OPT_OUT)
SKIP_SYSTEM = Scope(skip_namespaces=frozenset({"kube-system"}), opt_out=OPT_OUT)
NO_OPT_OUT = Scope()


@pytest.mark.parametrize(
    ("scope", "namespace", "namespace_labels", "workload_labels", "watched", "namespace_in", "workload_in"),
    [
        (ALL, "shop", {}, {}, True, True, True),
        (ALL, "shop", {}, IGNORED, True, True, False),
        (ALL, "shop", {}, NOT_IGNORED, True, True, True),
        (ALL, "shop", IGNORED, {}, True, False, False),
        (ALL, "shop", NOT_IGNORED, {"app": "web"}, True, True, True),
        (ONLY_SHOP, "shop", {}, {}, True, True, True),
        (ONLY_SHOP, "other", {}, {}, False, False, False),
        (ONLY_SHOP, "shop", IGNORED, {}, True, False, False),
        (SKIP_SYSTEM, "kube-system", {}, {}, False, False, False),
        (SKIP_SYSTEM, "shop", {}, {}, True, True, True),
        (SKIP_SYSTEM, "shop", {}, IGNORED, True, True, False),
        (NO_OPT_OUT, "shop", IGNORED, IGNORED, True, True, True),
        (Scope(opt_out=LabelRequirement("team/skip")), "shop", {}, {"team/skip": "anything"}, True, True, False),
        (Scope(opt_out=LabelRequirement("team/skip")), "shop", {"team/skip": ""}, {}, True, False, False),
    ],
)
def test_scope_answers(
    scope: Scope,
    namespace: str,
    namespace_labels: dict[str, str],
    workload_labels: dict[str, str],
    watched: bool,
    namespace_in: bool,
    workload_in: bool,
) -> None:
    assert scope.namespace_watched(namespace) is watched
    assert scope.namespace_in_scope(namespace, namespace_labels) is namespace_in
    assert scope.workload_in_scope(namespace, namespace_labels, workload_labels) is workload_in


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (OperatorConfig(), Scope(opt_out=OPT_OUT)),
        (
            OperatorConfig(namespaces=("a", "b"), opt_out=parse_label_requirement("x")),
            Scope(namespaces=frozenset({"a", "b"}), opt_out=LabelRequirement("x")),
        ),
        (
            OperatorConfig(skip_namespaces=("kube-system",), opt_out=None),
            Scope(skip_namespaces=frozenset({"kube-system"})),
        ),
    ],
)
def test_scope_is_built_from_the_config(config: OperatorConfig, expected: Scope) -> None:
    assert config.scope == expected
