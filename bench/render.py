"""docs/benchmarks.md from bench/figures.toml and the results files in bench/results/ (generated text only).

    python -m bench.render                     # (make bench-render) rewrite the doc from the stored results

The document opens with one table of the headline figures against their targets and their nearest outside
reference, then one section per area (every figure by scale, a baseline column when the run measured one,
series tables), then the runs' environment and the method notes (each measure's ``about``). For each measure
the newest results file that holds it is used, so a partial run (``make bench FIGURES=metrics``) or a soak
replaces only its own figures. Costs: O(figures × scales + series rows).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.spec import FIGURES, RESULTS, ROOT, load_spec, lookup, parse_target

__all__ = ["DOC", "fmt", "latest", "render", "status", "write"]

DOC = ROOT / "docs" / "benchmarks.md"


def fmt(value: Any, unit: str = "") -> str:
    """A figure for a table: 3 significant digits (thousands separated), ``%`` of a fraction, ``–`` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if not isinstance(value, int | float):
        return str(value)
    if unit == "%":
        return f"{value * 100:.3g} %"
    if isinstance(value, int) or (abs(value) >= 100 and float(value).is_integer()):
        text = f"{int(value):,}"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip() if unit not in ("×", "/s") else f"{text} {unit}".replace(" ×", "×")


def status(value: Any, target: str) -> str:
    """``PASS`` or ``**MISS**`` (``–`` without a value) of ``value`` against ``"<= N"`` / ``">= N"``."""
    if not isinstance(value, int | float) or math.isnan(value):
        return "–"
    op, bound = parse_target(target)
    ok = value <= bound if op == "<=" else value >= bound
    return "PASS" if ok else "**MISS**"


def _target_text(target: str, unit: str) -> str:
    op, bound = parse_target(target)
    return f"{'≤' if op == '<=' else '≥'} {fmt(bound, unit)}"


def latest(results_dir: Path = RESULTS) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Per measure id: (its newest entry, the file's whole result) over every ``*.json`` in ``results_dir``
    that bench/run.py wrote (other JSON files there are left alone)."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    loaded = [json.loads(p.read_text()) | {"file": p.name} for p in sorted(results_dir.glob("*.json"))]
    files = [r for r in loaded if isinstance(r.get("run"), dict) and isinstance(r.get("measures"), dict)]
    for result in sorted(files, key=lambda r: r["run"]["date"]):
        for mid, entry in result["measures"].items():
            out[mid] = (entry, result)
    return out


def _value(entry: Mapping[str, Any] | None, scale: str, key: str) -> Any:
    if entry is None:
        return None
    return lookup(entry["results"].get(scale, {}).get("values", {}), key)


def _largest(entry: Mapping[str, Any]) -> str:
    """The largest scale measured without an error (or the largest at all)."""
    ok = [s for s, r in entry["results"].items() if "values" in r] or list(entry["results"])
    return max(ok, key=float)


def _label(figure: Mapping[str, Any]) -> str:
    name: str = figure["name"]
    return f"↳ {name.strip()}" if name.startswith("  ") else name


def _reference(ref: str, spec: Mapping[str, Any], found: Mapping[str, Any], scale: str) -> str:
    mid, _, key = ref.partition(".")
    measure = next((m for m in spec["measure"] if m["id"] == mid), {})
    fig = next((f for f in measure.get("figure", []) if f["key"] == key), {"name": key})
    entry = found.get(mid, (None, None))[0]
    return f"{fig['name'].strip()}: {fmt(_value(entry, scale, key), fig.get('unit', ''))}"


def _headline(spec: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    lines = [
        "| figure | value | CPU time | at scale | target | status (CPU) | nearest outside reference | what it means |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for m in spec["measure"]:
        entry = found.get(m["id"], (None, None))[0]
        for f in (f for f in m.get("figure", []) if f.get("headline")):
            unit, target = f.get("unit", ""), f.get("target")
            goal = _target_text(target, unit) if target else "–"
            if entry is None:
                lines.append(f"| {f['name']} | not measured | | | {goal} | – | | {f.get('meaning', '')} |")
                continue
            scale = _largest(entry)
            value = _value(entry, scale, f["key"])
            cpu = _value(entry, scale, f["cpu"]) if f.get("cpu") else None
            verdict = status(value, target) if target else "–"
            if target and cpu is not None:
                verdict += f" ({status(cpu, target)})"
            envelope = max(m.get("scales") or spec.get("scales") or [1.0])
            if target and float(scale) < envelope:  # the target is the envelope's: not judged here yet
                verdict += f", at {scale} (the target is for {envelope:g})"
            ref = _reference(f["reference"], spec, found, scale) if f.get("reference") else ""
            cells = [f["name"], fmt(value, unit), fmt(cpu, unit) if f.get("cpu") else "", scale, goal, verdict, ref,
                     f.get("meaning", "")]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _area(title: str, measures: Sequence[Mapping[str, Any]], found: Mapping[str, Any]) -> list[str]:
    entries = [(m, found[m["id"]]) for m in measures if m["id"] in found]
    if not entries:
        return [
            f"## {title}",
            "",
            "Not measured yet: `make bench FIGURES=" + ",".join(m["id"] for m in measures) + "`.",
            "",
        ]
    scales = sorted({s for _, (e, _) in entries for s in e["results"]}, key=float)
    baselines = sorted({r["baseline"]["commit"] for _, (_, r) in entries if r.get("baseline")})
    pods = {s: _value(found.get("cluster", (None, None))[0], s, "pods") for s in scales}
    growth = len(scales) > 1 and all(isinstance(p, int | float) and p > 0 for p in pods.values())
    head = ["figure", *(f"scale {s}" for s in scales), *(f"{b} (baseline)" for b in baselines), "target"]
    head += ["k"] if growth else []
    lines = [f"## {title}", "", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    notes: list[str] = []
    for m, (entry, result) in entries:
        base = result.get("baseline", {})
        base_entry = base.get("measures", {}).get(m["id"])
        for f in m.get("figure", []):
            unit = f.get("unit", "")
            row = [_label(f)]
            row += [fmt(_value(entry, s, f["key"]), unit) for s in scales]
            for b in baselines:
                here = base_entry if base.get("commit") == b else None
                row.append(fmt(_value(here, _largest(here), f["key"]), unit) if here else "")
            row.append(_target_text(f["target"], unit) if f.get("target") else "")
            if growth:
                row.append(_exponent(_value(entry, scales[0], f["key"]), _value(entry, scales[-1], f["key"]),
                                     pods[scales[0]], pods[scales[-1]]))  # fmt: skip
            lines.append("| " + " | ".join(row) + " |")
        for s, r in entry["results"].items():
            if "error" in r:
                notes.append(f"* `{m['id']}` at scale {s} failed: {r['error']}")
        if base_entry:
            notes += [f"* baseline {base['commit']}: `{m['id']}` at scale {s} failed: {r['error']}"
                      for s, r in base_entry["results"].items() if "error" in r]  # fmt: skip
    lines += ["", *notes, *([""] if notes else [])]
    if growth:
        lines += [
            f"k: the figure grows as pods^k from scale {scales[0]} to {scales[-1]} (k ≈ 1 linear, ≈ 0 constant).",
            "",
        ]
    for m, (entry, _) in entries:
        if m.get("series"):
            lines += _series(m, entry)
    return lines


def _exponent(small: Any, large: Any, pods_small: float, pods_large: float) -> str:
    """k with large / small = (pods_large / pods_small)^k, 2 decimals; empty when either is not positive."""
    if not all(isinstance(v, int | float) and v > 0 for v in (small, large)) or pods_large == pods_small:
        return ""
    return f"{math.log(large / small) / math.log(pods_large / pods_small):.2f}"


def _series(measure: Mapping[str, Any], entry: Mapping[str, Any]) -> list[str]:
    scale = _largest(entry)
    rows = entry["results"][scale].get("values", {}).get("series") or []
    columns = measure.get("columns") or (list(rows[0]) if rows else [])
    if not rows:
        return []
    lines = [f"**{measure['series']}** (scale {scale})", "", "| " + " | ".join(columns) + " |"]
    lines.append("|" + "---:|" * len(columns))
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return [*lines, ""]


def _load(env: Mapping[str, Any]) -> str:
    """The load average at start → end; ``–`` for one not recorded."""
    start, end = env.get("load_start") or [], env.get("load_end") or []
    return f"{' '.join(f'{x:.2f}' for x in start) or '–'} → {' '.join(f'{x:.2f}' for x in end) or '–'}"


def _runs(found: Mapping[str, Any]) -> list[str]:
    """The table of the results files in use, then a note per file whose run says where its figures come from
    (``source``: figures not measured by bench/run.py, e.g. transcribed from a documented run)."""
    results = {r["file"]: r for _, r in found.values()}
    lines = [
        "| results | date | commit | machine | software | load average start → end | speed probe start → end"
        " | minutes | command |",
        "|---|---|---|---|---|---|---|---:|---|",
    ]
    notes = []
    for name, r in sorted(results.items(), key=lambda kv: kv[1]["run"]["date"]):
        env = r["run"]
        probe = f"{fmt(env.get('probe_start_s'), 's')} → {fmt(env.get('probe_end_s'), 's')}"
        commit = env["commit"] + (" + uncommitted changes" if env.get("uncommitted") else "")
        base = f"; baseline {r['baseline']['commit']}" if r.get("baseline") else ""
        lines.append(f"| bench/results/{name} | {env['date']} | {commit}{base} | {env['machine']} | {env['software']} "
                     f"| {_load(env)} | {probe} | {fmt(env.get('minutes'))} | `{env['command']}` |")  # fmt: skip
        if env.get("source"):
            notes.append(f"* bench/results/{name}: {env['source']}")
    return [*lines, *([""] if notes else []), *notes]


def _method(spec: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Method",
        "",
        "* **Timing.** Every timing is the median of the measure's repeats, wall clock unless marked CPU (process"
        " time: the time the benchmark was on a core, which other processes on a shared machine do not inflate)."
        " A speed probe (CPU seconds of one fixed pure-Python loop; lower is faster) is taken before every"
        " measure; read absolute figures next to it and the load average above.",
        "* **Targets** are judged at the largest scale measured. A baseline column is the same measure, in the"
        " same run, on that commit's `spreadwatch` package (`make bench BASELINE=REV`).",
    ]
    for m in spec["measure"]:
        entry = found.get(m["id"], (None, None))[0]
        params = _portable(entry["params"] if entry else m.get("params", {}))
        text = " ".join(m.get("about", "").split())
        lines.append(f"* **{m['id']}** (`{m['function']}`, {json.dumps(params)}): {text}")
    return lines


def _portable(params: Mapping[str, Any]) -> dict[str, Any]:
    """A run's parameters as the document shows them: an absolute path (where a run kept its files, e.g.
    ``envelope.cluster_dir``) says nothing of what was measured and names one machine's directories: left
    out. O(params)."""
    return {k: v for k, v in params.items() if not (isinstance(v, str) and v.startswith("/"))}


def render(spec: Mapping[str, Any], found: Mapping[str, Any]) -> str:
    """The whole document."""
    areas: dict[str, list[Mapping[str, Any]]] = {}
    for m in spec["measure"]:
        areas.setdefault(m.get("area", "Other"), []).append(m)
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (bench/run.py measures what bench/figures.toml lists; bench/render.py writes"
        " this file from bench/results/). Every number is a measurement; none is written by hand.",
        "",
        "## Headline figures",
        "",
        *_headline(spec, found),
        "",
    ]
    for title, measures in areas.items():
        lines += _area(title, measures, found)
    lines += ["## Runs", "", *_runs(found), "", *_method(spec, found)]
    return "\n".join(lines) + "\n"


def write(doc: Path = DOC, results_dir: Path = RESULTS, figures: Path = FIGURES) -> Path:
    """Render every stored result into ``doc``; returns its path."""
    doc.write_text(render(load_spec(figures), latest(results_dir)))
    return doc


if __name__ == "__main__":
    print(write(), file=sys.stderr)
