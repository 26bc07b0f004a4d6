"""docs/metrics.md documents exactly the families the collectors expose: names, types, labels and help."""

from __future__ import annotations

import re
from pathlib import Path

from metrics_fixture import index, with_placement
from prometheus_client.registry import Collector

from spreadwatch.metrics import (
    DurationHistogram,
    MetricsOptions,
    OperatorCollector,
    OperatorState,
    StaticSource,
    WorkloadCollector,
    registry_for,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
ROW = re.compile(
    r"^\| `(?P<name>spreadwatch_[a-z_]+)` \| (?P<type>gauge|counter|histogram) \| (?P<unit>[^|]+) \| "
    r"(?P<labels>[^|]+) \| [^|]+ \| (?P<help>[^|]+) \|$"
)
Doc = dict[str, tuple[str, str, frozenset[str], str]]  # name -> (type, unit, labels, help)


def documented() -> Doc:
    out: Doc = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line)
        if m is None:
            continue
        labels = frozenset(re.findall(r"`([a-z_]+)`", m["labels"]))
        unit = "" if m["unit"].strip() == "—" else m["unit"].strip()
        assert m["name"] not in out, f"{m['name']} documented twice"
        out[m["name"]] = (m["type"], unit, labels, m["help"].strip())
    return out


def exposed() -> Doc:
    """Every family for the fixture: workloads in default and all modes, and a busy operator state."""
    compute = DurationHistogram()
    compute.observe(0.001)
    state = OperatorState(
        events_by_kind={"Pod": 1},
        placements={"v1.28": {"best_node": 1}},
        writes_by_result={"created": 1},
        api_errors_by_code={"500": 1},
        compute_durations=compute.snapshot(),
        index_objects={"Pod": 1},
    )
    collectors: list[Collector] = [
        *registry_for(index(), MetricsOptions()).collectors(),
        WorkloadCollector(index(), MetricsOptions(node_series="all")),
        WorkloadCollector(index(compare="v1.29"), MetricsOptions()),  # --compare-profile families
        WorkloadCollector(with_placement(index()), MetricsOptions()),  # the operator's placement check
        WorkloadCollector(index("v1.29", prediction=True), MetricsOptions()),  # the whole profile's prediction
        OperatorCollector(StaticSource(state)),
    ]
    out: Doc = {}
    for collector in collectors:
        for family in collector.collect():
            name = family.name + ("_total" if family.type == "counter" else "")
            labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
            assert family.samples, f"{name} has no samples in the fixture"
            entry = (family.type, family.unit, labels, family.documentation)
            assert out.setdefault(name, entry) == entry
    return out


def test_docs_table_matches_the_collectors_both_ways() -> None:
    docs, code = documented(), exposed()
    assert sorted(set(docs) - set(code)) == [], "documented but not exposed"
    assert sorted(set(code) - set(docs)) == [], "exposed but not documented"
    for name in sorted(docs):
        assert docs[name] == code[name], name


def test_every_contract_family_is_documented() -> None:
    assert len(documented()) == 48
