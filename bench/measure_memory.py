"""Memory figures of ``make bench``: RSS at each stage of building the index, in a fresh interpreter.

:func:`measure_rss` starts ``python bench/measure_memory.py --scale S --seed N --profile P`` (the child,
:func:`child_sample`) ``repeats`` times and takes medians. The child streams bench/synth.py's objects through
``parse_object`` into a ``Snapshot`` (the dicts are transient), then reads ``/proc/self/statm`` before parsing,
after parsing, after ``load``, after ``reports()``, plus VmHWM and ``ru_maxrss``; it prints one JSON line.
Cost per child: O(objects) time, O(records + index) memory.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402
from bench_results import MemoryResult  # noqa: E402
from measure_util import median, rss_bytes, vm_hwm_bytes  # noqa: E402

from spreadwatch.index import SpreadIndex  # noqa: E402
from spreadwatch.model import parse_object  # noqa: E402
from spreadwatch.report import ReportOptions  # noqa: E402
from spreadwatch.scoring import get_profile  # noqa: E402
from spreadwatch.snapshot import Snapshot  # noqa: E402

__all__ = ["child_sample", "measure_rss"]

_MIB = 2**20


def child_sample(scale: float, seed: int, profile_name: str) -> dict[str, float]:
    """In this (fresh) interpreter: RSS stages of building the index from streamed objects, MiB."""
    profile = get_profile(profile_name)
    gc.collect()
    base = rss_bytes()
    snapshot = Snapshot()
    for obj in synth.iter_objects(scale, seed):  # dicts are transient: only records stay
        snapshot.add(parse_object(obj))
    gc.collect()
    records = rss_bytes()
    hwm_parse = vm_hwm_bytes() / _MIB
    index = SpreadIndex(profile, ReportOptions())
    index.load(snapshot)
    gc.collect()
    loaded = rss_bytes()
    reports = index.reports()
    gc.collect()
    with_reports = rss_bytes()
    sizes = dataclasses.asdict(index.sizes())
    del snapshot
    gc.collect()
    after_drop = rss_bytes()
    return {
        "base_mib": base / _MIB,
        "records_mib": (records - base) / _MIB,
        "index_delta_mib": (loaded - records) / _MIB,
        "reports_delta_mib": (with_reports - loaded) / _MIB,
        "index_total_mib": (with_reports - base) / _MIB,
        "after_dropping_snapshot_mib": (after_drop - base) / _MIB,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_rss_mib": vm_hwm_bytes() / _MIB,
        "peak_rss_after_parse_mib": hwm_parse,
        "reports": len(reports),
        "label_groups": sizes["label_groups"],
        "candidate_sets": sizes["candidate_sets"],
    }


def _child(scale: float, seed: int, profile_name: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--scale", str(scale), "--seed", str(seed),
         "--profile", profile_name],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    sample: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return sample


def measure_rss(scale: float, seed: int, profile_name: str, repeats: int) -> MemoryResult:
    """Medians of ``repeats`` fresh-interpreter samples (index sizes from the first)."""
    runs = [_child(scale, seed, profile_name) for _ in range(repeats)]

    def mid(key: str) -> float:
        return median([r[key] for r in runs])

    return MemoryResult(
        base_mib=mid("base_mib"),
        records_mib=mid("records_mib"),
        index_delta_mib=mid("index_delta_mib"),
        reports_delta_mib=mid("reports_delta_mib"),
        index_total_mib=mid("index_total_mib"),
        after_dropping_snapshot_mib=mid("after_dropping_snapshot_mib"),
        maxrss_mib=mid("maxrss_mib"),
        peak_rss_mib=mid("peak_rss_mib"),
        peak_rss_after_parse_mib=mid("peak_rss_after_parse_mib"),
        reports=int(runs[0]["reports"]),
        label_groups=int(runs[0]["label_groups"]),
        candidate_sets=int(runs[0]["candidate_sets"]),
        repeats=repeats,
        runs_index_total_mib=[r["index_total_mib"] for r in runs],
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The child: print one JSON line of :func:`child_sample`."""
    p = argparse.ArgumentParser(description="RSS stages of building the index (child of make bench)")
    p.add_argument("--scale", type=float, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile", required=True)
    args = p.parse_args(argv)
    print(json.dumps(child_sample(args.scale, args.seed, args.profile)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
