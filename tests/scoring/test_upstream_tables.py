"""kube-scheduler's own unit-test tables, one YAML file per profile (tests/data/upstream/, see its README).

Each case scores the upstream incoming pod on exactly the upstream node list (``--nodes`` semantics) and
must give upstream's expected integers. ``failedNodes`` (v1.29) are in the cluster but not candidates.
``filter-v1.29.yaml`` holds PodTopologySpread's PreFilter/Filter tables: PreFilter's domain counts and minimum,
and the Filter's status code on every node (the ids show each constraint's domain counts and minimum; the
assertion message the per-node arithmetic).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.analysis import score_objects
from spreadwatch.model import Pod, SpreadConstraint, parse_pod
from spreadwatch.scoring import build_spread_selector, get_profile
from spreadwatch.scoring.profiles import DefaultConstraints
from spreadwatch.scoring.topology_filter import (
    MISSING_LABEL,
    NOT_MATCH,
    FilterState,
    filter_node,
    plan_filter,
    prefilter,
)
from spreadwatch.selectors import EVERYTHING
from spreadwatch.snapshot import Snapshot

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream"


def _cases() -> list[Any]:
    params = []
    for path in sorted(DATA.glob("v*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for i, case in enumerate(doc["cases"]):
            params.append(
                pytest.param(doc["profile"], case, id=f"{doc['profile']}-{i:02d}-{case['test']}-{case['name']}")
            )
    return params


CASES = _cases()


def test_every_profile_has_tables() -> None:
    profiles = {p.values[0] for p in CASES}
    assert profiles == {"v1.29", "v1.28", "v1.18", "v1.16", "v1.12"}
    assert len(CASES) >= 150


@pytest.mark.parametrize(("profile", "case"), CASES)
def test_upstream_case(profile: str, case: dict[str, Any]) -> None:
    nodes = [n["metadata"]["name"] for n in case["nodes"]]
    cluster = [*case["nodes"], *case.get("failedNodes", []), *case["objects"]]  # failedNodes: not candidates
    result = score_objects(cluster, case["pod"], profile=profile, nodes=nodes)
    assert dict(result.scores) == case["expected"], case.get("note", "")


# -- PodTopologySpread's PreFilter/Filter (filter-v1.29.yaml) ----------------------------------------------------

_CODES = {None: "Success", NOT_MATCH: "Unschedulable", MISSING_LABEL: "UnschedulableAndUnresolvable"}


def _filter_cases() -> list[Any]:
    doc = yaml.safe_load((DATA / "filter-v1.29.yaml").read_text())
    return [
        pytest.param(case, id=f"{i:02d}-{case['test']}-{case['name']} [{case['note'].split(' | ')[0]}]")
        for i, case in enumerate(doc["cases"])
    ]


FILTER_CASES = _filter_cases()


def _filter_state(case: dict[str, Any]) -> tuple[Snapshot, Pod, FilterState | None]:
    """PreFilter of the case's incoming pod over all its nodes, with its List default constraints."""
    snapshot = Snapshot.from_objects([*case["nodes"], *case["objects"]])
    pod = parse_pod(case["pod"])
    defaults = DefaultConstraints(
        tuple(
            SpreadConstraint(c["maxSkew"], c["topologyKey"], c["whenUnsatisfiable"], EVERYTHING)
            for c in case.get("defaultConstraints", ())
        ),
        system=False,
        source="List",
    )
    profile = dataclasses.replace(get_profile("v1.29"), default_constraints=defaults)
    plan = plan_filter(pod, profile, lambda: build_spread_selector(pod, snapshot, profile).selectors[0])
    if plan is None:
        return snapshot, pod, None
    return snapshot, pod, prefilter(plan, pod.template, snapshot.nodes, snapshot.pods, pod.namespace)


def test_filter_tables_have_every_case() -> None:
    tests = [p.values[0]["test"] for p in FILTER_CASES]
    assert (tests.count("TestPreFilterState"), tests.count("TestSingleConstraint")) == (36, 23)
    assert tests.count("TestMultipleConstraints") == 13


@pytest.mark.parametrize("case", FILTER_CASES)
def test_upstream_filter_case(case: dict[str, Any]) -> None:
    snapshot, _, state = _filter_state(case)
    if "expected" in case:  # TestSingleConstraint / TestMultipleConstraints: the Filter's code per node
        assert state is not None, case["note"]
        got = {n.name: _CODES[filter_node(state, n)] for n in snapshot.nodes}
        assert got == case["expected"], case["note"]
        return
    if case["expectedState"] == "Skip":
        assert state is None, case["note"]
        return
    assert state is not None, case["note"]
    want = case["expectedState"]
    assert [dict(t.counts) for t in state.terms] == [w["counts"] for w in want], case["note"]
    # minMatchNum: CriticalPaths[i][0].MatchNum, or 0 with fewer domains than minDomains
    minimums = [
        0 if len(w["counts"]) < term.min_domains else w["minMatch"]
        for w, term in zip(want, state.plan.terms, strict=True)
    ]
    assert [t.minimum for t in state.terms] == minimums, case["note"]
