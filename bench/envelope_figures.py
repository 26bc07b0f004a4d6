"""What the envelope (bench/envelope.py) measures besides the reports themselves.

* :func:`list_floor` — the floor of the operator's start, in the same run: the bytes of every list the
  operator makes before it is ready, requested as it requests them (the cluster-scoped kinds first, then the
  namespaced ones; the kinds of a phase at once, each kind's pages one after another, pages of
  ``kube.listing.PAGE_SIZE``), read and thrown away. ``ready ÷ floor`` is what the operator adds to what the
  API server needs to hand the cluster over;
* :class:`OperatorView` — the operator's own figures at one instant (``/statusz``: its write counters and its
  last resyncs; ``/metrics``: the write-latency and lag histograms), taken at each churn phase's start and
  end: :func:`phase_figures` makes the phase's writes per second inside and outside its resyncs, the resyncs
  themselves and the write-latency distribution of their difference;
* :func:`apiserver_state` — the API server's resident memory and age when the operator starts (loaded or
  fresh), and :func:`operator_start` — from the operator's log, its own time to list the cluster and the
  instant it turned ready.

Costs: the floor is one more listing of the cluster (at scale 1.0 ~150,000 pods, a few hundred MiB of JSON);
a view is one ``/statusz`` and one scrape.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import statistics
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from spreadwatch.decode import page_continue
from spreadwatch.kube.listing import PAGE_SIZE
from spreadwatch.resources import CLUSTER_RESOURCES, ApiResource

__all__ = [
    "OperatorView",
    "apiserver_state",
    "distribution",
    "list_floor",
    "operator_start",
    "operator_view",
    "phase_figures",
    "scrape_shares",
    "sum_phases",
]

_BUCKET = re.compile(rb'^(?P<name>[a-z_]+)_bucket\{le="(?P<le>[^"]+)"\} (?P<count>[0-9.e+]+)', re.MULTILINE)
#: The operator's histograms the envelope reads: one apply, request to answer; a change to its report's write.
HISTOGRAMS = {"write": b"spreadwatch_report_write_duration_seconds", "lag": b"spreadwatch_report_lag_seconds"}


# ---------------------------------------------------------------------------------------------- the floor


def _list_bytes(api: client.ApiClient, resource: ApiResource, page_size: int) -> tuple[int, int]:
    """(pages, bytes) of one list of ``resource`` in all namespaces, the bytes read and dropped (the continue
    token is read from the page's head as the operator reads it, ``decode.page_continue``; nothing else is
    parsed)."""
    pages = size = 0
    token = ""
    while True:
        query = [("limit", str(page_size))] + ([("continue", token)] if token else [])
        response = api.call_api(resource.path(None), "GET", query_params=query,
                                header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                                _preload_content=False, _return_http_data_only=True,
                                _request_timeout=(10.0, 600.0))  # fmt: skip
        data: bytes = response.data
        pages += 1
        size += len(data)
        token = page_continue(data)
        if not token:
            return pages, size


def list_floor(
    api: client.ApiClient, resources: Sequence[ApiResource] = CLUSTER_RESOURCES, page_size: int = PAGE_SIZE,
    repeats: int = 2,
) -> dict[str, Any]:  # fmt: skip
    """The start's floor (see the module docstring): the fastest of ``repeats`` listings, with each one's
    seconds, and the bytes and pages of every kind."""
    runs: list[float] = []
    kinds: dict[str, dict[str, int]] = {}
    for _ in range(repeats):
        started = time.monotonic()
        for namespaced in (False, True):
            phase = [r for r in resources if r.namespaced is namespaced]
            with ThreadPoolExecutor(len(phase)) as pool:
                for resource, (pages, size) in zip(phase, pool.map(lambda r: _list_bytes(api, r, page_size), phase),
                                                   strict=True):  # fmt: skip
                    kinds[resource.kind] = {"pages": pages, "bytes": size}
        runs.append(round(time.monotonic() - started, 2))
    return {"seconds": min(runs), "runs_s": runs, "page_size": page_size,
            "mib": round(sum(k["bytes"] for k in kinds.values()) / (1 << 20), 1),
            "pages": sum(k["pages"] for k in kinds.values()), "kinds": kinds}  # fmt: skip


def operator_start(log_path: Path, started: float) -> dict[str, float | None]:
    """From the operator's log (JSON lines, as the chart logs): ``listed_s``, its own time from starting the
    informers to every first list applied (``listed the cluster in N s``), and ``ready_s``, the time of that
    line after ``started`` (unix seconds, the process's start): when it turned ready, exactly (the writer is
    ready right after that line; ``/readyz`` is only sampled every second)."""
    pattern = re.compile(r"listed the cluster in ([0-9.]+)s")
    for line in log_path.read_text(errors="replace").splitlines():
        found = pattern.search(line)
        if not found:
            continue
        ready: float | None = None
        try:
            stamp = json.loads(line).get("time", "")
            ready = round(dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC).timestamp()
                          - started, 2)  # fmt: skip
        except (ValueError, AttributeError):
            pass  # a text log: no time on the line
        return {"listed_s": float(found.group(1)), "ready_s": ready}
    return {"listed_s": None, "ready_s": None}


def apiserver_state(pid: int | None, loaded_by: int | None) -> dict[str, Any]:
    """The API server's RSS (MiB), its age (s) and whether the process that loaded the cluster serves it (1 or
    0; None when the load left no record of it: a cluster loaded by an older harness)."""
    if pid is None:
        return {}
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except OSError:
        return {}
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    age = uptime - int(stat[19]) / os.sysconf("SC_CLK_TCK")
    loaded = None if loaded_by is None else int(pid == loaded_by)
    return {"rss_mib": round(rss / 1024, 1), "age_s": round(age, 1), "loaded": loaded}


# --------------------------------------------------------------------------------------- the operator's view


@dataclass(frozen=True)
class OperatorView:
    """The operator's figures at one instant: ``at`` (the harness's monotonic clock) and ``wall`` (unix) when
    taken, its writer counters, its last resyncs (``/statusz``), and cumulative histograms (``/metrics``)."""

    at: float
    wall: float
    writer: Mapping[str, Any]
    resyncs: Sequence[Mapping[str, Any]]
    histograms: Mapping[str, Sequence[tuple[float, float]]]


def operator_view(port: int, scrape: Callable[[], bytes]) -> OperatorView:
    """``/statusz`` on ``port`` and one scrape (``scrape()`` returns the exposition text)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/statusz", timeout=30) as response:
        status = json.loads(response.read())
    body = scrape()
    histograms = {key: _buckets(body, name) for key, name in HISTOGRAMS.items()}
    return OperatorView(time.monotonic(), time.time(), status.get("writer") or {},
                        (status.get("resync") or {}).get("runs") or [], histograms)  # fmt: skip


def _buckets(exposition: bytes, name: bytes) -> list[tuple[float, float]]:
    """(le, cumulative count) of one histogram in a text or OpenMetrics exposition, +Inf last."""
    out = [(float(m["le"]), float(m["count"])) for m in _BUCKET.finditer(exposition) if m["name"] == name]
    return sorted(out)


def distribution(before: Sequence[tuple[float, float]], after: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """The observations between two scrapes of one histogram: count, p50/p90/p99 (linear within a bucket, as
    PromQL's histogram_quantile) and the count per bucket."""
    start = dict(before)
    cumulative = [(le, count - start.get(le, 0.0)) for le, count in after]
    total = cumulative[-1][1] if cumulative else 0.0
    per_bucket, previous = [], 0.0
    for le, count in cumulative:
        per_bucket.append([le if le != float("inf") else "+Inf", int(count - previous)])
        previous = count
    return {"count": int(total), **{f"p{int(q * 100)}_s": _quantile(cumulative, q) for q in (0.5, 0.9, 0.99)},
            "buckets": per_bucket}  # fmt: skip


def _quantile(cumulative: Sequence[tuple[float, float]], q: float) -> float | None:
    total = cumulative[-1][1] if cumulative else 0.0
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for le, count in cumulative:
        if count >= rank:
            if le == float("inf"):
                return lower  # beyond the last finite bound: its bound, as histogram_quantile
            share = (rank - below) / (count - below) if count > below else 1.0
            return round(lower + (le - lower) * share, 4)
        lower, below = le, count
    return lower


def phase_figures(
    before: OperatorView, after: OperatorView, changes: Iterable[tuple[float, float]], churn_s: float
) -> dict[str, Any]:
    """One churn phase, from the views at its start and end and the harness's changes ``(made at, seconds to
    its report)`` (monotonic): report writes per second in all, inside the resyncs that ran wholly within the
    phase (the operator counts the writes answered while each ran) and outside them; the resyncs; the p99 of
    the changes whose wait overlapped a resync and of the others; write latency and lag distributions."""
    seconds = after.at - before.at
    applies = sum(after.writer.get(k, 0) - before.writer.get(k, 0) for k in ("creates", "statusWrites"))
    runs = [r for r in after.resyncs if r["started"] >= before.wall and r["started"] + r["seconds"] <= after.wall]
    resync_s = sum(r["seconds"] for r in runs)
    beside = sum(r["writesBeside"] for r in runs)
    offset = after.wall - after.at  # the harness's monotonic clock → unix time
    windows = [(r["started"] - offset, r["started"] + r["seconds"] - offset) for r in runs]
    overlapping: list[float] = []
    others: list[float] = []
    made_during = made_in_all = 0
    for made, latency in changes:
        hit = any(made <= end and made + latency >= start for start, end in windows)
        (overlapping if hit else others).append(latency)
        made_in_all += 1
        made_during += any(start <= made <= end for start, end in windows)
    per_change = (applies - beside) / (made_in_all - made_during) if made_in_all > made_during else None
    return {
        "seconds": round(seconds, 1),
        "churn_s": round(churn_s, 1),
        "report_writes": applies,
        "report_writes_per_s": round(applies / seconds, 1) if seconds > 0 else None,
        "resyncs": len(runs),
        "resync_s": [round(r["seconds"], 2) for r in runs],
        "resync_pages": sum(r["pages"] for r in runs),
        "resync_bytes": sum(r["bytes"] for r in runs),
        "writes_beside_resyncs": beside,
        **_per_second("writes_per_s", beside, applies, resync_s, seconds),
        "changes_made": made_in_all,
        "changes_made_during_resync": made_during,
        **_per_second("changes_per_s", made_during, made_in_all, resync_s, seconds),
        "writes_per_change_outside_resync": per_change,
        "writes_per_change_ratio": round(beside / (made_during * per_change), 2)
        if made_during and per_change
        else None,
        "changes_overlapping_a_resync": len(overlapping),
        "p99_s_overlapping_a_resync": _p99(overlapping),
        "p99_s_not_overlapping": _p99(others),
        "write_latency": distribution(before.histograms["write"], after.histograms["write"]),
        "lag": distribution(before.histograms["lag"], after.histograms["lag"]),
    }


def _rates(inside: int, total: int, resync_s: float, seconds: float) -> tuple[float | None, float | None]:
    """Per second: ``inside`` of ``total`` counted in the resyncs' ``resync_s`` seconds, and the rest in the
    other ``seconds - resync_s`` (None: no time there)."""
    during = inside / resync_s if resync_s > 0 else None
    outside = (total - inside) / (seconds - resync_s) if seconds > resync_s else None
    return during, outside


def _per_second(name: str, inside: int, total: int, resync_s: float, seconds: float) -> dict[str, float | None]:
    """``<name>_during_resync`` and ``<name>_outside_resync`` (:func:`_rates`), to 0.1."""
    rates = _rates(inside, total, resync_s, seconds)
    during, outside = (round(r, 1) if r is not None else None for r in rates)
    return {f"{name}_during_resync": during, f"{name}_outside_resync": outside}


def _p99(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 3)


def sum_phases(phases: Sequence[Mapping[str, Any]], first: OperatorView, last: OperatorView) -> dict[str, Any]:
    """The churn as a whole (every phase): resyncs inside it, writes per second during them and outside, and
    their ratio; pod changes made per second during and outside them; writes per change (the issue's "writes
    during a resync": unchanged is 1): the writes answered during the resyncs ÷ the writes their phases would
    have made for the changes made meanwhile at each phase's own writes per change outside its resyncs;
    minutes of churn, and the write-latency distribution from the first phase's start to the last one's end."""
    resync_s = sum(sum(p["resync_s"]) for p in phases)
    beside = sum(p["writes_beside_resyncs"] for p in phases)
    seconds = sum(p["seconds"] for p in phases)
    applies = sum(p["report_writes"] for p in phases)
    during, outside = _rates(beside, applies, resync_s, seconds)
    made_during = sum(p["changes_made_during_resync"] for p in phases)
    demand_during, demand_outside = _rates(made_during, sum(p["changes_made"] for p in phases), resync_s, seconds)
    write_ratio = during / outside if during is not None and outside else None
    demand_ratio = demand_during / demand_outside if demand_during is not None and demand_outside else None
    # the writes a resync's changes would have made at their own phase's writes per change outside resyncs (a
    # rollout's change makes few writes, a scattered one many: pooled, the phases' mix would decide the ratio)
    expected = sum(p["changes_made_during_resync"] * p["writes_per_change_outside_resync"] for p in phases
                   if p["writes_per_change_outside_resync"] is not None)  # fmt: skip
    return {
        "resyncs": sum(p["resyncs"] for p in phases),
        "resync_max_s": max((max(p["resync_s"], default=0.0) for p in phases), default=0.0),
        "resync_pages": sum(p["resync_pages"] for p in phases),
        "resync_mib": round(sum(p["resync_bytes"] for p in phases) / (1 << 20), 2),
        "writes_per_s_during": round(during, 1) if during is not None else None,
        "writes_per_s_outside": round(outside, 1) if outside is not None else None,
        "write_rate_ratio": round(write_ratio, 2) if write_ratio is not None else None,
        "changes_per_s_during": round(demand_during, 1) if demand_during is not None else None,
        "changes_per_s_outside": round(demand_outside, 1) if demand_outside is not None else None,
        "change_rate_ratio": round(demand_ratio, 2) if demand_ratio is not None else None,
        "writes_per_change_ratio": round(beside / expected, 2) if expected > 0 else None,
        "churn_minutes": round(sum(p["churn_s"] for p in phases) / 60, 1),
        "write_latency": distribution(first.histograms["write"], last.histograms["write"]),
    }


def scrape_shares(course: Sequence[Sequence[float]]) -> dict[str, Any]:
    """Of the envelope's scrape course (each scrape as [began s, seconds, the operator's CPU seconds meanwhile,
    the machine's busy share meanwhile, and, when recorded, etcd's and the API server's CPU seconds and the
    harness's]): the slowest scrape and the operator's CPU seconds during it (and the others'), and the medians
    of the operator's CPU ÷ a scrape's seconds and of the machine's busy share during a scrape."""
    if not course:
        return {}
    slowest = max(course, key=lambda c: c[1])
    shares = [c[2] / c[1] for c in course if c[1] > 0]
    out = {"scrape_slowest": list(slowest), "scrape_slowest_cpu_s": slowest[2],
           "scrape_cpu_share_p50": round(statistics.median(shares), 2) if shares else None,
           "scrape_machine_busy_p50": round(statistics.median(c[3] for c in course), 2)}  # fmt: skip
    if len(slowest) >= 6:
        out["scrape_slowest_control_plane_cpu_s"], out["scrape_slowest_harness_cpu_s"] = slowest[4], slowest[5]
    return out
