"""Run in a fresh interpreter by :mod:`baseline_events`: the pod event stream on an *older* commit's code.

Usage: ``python bench/baseline_child.py TREE DUMP EVENTS REPEATS PROFILE``. ``TREE`` is an extracted commit
(its ``operator/`` and ``bench/``), ``DUMP`` a JSON file of Kubernetes objects (the current run's cluster).
The older tree's own ``bench/run.py`` builds the snapshot, the stream (its generator, same seed) and times the
replays (its ``fresh_index`` + ``gc.collect()`` + ``run_stream``, the GC enabled), so the figures are exactly
what that commit's ``make bench`` measured, on this machine now. Prints one JSON object on stdout:
``{"module": <path of the spreadwatch package imported>, "p99_us": [...], "events_per_s": [...]}``.
Costs: those of the older bench's event stream (about a minute at scale 1.0).
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    tree, dump, events, repeats, profile_name = Path(argv[0]), Path(argv[1]), int(argv[2]), int(argv[3]), argv[4]
    sys.path[:0] = [str(tree / "bench"), str(tree / "operator")]
    import run as old  # the older tree's bench/run.py  # noqa: PLC0415

    import spreadwatch  # noqa: PLC0415

    objects = json.loads(dump.read_bytes())
    snapshot = old.build_snapshot(objects)
    del objects
    stream = old.make_event_stream(snapshot, events)
    profile = old.get_profile(profile_name)
    p99s, rates = [], []
    for _ in range(repeats):
        index = old.fresh_index(snapshot, profile)
        gc.collect()
        result = old.run_stream(index, stream)
        p99s.append(old.percentile(sorted(result.wall_ns), 99) / 1e3)
        rates.append(len(stream) / result.wall_s)
        del index, result
        gc.collect()
    print(json.dumps({"module": spreadwatch.__file__, "p99_us": p99s, "events_per_s": rates}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
