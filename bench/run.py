"""The one benchmark runner: measures the figures bench/figures.toml lists and writes one JSON results file.

    make bench                                   # every default measure at scales 0.1, 0.3, 1.0; renders the doc
    make bench FIGURES=cold,events               # only these measures (ids from bench/figures.toml)
    make bench QUICK=1                           # smoke run: tiny scales, quick params, no doc written
    make bench BASELINE=e7cd781                  # the same measures on that commit's package, in the same run
    python -m bench.run --set soak-index.minutes=60 --figures soak-index

Per scale (ascending; one synthetic cluster per scale, bench/inputs.py), each selected measure's function is
called as ``function(scale=S, quick=Q, **params)`` (``quick`` only if it takes it) and must return a mapping of
figure keys to numbers (nested mappings are read with dotted keys; a ``series`` key may hold a list of row
mappings); a measure that raises is recorded with its error and the
run goes on. A speed probe (CPU seconds of a fixed loop) is taken before each call, so absolute figures can
be read against the machine's speed at that moment.

``--baseline REV`` checks REV out into a temporary git worktree and runs the same selection again in a
child process whose ``spreadwatch`` package is REV's (``PYTHONPATH``), with this checkout's bench code; its
results are stored beside the run's. A measure that REV's package cannot run is recorded as an error.

The results file (``bench/results/<selection>.json``; quick runs go to ``bench-results/quick.json``, git-ignored)
holds the run's environment (date, commit, machine, software, load average at start and end, the command) and
per measure and scale the values, the probe and the seconds the call took. bench/render.py turns every file in
bench/results/ into docs/benchmarks.md (the newest result of each measure wins). Costs: those of the measures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import inspect
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # (run as a script: bench/run.py)
    sys.path.insert(0, str(ROOT))

from bench.render import write  # noqa: E402
from bench.spec import FIGURES, RESULTS, SpecError, load_spec, select  # noqa: E402
from bench.timing import log  # noqa: E402

__all__ = ["main", "run"]

QUICK_RESULTS = ROOT / "bench-results"


def _function(name: str) -> Callable[..., Mapping[str, Any]]:
    module, _, attr = name.partition(":")
    fn: Callable[..., Mapping[str, Any]] = getattr(importlib.import_module(module), attr)
    return fn


def _takes_quick(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` accepts ``quick=`` (a named parameter or ``**kwargs``)."""
    params = inspect.signature(fn).parameters.values()
    return any(p.name == "quick" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def speed_probe() -> float:
    """The machine's speed now: CPU seconds of a fixed pure-Python loop (3,000,000 dict updates; lower is
    faster). It has varied more than 2× between hours on a shared host. O(1), about a second."""
    start = time.process_time()
    counts: dict[int, int] = {}
    get = counts.get
    for i in range(3_000_000):
        counts[i & 4095] = get(i & 4095, 0) + 1
    return time.process_time() - start


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


def environment(command: str) -> dict[str, Any]:
    """What every figure must be read with: date, commit, machine, software, load average, the command."""
    import msgspec  # noqa: PLC0415 - only for its version
    import orjson  # noqa: PLC0415

    import spreadwatch  # noqa: PLC0415

    try:
        commit = _git("rev-parse", "--short", "HEAD")
        dirty = bool(_git("status", "--porcelain", "operator", "bench", ":!bench/results"))
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "?", False
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "?")  # fmt: skip
    mem = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if "MemTotal" in line)
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "uncommitted": dirty,
        "package": str(Path(spreadwatch.__file__).parent),
        "machine": f"{cpu}, {os.cpu_count()} cores, {mem / 2**20:.0f} GiB RAM, {platform.system()} "
        f"{platform.release()}",
        "software": f"CPython {platform.python_version()}, orjson {orjson.__version__}, msgspec {msgspec.__version__}",
        "command": command,
        "load_start": os.getloadavg(),
    }


def _call(measure: Mapping[str, Any], scale: float, quick: bool, params: Mapping[str, Any]) -> dict[str, Any]:
    """One measure at one scale: its values (or its error), the speed probe before it and its seconds."""
    probe = speed_probe()
    start = time.perf_counter()
    try:
        fn = _function(measure["function"])
        values = dict(fn(scale=scale, **({"quick": quick} if _takes_quick(fn) else {}), **params))
    except Exception as err:  # a measure's failure is a result, not the end of the run
        log(f"{measure['id']} at scale {scale:g} failed: {type(err).__name__}: {err}")
        return {"error": f"{type(err).__name__}: {err}", "probe_s": probe}
    return {"values": values, "probe_s": probe, "seconds": time.perf_counter() - start}


def plan(
    measures: Sequence[Mapping[str, Any]], spec: Mapping[str, Any], scales: Sequence[float] | None, quick: bool
) -> list[tuple[float, Mapping[str, Any]]]:
    """(scale, measure) pairs in the order they run: scale by scale, ascending, the file's order within one.
    A measure's own ``scales`` (``quick_scales``) win over the run's; ``scales`` given here win over both."""
    pairs = []
    for m in measures:
        own = m.get("quick_scales" if quick else "scales")
        default = spec.get("quick_scales" if quick else "scales", [1.0])
        for s in scales or own or default:
            pairs.append((float(s), m))
    return sorted(pairs, key=lambda p: p[0])  # (stable: the file's order within a scale)


def run(
    measures: Sequence[Mapping[str, Any]],
    spec: Mapping[str, Any],
    *,
    scales: Sequence[float] | None = None,
    quick: bool = False,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Measure ``measures``; returns ``{measure id: {"function", "params", "results": {scale: result}}}``."""
    out: dict[str, Any] = {}
    for scale, m in plan(measures, spec, scales, quick):
        params = {**m.get("params", {}), **(m.get("quick", {}) if quick else {}), **(overrides or {}).get(m["id"], {})}
        entry = out.setdefault(m["id"], {"function": m["function"], "params": params, "results": {}})
        log(f"{m['id']} at scale {scale:g} ({m['function']}, {params})")
        entry["results"][f"{scale:g}"] = _call(m, scale, quick, params)
    return out


def _baseline(rev: str, argv: Sequence[str]) -> dict[str, Any]:
    """The same selection on ``rev``'s package: a temporary worktree, a child runner, its results."""
    commit = _git("rev-parse", "--short", f"{rev}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="spreadwatch-baseline-") as tmp:
        tree, out = Path(tmp) / "tree", Path(tmp) / "results.json"
        _git("worktree", "add", "--detach", str(tree), commit)
        try:
            paths = [str(tree / "operator"), str(ROOT), os.environ.get("PYTHONPATH", "")]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
            child = [sys.executable, "-m", "bench.run", *argv, "--no-render", "--out", str(out)]
            log(f"baseline {rev} ({commit}): {shlex.join(child[2:])}")
            subprocess.run(child, cwd=ROOT, env=env, check=True)
            result: dict[str, Any] = json.loads(out.read_text())
        finally:
            _git("worktree", "remove", "--force", str(tree))
    return {"rev": rev, "commit": commit, "run": result["run"], "measures": result["measures"]}


def _overrides(sets: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--set ID.PARAM=VALUE`` (VALUE in TOML syntax; a bare word is a string) → {id: {param: value}}."""
    out: dict[str, dict[str, Any]] = {}
    for item in sets:
        target, eq, value = item.partition("=")
        mid, dot, param = target.partition(".")
        if not (eq and dot and mid and param):
            raise SpecError(f"--set {item}: expected ID.PARAM=VALUE")
        try:
            parsed = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            parsed = value
        out.setdefault(mid, {})[param] = parsed
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.run", description="spreadwatch benchmarks (bench/figures.toml)")
    p.add_argument("--figures", default="", help="comma-separated measure ids (default: every default measure)")
    p.add_argument("--scales", default="", help="comma-separated scales, for every selected measure")
    p.add_argument("--quick", action="store_true", help="smoke run: quick scales and params; no doc written")
    p.add_argument("--set", action="append", default=[], metavar="ID.PARAM=VALUE", help="override a parameter")
    p.add_argument("--baseline", default="", metavar="REV", help="also measure REV's package in this run")
    p.add_argument("--out", default="", help="results file (default bench/results/<selection>.json)")
    p.add_argument("--no-render", action="store_true", help="do not rewrite docs/benchmarks.md")
    p.add_argument("--list", action="store_true", help="list the measures and their figures, then exit")
    p.add_argument("--spec", default="", help="the declarative file (default bench/figures.toml)")
    return p


def _default_out(spec: Mapping[str, Any], measures: Sequence[Mapping[str, Any]], quick: bool) -> Path:
    if quick:
        return QUICK_RESULTS / "quick.json"
    ids = [m["id"] for m in measures]
    label = "bench" if ids == [m["id"] for m in select(spec, None)] else "+".join(ids)
    return RESULTS / f"{label}.json"


def _child_argv(args: argparse.Namespace) -> list[str]:
    argv = ["--figures", args.figures] if args.figures else []
    argv += ["--spec", args.spec] if args.spec else []
    argv += ["--scales", args.scales] if args.scales else []
    argv += ["--quick"] if args.quick else []
    for item in args.set:
        argv += ["--set", item]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        spec = load_spec(Path(args.spec) if args.spec else None)
        measures = select(spec, [i for i in args.figures.split(",") if i])
        scales = [float(s) for s in args.scales.split(",") if s] or None
        overrides = _overrides(args.set)
    except (SpecError, ValueError) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 2
    if args.list:  # id, function, whether `make bench` runs it by default, the figure keys (tab-separated)
        for m in spec.get("measure", []):
            keys = ", ".join(f["key"] for f in m.get("figure", []))
            print("\t".join([m["id"], m["function"], "default" if m.get("default", True) else "named", keys]))
        return 0
    # (children of measures, and a baseline's child runner, import bench.* from this checkout)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if p)
    command = shlex.join(["python", "-m", "bench.run", *(argv if argv is not None else sys.argv[1:])])
    env = environment(os.environ.get("BENCH_COMMAND", command))
    env["probe_start_s"] = speed_probe()
    started = time.perf_counter()
    result: dict[str, Any] = {"run": env, "measures": run(measures, spec, scales=scales, quick=args.quick,
                                                          overrides=overrides)}  # fmt: skip
    if args.baseline:
        result["baseline"] = _baseline(args.baseline, _child_argv(args))
    env.update(load_end=os.getloadavg(), probe_end_s=speed_probe(), minutes=(time.perf_counter() - started) / 60)
    out = Path(args.out) if args.out else _default_out(spec, measures, args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    log(f"wrote {out}")
    if not (args.no_render or args.quick):
        log(f"wrote {write(figures=Path(args.spec) if args.spec else FIGURES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
