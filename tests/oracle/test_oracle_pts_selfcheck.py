"""Checks of the PodTopologySpread oracle and its generator alone (no spreadwatch code).

The expectations (edge_cases_pts.py, the issue's examples/cluster.yaml numbers)
were worked out by hand from the v1.36 source; if the oracle disagrees, the
harness, not the Python port, is wrong.
"""

from __future__ import annotations

import json
from collections import Counter

import gen_pts
import pytest
from edge_cases_pts import EDGE_CASES, EXAMPLE_CHECKOUT_SCORES, example_checkout_case
from hack.oracle_client import OracleError

pytestmark = pytest.mark.oracle


def _line(case: dict) -> dict:
    return gen_pts.oracle_line(case)


def test_oracle_links_a_v129_or_later_release(pts_oracle):
    import subprocess

    version = subprocess.run([pts_oracle.binary, "--version"], check=True, capture_output=True, text=True).stdout
    major_minor = version.strip().rsplit(" ", 1)[-1].lstrip("v").split(".")[:2]
    assert version.startswith("k8s.io/kubernetes v1.") and tuple(map(int, major_minor)) >= (1, 29), version


@pytest.mark.parametrize("case", EDGE_CASES, ids=lambda c: c["name"])
def test_edge_case_expectations(pts_oracle, case):
    out = pts_oracle.request(_line(case))
    if case["expect"].get("error"):
        assert set(out) == {"error"} and out["error"].startswith("scheduler config: "), out
        return
    assert "error" not in out, out
    (res,) = out["results"]
    assert res["candidates"] == (case["candidates"] if case["candidates"] is not None else case["expect"]["candidates"])
    assert res["skipped"] == case["expect"]["skipped"], res
    assert res["scores"] == case["expect"]["scores"], res


def test_examples_cluster_checkout_numbers_from_the_issue(pts_oracle):
    """Issue 14: shop/checkout on examples/cluster.yaml: node-a1/a2 77, node-b1 11,
    node-b2 50, node-c1 55, node-legacy 100 (beta zone label only: zoneless)."""
    case = example_checkout_case()
    (res,) = pts_oracle.score(case["cluster"], case["incoming"])
    assert not res["skipped"]
    assert set(res["filtered"]) == {"node-c2", "node-gpu"}
    assert res["scores"] == EXAMPLE_CHECKOUT_SCORES


def test_malformed_lines_get_an_error_and_the_process_continues(pts_oracle):
    n1 = {"metadata": {"name": "n1"}}
    for bad in (
        {"cluster": {"nodes": "nope"}, "incoming": []},
        {"cluster": {"nodes": [n1]}, "incoming": [{}], "candidates": ["n9"]},
        {"cluster": {"nodes": [n1]}, "incoming": [{}], "unfit": ["n9"]},
        {"cluster": {"nodes": [n1]}, "incoming": [{}], "schedulerConfig": "kind: Nope"},
        {"cluster": {"nodes": [n1]}, "incoming": [{}], "schedulerConfig": "{}", "schedulerName": "x"},
    ):
        out = pts_oracle.request(bad)
        assert set(out) == {"error"} and out["error"], out
    with pytest.raises(OracleError):
        pts_oracle.score({"nodes": [{"metadata": {}}]}, [])
    # An unowned pod without constraints: empty default selector, PreScore skips.
    (res,) = pts_oracle.score({"nodes": [n1]}, [{"metadata": {"name": "p"}}])
    assert res == {"skipped": True, "preScore": "Skip", "candidates": ["n1"], "scores": {"n1": 0}, "filtered": {}}


def test_generator_is_deterministic_covers_its_mix_and_oracle_accepts_every_case(pts_oracle):
    seen: Counter[str] = Counter()
    for seed in range(300):
        case = gen_pts.generate(seed)
        assert json.dumps(case, sort_keys=True) == json.dumps(gen_pts.generate(seed), sort_keys=True)
        out = pts_oracle.request(_line(case))
        if "error" in out:
            assert out["error"].startswith("scheduler config: "), (seed, out)
            seen["config error"] += 1
            continue
        (res,) = out["results"]
        if case["candidates"] is not None:
            assert res["candidates"] == case["candidates"]
        else:
            assert not case["unfit"]  # (spreadwatch picks the candidates itself: no filter outside its scope)
        assert set(res["scores"]) == set(res["candidates"])
        assert all(0 <= s <= 100 for s in res["scores"].values())
        if not res["candidates"]:
            seen["no candidate"] += 1
        elif res["skipped"]:
            assert set(res["scores"].values()) == {0}
            seen["skipped"] += 1
        else:
            seen["scored"] += 1
            if len(set(res["scores"].values())) > 1:
                seen["scores differ"] += 1
        spec = case["incoming"][0]["spec"]
        tsc = spec.get("topologySpreadConstraints") or []
        seen["explicit constraints"] += bool(tsc)
        seen["DoNotSchedule"] += any(c["whenUnsatisfiable"] == "DoNotSchedule" for c in tsc)
        seen["matchLabelKeys"] += any("matchLabelKeys" in c for c in tsc)
        seen["labelSelector {}"] += any(c.get("labelSelector") == {} for c in tsc)
        seen["inclusion policy"] += any("nodeTaintsPolicy" in c or "nodeAffinityPolicy" in c for c in tsc)
        seen["custom defaults"] += "List" in (case["schedulerConfig"] or "")
        seen["filtered out"] += bool(res["filtered"])
        seen["PodTopologySpread filtered"] += any("topology spread" in why for why in res["filtered"].values())
        seen["minDomains"] += any("minDomains" in c for c in tsc)
    # Every ingredient shows up in a good share of 300 cases.
    for what in (
        "scored",
        "scores differ",
        "skipped",
        "explicit constraints",
        "DoNotSchedule",
        "matchLabelKeys",
        "labelSelector {}",
        "inclusion policy",
        "custom defaults",
        "filtered out",
        "PodTopologySpread filtered",
        "minDomains",
    ):
        assert seen[what] >= 15, (what, dict(seen))
    assert seen["config error"] >= 1, dict(seen)
