"""The CPython floor under issue 13's two absolute decode targets, measured on the same input in the same run.

Issue 13 asks for the cold full computation *including decode* (≤ 0.7 s) and the operator's initial list
decode (≤ 0.5 s) at scale 1.0. These figures are what a Python program on msgspec cannot go below, because
they do far less than spreadwatch must (the floor of any implementation, not a competitor):

* **cold floor** (:func:`cold_floor`): msgspec decodes the compact dump into skeleton Structs (per object only
  name, namespace, raw label bytes; per pod nodeName and phase; per workload its template's raw labels), then
  one loop counts the pods per (namespace, label bytes) group and node, then one loop makes one tuple per
  workload (its group's busiest node count and node count). No selectors, services, owners, taints,
  candidates, scores or reports;
* **list floor** (:func:`list_floor`): the Pod pages of the API listing decoded into the same skeleton
  Structs, nothing else (no records).

Each is timed with the cyclic GC disabled (which only lowers it); medians of ``repeats``. Costs: O(bytes) in
C plus O(objects) in Python.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Union

import msgspec
from bench_results import CpuWall, FloorResult
from measure_util import median

__all__ = ["cold_floor", "list_floor", "measure_floor"]


class _Meta(msgspec.Struct, frozen=True):
    name: str = ""
    namespace: str = ""
    labels: msgspec.Raw = msgspec.Raw(b"")


class _PodSpec(msgspec.Struct, frozen=True):
    nodeName: str = ""


class _PodStatus(msgspec.Struct, frozen=True):
    phase: str = ""


_EMPTY_META = _Meta()
_EMPTY_POD_SPEC = _PodSpec()
_EMPTY_POD_STATUS = _PodStatus()


class _Template(msgspec.Struct, frozen=True):
    metadata: _Meta = _EMPTY_META


class _WorkloadSpec(msgspec.Struct, frozen=True):
    template: _Template = _Template()


_EMPTY_WORKLOAD_SPEC = _WorkloadSpec()


class _Pod(msgspec.Struct, tag="Pod", tag_field="kind"):
    metadata: _Meta = _EMPTY_META
    spec: _PodSpec = _EMPTY_POD_SPEC
    status: _PodStatus = _EMPTY_POD_STATUS


def _tagged(kind: str, *fields: tuple[str, type, Any]) -> type:
    """A Struct of one kind (tagged by ``kind``) with its metadata skeleton and ``fields``."""
    return msgspec.defstruct(kind, [("metadata", _Meta, _EMPTY_META), *fields], tag=kind, tag_field="kind")


_WORKLOADS: Final = frozenset(
    _tagged(kind, ("spec", _WorkloadSpec, _EMPTY_WORKLOAD_SPEC))
    for kind in ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
)
_OTHERS: Final = tuple(_tagged(kind) for kind in ("Node", "Service", "Namespace"))
_Document: Final = msgspec.defstruct("_Document", [("items", list[Union[(_Pod, *_OTHERS, *_WORKLOADS)]], [])])


class _PodPage(msgspec.Struct):
    items: list[_Pod] = []


_document = msgspec.json.Decoder(_Document)
_pod_page = msgspec.json.Decoder(_PodPage)


def _cold_once(data: bytes) -> tuple[float, float, float, int, list[tuple[str, int, int]]]:
    """CPU seconds of (decode, count, per-workload tuples), the pods counted and the answers: per workload
    (name, pods on its busiest node, nodes holding its pods)."""
    c0 = time.process_time()
    items = _document.decode(data).items
    c1 = time.process_time()
    groups: dict[tuple[str, bytes], dict[str, int]] = {}
    workloads: list[Any] = []
    pods = 0
    for item in items:
        kind = type(item)
        if kind is _Pod:
            meta = item.metadata
            key = (meta.namespace, bytes(meta.labels))
            per_node = groups.get(key)
            if per_node is None:
                per_node = groups[key] = {}
            node = item.spec.nodeName
            per_node[node] = per_node.get(node, 0) + 1
            pods += 1
        elif kind in _WORKLOADS:
            workloads.append(item)
    c2 = time.process_time()
    answers: list[tuple[str, int, int]] = []
    for item in workloads:
        meta = item.metadata
        per_node = groups.get((meta.namespace, bytes(item.spec.template.metadata.labels)), {})
        answers.append((meta.name, max(per_node.values(), default=0), len(per_node)))
    c3 = time.process_time()
    return c1 - c0, c2 - c1, c3 - c2, pods, answers


def cold_floor(path: Path, repeats: int) -> tuple[CpuWall, float, float, float, int, int]:
    """The cold floor on the compact dump at ``path``: (CPU and wall, medians), the medians of its three
    parts' CPU seconds (decode, count, per workload), the pods counted and the workloads answered."""
    runs = []
    gc.disable()
    try:
        for _ in range(repeats):
            data = path.read_bytes()  # (read outside the timed parts: the targets start from the file's bytes)
            w0 = time.perf_counter()
            parts = _cold_once(data)
            runs.append((time.perf_counter() - w0, parts))
            del data
    finally:
        gc.enable()
    walls = [w for w, _ in runs]
    decode, count, workloads = ([p[i] for _, p in runs] for i in range(3))
    totals = [sum(p[:3]) for _, p in runs]
    _, (*_, pods, answers) = runs[0]
    return (CpuWall(median(totals), median(walls)), median(decode), median(count), median(workloads), pods,
            len(answers))


def list_floor(pages: Sequence[tuple[str, str, bytes]], repeats: int) -> tuple[CpuWall, int]:
    """The list floor: the Pod pages of ``pages`` ((kind, apiVersion, bytes) as bench/decode_bench.py's
    ``api_pages`` makes them) decoded into skeleton Structs; (CPU and wall, medians) and the pods decoded."""
    pod_pages = [data for kind, _, data in pages if kind == "Pod"]
    cpu, wall, pods = [], [], 0
    gc.disable()
    try:
        for _ in range(repeats):
            c0, w0 = time.process_time(), time.perf_counter()
            decoded: list[Any] = [_pod_page.decode(data).items for data in pod_pages]
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            pods = sum(map(len, decoded))
            del decoded
    finally:
        gc.enable()
    return CpuWall(median(cpu), median(wall)), pods


def measure_floor(compact: Path, pages: Sequence[tuple[str, str, bytes]], repeats: int) -> FloorResult:
    """Both floors (see the module docstring) on the compact dump and the API pages of one scale."""
    cold, decode, count, workloads, pods, answered = cold_floor(compact, repeats)
    listing, listed = list_floor(pages, repeats)
    return FloorResult(
        cold=cold, cold_decode_cpu_s=decode, cold_count_cpu_s=count, cold_workloads_cpu_s=workloads,
        pods=pods, workloads=answered, listing=listing, listed_pods=listed,
    )  # fmt: skip
