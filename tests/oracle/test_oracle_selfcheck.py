"""Checks of the oracle and the generator themselves (no spreadwatch code).

The expectations in edge_cases.py were worked out by hand from the v1.28
source; if the oracle disagrees, the harness (not the Python port) is wrong.
"""

from __future__ import annotations

import json

import gen
import pytest
from edge_cases import EDGE_CASES
from hack.oracle_client import OracleError

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("case", [c for c in EDGE_CASES if c["expect"]], ids=lambda c: c["name"])
def test_edge_case_expectations(oracle, case):
    (res,) = oracle.score(case["cluster"], case["incoming"], case["candidates"])
    for key, want in case["expect"].items():
        assert res[key] == want, f"{case['name']}: {key}: oracle {res[key]!r}, expected {want!r}"


def test_result_shape_and_batching(oracle):
    case = next(c for c in EDGE_CASES if c["name"] == "two-nodes-no-zone")
    pods = case["incoming"] * 3
    results = oracle.score(case["cluster"], pods, None)
    assert len(results) == 3
    for r in results:
        assert set(r) == {"skipped", "candidates", "scores", "filtered"}
        assert set(r["scores"]) == set(r["candidates"])
    assert oracle.last_elapsed_ns > 0


def test_malformed_lines_get_an_error_and_the_process_continues(oracle):
    for bad in (
        {"cluster": {"nodes": "nope"}, "incoming": []},
        {"cluster": {"nodes": [{"metadata": {"name": "n1"}}]}, "incoming": [{}], "candidates": ["n9"]},
        {"cluster": {"nodes": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n1"}}]}, "incoming": []},
    ):
        out = oracle.request(bad)
        assert set(out) == {"error"} and out["error"], out
    with pytest.raises(OracleError):
        oracle.score({"nodes": [{"metadata": {}}]}, [])
    (res,) = oracle.score({"nodes": [{"metadata": {"name": "n1"}}]}, [{"metadata": {"name": "p"}}])
    assert res["scores"] == {"n1": 100}


def test_generator_is_deterministic_and_oracle_accepts_every_case(oracle):
    for seed in range(200):
        case = gen.generate(seed)
        assert json.dumps(case, sort_keys=True) == json.dumps(gen.generate(seed), sort_keys=True)
        cands = gen.candidates_for(seed, case) if seed % 2 == 0 else None
        (res,) = oracle.score(case["cluster"], case["incoming"], cands)
        if cands is not None:
            assert res["candidates"] == cands
        assert set(res["scores"]) == set(res["candidates"])
        assert all(0 <= s <= 100 for s in res["scores"].values())
        if res["skipped"]:
            assert set(res["scores"].values()) <= {0}
