"""Zone keys: which labels each profile reads and which wins."""

from __future__ import annotations

import pytest

from k8s_objects import BETA_REGION, BETA_ZONE, GA_REGION, GA_ZONE
from spreadwatch.scoring import get_profile, zone_key


@pytest.mark.parametrize(
    ("labels", "v128", "v116"),
    [
        pytest.param({}, None, None, id="no labels: no zone"),
        pytest.param({GA_ZONE: "a"}, ("", "a"), None, id="GA zone only: unknown before v1.17"),
        pytest.param({BETA_ZONE: "a"}, ("", "a"), ("", "a"), id="beta zone only"),
        pytest.param({BETA_ZONE: "a", GA_ZONE: "b"}, ("", "a"), ("", "a"), id="both: beta wins"),
        pytest.param({BETA_ZONE: "", GA_ZONE: "b"}, None, None, id="empty beta value still wins: no zone"),
        pytest.param({GA_REGION: "r"}, ("r", ""), None, id="region only is a zone key"),
        pytest.param({BETA_REGION: "r", GA_REGION: "x", GA_ZONE: "z"}, ("r", "z"), ("r", ""), id="mixed"),
    ],
)
def test_zone_key(labels: dict[str, str], v128: tuple[str, str] | None, v116: tuple[str, str] | None) -> None:
    assert zone_key(labels, get_profile("v1.28")) == v128
    assert zone_key(labels, get_profile("v1.18")) == v128
    assert zone_key(labels, get_profile("v1.16")) == v116
    assert zone_key(labels, get_profile("v1.12")) == v116
