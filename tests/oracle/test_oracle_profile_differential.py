"""Differential test: ``spreadwatch predict`` vs the real kube-scheduler v1.36.4 framework, whole profile.

For each seed gen_profile.py makes a cluster (nodes with allocatable and images, pods with requests, ports and
pod affinity, volumes and claims, Namespaces, Services, a ReplicaSet), an incoming pod and sometimes a
KubeSchedulerConfiguration. The oracle (tests/oracle/profile: the real scheduler cache, snapshot, informers
and framework with every plugin of the profile) runs PreFilter, Filter, PreScore and Score; spreadwatch is
driven through its CLI, in-process:

    spreadwatch predict --cluster C --pod P -o json [--scheduler-config F]

and must agree on everything that decides the placement: the filter plugins and score weights of the
profile, the PreFilter verdict, which plugin filtered each node, the feasible nodes, which score plugins ran
(PreScore skips), every plugin's weighted score on every feasible node, and every total. A configuration
kube-scheduler rejects must make the CLI exit 2 with one line on stderr.

    SPREADWATCH_ORACLE_PROFILE_CASES=5000 pytest -m oracle tests/oracle/test_oracle_profile_differential.py
    SPREADWATCH_ORACLE_PROFILE_FIRST_SEED=10000 ...                   # other seeds
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import gen_profile
import pytest

pytestmark = pytest.mark.oracle

N_CASES = int(os.environ.get("SPREADWATCH_ORACLE_PROFILE_CASES", "500"))
FIRST_SEED = int(os.environ.get("SPREADWATCH_ORACLE_PROFILE_FIRST_SEED", "0"))
_seen: Counter[str] = Counter()

Case = dict[str, Any]


def run_oracle(profile_oracle: Any, case: Case) -> dict[str, Any]:
    """``{"error": msg}`` (the line was refused: a configuration kube-scheduler rejects) or the one result."""
    out = profile_oracle.request(gen_profile.oracle_line(case))
    if "error" in out:
        return {"refused": out["error"]}
    (res,) = out["results"]
    return dict(res)


def run_cli(case: Case) -> dict[str, Any]:
    """``spreadwatch predict`` in-process on the case: exit code, stderr and the parsed JSON."""
    from spreadwatch.cli import main

    with tempfile.TemporaryDirectory(prefix="profile-diff-") as tmp:
        d = Path(tmp)
        (d / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                    "items": gen_profile.objects_of(case["cluster"])}))  # fmt: skip
        (d / "pod.json").write_text(json.dumps(case["incoming"][0]))
        argv = ["predict", "--cluster", str(d / "cluster.json"), "--pod", str(d / "pod.json"), "-o", "json"]
        if case.get("schedulerConfig") is not None:
            (d / "scheduler.json").write_text(case["schedulerConfig"])
            argv += ["--scheduler-config", str(d / "scheduler.json")]
        out, err = io.StringIO(), io.StringIO()
        code = main(argv, out=out, err=err)
    res: dict[str, Any] = {"exit": code, "stderr": err.getvalue()}
    if code == 0:
        res["json"] = json.loads(out.getvalue())
    return res


def differences(o: dict[str, Any], cli: dict[str, Any]) -> list[str]:
    """What differs between the oracle's cycle and spreadwatch's prediction (empty: they agree)."""
    if "refused" in o:
        lines = cli["stderr"].splitlines()
        if cli["exit"] != 2 or len(lines) != 1:
            return [f"oracle refused the config ({o['refused']}); CLI exit {cli['exit']}, stderr {cli['stderr']!r}"]
        return []
    if cli["exit"] != 0:
        return [f"CLI exit {cli['exit']}: {cli['stderr'].strip()}"]
    got = cli["json"]
    out: list[str] = []
    if o.get("error"):
        if not got["error"]:
            out.append(f"oracle cycle failed ({o['error']}); spreadwatch predicted {got['bestNodes']}")
        return out
    if got["error"]:
        return [f"spreadwatch: {got['error']}; the oracle scheduled fine"]
    if got["partial"]:
        out.append(f"partial prediction on a generated case: {got['partial']}")
    profile = got["profile"]
    if profile["weights"] != o["weights"]:
        out.append(f"weights: spreadwatch {profile['weights']} != oracle {o['weights']}")
    if profile["filters"] != o["filters"]:
        out.append(f"filters: spreadwatch {profile['filters']} != oracle {o['filters']}")
    if got["excluded"] != o["filtered"]:
        diff = {n: (got["excluded"].get(n), o["filtered"].get(n))
                for n in {*got["excluded"], *o["filtered"]} if got["excluded"].get(n) != o["filtered"].get(n)}
        out.append(f"filtered node -> (spreadwatch, oracle): {diff}")
    feasible = {e["node"] for e in got["nodes"]}
    if feasible != set(o["feasible"]):
        out.append(f"feasible: spreadwatch {sorted(feasible)} != oracle {sorted(o['feasible'])}")
    if not o["feasible"]:
        return out
    if got["plugins"] != o["plugins"]:
        out.append(f"score plugins that ran: spreadwatch {got['plugins']} != oracle {o['plugins']}")
    for entry in got["nodes"]:
        node = entry["node"]
        if node not in o["scores"]:
            continue
        if entry["plugins"] != o["scores"][node]:
            out.append(f"{node}: spreadwatch {entry['plugins']} != oracle {o['scores'][node]}")
        if entry["score"] != o["totals"][node]:
            out.append(f"{node} total: spreadwatch {entry['score']} != oracle {o['totals'][node]}")
    return out


def _check(profile_oracle: Any, case: Case) -> None:
    o = run_oracle(profile_oracle, case)
    cli = run_cli(case)
    problems = differences(o, cli)
    if "refused" in o:
        _seen["refused"] += 1
    elif not o.get("feasible"):
        _seen["no feasible node"] += 1
    else:
        _seen["scored"] += 1
        _seen.update(f"ran:{p}" for p in o["plugins"])
    _seen.update(f"filtered:{p}" for p in set(o.get("filtered", {}).values()))
    if problems:
        line = json.dumps(gen_profile.oracle_line(case), separators=(",", ":"))
        pytest.fail(f"seed {case['seed']}: " + "\n".join(problems) + f"\noracle input:\n{line}", pytrace=False)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + N_CASES))
def test_random_cluster(profile_oracle: Any, seed: int) -> None:
    _check(profile_oracle, gen_profile.generate(seed))


def test_the_cases_cover_every_plugin() -> None:
    """The random cases (run just before, in the same session) exercised every filter and score plugin the
    prediction computes: a plugin never exercised would agree vacuously."""
    if sum(_seen[k] for k in ("scored", "refused", "no feasible node")) < min(N_CASES, 200):
        pytest.skip("run with the random cases (at least 200) to check their coverage")
    for plugin in ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                   "VolumeRestrictions", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                   "InterPodAffinity"):  # fmt: skip
        assert _seen[f"filtered:{plugin}"] > 0, (plugin, _seen)
    for plugin in ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
                   "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality"):  # fmt: skip
        assert _seen[f"ran:{plugin}"] > 0, (plugin, _seen)
    assert _seen["scored"] > N_CASES // 3, _seen
