"""Profile v1.29 (PodTopologySpread) benchmark alone (``make bench-pts``): its block of docs/benchmarks.md.

``make bench`` (bench/run.py) measures the same figures at every scale of its run and writes this block
with the rest of the file; this script re-measures only them, on the bench/synth.py cluster of each scale,
for profile v1.29 next to v1.28 (bench/measure_pts.py):

* cold full computation: ``SpreadIndex.load`` + ``reports()`` (median of N, GC on);
* incremental pod events: bench/measure_events.py's stream, each event timed through ``take_dirty`` and the
  dirty reports' rebuild (p50/p99 over the stream, median of N runs);
* a cordon (node event) with every dirty report rebuilt;
* exactness: for a sample of workloads every candidate's score derived from the v1.29 report equals the
  reference scorer's (``score_pod``), else the run fails (exit 1).

Prints the block and splices it into docs/benchmarks.md between the ``pts-bench`` markers (``--no-write``:
print only). Targets: pod event p99 ≤ 1 ms, cold full computation ≤ 1 s at scale 1.0 (5k nodes, 150k pods).

    .venv/bin/python bench/pts.py --scales 0.1,1.0
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_env  # noqa: E402
import synth  # noqa: E402
from bench_results import ProfileComparison  # noqa: E402
from doc_blocks import PTS_BLOCK, splice_block  # noqa: E402
from measure_events import make_event_stream  # noqa: E402
from measure_pts import COMPARED_PROFILES, ExactnessError, profile_figures  # noqa: E402
from measure_util import log  # noqa: E402
from render_sections import pts_section  # noqa: E402

from spreadwatch.snapshot import Snapshot  # noqa: E402

__all__ = ["main", "measure", "splice"]

DOC = bench_env.ROOT / "docs" / "benchmarks.md"


def measure(scale: float, repeats: int, events: int, sample: int) -> ProfileComparison:
    """v1.28 and v1.29 on the scale's cluster (seed 1), the same event stream for both."""
    snapshot = Snapshot.from_objects(synth.generate(scale, 1))
    stream = make_event_stream(snapshot, events)
    figures = []
    for name in COMPARED_PROFILES:
        figures.append(profile_figures(snapshot, name, stream, repeats, sample))
        log(f"scale {scale} {name}: {figures[-1]}")
    return ProfileComparison(scale, len(snapshot.nodes), len(snapshot.pods), figures)


def splice(text: str, doc: Path) -> None:
    """Replace the pts-bench block of ``doc`` with ``text`` (the block, markers included), or add it."""
    splice_block(doc, text.splitlines(), PTS_BLOCK)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--scales", default="0.1,1.0")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--events", type=int, default=20000)
    p.add_argument("--sample", type=int, default=30, help="workloads checked against score_pod per scale")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    started, load_start, sources = time.time(), bench_env.loadavg(), bench_env.source_hashes()
    try:
        results = [measure(float(s), args.repeats, args.events, args.sample) for s in args.scales.split(",")]
    except ExactnessError as err:
        print(f"bench-pts: {err}", file=sys.stderr)
        return 1
    command = bench_env.command_line("bench-pts", "bench/pts.py", argv)
    info = bench_env.record(command, 1, "v1.29", started, load_start, sources)
    text = "\n".join(pts_section(results, info, args.repeats, args.events)) + "\n"
    print(text)
    if not args.no_write:
        splice(text, DOC)
    log(f"done in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
