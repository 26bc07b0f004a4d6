"""Decoding figures of ``make bench`` (issue 13): typed JSON decoding against ``json.load``, per dump format.

Called by bench/run.py once per scale (:func:`measure_decode`, a :class:`DecodeResult`; rendered by
bench/render_figures.py); every figure is also given in CPU time of one
process, and as ratios of two measurements taken back to back in that process, which a loaded machine
distorts far less than wall-clock seconds:

* ``load_snapshot`` (msgspec, straight into records) ÷ ``json.load`` of the same file, for the compact dump,
  the 2-space one (bench/synth.py's) and kubectl's 4-space one; the reference path (orjson + parse_object)
  of the compact dump for comparison;
* YAML: ``load_snapshot`` of a sample of the objects as YAML vs the same sample as compact JSON;
* cold full computation including decode: ``load_snapshot`` of the compact dump + index load + all reports;
* the operator's initial listing: every object as the API server's list pages of 500 (items without kind
  and apiVersion), decoded into records (``kube``'s ``decode_page``) vs orjson + ``parse_object``;
* peak RSS (VmHWM) of ``spreadwatch analyze -o json`` as a fresh process, per dump format.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml
from bench_results import AnalyzeResult, DecodeResult, FormatDecode, InitialList, YamlDecode
from measure_util import median_cpu_wall

from spreadwatch.decode import Converter, Unparsed, decode_page
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object
from spreadwatch.report import ReportOptions
from spreadwatch.resources import CLUSTER_RESOURCES
from spreadwatch.scoring import Profile
from spreadwatch.snapshot import Snapshot, load_snapshot, paused_gc, read_documents

__all__ = ["api_pages", "dict_pages", "measure_decode", "typed_pages", "write_variants"]

YAML_SAMPLE = 10_000  # objects in the YAML comparison (libyaml takes minutes for a whole scale-1.0 dump)
PAGE = 500  # items per list page, as the operator asks for

_ANALYZE_RSS = (
    "import os, sys\n"
    "from spreadwatch.cli import main\n"
    "with open(os.devnull, 'w') as sink:\n"
    "    code = main(['analyze', '--cluster', sys.argv[1], '-o', 'json'], out=sink)\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "print(code, int(hwm) * 1024)\n"
)


def _json_load(path: Path) -> Any:
    with open(path, "rb") as f:
        return json.load(f)


def _reference(path: Path) -> Snapshot:
    with paused_gc():
        return Snapshot.from_objects(read_documents([path]))


def _reindent4(data: bytes) -> bytes:
    """orjson's 2-space indentation turned into kubectl's 4 spaces (same document)."""
    return re.sub(rb"\n( +)", lambda m: b"\n" + m.group(1) * 2, data)


def write_variants(objects: Sequence[dict[str, Any]], workdir: Path, scale: float) -> dict[str, Path]:
    """The dump as compact and 4-space-indented JSON, and a YAML sample (with its JSON twin)."""
    envelope = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objects}
    paths = {"compact": workdir / f"cluster-{scale}-compact.json", "indent4": workdir / f"cluster-{scale}-4.json"}
    paths["compact"].write_bytes(orjson.dumps(envelope))
    paths["indent4"].write_bytes(_reindent4(orjson.dumps(envelope, option=orjson.OPT_INDENT_2)))
    step = max(1, len(objects) // YAML_SAMPLE)
    sample = {**envelope, "items": list(objects[::step])}
    paths["yaml_sample"] = workdir / f"cluster-{scale}-sample.yaml"
    paths["yaml_sample"].write_text(yaml.dump(sample, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    paths["json_sample"] = workdir / f"cluster-{scale}-sample.json"
    paths["json_sample"].write_bytes(orjson.dumps(sample))
    return paths


def api_pages(objects: Sequence[dict[str, Any]]) -> list[tuple[str, str, bytes]]:
    """Every object as the API server's list pages: (kind, apiVersion, page bytes), items without kind."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append({k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
    pages = []
    for resource in CLUSTER_RESOURCES:
        items = by_kind.get(resource.kind, [])
        for start in range(0, len(items), PAGE):
            more = {"continue": str(start + PAGE)} if start + PAGE < len(items) else {}
            body: dict[str, Any] = {"kind": f"{resource.kind}List", "apiVersion": resource.api_version}
            body["metadata"] = more
            body["items"] = items[start : start + PAGE]
            pages.append((resource.kind, resource.api_version, orjson.dumps(body)))
    return pages


def typed_pages(pages: Sequence[tuple[str, str, bytes]]) -> list[Any]:
    """Records of all pages, typed (what the operator's initial listing does)."""
    converter = Converter()
    with paused_gc():
        records: list[Any] = []
        for kind, api_version, data in pages:
            items, _ = decode_page(data, kind, api_version, converter)
            if Unparsed in set(map(type, items)):  # (one C pass to tell; none in a well-formed listing)
                items = [parse_object(i.value) if isinstance(i, Unparsed) else i for i in items]
            records.extend(items)
    return records


def dict_pages(pages: Sequence[tuple[str, str, bytes]]) -> list[Any]:
    """The same pages the previous way: orjson into dicts, kind filled in, ``parse_object``."""
    with paused_gc():
        records = []
        for kind, api_version, data in pages:
            for item in orjson.loads(data)["items"]:
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", api_version)
                records.append(parse_object(item))
    return records


def _cold_with_decode(path: Path, profile: Profile) -> int:
    snapshot = load_snapshot([path])
    index = SpreadIndex(profile, ReportOptions())
    index.load(snapshot)
    return len(index.reports())


def _analyze_rss(path: Path) -> int:
    out = subprocess.run([sys.executable, "-c", _ANALYZE_RSS, str(path)], check=True, capture_output=True, text=True)
    code, hwm = out.stdout.split()
    if code != "0":
        raise RuntimeError(f"analyze exited {code}: {out.stderr.strip()}")
    return int(hwm)


def _format(path: Path, repeats: int) -> FormatDecode:
    load = median_cpu_wall(lambda: _json_load(path), repeats)
    typed = median_cpu_wall(lambda: load_snapshot([path]), repeats)
    return FormatDecode(json_load=load, typed=typed, cpu_ratio=typed.cpu_s / load.cpu_s)


def _yaml(objects: Sequence[dict[str, Any]], paths: dict[str, Path], repeats: int) -> YamlDecode:
    yaml_s = median_cpu_wall(lambda: load_snapshot([paths["yaml_sample"]]), 1)
    json_s = median_cpu_wall(lambda: load_snapshot([paths["json_sample"]]), repeats)
    return YamlDecode(
        objects=len(objects[:: max(1, len(objects) // YAML_SAMPLE)]),
        yaml=yaml_s,
        json_typed=json_s,
        yaml_over_json=yaml_s.cpu_s / json_s.cpu_s,
    )


def _initial_list(objects: Sequence[dict[str, Any]], repeats: int) -> InitialList:
    pages = api_pages(objects)
    return InitialList(
        pages=len(pages),
        pods=sum(1 for o in objects if o["kind"] == "Pod"),
        typed=median_cpu_wall(lambda: typed_pages(pages), repeats),
        orjson_parse_object=median_cpu_wall(lambda: dict_pages(pages), 1),
    )


def measure_decode(
    objects: Sequence[dict[str, Any]],
    dump2: Path,
    workdir: Path,
    scale: float,
    profile: Profile,
    repeats: int,
    analyze: Callable[[Path], AnalyzeResult],
) -> DecodeResult:
    """Every figure of the module docstring at one scale (``dump2``: bench/synth.py's 2-space dump;
    ``analyze(path)``: the ``analyze -o json`` subprocess vs ``json.load`` measurement). The variants written
    into ``workdir`` are removed before returning."""
    paths = write_variants(objects, workdir, scale)
    paths["indent2"] = dump2
    sizes = {k: p.stat().st_size / 2**20 for k, p in paths.items()}
    formats = {fmt: _format(paths[fmt], repeats) for fmt in ("compact", "indent2", "indent4")}
    reference = median_cpu_wall(lambda: _reference(paths["compact"]), 1)
    result = DecodeResult(
        sizes_mib=sizes,
        formats=formats,
        reference=reference,
        reference_cpu_ratio=reference.cpu_s / formats["compact"].json_load.cpu_s,
        yaml_sample=_yaml(objects, paths, repeats),
        cold_with_decode=median_cpu_wall(lambda: _cold_with_decode(paths["compact"], profile), repeats),
        initial_list=_initial_list(objects, repeats),
        analyze_compact=analyze(paths["compact"]),
        analyze_indent4=analyze(paths["indent4"]),
        analyze_rss_mib={fmt: _analyze_rss(paths[fmt]) / 2**20 for fmt in ("compact", "indent2", "indent4")},
    )
    for key in ("compact", "indent4", "yaml_sample", "json_sample"):
        paths[key].unlink()
    return result
