"""Operator settings (``spreadwatch run`` flags): one frozen :class:`OperatorConfig`, pure.

Every field has a CLI flag with an environment-variable default (``SPREADWATCH_<FLAG>``); see
``docs/operator.md`` for the table. :meth:`OperatorConfig.validate` raises :class:`InputError` with a
one-line message for unusable values, so ``spreadwatch run`` fails fast with exit code 2.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from spreadwatch.errors import InputError
from spreadwatch.report import ReportOptions
from spreadwatch.scoring import PROFILES, Profile
from spreadwatch.scoring.releases import AUTO_PROFILE, NO_COMPARISON, other_plugin

if TYPE_CHECKING:
    from spreadwatch.index import SpreadIndex
    from spreadwatch.model import WorkloadKey

__all__ = [
    "DEFAULT_OPT_OUT_LABEL",
    "LOG_FORMATS",
    "NODE_SERIES_MODES",
    "LabelRequirement",
    "LeaderElection",
    "MetricsOptions",
    "NodeSeries",
    "OperatorConfig",
    "Scope",
    "default_identity",
    "parse_label_requirement",
]

DEFAULT_OPT_OUT_LABEL: Final = "spreadwatch.io/ignore=true"
LOG_FORMATS: Final = ("text", "json")
LogFormat = Literal["text", "json"]
NodeSeries = Literal["default", "none", "all"]
NODE_SERIES_MODES: Final = ("default", "none", "all")


@dataclass(frozen=True, slots=True)
class MetricsOptions:
    """Which per-node series the metrics carry (``--node-metrics``, env ``SPREADWATCH_NODE_METRICS``).

    ``node_series``: ``default`` (node_pods on nodes with matching pods, node_score on the ``top_n`` best
    candidates), ``none``, or ``all`` (both on every candidate node). ``top_n`` is at most the reports'
    ``--top-nodes``. Re-exported by :mod:`spreadwatch.metrics`; defined here because the operator's config
    carries it (config sits below metrics in the layers).
    """

    node_series: NodeSeries = "default"
    top_n: int = 3

    def __post_init__(self) -> None:
        if self.node_series not in NODE_SERIES_MODES:
            raise InputError(
                f"node metrics {self.node_series!r}: expected one of {', '.join(NODE_SERIES_MODES)}"
            )
        if self.top_n < 0:
            raise InputError(f"metrics top-N must be >= 0, got {self.top_n}")


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """``key=value`` (value required) or ``key`` (any value): the opt-out label."""

    key: str
    value: str | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.key not in labels:
            return False
        return self.value is None or labels[self.key] == self.value

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


def parse_label_requirement(text: str) -> LabelRequirement | None:
    """``key=value`` / ``key`` → requirement; an empty string → None (opt-out disabled)."""
    text = text.strip()
    if not text:
        return None
    key, sep, value = text.partition("=")
    key = key.strip()
    if not key or any(c.isspace() for c in key):
        raise InputError(f"opt-out label {text!r}: expected KEY=VALUE or KEY")
    return LabelRequirement(key, value.strip() if sep else None)


def default_identity() -> str:
    """Leader-election identity: ``$POD_NAME`` (downward API) or the host name."""
    return os.environ.get("POD_NAME") or socket.gethostname() or "spreadwatch"


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """coordination.k8s.io/v1 Lease settings (only the holder writes SpreadReports)."""

    enabled: bool = True
    lease_name: str = "spreadwatch-leader"
    lease_namespace: str = "default"
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_period: float = 2.0


@dataclass(frozen=True, slots=True)
class OperatorConfig:
    """Everything ``spreadwatch run`` needs; immutable once the operator starts."""

    namespaces: tuple[str, ...] = ()  # watched namespaces; empty: all
    skip_namespaces: tuple[str, ...] = ()
    opt_out: LabelRequirement | None = field(default_factory=lambda: parse_label_requirement(DEFAULT_OPT_OUT_LABEL))
    #: --profile: a profile's name, or auto (the API server's version picks it at start: scoring/releases.py)
    profile: str = AUTO_PROFILE
    scheduler_config: str | None = None  # KubeSchedulerConfiguration file (PodTopologySpread defaults)
    scheduler_name: str = "default-scheduler"
    #: --compare-profile: a second profile every report is compared with; auto: the other spreading plugin
    #: (:meth:`comparison`); none (or ""): off
    compare_profile: str = AUTO_PROFILE
    report: ReportOptions = field(default_factory=ReportOptions)
    #: --prediction: the whole scheduler profile's prediction in every report (read from scheduler_config at start)
    prediction: bool = False
    debounce: float = 1.0  # seconds a workload must be quiet before its report is written
    max_writes_per_second: float = 100.0  # docs/operator.md "Rate limit": the API Priority and Fairness arithmetic
    write_burst: int = 200
    #: ceiling of the writes in flight, which follow the measured latency below it (docs/operator.md "Writes in
    #: flight": a tenth of API Priority and Fairness' workload-low seats on a default API server)
    max_writes_in_flight: int = 24
    resync_period: float = 300.0
    port: int = 8081  # plain-HTTP probes: /healthz, /readyz, /statusz
    host: str = "0.0.0.0"  # probes come from the kubelet, outside the pod
    log_format: LogFormat = "text"
    log_level: str = "INFO"
    kubeconfig: str | None = None  # None: in-cluster config, else $KUBECONFIG / ~/.kube/config
    context: str | None = None
    leader: LeaderElection = field(default_factory=LeaderElection)
    events: bool = True  # post a core/v1 Event on the SpreadReport when its health changes
    metrics: MetricsOptions = field(default_factory=MetricsOptions)  # /metrics node series
    metrics_port: int = 8443  # /metrics
    metrics_secure: bool = True  # HTTPS + TokenReview/SubjectAccessReview on /metrics; False: plain HTTP
    metrics_cert_dir: str | None = None  # tls.crt + tls.key; None: a self-signed certificate made at start

    @property
    def clusterwide(self) -> bool:
        return not self.namespaces

    def validate(self) -> OperatorConfig:
        """Raise InputError (one line) for unusable settings; returns self."""
        if self.profile not in PROFILES and self.profile != AUTO_PROFILE:
            raise InputError(
                f"unknown profile {self.profile!r} (expected one of {', '.join(PROFILES)} or {AUTO_PROFILE})"
            )
        if self.compare_profile not in (*PROFILES, AUTO_PROFILE, NO_COMPARISON, ""):
            raise InputError(
                f"unknown --compare-profile {self.compare_profile!r} (expected one of {', '.join(PROFILES)}, "
                f"{AUTO_PROFILE} or {NO_COMPARISON})"
            )
        if self.debounce < 0:
            raise InputError(f"debounce must be >= 0 seconds, got {self.debounce}")
        if self.max_writes_per_second <= 0:
            raise InputError(f"max writes per second must be > 0, got {self.max_writes_per_second}")
        if self.write_burst < 1:
            raise InputError(f"write burst must be >= 1, got {self.write_burst}")
        if self.max_writes_in_flight < 1:
            raise InputError(f"max writes in flight must be >= 1, got {self.max_writes_in_flight}")
        if self.resync_period < 0:
            raise InputError(f"resync period must be >= 0 seconds (0: off), got {self.resync_period}")
        if not 0 <= self.port <= 65535:
            raise InputError(f"port must be 0-65535, got {self.port}")
        if not 0 <= self.metrics_port <= 65535:
            raise InputError(f"metrics port must be 0-65535, got {self.metrics_port}")
        if self.port == self.metrics_port != 0:
            raise InputError(f"the probe port and the metrics port must differ, both are {self.port}")
        if self.metrics_cert_dir is not None and not self.metrics_secure:
            raise InputError("a metrics certificate directory needs secure metrics (--metrics-secure)")
        if self.log_format not in LOG_FORMATS:
            raise InputError(f"log format must be one of {', '.join(LOG_FORMATS)}, got {self.log_format!r}")
        overlap = set(self.namespaces) & set(self.skip_namespaces)
        if overlap:
            raise InputError(f"namespaces both watched and skipped: {', '.join(sorted(overlap))}")
        le = self.leader
        if le.enabled:
            if not le.lease_name or not le.lease_namespace or not le.identity:
                raise InputError("leader election needs a lease name, a lease namespace and an identity")
            if le.renew_period <= 0 or le.lease_duration <= le.renew_period:
                raise InputError(
                    f"lease duration ({le.lease_duration}s) must exceed the renew period ({le.renew_period}s) > 0"
                )
        return self

    def comparison(self, profile: Profile) -> str:
        """The profile reports are compared with when ``profile`` scores them ("": none): ``--compare-profile``,
        or for ``auto`` the other spreading plugin (``v1.28`` beside PodTopologySpread, ``v1.29`` beside a
        SelectorSpread generation). O(1)."""
        if self.compare_profile in (NO_COMPARISON, ""):
            return ""
        return other_plugin(profile) if self.compare_profile == AUTO_PROFILE else self.compare_profile

    @property
    def scope(self) -> Scope:
        """The namespaces and workloads this configuration reports on (build it once and share it). O(flags)."""
        return Scope(frozenset(self.namespaces), frozenset(self.skip_namespaces), self.opt_out)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which namespaces and workloads the operator reports on: the one place that decides.

    * ``namespaces`` (``--namespace``; empty: all) and ``skip_namespaces`` (``--skip-namespace``) are the
      *watched* namespaces: objects elsewhere are never indexed;
    * ``opt_out`` (``--opt-out-label``; None: off) on a namespace or on a workload puts the workload out of
      scope: it gets no SpreadReport (an existing one is deleted) and no ``/metrics`` series.

    Used by the event router (what to index), the report writer (what to write or delete) and the metrics
    collector (what to expose). Pure; every question is O(1) set lookups plus O(labels) for the opt-out.
    """

    namespaces: frozenset[str] = frozenset()
    skip_namespaces: frozenset[str] = frozenset()
    opt_out: LabelRequirement | None = None

    def namespace_watched(self, namespace: str) -> bool:
        """By the namespace flags alone: objects of an unwatched namespace are never indexed."""
        if namespace in self.skip_namespaces:
            return False
        return not self.namespaces or namespace in self.namespaces

    def opted_out(self, labels: Mapping[str, str]) -> bool:
        """The opt-out label is on an object with these labels (a namespace or a workload)."""
        return self.opt_out is not None and self.opt_out.matches(labels)

    def namespace_in_scope(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Watched, and the namespace (with these labels) is not opted out."""
        return self.namespace_watched(namespace) and not self.opted_out(labels)

    def workload_in_scope(
        self, namespace: str, namespace_labels: Mapping[str, str], workload_labels: Mapping[str, str]
    ) -> bool:
        """In a namespace in scope, and not opted out itself."""
        return self.namespace_in_scope(namespace, namespace_labels) and not self.opted_out(workload_labels)

    def covers(self, index: SpreadIndex, key: WorkloadKey) -> bool:
        """:meth:`workload_in_scope` of an indexed workload, its labels and its namespace's read from ``index``
        (a workload the index lacks has no labels: only its namespace decides). O(labels): 2-4 µs, i.e. 20-40 ms
        of a scrape's view at 10,000 workloads (bench/synth.py scale 1, a busy 2-core machine)."""
        namespace = key.namespace
        if not self.namespace_watched(namespace):
            return False
        opt_out = self.opt_out
        if opt_out is None:
            return True
        if opt_out.matches(index.namespace_labels(namespace)):
            return False
        ctrl = index.controller(key)
        return ctrl is None or not opt_out.matches(ctrl.labels)
