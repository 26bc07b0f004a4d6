"""A metric family, defined once: :class:`Family` — name, type, help, labels, unit and the function that makes
its samples — from which both outputs come.

The model is kube-state-metrics' ``internal/store`` (one ``FamilyGenerator`` per family: name, help, type and
a function from an object to its samples) and client_python's custom collectors:

* :meth:`Family.lines` formats the Prometheus text format 0.0.4 or OpenMetrics 1.0 directly, a block of
  sources at a time (the fast renderer of the workload families, 400,000 series at the envelope: about 10×
  faster than building prometheus_client ``Metric`` objects and formatting them with ``generate_latest``);
* :meth:`Family.metric` builds the prometheus_client ``Metric`` of the same samples (``collect()``: tests and
  generic registries);
* :meth:`Family.describe` is the family without samples, for a collector's ``describe()``: a registry then
  refuses a second collector of the same series, as client_python's does.

A family reads one kind of *source*: a workload's row (``metrics/workloads.py``), the operator's state
(``metrics/selfmetrics.py``) or the build's labels. Sources carry a *key*: the values of the family's
``keyed_by`` labels (a workload's namespace, kind and name; none for the operator's state), given by the
collector; ``samples(source)`` gives the values of the family's own ``labels`` and the value of each sample.

The names are a contract (docs/metrics.md, whose table a test compares with the collectors): the Grafana
dashboard, the alerts and the Helm chart rely on them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeVar

from prometheus_client.core import Metric

from spreadwatch.metrics.histogram import HistogramSnapshot
from spreadwatch.report import Health

__all__ = [
    "HEALTH_STATES",
    "NODE_LABELS",
    "WORKLOAD_LABELS",
    "ZONE_LABELS",
    "Family",
    "FamilyType",
    "Sample",
    "Tails",
    "Value",
    "escape_label_value",
    "unique",
]

FamilyType = Literal["gauge", "counter", "histogram"]
#: A sample's value.
Value = int | float | HistogramSnapshot
#: One sample as a ``samples`` function gives it: the family's own label values (after the source's key),
#: then its value at the family's ``value_at`` (a source's own tuple may serve, with more fields).
Sample = tuple[Any, ...]

S = TypeVar("S")

WORKLOAD_LABELS: Final = ("namespace", "kind", "workload")
ZONE_LABELS: Final = ("zone", "region")
NODE_LABELS: Final = ("node", "zone", "region")
#: spreadwatch_workload_health carries one series per state (value 1 for the current one), in the order of
#: the :class:`~spreadwatch.report.Health` enum.
HEALTH_STATES: Final = tuple(h.value for h in Health)


def escape_label_value(value: str) -> str:
    """Escape ``\\``, ``"`` and newlines for a label value (both formats). O(len)."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def _le(bound: float) -> str:
    """A histogram bucket's ``le`` label, as prometheus_client writes it."""
    return "+Inf" if bound == float("inf") else repr(float(bound))


class Tails(dict[tuple[str, ...] | str, str]):
    """A family's own label values → the text from the end of the source's key to the value (``,zone="a",
    region="r"} `` after a workload's labels), escaped once per render: every other sample with the same
    values costs one dict hit (a C lookup). Keyed by the tuple of values, or by the value itself for a family
    with one label of its own (no tuple to build per sample). One per label-name tuple, shared by the
    families of a render."""

    def __init__(self, names: tuple[str, ...], after_key: bool) -> None:
        super().__init__()
        self.names = names
        self.after_key = after_key

    def __missing__(self, key: tuple[str, ...] | str) -> str:
        values = (key,) if isinstance(key, str) else key
        own = ",".join(f'{n}="{escape_label_value(v)}"' for n, v in zip(self.names, values, strict=True))
        sep = "," if own and self.after_key else ""
        text = f"{sep}{own}}} " if own or self.after_key else " "
        self[key] = text
        return text


@dataclass(frozen=True, slots=True)
class Family(Generic[S]):
    """One metric family (see the module docstring). ``name`` is what a sample is called (counters end in
    ``_total``). Its samples come from one of two functions of a source:

    * ``value``: the one sample of a family without labels of its own (None: no sample) — the common case;
    * ``samples``: every sample, each a tuple holding the family's own label values first and its value at
      ``value_at`` (default: right after them). A source's own tuples serve as they are — a report's
      ``ZoneEntry`` (zone, region, pods, ...) or ``NodeEntry`` (node, zone, region, pods, score) — so a
      scrape builds no object per sample (kube-state-metrics' ``Metric``: label values and a value).

    ``sparse``: the family is left out, header and all, when no source has a sample (an optional feature's
    families, e.g. ``--compare-profile``'s)."""

    name: str
    type: FamilyType
    help: str
    labels: tuple[str, ...] = field(default=(), kw_only=True)
    keyed_by: tuple[str, ...] = field(default=(), kw_only=True)
    value: Callable[[S], Value | None] | None = field(default=None, kw_only=True)
    samples: Callable[[S], Sequence[Sample]] | None = field(default=None, kw_only=True)
    value_at: int | None = field(default=None, kw_only=True)
    unit: str = field(default="", kw_only=True)
    sparse: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        if (self.value is None) == (self.samples is None):
            raise ValueError(f"{self.name}: give its samples by exactly one of value= and samples=")
        if self.value is not None and self.labels:
            raise ValueError(f"{self.name}: a family with labels of its own gives its samples by samples=")

    @property
    def family(self) -> str:
        """The family name (OpenMetrics ``# TYPE`` line, prometheus_client): a counter without ``_total``."""
        return self.name.removesuffix("_total") if self.type == "counter" else self.name

    @property
    def label_names(self) -> tuple[str, ...]:
        """Every label of a sample: the key's, then the family's own (a histogram adds ``le``)."""
        return (*self.keyed_by, *self.labels)

    def header(self, openmetrics: bool) -> str:
        """``# HELP``/``# TYPE`` (and ``# UNIT`` in OpenMetrics) lines. O(1)."""
        name = self.family if openmetrics else self.name
        text = f"# HELP {name} {self.help}\n# TYPE {name} {self.type}\n"
        if openmetrics and self.unit:
            text += f"# UNIT {name} {self.unit}\n"
        return text

    def tails(self) -> Tails:
        """A fresh :class:`Tails` for this family's own labels."""
        return Tails(self.labels, bool(self.keyed_by))

    def samples_of(self, source: S) -> Sequence[tuple[tuple[str, ...], Value]]:
        """The samples of one source as (own label values, value) pairs, whichever function gives them.
        O(its samples)."""
        if self.value is not None:
            value = self.value(source)
            return () if value is None else (((), value),)
        assert self.samples is not None
        n = len(self.labels)
        at = n if self.value_at is None else self.value_at
        return [(tuple(x[:n]), x[at]) for x in self.samples(source)]

    def lines(
        self, keys: Sequence[str], sources: Sequence[S], openmetrics: bool, *, block: int, tails: Tails | None = None
    ) -> Iterator[str]:
        """The family's exposition text: its header, then the lines of up to ``block`` sources at a time (a
        consumer may write each piece out as it goes). ``keys[i]`` is the text of ``sources[i]``'s key labels
        (``namespace="a",kind="b",workload="c"``; "" without ``keyed_by``), escaped. Nothing for a sparse
        family without samples. O(samples) time, O(block's samples) memory; any thread. A block is one
        ``join`` of a list comprehension's lines (~30 % less than a line at a time)."""
        value, samples = self.value, self.samples
        if self.sparse and not any(map(self.samples_of if samples is None else samples, sources)):
            return
        if self.type == "histogram":
            raise ValueError(f"{self.name}: a histogram is formatted from metric(), by prometheus_client")
        yield self.header(openmetrics)
        tail = tails if tails is not None else self.tails()
        prefix = f"{self.name}{{" if self.label_names else self.name
        n = len(self.labels)
        own: int | slice = 0 if n == 1 else slice(n)  # (one label: the value itself is the key of its tail)
        at = n if self.value_at is None else self.value_at
        for a in range(0, len(sources), block):
            pairs = zip(keys[a : a + block], sources[a : a + block], strict=True)
            if value is not None:
                end = tail[()]
                text = "".join([f"{prefix}{k}{end}{v}\n" for k, s in pairs if (v := value(s)) is not None])
            else:
                assert samples is not None
                text = "".join([f"{prefix}{k}{tail[x[own]]}{x[at]}\n" for k, s in pairs for x in samples(s)])
            if text:
                yield text

    def describe(self) -> Metric:
        """The family without samples: its name and type, for a collector's ``describe()``. O(1)."""
        return Metric(self.family, self.help, self.type, self.unit)

    def metric(self, keys: Sequence[Sequence[str]], sources: Sequence[S]) -> Metric | None:
        """The same samples as :meth:`lines`, as a prometheus_client ``Metric``; ``keys[i]`` the values of
        ``sources[i]``'s key labels. None for a sparse family without samples. O(samples)."""
        metric = self.describe()
        names = self.label_names
        for key, source in zip(keys, sources, strict=True):
            for values, value in self.samples_of(source):
                labels = dict(zip(names, (*key, *values), strict=True))
                if isinstance(value, HistogramSnapshot):
                    for bound, count in zip(value.bounds, value.cumulative, strict=True):
                        metric.add_sample(f"{self.name}_bucket", {**labels, "le": _le(bound)}, count)
                    metric.add_sample(f"{self.name}_count", labels, value.count)
                    metric.add_sample(f"{self.name}_sum", labels, value.sum)
                else:
                    metric.add_sample(self.name, labels, value)
        if self.sparse and not metric.samples:
            return None
        return metric


def unique(families: Sequence[Family[S]]) -> tuple[Family[S], ...]:
    """``families`` as a tuple, after checking no two share a name (a definition error). O(families)."""
    names = [f.family for f in families]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"metric families defined twice: {', '.join(repeated)}")
    return tuple(families)
