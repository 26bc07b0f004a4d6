"""The resource table (spreadwatch.resources) and the API's timestamp forms (spreadwatch.timestamps), pure.

The table must list exactly the kinds the model parses (what a snapshot holds, what the operator watches),
name the SpreadReport as the CRD in crds/ does, and build the REST paths the API server serves.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from spreadwatch.model import parse_object
from spreadwatch.resources import CLUSTER_RESOURCES, SPREAD_REPORTS, ApiResource
from spreadwatch.timestamps import rfc3339, rfc3339_micro

CRD = Path(__file__).resolve().parents[1] / "crds" / "spreadreports.spreadwatch.io.yaml"
NODES = CLUSTER_RESOURCES[0]
PODS = next(r for r in CLUSTER_RESOURCES if r.kind == "Pod")
DEPLOYMENTS = next(r for r in CLUSTER_RESOURCES if r.kind == "Deployment")


def _minimal(resource: ApiResource) -> dict[str, object]:
    meta = {"name": "x", **({"namespace": "ns"} if resource.namespaced else {})}
    return {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": meta}


@pytest.mark.parametrize("resource", CLUSTER_RESOURCES, ids=lambda r: r.kind)
def test_every_listed_resource_is_one_the_model_parses(resource: ApiResource) -> None:
    assert parse_object(_minimal(resource)) is not None


def test_the_table_lists_each_kind_once_nodes_and_namespaces_first() -> None:
    kinds = [r.kind for r in CLUSTER_RESOURCES]
    assert len(set(kinds)) == len(kinds)
    assert kinds[:2] == ["Node", "Namespace"]
    assert [r.kind for r in CLUSTER_RESOURCES if not r.namespaced] == ["Node", "Namespace", "PersistentVolume"]
    # a kind the model ignores is not listed (nothing is read that nothing uses)
    assert parse_object({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}}) is None


def test_spread_reports_match_the_crd() -> None:
    crd = yaml.safe_load(CRD.read_text())
    spec = crd["spec"]
    assert (spec["group"], spec["names"]["plural"], spec["names"]["kind"]) == (
        SPREAD_REPORTS.group,
        SPREAD_REPORTS.plural,
        SPREAD_REPORTS.kind,
    )
    assert SPREAD_REPORTS.version in [v["name"] for v in spec["versions"] if v.get("served")]
    assert SPREAD_REPORTS.namespaced == (spec["scope"] == "Namespaced")
    assert crd["metadata"]["name"] == f"{SPREAD_REPORTS.plural}.{SPREAD_REPORTS.group}"


@pytest.mark.parametrize(
    ("resource", "namespace", "api_version", "path"),
    [
        pytest.param(PODS, None, "v1", "/api/v1/pods", id="core, all namespaces"),
        pytest.param(PODS, "shop", "v1", "/api/v1/namespaces/shop/pods", id="core, one namespace"),
        pytest.param(NODES, "shop", "v1", "/api/v1/nodes", id="cluster-scoped: the namespace is ignored"),
        pytest.param(DEPLOYMENTS, None, "apps/v1", "/apis/apps/v1/deployments", id="group, all namespaces"),
        pytest.param(DEPLOYMENTS, "shop", "apps/v1", "/apis/apps/v1/namespaces/shop/deployments", id="group, one"),
        pytest.param(
            SPREAD_REPORTS,
            "shop",
            "spreadwatch.io/v1alpha1",
            "/apis/spreadwatch.io/v1alpha1/namespaces/shop/spreadreports",
            id="the CRD",
        ),
    ],
)
def test_api_version_and_collection_path(resource: ApiResource, namespace: str | None, api_version: str,
                                         path: str) -> None:  # fmt: skip
    assert (resource.api_version, resource.path(namespace)) == (api_version, path)


_CET = dt.timezone(dt.timedelta(hours=1))


@pytest.mark.parametrize(
    ("when", "seconds", "micro"),
    [
        pytest.param(
            dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC),
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.000006Z",
            id="UTC",
        ),
        pytest.param(
            dt.datetime(2026, 1, 1, 0, 30, 0, 250000, tzinfo=_CET),
            "2025-12-31T23:30:00Z",
            "2025-12-31T23:30:00.250000Z",
            id="another zone is converted, across a year",
        ),
    ],
)
def test_timestamps_are_utc_seconds_and_microseconds(when: dt.datetime, seconds: str, micro: str) -> None:
    assert (rfc3339(when), rfc3339_micro(when)) == (seconds, micro)


def test_timestamps_default_to_now() -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    stamp = dt.datetime.strptime(rfc3339_micro(), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
    assert before <= stamp <= dt.datetime.now(dt.UTC)
