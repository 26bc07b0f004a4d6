"""spreadwatch benchmarks (``make bench``): every figure of docs/benchmarks.md, at several scales.

    .venv/bin/python bench/run.py                     # scales 0.1,0.3,1.0; writes docs/benchmarks.md
    .venv/bin/python bench/run.py --scales 0.1        # one scale
    .venv/bin/python bench/run.py --quick             # smoke run at scale 0.005, prints only
    .venv/bin/python bench/run.py --metrics-only --scales 0.1,1.0   # only the "Metrics" block, spliced in

This module is the run: which measurement, in which order, at which scale, and the files written. Per scale,
on one synthetic cluster (bench/synth.py), the measuring modules return typed results (bench_results.py):

* measure_cold.py: cold full computation, a node event, parsing;
* measure_memory.py: index memory, in a fresh interpreter;
* measure_events.py: incremental pod events (p50/p99, events/s);
* measure_baselines.py: the naive seed algorithm and the real kube-scheduler v1.28 plugin (tests/oracle);
* baseline_events.py: issue 13's no-regression baseline, the older code's event stream in the same run;
* measure_floor.py: the CPython floor under issue 13's decode targets (skeleton decoding, same input);
* decode_bench.py and measure_analyze.py: typed decoding per dump format (issue 13), ``analyze -o json`` vs
  ``json.load``, its peak RSS, the operator's initial list;
* measure_metrics.py: series per ``--node-metrics`` mode and the scrape cost;
* measure_pts.py: profile v1.29 (PodTopologySpread) next to v1.28 (issue 14);
* measure_profiles.py: cProfile hotspots of missed targets, at the largest scale.

The rendering modules (render_*.py) turn those into the document; bench_env.py records date, machine and
load. Results are also written as JSON to bench-results/ (git-ignored).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_env  # noqa: E402
import decode_bench  # noqa: E402
import naive  # noqa: E402
import synth  # noqa: E402
from baseline_events import BASELINE_COMMIT, measure_baseline  # noqa: E402
from bench_results import (  # noqa: E402
    Hotspots,
    MetricsResult,
    NaiveResult,
    OracleResult,
    ProfileComparison,
    RunInfo,
    ScaleResult,
    as_json,
)
from doc_blocks import METRICS_BLOCK, keep_blocks, splice_block  # noqa: E402
from measure_analyze import analyze_phases, measure_analyze  # noqa: E402
from measure_baselines import measure_naive, measure_oracle, oracle_binary  # noqa: E402
from measure_cold import fresh_index, measure_cold, measure_node_event, measure_parse  # noqa: E402
from measure_events import Event, make_event_stream, measure_incremental  # noqa: E402
from measure_floor import measure_floor  # noqa: E402
from measure_memory import child_sample, measure_rss  # noqa: E402
from measure_metrics import measure_metrics  # noqa: E402
from measure_profiles import profiles  # noqa: E402
from measure_pts import COMPARED_PROFILES, ExactnessError, exactness, figures_from, profile_figures  # noqa: E402
from measure_util import log  # noqa: E402
from render_doc import render  # noqa: E402
from render_sections import metrics_section  # noqa: E402

from spreadwatch.scoring import DEFAULT_PROFILE, get_profile  # noqa: E402
from spreadwatch.snapshot import Snapshot, paused_gc  # noqa: E402

__all__ = ["Config", "ScaleInputs", "bench_scale", "main"]

DOC = bench_env.ROOT / "docs" / "benchmarks.md"
RESULTS_DIR = bench_env.ROOT / "bench-results"


@dataclasses.dataclass(frozen=True)
class Config:
    """What one run measures (from the command line)."""

    scales: list[float]
    seed: int = 1
    profile: str = DEFAULT_PROFILE
    repeats: int = 3
    events: int = 20000
    naive_sample: int = 100
    naive_full_max_workloads: int = 1000
    oracle: bool = True
    oracle_chunk_budget: int = 2_000_000  # candidate-node results per oracle request (bounds its output)
    oracle_sample: int | None = None
    rss: bool = True
    analyze: bool = True
    profile_misses: bool = True
    quick: bool = False
    metrics: bool = True
    exact_sample: int = 30  # v1.29 workloads checked against score_pod per scale
    baseline: str | None = BASELINE_COMMIT  # issue 13's no-regression: this commit's event stream, largest scale


@dataclasses.dataclass
class ScaleInputs:
    """One scale's inputs while it is measured (dropped afterwards, except what profiling needs)."""

    scale: float
    objects: list[dict[str, Any]]
    snapshot: Snapshot
    stream: list[Event]
    dump: Path | None = None


def _baselines(cfg: Config, s: ScaleInputs, binary: str | None) -> tuple[NaiveResult, OracleResult | None, str | None]:
    """The naive seed algorithm and the Go plugin (or why the plugin could not run)."""
    profile = get_profile(cfg.profile)
    index = fresh_index(s.snapshot, profile)
    log(f"scale {s.scale}: naive seed algorithm")
    workloads = len(naive.workloads_of(s.snapshot))
    sample = workloads if workloads <= cfg.naive_full_max_workloads and not cfg.quick else cfg.naive_sample
    naive_result = measure_naive(s.snapshot, profile, index, sample, 1 if sample > cfg.naive_sample else cfg.repeats)
    if not cfg.oracle or binary is None:
        return naive_result, None, None
    chunk = max(10, min(1000, cfg.oracle_chunk_budget // max(1, len(s.snapshot.nodes))))
    log(f"scale {s.scale}: Go oracle (chunks of {chunk})")
    try:
        oracle = measure_oracle(s.objects, s.snapshot, profile, index, binary, cfg.oracle_sample, chunk)
    except Exception as err:
        log(f"oracle failed: {err}")
        return naive_result, None, str(err)
    return naive_result, oracle, None


def _dump_figures(cfg: Config, s: ScaleInputs, res: ScaleResult, workdir: Path) -> None:
    """Typed decoding, analyze -o json vs json.load and its phases (issue 13); frees the objects."""
    s.dump = workdir / f"cluster-{s.scale}.json"
    res.dump_mib = synth.write_dump(s.objects, s.dump) / 2**20
    log(f"scale {s.scale}: the CPython floor under issue 13's decode targets x{cfg.repeats}")
    compact = workdir / f"floor-{s.scale}.json"
    compact.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": s.objects}))
    res.floor = measure_floor(compact, decode_bench.api_pages(s.objects), cfg.repeats)
    compact.unlink()
    log(f"scale {s.scale}: typed decoding (compact / 2- / 4-space JSON, YAML sample, API pages) x{cfg.repeats}")
    res.decode = decode_bench.measure_decode(
        s.objects, s.dump, workdir, s.scale, get_profile(cfg.profile), cfg.repeats,
        lambda p: measure_analyze(p, cfg.repeats, workdir),
    )  # fmt: skip
    s.objects = []
    gc.collect()
    log(f"scale {s.scale}: analyze -o json vs json.load x{cfg.repeats}")
    res.analyze = measure_analyze(s.dump, cfg.repeats, workdir)
    res.analyze_phases = analyze_phases(s.dump, get_profile(cfg.profile))


def _comparison(cfg: Config, s: ScaleInputs, res: ScaleResult) -> ProfileComparison:
    """v1.28 and v1.29 side by side: the run's own profile from its figures, the other measured here."""
    figures = []
    for name in COMPARED_PROFILES:
        if name == cfg.profile:
            checked = exactness(s.snapshot, name, cfg.exact_sample)
            figures.append(figures_from(name, res.cold, res.incremental, res.node_event, checked))
        else:
            log(f"scale {s.scale}: profile {name}: cold, {len(s.stream)} pod events, cordon x{cfg.repeats}")
            figures.append(profile_figures(s.snapshot, name, s.stream, cfg.repeats, cfg.exact_sample))
    return ProfileComparison(res.scale, res.objects.get("Node", 0), res.pods, figures)


def bench_scale(
    cfg: Config, scale: float, workdir: Path, binary: str | None, probes: list[tuple[str, float]] | None = None
) -> tuple[ScaleResult, ScaleInputs]:
    """Every figure at one scale (and the inputs profiling reuses); ``probes``, when given, gets the
    machine's speed (``bench_env.speed_probe``) before the cold computation and before the decoding figures."""
    probes = [] if probes is None else probes
    profile = get_profile(cfg.profile)
    log(f"scale {scale}: generating")
    t0 = time.perf_counter()
    objects = synth.generate(scale, cfg.seed)
    generate_s = time.perf_counter() - t0
    kinds = dict(Counter(o["kind"] for o in objects))
    parse = measure_parse(objects)
    snapshot = Snapshot.from_objects(objects)
    probes.append((f"scale {scale}: before the cold computation", bench_env.speed_probe()))
    log(f"scale {scale}: cold full computation x{cfg.repeats}")
    cold = measure_cold(snapshot, profile, cfg.repeats)
    memory = None
    if cfg.rss:
        log(f"scale {scale}: memory (fresh subprocess) x{min(cfg.repeats, 2)}")
        memory = measure_rss(scale, cfg.seed, cfg.profile, max(1, min(cfg.repeats, 2)))
    log(f"scale {scale}: node event (cordon)")
    node_event = measure_node_event(snapshot, profile)
    log(f"scale {scale}: {cfg.events} pod events x{cfg.repeats}")
    stream = make_event_stream(snapshot, cfg.events)
    incremental = measure_incremental(snapshot, profile, stream, cfg.repeats)
    baseline = None
    if cfg.baseline is not None and scale == max(cfg.scales):
        log(f"scale {scale}: the same pod events on {cfg.baseline[:12]} (issue 13's baseline) x{cfg.repeats}")
        baseline = measure_baseline(cfg.baseline, objects, cfg.events, cfg.repeats, cfg.profile, workdir)
    s = ScaleInputs(scale, objects, snapshot, stream)
    del objects  # from here on s.objects holds them, until the dump figures drop them
    naive_result, oracle, oracle_error = _baselines(cfg, s, binary)
    res = ScaleResult(
        scale=scale, objects=kinds, workloads=naive_result.workloads,
        cold=cold, node_event=node_event, incremental=incremental, naive=naive_result, parse=parse,
        generate_s=generate_s, memory=memory, oracle=oracle, oracle_error=oracle_error, baseline=baseline,
    )  # fmt: skip
    if cfg.analyze:
        probes.append((f"scale {scale}: before the decoding figures", bench_env.speed_probe()))
        _dump_figures(cfg, s, res, workdir)
    s.objects = []
    if cfg.metrics:
        log(f"scale {scale}: metrics (series, scrape) x{cfg.repeats}")
        res.metrics = measure_metrics(snapshot, profile, cfg.repeats)
    res.comparison = _comparison(cfg, s, res)
    return res, s


def _save_json(info: RunInfo, payload: dict[str, Any], suffix: str) -> None:
    RESULTS_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = RESULTS_DIR / f"results-{stamp}{suffix}.json"
    path.write_text(json.dumps({"meta": as_json(info), **as_json(payload)}, indent=1, default=str))


def _full_run(
    cfg: Config, probes: list[tuple[str, float]]
) -> tuple[list[ScaleResult], dict[str, Hotspots] | None]:
    """Every scale in turn (then the hotspot profiles at the largest); ``probes`` gets a speed probe before each
    scale's cold computation and before its decoding figures."""
    binary = oracle_binary() if cfg.oracle else None
    results, prof = [], None
    with tempfile.TemporaryDirectory(prefix="spreadwatch-bench-") as tmp:
        for i, scale in enumerate(cfg.scales):
            res, inputs = bench_scale(cfg, scale, Path(tmp), binary, probes)
            if i == len(cfg.scales) - 1 and cfg.profile_misses:
                log(f"scale {scale}: profiling")
                prof = profiles(inputs.snapshot, get_profile(cfg.profile), inputs.stream[:5000], inputs.dump)
            if inputs.dump is not None:
                inputs.dump.unlink(missing_ok=True)
            results.append(res)
            del inputs
            gc.collect()
    return results, prof


def _metrics_only(cfg: Config) -> list[MetricsResult]:
    """Just the metrics measurement at each scale (``--metrics-only``)."""
    results = []
    profile = get_profile(cfg.profile)
    for scale in cfg.scales:
        log(f"scale {scale}: generating and parsing")
        with paused_gc():
            snapshot = Snapshot.from_objects(synth.iter_objects(scale, cfg.seed))
        log(f"scale {scale}: metrics x{cfg.repeats}")
        results.append(measure_metrics(snapshot, profile, cfg.repeats))
        del snapshot
        gc.collect()
    return results


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="spreadwatch benchmarks")
    p.add_argument("--scales", default=None, help="comma-separated scale factors (default 0.1,0.3,1.0)")
    p.add_argument("--quick", action="store_true",
                   help="fast smoke run: scale 0.005, few events, 1 repeat, prints only")  # fmt: skip
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile", default=DEFAULT_PROFILE)
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--events", type=int, default=None)
    p.add_argument("--naive-sample", type=int, default=100)
    p.add_argument("--oracle-sample", type=int, default=None, help="run the Go plugin on this many workloads only")
    p.add_argument("--no-oracle", action="store_true")
    p.add_argument(
        "--baseline", default=None, metavar="COMMIT",
        help=f"replay the pod events on this commit's code too, at the largest scale (default {BASELINE_COMMIT[:7]}; "
        "'none' to skip; --quick skips unless given)",
    )  # fmt: skip
    default_out = DOC.relative_to(bench_env.ROOT)
    p.add_argument(
        "--out", default=None, help=f"markdown file to write (default {default_out}; --quick writes none unless given)"
    )
    p.add_argument(
        "--metrics-only",
        action="store_true",
        help="measure only the metrics and rewrite only the Metrics section of the output file",
    )
    p.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)  # = python bench/measure_memory.py
    return p


def _config(args: argparse.Namespace) -> Config:
    scales = [float(s) for s in (args.scales or ("0.005" if args.quick else "0.1,0.3,1.0")).split(",")]
    return Config(
        scales=sorted(scales),
        seed=args.seed,
        profile=args.profile,
        repeats=args.repeats or (1 if args.quick else 3),
        events=args.events or (1000 if args.quick else 20000),
        naive_sample=min(args.naive_sample, 20) if args.quick else args.naive_sample,
        oracle=not args.no_oracle,
        oracle_sample=args.oracle_sample,
        quick=args.quick,
        exact_sample=8 if args.quick else 30,
        baseline=_baseline(args.baseline, args.quick),
    )


def _baseline(given: str | None, quick: bool) -> str | None:
    """The commit whose event stream is replayed too (None: none)."""
    if given is None:
        return None if quick else BASELINE_COMMIT
    return None if given == "none" else given


def _write_metrics_only(cfg: Config, info: RunInfo, metrics: list[MetricsResult], out: Path | None) -> None:
    section = metrics_section(cfg.scales, metrics, info)
    print("\n".join(section))
    _save_json(info, {"results": metrics}, "-metrics")
    if out is not None:
        anchor = "## Scaling" if out.exists() and "## Scaling" in out.read_text() else "## Method"
        splice_block(out, section, METRICS_BLOCK, anchor)
        log(f"wrote the Metrics section of {out}")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rss_child:
        print(json.dumps(child_sample(float(args.scales), args.seed, args.profile)))
        return 0
    started, load_start, sources = time.time(), bench_env.loadavg(), bench_env.source_hashes()
    command = bench_env.command_line("bench", "bench/run.py", argv)
    cfg = _config(args)
    out = Path(args.out) if args.out else (None if cfg.quick else DOC)
    if args.metrics_only:
        metrics = _metrics_only(cfg)
        info = bench_env.record(command, cfg.seed, cfg.profile, started, load_start, sources)
        _write_metrics_only(cfg, info, metrics, out)
        return 0
    probes = [("start", bench_env.speed_probe())]
    try:
        results, prof = _full_run(cfg, probes)
    except ExactnessError as err:
        log(f"FAILED: {err}")
        return 1
    info = bench_env.record(command, cfg.seed, cfg.profile, started, load_start, sources, probes)
    text = render(results, info, prof, cfg.repeats, cfg.events)
    print(text)
    _save_json(info, {"results": results, "profiles": prof}, "-quick" if cfg.quick else "")
    if out is not None:
        out.write_text(keep_blocks(text, out))
        log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
