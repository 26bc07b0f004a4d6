"""The soak benchmark's machinery (bench/soak.py): a seconds-long run on a tiny cluster, the summary arithmetic
and the figures its bench/figures.toml entry names. Nothing is timed or asserted about speed."""

from __future__ import annotations

import asyncio
import gc

import pytest

from bench import soak
from bench import spec as bench_spec


@pytest.mark.parametrize(
    ("points", "per_hour"),
    [
        pytest.param([(0, 100), (30, 100), (60, 100)], 0.0, id="flat: 0/h"),
        pytest.param([(0, 100), (30, 105), (60, 110)], 10.0, id="+5 per 30 min = +10/h"),
        pytest.param([(10, 50), (20, 40)], -60.0, id="-10 in 10 min = -60/h"),
        pytest.param([(5, 1)], 0.0, id="one point: 0"),
    ],
)
def test_slope_per_hour(points: list[tuple[float, float]], per_hour: float) -> None:
    assert soak.slope_per_hour(points) == pytest.approx(per_hour)


def test_trend_growth_is_what_the_second_half_shows_not_extrapolated() -> None:
    """A run that grows while the start's pods are replaced, then levels off: the second half's growth and
    slope are the level part's; the whole run's max and ends stay."""
    rss = [100.0, 140.0, 170.0, 180.0, 181.0, 181.0, 182.0, 182.5]
    samples = [{"t_min": float(i), "rss_mib": v} for i, v in enumerate(rss)]
    t = soak.trend(samples, "rss_mib")
    assert (t["first"], t["last"], t["max"]) == (100.0, 182.5, 182.5)
    assert t["growth_second_half"] == 1.5  # 182.5 at 7 min minus 181 at 4 min, the second half's first sample
    assert t["slope_per_hour_second_half"] == pytest.approx(33.0)  # least squares over minutes 4-7: 0.55/min


def test_a_short_soak_samples_every_series_and_keeps_reports_in_the_stand_in() -> None:
    cfg = soak.SoakConfig(minutes=0.05, rate=300, scale=0.005, seed=3, sample_seconds=1.0, rev_seconds=0.5)
    result = asyncio.run(soak.run_soak(cfg, log=lambda _m: None))
    base, samples, summary = result["baseline"], result["samples"], result["summary"]
    assert base["reports"] == base["workloads"] > 0  # every report written once before the churn
    assert base["interned_label_maps"] > 0
    assert samples and samples[-1]["t_min"] >= cfg.minutes  # one per second (fewer on a busy machine), and the end
    assert summary["events"] > 0
    for s in samples:
        assert s["rss_mib"] > 0
        assert s["pods"] > 0
        assert s["interned_label_maps"] > 0
    assert set(summary["rss_mib"]) >= {"first", "last", "growth_second_half", "slope_per_hour_second_half"}
    assert summary["p99_us_overall"] >= summary["p50_us_overall"] > 0


def test_the_measure_returns_every_figure_its_entry_names_and_the_series() -> None:
    (entry,) = bench_spec.select(bench_spec.load_spec(), ["soak-index"])
    values = soak.measure(scale=0.005, minutes=0.03, rate=300)
    assert {f["key"] for f in entry["figure"]} <= set(values)
    assert values["series"] and set(entry["columns"]) <= set(values["series"][0])


@pytest.mark.parametrize("policy", [True, False], ids=["the operator's GC policy", "--no-gc-policy"])
def test_the_soak_runs_the_operators_gc_policy_and_counts_full_collections(policy: bool) -> None:
    thresholds = gc.get_threshold()
    cfg = soak.SoakConfig(minutes=0.02, rate=300, scale=0.005, seed=3, sample_seconds=0.5, gc_policy=policy)
    result = asyncio.run(soak.run_soak(cfg, log=lambda _m: None))
    summary = result["summary"]
    assert result["baseline"]["gc_policy"] is policy
    # GcPolicy.start, as Runtime.start: the loaded heap frozen, then free memory given back at once
    assert (summary["gc_releases"] >= 1) is policy
    if policy:  # the checkpoints are full collections, and gc.callbacks counts them
        assert result["baseline"]["gc_full"] + summary["gc_full"] >= summary["gc_checkpoints"]
    for sample in result["samples"]:
        assert sample["gc_full_max_s"] <= sample["gc_full_s"] and sample["gc_full_max_cpu_s"] <= sample["gc_full_cpu_s"]
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0  # the policy stopped with the soak


def test_the_soak_loads_its_cluster_through_the_operators_route() -> None:
    """The soak lists as the operator does — pages of bytes, ``decode_list_page``, each kind's informer,
    the router, the index — and gets the reports the reference parser gives for the same objects."""
    from bench import synth
    from spreadwatch.config import OperatorConfig
    from spreadwatch.index import SpreadIndex
    from spreadwatch.model import parse_object
    from spreadwatch.profile_args import operator_profiles
    from spreadwatch.runtime.informers import WATCHED, EventRouter, ResourceWatch

    cfg = soak.SoakConfig(scale=0.005, seed=3)
    config = OperatorConfig()
    profile, compared, _ = operator_profiles(config, lambda: synth.KUBELET_VERSION)  # (the soak's, as it runs)
    index = SpreadIndex(profile, config.report, compared)
    router = EventRouter(index, config.scope)
    pods = soak._list(cfg, {r.kind: ResourceWatch(r, None, router) for r in WATCHED})
    reference = SpreadIndex(profile, config.report, compared)
    for record in map(parse_object, synth.iter_objects(cfg.scale, cfg.seed)):
        if record is not None:
            reference.apply(record)
    assert router.stats.applied > 0 == router.stats.ignored
    assert [r.to_dict() for r in index.reports()] == [r.to_dict() for r in reference.reports()]
    assert len(pods.pods) == index.sizes().pods
