"""bench/window_figures.py on 150 nodes (scale 0.03): the error it reports is measured against every start.

Nothing is timed or asserted about speed: with as many samples as nodes the estimate is every start (error 0),
with fewer it is an estimate within [0, 1] of a probability; the rows name the profile and sample count.
"""

from __future__ import annotations

from bench import inputs, window_figures


def test_every_start_has_no_error_and_fewer_starts_an_estimate() -> None:
    nodes = 150  # bench/synth.py at scale 0.03: the window (100 of 150) leaves candidates out
    try:
        out = window_figures.samples(scale=0.03, quick=True, workloads=12, counts=(4, nodes))
    finally:
        inputs.release()  # (its records would keep ~4,500 pods' label maps interned for the tests after)
    rows = {(r["profile"], r["samples"]): r for r in out["series"]}
    assert set(rows) == {(p, s) for p in ("v1.28", "v1.29") for s in (4, nodes)}
    for profile in ("v1.28", "v1.29"):
        exact = rows[(profile, nodes)]
        assert (exact["node_mae"], exact["node_max"], exact["zone_mae"], exact["zone_p95"]) == (0, 0, 0, 0)
        sampled = rows[(profile, 4)]
        assert 0.0 <= sampled["node_mae"] <= sampled["node_p95"] <= sampled["node_max"] <= 1.0
        assert 0.0 < exact["mean_exact"] <= 1.0
        assert out[f"{profile.replace('.', '_')}_windowed"] > 0
    assert out["default_samples"] == 16
