"""Differential test: spreadwatch's Python SelectorSpread vs the real plugin.

For each seed a random cluster and incoming pod come from gen.py; even seeds
give every node (shuffled) as explicit candidates, odd seeds let both sides
pick candidates with the filters.  The hand-written cases of edge_cases.py run
too.  On a mismatch the case is shrunk (objects and pod fields removed while the
mismatch persists) and printed as an oracle input line.

    SPREADWATCH_ORACLE_CASES=5000 pytest -m oracle tests/oracle
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import gen
import pytest
from edge_cases import EDGE_CASES
from hack.oracle_client import OracleError

pytestmark = pytest.mark.oracle

N_CASES = int(os.environ.get("SPREADWATCH_ORACLE_CASES", "500"))
PROFILE = "v1.28"
SHRINK_BUDGET = 3000  # oracle+python evaluations per failing case


@pytest.fixture(scope="session")
def score_objects():
    # Imported lazily so that the oracle self-checks run without it.
    from spreadwatch.analysis import score_objects

    return score_objects


# -- running both sides ------------------------------------------------------------


def run_oracle(oracle, case: dict[str, Any]) -> dict[str, Any]:
    (res,) = oracle.score(case["cluster"], case["incoming"], case["candidates"])
    return res


def run_python(score_objects, case: dict[str, Any]) -> dict[str, Any]:
    objects = gen.objects_of(copy.deepcopy(case["cluster"]))
    pod = copy.deepcopy(case["incoming"][0])
    nodes = list(case["candidates"]) if case["candidates"] is not None else None
    try:
        r = score_objects(objects, pod, profile=PROFILE, nodes=nodes)
        scores = dict(r.scores)
        return {
            "skipped": r.skipped,
            "candidates": list(r.scores),
            "scores": scores,
            "excluded": dict(r.excluded),
        }
    except Exception as e:
        return {"exception": f"{type(e).__name__}: {e}"}


def mismatch(o: dict[str, Any], py: dict[str, Any]) -> list[str]:
    """What differs (empty if the two agree)."""
    if "exception" in py:
        return [f"python raised {py['exception']}"]
    out = []
    if py["skipped"] != o["skipped"]:
        out.append(f"skipped: python {py['skipped']!r} != oracle {o['skipped']!r}")
    if py["candidates"] != o["candidates"]:
        out.append(f"candidates: python {py['candidates']} != oracle {o['candidates']}")
    if py["scores"] != o["scores"]:
        diff = {
            n: (py["scores"].get(n), o["scores"].get(n))
            for n in sorted(set(py["scores"]) | set(o["scores"]))
            if py["scores"].get(n) != o["scores"].get(n)
        }
        out.append(f"scores (python, oracle): {diff}")
    bad_types = {n: type(v).__name__ for n, v in py["scores"].items() if type(v) is not int}
    if bad_types:
        out.append(f"python scores are not int: {bad_types}")
    return out


# -- shrinking ---------------------------------------------------------------------


def _drop(d: dict[str, Any], *path: str) -> bool:
    for p in path[:-1]:
        d = d.get(p) or {}
    if path[-1] in d:
        del d[path[-1]]
        return True
    return False


def _reductions(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Smaller variants of ``case``, biggest cuts first."""
    cl = case["cluster"]
    for key in gen.CLUSTER_KEYS:
        for i in range(len(cl.get(key) or [])):
            c = copy.deepcopy(case)
            removed = c["cluster"][key].pop(i)
            if key == "nodes" and c["candidates"] is not None:
                c["candidates"] = [n for n in c["candidates"] if n != removed["metadata"]["name"]]
            yield c
    for path in (
        ("metadata", "ownerReferences"),
        ("spec", "tolerations"),
        ("spec", "nodeSelector"),
        ("spec", "affinity"),
        ("spec", "topologySpreadConstraints"),
    ):
        c = copy.deepcopy(case)
        if _drop(c["incoming"][0], *path):
            yield c
    for i in range(len(case["incoming"][0]["metadata"].get("ownerReferences") or [])):
        c = copy.deepcopy(case)
        c["incoming"][0]["metadata"]["ownerReferences"].pop(i)
        yield c
    for key in (*gen.CLUSTER_KEYS, "incoming"):
        objs = case["incoming"] if key == "incoming" else (cl.get(key) or [])
        for i, o in enumerate(objs):
            for label in list((o.get("metadata") or {}).get("labels") or {}):
                c = copy.deepcopy(case)
                target = c["incoming"] if key == "incoming" else c["cluster"][key]
                del target[i]["metadata"]["labels"][label]
                yield c
            for field in ("taints", "unschedulable", "selector"):
                c = copy.deepcopy(case)
                target = c["incoming"] if key == "incoming" else c["cluster"][key]
                if key != "incoming" and _drop(target[i], "spec", field):
                    yield c


def shrink(case: dict[str, Any], still_fails: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    budget = SHRINK_BUDGET
    start = 0
    progress = True
    while progress and budget > 0:
        progress = False
        for idx, smaller in enumerate(_reductions(case)):
            if idx < start:
                continue
            budget -= 1
            if still_fails(smaller):
                case, start, progress = smaller, idx, True
                break
            if budget <= 0:
                break
        else:
            if start:  # one more full pass from the top
                start, progress = 0, True
    return case


def _compact(case: dict[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = {"cluster": {k: v for k, v in case["cluster"].items() if v}, "incoming": case["incoming"]}
    if case["candidates"] is not None:
        line["candidates"] = case["candidates"]
    return line


def check(oracle, score_objects, case: dict[str, Any], label: str, regenerate: str | None) -> None:
    o = run_oracle(oracle, case)
    py = run_python(score_objects, case)
    problems = mismatch(o, py)
    if not problems:
        return

    def still_fails(c: dict[str, Any]) -> bool:
        try:
            return bool(mismatch(run_oracle(oracle, c), run_python(score_objects, c)))
        except OracleError:
            return False

    small = shrink(case, still_fails)
    o_small, py_small = run_oracle(oracle, small), run_python(score_objects, small)
    report = {
        "case": label,
        "regenerate": regenerate,
        "problems": problems,
        "minimal": {
            "problems": mismatch(o_small, py_small),
            "oracle": o_small,
            "python": py_small,
            "input": _compact(small),
        },
        "how_to_replay": "put minimal.input on one line into case.json; "
        "$(tests/oracle/build.sh) < case.json; and in Python: "
        "score_objects(objects_of(cluster), incoming[0], profile='v1.28', nodes=candidates)",
    }
    pytest.fail(
        "SelectorSpread mismatch; reproduction:\n" + json.dumps(report, indent=1, ensure_ascii=False), pytrace=False
    )


# -- the tests -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(N_CASES), ids=lambda s: f"seed{s}")
def test_random_case(oracle, score_objects, seed):
    case = gen.generate(seed)
    explicit = seed % 2 == 0
    case = {
        "cluster": case["cluster"],
        "incoming": case["incoming"],
        "candidates": gen.candidates_for(seed, case) if explicit else None,
    }
    regenerate = f"python3 tests/oracle/gen.py --seed {seed}{' --explicit' if explicit else ''}"
    check(oracle, score_objects, case, f"seed {seed} ({'explicit candidates' if explicit else 'filtered'})", regenerate)


@pytest.mark.parametrize("case", EDGE_CASES, ids=lambda c: c["name"])
def test_edge_case(oracle, score_objects, case):
    check(
        oracle,
        score_objects,
        {k: case[k] for k in ("cluster", "incoming", "candidates")},
        f"edge case {case['name']} (tests/oracle/edge_cases.py)",
        None,
    )
