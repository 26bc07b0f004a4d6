"""Spread reports (pure): the report type (:mod:`~spreadwatch.report.spread_report`), the spread verdict
(:mod:`~spreadwatch.report.verdict`) and construction from sparse spread state (:mod:`~spreadwatch.report.build`
for SelectorSpread, :mod:`~spreadwatch.report.topology` for PodTopologySpread)."""

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
from spreadwatch.report.spread_report import Comparison, NodeEntry, SpreadReport, ZoneEntry
from spreadwatch.report.verdict import Health, HealthThresholds, SpreadFacts, judge

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_TOP_N",
    "CandidateLayout",
    "Comparison",
    "Health",
    "HealthThresholds",
    "NodeEntry",
    "ReportInput",
    "ReportOptions",
    "SpreadFacts",
    "SpreadReport",
    "ZoneEntry",
    "build_report",
    "error_report",
    "judge",
]
