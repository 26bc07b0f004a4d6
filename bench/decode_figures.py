"""Measures of reading a cluster: typed decoding per dump format, ``analyze -o json``, the initial list, floors.

Every function returns ``{figure key: number}`` for bench/run.py. Ratios are of two measurements taken back
to back in one process (CPU time), which a busy machine distorts far less than absolute seconds:

* :func:`decode`: ``load_snapshot`` (msgspec, straight into records) ÷ ``json.load`` of the same file per
  dump format; YAML ÷ JSON on a sample; the cold computation *including* decode; the operator's initial list
  (raw API pages of 500 → records) and the previous way (orjson + ``parse_object``);
* :func:`analyze`: ``spreadwatch analyze -o json`` as a subprocess against ``json.load`` of the same dump in a
  subprocess (its startup excluded), and the command's peak RSS (VmHWM) per dump format;
* :func:`floor`: the CPython floor under the two decode figures: msgspec into skeleton Structs (name,
  namespace, raw label bytes; a pod's node and phase; a workload's template labels), pods counted per label
  group and node, one tuple per workload; and the Pod pages decoded into those Structs only. It does a
  fraction of what the product must, so no implementation on msgspec goes below it on that machine then.

Costs: O(dump size) per decode or command run; the YAML sample is 10,000 objects (libyaml is slow).
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Union

import msgspec
import orjson
import yaml
from bench.inputs import DUMP_FORMATS, cluster
from bench.timing import MIB, children_cpu, median, median_cpu_wall

from spreadwatch.decode import Converter, decode_list_page
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.resources import CLUSTER_RESOURCES
from spreadwatch.scoring import get_profile
from spreadwatch.snapshot import load_snapshot, paused_gc

__all__ = ["analyze", "api_pages", "decode", "floor"]

YAML_SAMPLE = 10_000  # objects in the YAML comparison
PAGE = 500  # items per list page, as the operator asks for
_JSON_LOAD = (
    "import json, sys, time\n"
    "t, c = time.perf_counter(), time.process_time()\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    json.load(f)\n"
    "print(time.perf_counter() - t, time.process_time() - c)\n"
)
_ANALYZE_IN_PROCESS = (
    "import gc, os, sys, time\n"
    "from spreadwatch.cli import main\n"
    "if sys.argv[2] == 'off':\n"
    "    gc.disable()\n"
    "from bench.timing import GCMeter\n"
    "with open(os.devnull, 'w') as sink, GCMeter() as meter:\n"
    "    t = time.perf_counter()\n"
    "    code = main(['analyze', '--cluster', sys.argv[1], '-o', 'json'], out=sink)\n"
    "    seconds = time.perf_counter() - t\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "print(code, int(hwm) * 1024, seconds, meter.seconds)\n"
)


def api_pages(objects: Sequence[dict[str, Any]]) -> list[tuple[str, str, bytes]]:
    """Every object as the API server's list pages of :data:`PAGE` items (items without kind/apiVersion)."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
    pages = []
    for resource in CLUSTER_RESOURCES:
        items = by_kind.get(resource.kind, [])
        for start in range(0, len(items), PAGE):
            more = {"continue": str(start + PAGE)} if start + PAGE < len(items) else {}
            body = {"kind": f"{resource.kind}List", "apiVersion": resource.api_version, "metadata": more}
            pages.append(
                (resource.kind, resource.api_version, orjson.dumps({**body, "items": items[start : start + PAGE]}))
            )
    return pages


def _typed_pages(pages: Sequence[tuple[str, str, bytes]]) -> list[Any]:
    """Pages → records as the operator's initial listing decodes them (``decode_list_page``)."""
    converter = Converter()
    with paused_gc():
        records: list[Any] = []
        for kind, api_version, data in pages:
            items, _ = decode_list_page(data, kind, api_version, converter)
            records.extend(items)
    return records


def _dict_pages(pages: Sequence[tuple[str, str, bytes]]) -> list[Any]:
    """Pages → records the previous way: orjson into dicts, then ``parse_object``."""
    with paused_gc():
        records = []
        for kind, api_version, data in pages:
            for item in orjson.loads(data)["items"]:
                records.append(parse_object({"kind": kind, "apiVersion": api_version, **item}))
    return records


def _json_load(path: Path) -> Any:
    with open(path, "rb") as f:
        return json.load(f)


def decode(*, scale: float, quick: bool = False, profile: str = "v1.28", repeats: int = 3) -> dict[str, Any]:
    """Typed decoding against ``json.load`` per format (the ratio and both CPU seconds), YAML, the cold path
    incl. decode, the initial list."""
    c, prof, repeats = cluster(scale), get_profile(profile), 1 if quick else repeats
    out: dict[str, Any] = {}
    for fmt in DUMP_FORMATS:
        path = c.dump(fmt)
        _, load_cpu = median_cpu_wall(lambda p=path: _json_load(p), repeats)
        typed_wall, typed_cpu = median_cpu_wall(lambda p=path: load_snapshot([p]), repeats)
        out[f"{fmt}_mib"] = path.stat().st_size / MIB
        out[f"{fmt}_load_snapshot_s"] = typed_wall
        out[f"{fmt}_load_snapshot_cpu_s"] = typed_cpu
        out[f"{fmt}_json_load_cpu_s"] = load_cpu
        out[f"{fmt}_over_json_load"] = typed_cpu / load_cpu
    step = max(1, len(c.objects) // YAML_SAMPLE)
    sample = {"apiVersion": "v1", "kind": "List", "items": c.objects[::step]}
    ypath, jpath = c.path("sample.yaml"), c.path("sample.json")
    ypath.write_text(yaml.dump(sample, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    jpath.write_bytes(orjson.dumps(sample))
    _, yaml_cpu = median_cpu_wall(lambda: load_snapshot([ypath]), 1)
    _, json_cpu = median_cpu_wall(lambda: load_snapshot([jpath]), repeats)
    out["yaml_over_json"] = yaml_cpu / json_cpu

    def cold_with_decode() -> int:
        index = SpreadIndex(prof, ReportOptions())
        index.load(load_snapshot([c.dump("compact")]))
        return len(index.reports())

    out["cold_with_decode_s"], out["cold_with_decode_cpu_s"] = median_cpu_wall(cold_with_decode, repeats)
    pages = api_pages(c.objects)
    out["initial_list_s"], out["initial_list_cpu_s"] = median_cpu_wall(lambda: _typed_pages(pages), repeats)
    out["initial_list_dicts_s"], _ = median_cpu_wall(lambda: _dict_pages(pages), 1)
    return out


def _analyze_once(dump: Path, out_path: Path) -> tuple[float, float, float, float, float]:
    """(analyze wall s, its CPU s, json.load wall s, its CPU s, the json.load process's wall s including the
    interpreter's start-up): one pair of subprocesses."""
    gc.collect()
    with open(out_path, "wb") as out:
        c0, t0 = children_cpu(), time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "spreadwatch.cli", "analyze", "--cluster", str(dump), "-o", "json"],
            check=True,
            stdout=out,
        )
        wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", _JSON_LOAD, str(dump)], check=True, capture_output=True, text=True)
    process_wall = time.perf_counter() - t0
    load_wall, load_cpu = (float(x) for x in res.stdout.split())
    return wall, cpu, load_wall, load_cpu, process_wall


def _in_process(dump: Path, gc_on: bool = True) -> tuple[float, float, float]:
    """(peak RSS MiB, seconds, of which cyclic GC s) of ``cli.main(analyze … -o json)`` in a fresh
    interpreter (its start-up and imports excluded from the seconds), GC on or off throughout."""
    argv = [sys.executable, "-c", _ANALYZE_IN_PROCESS, str(dump), "on" if gc_on else "off"]
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    code, hwm, seconds, gc_s = out.stdout.split()
    if code != "0":
        raise RuntimeError(f"analyze exited {code}: {out.stderr.strip()}")
    return int(hwm) / MIB, float(seconds), float(gc_s)


def analyze(*, scale: float, quick: bool = False, repeats: int = 3) -> dict[str, Any]:
    """``analyze --cluster DUMP -o json`` (subprocess, interpreter start included, output to a file) against
    ``json.load`` of the same dump (its own subprocess, startup excluded; the process's wall time too),
    medians, wall and CPU; per format one more run of ``cli.main`` in a fresh interpreter for its peak RSS and
    its time without the start-up (GC on), and on the 2-space dump one with the GC off; the reports written."""
    c = cluster(scale)
    out: dict[str, Any] = {}
    for fmt in DUMP_FORMATS:
        runs = [_analyze_once(c.dump(fmt), c.path("analyze.json")) for _ in range(1 if quick else repeats)]
        wall, cpu, load_wall, load_cpu, load_process = (median([r[i] for r in runs]) for i in range(5))
        out[f"{fmt}_analyze_s"] = wall
        out[f"{fmt}_analyze_cpu_s"] = cpu
        out[f"{fmt}_json_load_s"] = load_wall
        out[f"{fmt}_json_load_cpu_s"] = load_cpu
        out[f"{fmt}_json_load_process_s"] = load_process
        out[f"{fmt}_ratio"] = wall / load_wall
        out[f"{fmt}_cpu_ratio"] = cpu / load_cpu
        out[f"{fmt}_peak_rss_mib"], out[f"{fmt}_main_s"], out[f"{fmt}_main_gc_s"] = _in_process(c.dump(fmt))
    _, out["indent2_main_gc_off_s"], _ = _in_process(c.dump("indent2"), gc_on=False)
    output = c.path("analyze.json")
    out["output_mib"] = output.stat().st_size / MIB
    out["reports"] = len(orjson.loads(output.read_bytes())["reports"])
    return out


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
_OTHERS: Final = tuple(_tagged(kind) for kind in ("Node", "Service", "Namespace", "PodDisruptionBudget"))
_Document: Final = msgspec.defstruct("_Document", [("items", list[Union[(_Pod, *_OTHERS, *_WORKLOADS)]], [])])


class _PodPage(msgspec.Struct):
    items: list[_Pod] = []


_document = msgspec.json.Decoder(_Document)


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


_pod_page = msgspec.json.Decoder(_PodPage)


def floor(*, scale: float, quick: bool = False, repeats: int = 3) -> dict[str, Any]:
    """The CPython floors (module docstring), GC off, medians of ``repeats``: CPU seconds of each floor and of
    the cold floor's three parts (decode, count, per workload), and each floor's wall seconds."""
    c, repeats = cluster(scale), 1 if quick else repeats
    data = c.dump("compact").read_bytes()
    pod_pages = [page for kind, _, page in api_pages(c.objects) if kind == "Pod"]
    cold, cold_wall, listing, listing_wall = [], [], [], []
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            cold.append(_cold_once(data)[:3])
            cold_wall.append(time.perf_counter() - t0)
            c0, t0 = time.process_time(), time.perf_counter()
            decoded = [_pod_page.decode(page).items for page in pod_pages]
            listing.append(time.process_time() - c0)
            listing_wall.append(time.perf_counter() - t0)
            del decoded
    finally:
        gc.enable()
    return {
        "cold_floor_cpu_s": median([sum(r) for r in cold]),
        "cold_floor_decode_cpu_s": median([r[0] for r in cold]),
        "cold_floor_count_cpu_s": median([r[1] for r in cold]),
        "cold_floor_workloads_cpu_s": median([r[2] for r in cold]),
        "cold_floor_s": median(cold_wall),
        "list_floor_cpu_s": median(listing),
        "list_floor_s": median(listing_wall),
    }
