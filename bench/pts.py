"""Profile v1.29 (PodTopologySpread) benchmark: the same envelope as SelectorSpread (``make bench-pts``).

On the bench/synth.py cluster of each scale, for profile v1.29 next to v1.28:

* cold full computation: ``SpreadIndex.load`` + ``reports()`` (median of N, GC on);
* incremental pod events: the bench/run.py event stream, each event timed through ``take_dirty`` and the
  dirty reports' rebuild (p50/p99 over the stream, median of N runs);
* a cordon (node event) with every dirty report rebuilt;
* exactness: for a sample of workloads every candidate's score derived from the v1.29 report equals the
  reference scorer's (``score_pod``), else the run fails.

Prints a table and splices it into docs/benchmarks.md between the ``pts-bench`` markers (``--no-write``:
print only). Targets: pod event p99 ≤ 1 ms, cold full computation ≤ 1 s at scale 1.0 (5k nodes, 150k pods).

    .venv/bin/python bench/pts.py --scales 0.1,1.0
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402
import synth  # noqa: E402

from spreadwatch.scoring import get_profile, representative_pod, score_pod, zone_key  # noqa: E402

BEGIN, END = "<!-- pts-bench:begin -->", "<!-- pts-bench:end -->"
P99_TARGET_US, COLD_TARGET_S = 1000.0, 1.0


def check_exact(snapshot: Any, index: Any, sample: int, seed: int = 3) -> int:
    """Compare the index's v1.29 reports with score_pod on ``sample`` workloads; returns how many were checked."""
    profile = index.profile
    nodes = sorted(snapshot.nodes, key=lambda n: n.name)
    zones = {n.name: zone_key(n.labels, profile) for n in nodes}
    workloads = run.workload_keys(snapshot)
    rng = random.Random(seed)
    checked = 0
    for ctrl in rng.sample(workloads, min(sample, len(workloads))):
        report = index.report_for(ctrl.key)
        if report is None or report.health.value == "Error":
            continue
        rs = snapshot.controllers_in("ReplicaSet", ctrl.namespace) if ctrl.kind == "Deployment" else ()
        pod, _ = representative_pod(ctrl, rs)
        expected = score_pod(pod, nodes, snapshot.pods, index, profile)
        derived = {n: report.score_of(n, zones[n]) for n in expected.scores}
        if derived != dict(expected.scores):
            raise SystemExit(f"v1.29 report of {ctrl.kind}/{ctrl.namespace}/{ctrl.name} differs from score_pod")
        checked += 1
    return checked


def measure(scale: float, repeats: int, events: int, sample: int) -> dict[str, Any]:
    objects = synth.generate(scale, 1)
    snapshot = run.build_snapshot(objects)
    del objects
    stream = run.make_event_stream(snapshot, events)
    out: dict[str, Any] = {"scale": scale, "nodes": len(snapshot.nodes), "pods": len(snapshot.pods)}
    for name in ("v1.28", "v1.29"):
        profile = get_profile(name)
        cold = run.measure_cold(snapshot, profile, repeats, what_if=False)
        inc = run.measure_incremental(snapshot, profile, stream, repeats, what_if=False)
        node = run.measure_node_event(snapshot, profile)
        out[name] = {
            "cold_s": cold["total_s"],
            "cold_cpu_s": cold["cpu_s"],
            "reports": cold["reports"],
            "p50_us": inc["p50_us"],
            "p99_us": inc["p99_us"],
            "cpu_p99_us": inc["cpu_p99_us"],
            "events_per_s": inc["events_per_s"],
            "cordon_s": node["cordon_s"],
            "cordon_dirty": node["dirty"],
        }
        run.log(f"scale {scale} {name}: {out[name]}")
    index = run.fresh_index(snapshot, get_profile("v1.29"))
    out["checked"] = check_exact(snapshot, index, sample)
    return out


def render(results: Sequence[dict[str, Any]], repeats: int, events: int) -> str:
    lines = [
        BEGIN,
        "## PodTopologySpread (profile v1.29)",
        "",
        f"`make bench-pts` ({dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load {run.loadavg()}, Python {platform.python_version()}): the bench/synth.py "
        f"cluster, median of {repeats} runs, a stream of {events} pod events. v1.28 is measured alongside on the "
        "same cluster. Targets: pod event p99 ≤ 1 ms and cold full computation ≤ 1 s at scale 1.0. CPU columns "
        "(process time) are less sensitive to a busy machine than the wall-clock ones; compare v1.29 with v1.28 "
        "of the same run.",
        "",
        "| scale | nodes | pods | profile | cold full computation (CPU) | pod event p50 | pod event p99 (CPU) "
        "| events/s | cordon (dirty reports) | exact (sampled workloads) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for name in ("v1.28", "v1.29"):
            m = r[name]
            verdict = ""
            if name == "v1.29" and r["scale"] >= 1.0:
                ok = m["p99_us"] <= P99_TARGET_US and m["cold_s"] <= COLD_TARGET_S
                verdict = " **PASS**" if ok else " **MISS**"
            lines.append(
                f"| {r['scale']} | {r['nodes']} | {r['pods']} | {name}{verdict} | {m['cold_s']:.3f} s "
                f"({m['cold_cpu_s']:.3f} s) | {m['p50_us']:.0f} µs | {m['p99_us']:.0f} µs ({m['cpu_p99_us']:.0f} µs) "
                f"| {m['events_per_s']:,.0f} "
                f"| {m['cordon_s'] * 1e3:.1f} ms ({m['cordon_dirty']}) "
                f"| {r['checked'] if name == 'v1.29' else ''} |"
            )
    lines.append(END)
    return "\n".join(lines) + "\n"


def splice(text: str, doc: Path) -> None:
    old = doc.read_text() if doc.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + text.rstrip("\n") + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    doc.write_text(new)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", default="0.1,1.0")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--sample", type=int, default=30, help="workloads checked against score_pod per scale")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    started = time.perf_counter()
    results = [measure(float(s), args.repeats, args.events, args.sample) for s in args.scales.split(",")]
    text = render(results, args.repeats, args.events)
    print(text)
    if not args.no_write:
        splice(text, ROOT / "docs" / "benchmarks.md")
    run.log(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
