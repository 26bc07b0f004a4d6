"""Spread reports: structure, health verdict and construction from sparse spread state (pure)."""

from __future__ import annotations

from spreadwatch.report.build import (
    DEFAULT_MAX_NODES,
    DEFAULT_TOP_N,
    CandidateLayout,
    ReportOptions,
    build_report,
    error_report,
)
from spreadwatch.report.health import Health, HealthThresholds, SpreadFacts, judge
from spreadwatch.report.structure import Comparison, NodeEntry, SpreadReport, ZoneEntry

__all__ = [
    "DEFAULT_MAX_NODES",
    "DEFAULT_TOP_N",
    "CandidateLayout",
    "Comparison",
    "Health",
    "HealthThresholds",
    "NodeEntry",
    "ReportOptions",
    "SpreadFacts",
    "SpreadReport",
    "ZoneEntry",
    "build_report",
    "error_report",
    "judge",
]
