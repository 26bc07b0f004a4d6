"""Helpers for the monitoring tests: the metric-name contract, PromQL metric extraction, the dashboard's
targets, and a throw-away Prometheus server (Debian's ``prometheus`` binary) on a loopback port.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from metrics_contract import (
    COUNTERS,
    HISTOGRAMS,
    NODE_FAMILIES,
    OPERATOR_GAUGES,
    PLACEMENT_FAMILIES,
    PREDICTION_FAMILIES,
    WINDOW_FAMILIES,
    WORKLOAD_FAMILIES,
)
from ports import free_port
from processes import stop_process

REPO_ROOT = Path(__file__).resolve().parents[2]
FILES_DIR = REPO_ROOT / "charts" / "spreadwatch" / "files"
DASHBOARD = FILES_DIR / "spreadwatch-dashboard.json"
RULES = FILES_DIR / "spreadwatch-rules.yaml"
RULE_TESTS_DIR = Path(__file__).resolve().parent / "rules"

# --- the metrics contract (/work/briefs/metrics_contract.md, docs/metrics.md) -----------------------------

CONTRACT_GAUGES = (
    WORKLOAD_FAMILIES | WINDOW_FAMILIES | PLACEMENT_FAMILIES | NODE_FAMILIES | OPERATOR_GAUGES | PREDICTION_FAMILIES
)
CONTRACT_COUNTERS = COUNTERS
CONTRACT_HISTOGRAMS = HISTOGRAMS
#: Every series name a query may use: the contract's samples (histograms as _bucket/_sum/_count) and `up`.
ALLOWED_SERIES = frozenset(
    CONTRACT_GAUGES
    | CONTRACT_COUNTERS
    | {f"{h}{suffix}" for h in CONTRACT_HISTOGRAMS for suffix in ("_bucket", "_sum", "_count")}
    | {"up"}
)

# --- PromQL -------------------------------------------------------------------------------------------------

_KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
     "inf", "nan", "atan2"}
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\[\]]*\]")
_LABEL_LISTS = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_CALL = re.compile(r"\s*(?:(?:by|without)\s*)?\(")


def series_names(expr: str) -> set[str]:
    """Metric names a PromQL expression selects: identifiers that are not functions, keywords or labels.

    Good enough for our queries (no nested braces in label values, no ``__name__`` matchers). O(len(expr)).
    """
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub(" ", text)
    text = _RANGES.sub(" ", text)
    text = _LABEL_LISTS.sub(r"\1", text)
    names = set()
    for m in _IDENT.finditer(text):
        before = text[m.start() - 1] if m.start() else " "
        if before.isdigit() or before in ".$":  # 1e3, 0.5, $var
            continue
        if _CALL.match(text, m.end()):  # function, or aggregation (`sum by (x) (...)` is now `sum by (...)`)
            continue
        if m.group(0).lower() in _KEYWORDS:
            continue
        names.add(m.group(0))
    return names


# --- dashboard ----------------------------------------------------------------------------------------------


def load_dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def iter_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel, including those nested in collapsed rows."""
    for panel in panels:
        yield panel
        yield from iter_panels(panel.get("panels", []))


@dataclass(frozen=True)
class Target:
    panel: str
    ref: str
    expr: str


def dashboard_targets(dashboard: Mapping[str, Any]) -> list[Target]:
    return [
        Target(panel["title"], t["refId"], t["expr"])
        for panel in iter_panels(dashboard["panels"])
        for t in panel.get("targets", [])
    ]


#: Grafana's built-in interval variables, replaced the way Grafana would for a 1 s scrape interval.
GRAFANA_INTERVALS = {"__rate_interval": "10s", "__interval": "2s", "__range": "1m"}


def substitute(expr: str, variables: Mapping[str, str]) -> str:
    """Replace ``$var``/``${var}`` by values (Grafana's interpolation, single values only)."""
    values = {**GRAFANA_INTERVALS, **variables}

    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(f"no value for dashboard variable ${name} in {expr!r}")
        return values[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", repl, expr)


# --- rules --------------------------------------------------------------------------------------------------


def load_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text())
    return [rule for group in doc["groups"] for rule in group["rules"]]


# --- binaries -----------------------------------------------------------------------------------------------


def require_binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(f"{name} not found on PATH: run `make prometheus-tools` (Debian package prometheus)")
    return path


# --- a Prometheus server ------------------------------------------------------------------------------------


class PrometheusError(RuntimeError):
    pass


class Prometheus:
    """``prometheus`` on 127.0.0.1:<free port> with its own storage dir; stopped by :meth:`stop`."""

    def __init__(self, binary: str, workdir: Path, config: Mapping[str, Any]) -> None:
        self.workdir = workdir
        self.config_path = workdir / "prometheus.yml"
        self.config_path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "prometheus.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                binary,
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=info",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PrometheusError(f"prometheus exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise PrometheusError(f"prometheus not ready after {timeout}s:\n{self.log_tail()}")

    def api(self, path: str, params: Mapping[str, str] | list[tuple[str, str]] | None = None) -> Any:
        """GET /api/v1/<path>; returns ``data``; raises PrometheusError on an error status."""
        query = urllib.parse.urlencode(params or {})
        url = f"{self.url}/api/v1/{path}" + (f"?{query}" if query else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as err:
            body = json.loads(err.read() or b"{}")
            raise PrometheusError(f"{path} {params}: HTTP {err.code}: {body.get('error')}") from None
        if body.get("status") != "success":
            raise PrometheusError(f"{path} {params}: {body}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query now; the result vector (or a one-element list for a scalar)."""
        data = self.api("query", {"query": expr})
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def stop(self) -> None:
        stop_process(self.proc, grace=30)
        self._log.close()
