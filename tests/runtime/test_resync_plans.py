"""The resync's listing and comparison (runtime/writing/resync.py, kube/reports.py): what a listing of SpreadReports
makes the writer keep, forget, delete and check, as tables; and the metadata-only listing's requests."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from spreadwatch.kube.listing import PAGE_SIZE
from spreadwatch.kube.reports import ReportClient
from spreadwatch.model import WorkloadKey
from spreadwatch.runtime.writing.resync import ResyncPlan, ResyncRun, ResyncStats, adopt_plan, compare_plan
from spreadwatch.runtime.writing.store import DIGEST_ANNOTATION, StoredReport, stored_report


def key(name: str) -> WorkloadKey:
    return WorkloadKey("shop", "Deployment", name)


def rec(name: str, digest: bytes = b"d1", owner: str = "", report: str = "", condition: Any = None) -> StoredReport:
    """``name``'s report record: canonical name, owner uid ``uid-<name>`` unless given."""
    return StoredReport(key(name), report or f"deployment-{name}", digest, condition, owner_uid=owner or f"uid-{name}",
                        uid=f"r-{name}", resource_version="1")  # fmt: skip


_MINE = {"web": rec("web", condition={"type": "Balanced"}), "api": rec("api"), "db": rec("db")}
_LIVE = {key(n) for n in ("web", "api", "db", "new")}


def _plan(
    listed: list[StoredReport], touched: tuple[str, ...] = (), out_of_scope: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    plan = compare_plan(listed, {key(n): r for n, r in _MINE.items()}, _LIVE,
                        lambda k: k.name not in out_of_scope, {key(n) for n in touched})  # fmt: skip
    return _names(plan)


def _names(plan: ResyncPlan) -> dict[str, list[str]]:
    return {
        "keep": sorted(r.workload.name for r in plan.keep),
        "forget": sorted(k.name for k in plan.forget),
        "orphans": sorted(r.name for r in plan.orphans),
        "stale": sorted(k.name for k in plan.stale),
    }


_NOTHING: dict[str, list[str]] = {"keep": [], "forget": [], "orphans": [], "stale": []}
_ALL_MINE = [rec("web"), rec("api"), rec("db")]


@pytest.mark.parametrize(
    ("listed", "touched", "out_of_scope", "expected"),
    [
        pytest.param(_ALL_MINE, (), (), {**_NOTHING, "stale": ["new"]},
                     id="all as written: only the workload without a report is checked"),
        pytest.param([rec("web", b"d2"), rec("api"), rec("db")], (), (), {**_NOTHING, "keep": ["web"],
                     "stale": ["new", "web"]}, id="another digest: checked, its listed digest kept"),
        pytest.param([rec("web", owner="uid-old"), rec("api"), rec("db")], (), (),
                     {**_NOTHING, "keep": ["web"], "stale": ["new", "web"]}, id="another owner: checked"),
        pytest.param([*_ALL_MINE, rec("new")], (), (), {**_NOTHING, "keep": ["new"], "stale": ["new"]},
                     id="a report this replica did not know: kept, checked"),
        pytest.param([rec("web"), rec("api")], (), (), {**_NOTHING, "forget": ["db"], "stale": ["db", "new"]},
                     id="db's report deleted behind the operator's back: forgotten, checked"),
        pytest.param([*_ALL_MINE, rec("gone")], (), (), {**_NOTHING, "orphans": ["deployment-gone"],
                     "stale": ["new"]}, id="the report of a workload that is gone: an orphan"),
        pytest.param([*_ALL_MINE, rec("web", report="web-old")], (), (), {**_NOTHING, "orphans": ["web-old"],
                     "stale": ["new"]}, id="a misnamed report of a live workload: an orphan"),
        pytest.param(_ALL_MINE, (), ("api", "new"), {**_NOTHING, "forget": ["api"], "orphans": ["deployment-api"]},
                     id="out of scope: its report an orphan (and forgotten), nothing checked"),
        pytest.param([rec("web", b"old"), rec("api")], ("web", "db"), (), {**_NOTHING, "stale": ["new"]},
                     id="written (web) and deleted (db) since the listing began: left to this replica's record"),
        pytest.param([rec("web", b"old"), rec("api"), rec("db")], ("new",), (), {**_NOTHING, "keep": ["web"],
                     "stale": ["web"]}, id="a report created since the listing began: not checked again"),
        pytest.param([], (), (), {**_NOTHING, "forget": ["api", "db", "web"], "stale": ["api", "db", "new", "web"]},
                     id="an empty listing: everything forgotten and checked"),
    ],
)  # fmt: skip
def test_a_later_resync_compares_the_metadata_with_this_replicas_record(
    listed: list[StoredReport], touched: tuple[str, ...], out_of_scope: tuple[str, ...],
    expected: dict[str, list[str]],
) -> None:  # fmt: skip
    assert _plan(listed, touched, out_of_scope) == expected


def test_a_differing_report_keeps_this_replicas_condition_with_the_listed_digest_and_owner() -> None:
    listed = replace(rec("web", b"d2", owner="uid-old"), uid="r-other", resource_version="9")
    plan = compare_plan([listed], {key("web"): _MINE["web"]}, {key("web")}, lambda _: True)
    assert plan.keep == (replace(_MINE["web"], digest=b"d2", owner_uid="uid-old", uid="r-other",
                                 resource_version="9"),)  # fmt: skip
    assert plan.keep[0].condition == {"type": "Balanced"}  # (its lastTransitionTime survives the rewrite)


@pytest.mark.parametrize(
    ("listed", "out_of_scope", "touched", "expected"),
    [
        pytest.param(_ALL_MINE, (), (),
                     {**_NOTHING, "keep": ["api", "db", "web"], "stale": ["api", "db", "new", "web"]},
                     id="adopted; every live workload checked"),
        pytest.param([*_ALL_MINE, rec("gone"), rec("web", report="web-old")], ("db",), (),
                     {**_NOTHING, "keep": ["api", "web"], "orphans": ["deployment-db", "deployment-gone", "web-old"],
                      "stale": ["api", "db", "new", "web"]}, id="gone, misnamed, out of scope: orphans"),
        pytest.param([*_ALL_MINE, rec("gone")], (), ("web", "new", "gone"),
                     {**_NOTHING, "keep": ["api", "db"], "orphans": ["deployment-gone"], "stale": ["api", "db"]},
                     id="written, created or read meanwhile: left to this replica's record, not checked"),
    ],
)  # fmt: skip
def test_the_first_resync_adopts_the_listing_and_checks_every_workload(
    listed: list[StoredReport], out_of_scope: tuple[str, ...], touched: tuple[str, ...],
    expected: dict[str, list[str]],
) -> None:  # fmt: skip
    plan = adopt_plan(listed, _LIVE, lambda k: k.name not in out_of_scope, {key(n) for n in touched})
    assert _names(plan) == expected


def test_a_metadata_item_is_a_record_with_digest_and_owner() -> None:
    """A PartialObjectMetadata item (no spec, no status) names its workload by the report's name and its owner
    by the ownerReference: all a later resync compares."""
    meta = {"namespace": "shop", "name": "statefulset-db", "uid": "r1", "resourceVersion": "7",
            "annotations": {DIGEST_ANNOTATION: "ab01"}, "ownerReferences": [{"uid": "uid-db"}]}  # fmt: skip
    item = {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": meta}
    got = stored_report(item)
    assert got is not None
    assert (got.workload, got.name, got.digest, got.owner_uid, got.uid, got.resource_version) == (
        WorkloadKey("shop", "StatefulSet", "db"), "statefulset-db", b"\xab\x01", "uid-db", "r1", "7")  # fmt: skip
    assert (got.condition, got.health, got.placement) == (None, "", None)  # not in the metadata


def test_the_metadata_listing_asks_for_partial_objects_in_pages_of_500_and_counts_them() -> None:
    total = PAGE_SIZE + 3
    requests: list[dict[str, Any]] = []
    sizes: list[int] = []

    def call_api(path: str, method: str, query_params: list[tuple[str, str]], header_params: dict[str, str],
                 **_: Any) -> SimpleNamespace:  # fmt: skip
        query = dict(query_params)
        requests.append({"path": path, "accept": header_params["Accept"], **query})
        start = int(query.get("continue", "0"))
        end = min(total, start + int(query["limit"]))
        items = [{"metadata": {"namespace": "shop", "name": f"deployment-w{i}", "managedFields": [{"x": 1}],
                               "ownerReferences": [{"uid": f"u{i}"}]}} for i in range(start, end)]  # fmt: skip
        data = orjson.dumps({"metadata": {"continue": str(end) if end < total else ""}, "items": items})
        sizes.append(len(data))
        return SimpleNamespace(data=data)

    pages: list[int] = []
    client = ReportClient(SimpleNamespace(call_api=call_api))  # type: ignore[arg-type]
    kept = asyncio.run(client.list_reports((), stored_report, metadata_only=True, on_page=pages.append))
    assert [r.owner_uid for r in kept if r is not None] == [f"u{i}" for i in range(total)]
    assert pages == sizes and len(pages) == 2  # every page's bytes, as read
    assert [r["limit"] for r in requests] == [str(PAGE_SIZE)] * 2
    assert all(r["accept"].startswith("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
               for r in requests)  # fmt: skip
    assert {r["labelSelector"] for r in requests} == {"app.kubernetes.io/managed-by=spreadwatch"}
    assert {r["path"] for r in requests} == {"/apis/spreadwatch.io/v1alpha1/spreadreports"}


def test_resync_stats_add_up_every_run() -> None:
    stats = ResyncStats()
    for seconds, pages in ((0.5, 2), (2.0, 3)):
        stats.record(ResyncRun(1.7e9, seconds, "metadata", pages, 1000 * pages, 10, 0, 1, 4))
    assert (stats.pages, stats.bytes, stats.duration.count) == (5, 5000, 2)
    assert [r.as_dict()["writesBeside"] for r in stats.runs] == [4, 4]
