"""Spread reports (pure): the report type (:mod:`~spreadwatch.report.spread_report`), the spread verdict
(:mod:`~spreadwatch.report.verdict`) and construction from sparse spread state (:mod:`~spreadwatch.report.build`
for SelectorSpread, :mod:`~spreadwatch.report.topology` for PodTopologySpread) and the check of a placement
against a report (:mod:`~spreadwatch.report.placement`); the whole scheduler profile's prediction a report carries
(:mod:`~spreadwatch.report.prediction`)."""

from __future__ import annotations

from spreadwatch.report.build import (
    DEFAULT_MAX_NODES,
    DEFAULT_TOP_N,
    CandidateLayout,
    ReportInput,
    ReportOptions,
    build_report,
    error_report,
)
from spreadwatch.report.placement import PLACEMENT_OUTCOMES, Outcome, best_zones, classify_placement
from spreadwatch.report.prediction import NAMESPACED_PARTIAL, PREDICTION_PLACEMENTS, PredictedNode, Prediction
from spreadwatch.report.spread_report import Comparison, NodeEntry, Placement, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_TOP_N",
    "NAMESPACED_PARTIAL",
    "PLACEMENT_OUTCOMES",
    "PREDICTION_PLACEMENTS",
    "CandidateLayout",
    "Comparison",
    "Health",
    "HealthThresholds",
    "NodeEntry",
    "Outcome",
    "Placement",
    "PredictedNode",
    "Prediction",
    "ReportInput",
    "ReportOptions",
    "SpreadFacts",
    "SpreadReport",
    "ZoneEntry",
    "best_zones",
    "build_report",
    "classify_placement",
    "error_report",
    "judge",
]
