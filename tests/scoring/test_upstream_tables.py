"""kube-scheduler's own unit-test tables, one YAML file per profile (tests/data/upstream/, see its README).

Each case scores the upstream incoming pod on exactly the upstream node list (``--nodes`` semantics) and
must give upstream's expected integers. ``failedNodes`` (v1.29) are in the cluster but not candidates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from spreadwatch.analysis import score_objects

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
