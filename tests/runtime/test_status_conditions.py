"""The SpreadReport status: report fields + a metav1.Condition, valid against the CRD schema; Events on
health changes only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from handler_fakes import deployment, ev, pipeline, pod_of, web_cluster

from k8s_objects import GA_ZONE, controller
from spreadwatch.report import Health, SpreadReport, error_report
from spreadwatch.runtime.writing.status import (
    balanced_condition,
    build_status,
    content_digest,
    find_condition,
    kept_condition,
    rfc3339,
)
from spreadwatch.runtime.writing.store import HEALTH_LABEL
from spreadwatch.scoring import WorkloadRef

CRD = Path(__file__).resolve().parents[2] / "crds" / "spreadreports.spreadwatch.io.yaml"


def _status_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    return schema


def validate(value: Any, schema: dict[str, Any], path: str = "status") -> list[str]:
    """A small structural-schema check (type, enum, required, pattern, bounds, maxItems, maxLength)."""
    errors: list[str] = []
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool}
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{path}: expected integer, got {value!r}"]
    elif kind in types and not isinstance(value, types[kind]):
        return [f"{path}: expected {kind}, got {value!r}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} < {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} > {schema['maximum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path}: longer than {schema['maxLength']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if kind == "array":
        if len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{path}: more than {schema['maxItems']} items")
        for i, item in enumerate(value):
            errors += validate(item, schema.get("items", {}), f"{path}[{i}]")
    if kind == "object":
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}.{key}: required")
        props = schema.get("properties")
        for key, item in value.items():
            if props is not None:
                if key not in props:
                    errors.append(f"{path}.{key}: not in the schema (would be pruned)")
                else:
                    errors += validate(item, props[key], f"{path}.{key}")
            elif "additionalProperties" in schema:
                errors += validate(item, schema["additionalProperties"], f"{path}.{key}")
    return errors


def _report(health: Health, reasons: tuple[str, ...] = (), skip: str = "") -> SpreadReport:
    base = error_report(WorkloadRef("ns", "Deployment", "web", "u1", "apps/v1"), "v1.28", 3, "x")
    return msgspec.structs.replace(base, health=health, reasons=reasons, skipped=bool(skip), skip_reason=skip)


@pytest.mark.parametrize(
    ("health", "status"),
    [
        (Health.BALANCED, "True"),
        (Health.IMBALANCED, "False"),
        (Health.SINGLE_POINT_OF_FAILURE, "False"),
        (Health.SKIPPED, "Unknown"),
        (Health.ERROR, "Unknown"),
    ],
)
def test_condition_status_and_reason_per_health(health: Health, status: str) -> None:
    cond = balanced_condition(_report(health, ("NodeSkew: 3 > 1",)), 4, None, "2026-01-01T00:00:00Z")
    assert cond == {
        "type": "Balanced",
        "status": status,
        "reason": health.value,
        "message": "NodeSkew: 3 > 1",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": 4,
    }
    assert not validate(cond, _status_schema()["properties"]["conditions"]["items"])


def test_message_joins_reasons_or_explains() -> None:
    two = _report(Health.SINGLE_POINT_OF_FAILURE, ("AllPodsOnOneNode: 3 pods on a", "AllPodsInOneZone: z"))
    assert balanced_condition(two, 1, None, "t")["message"] == "AllPodsOnOneNode: 3 pods on a; AllPodsInOneZone: z"
    skipped = _report(Health.SKIPPED, skip="topologySpreadConstraints")
    assert "topologySpreadConstraints" in balanced_condition(skipped, 1, None, "t")["message"]
    assert "spread" in balanced_condition(_report(Health.BALANCED), 1, None, "t")["message"]


@pytest.mark.parametrize(
    "keep",
    [pytest.param(lambda c: c, id="whole-previous-condition"), pytest.param(kept_condition, id="kept_condition")],
)
def test_last_transition_time_changes_only_with_status_or_reason(keep: Any) -> None:
    """The writer keeps only ``kept_condition`` of the condition it wrote: the next one is the same as from the
    whole condition."""
    first = balanced_condition(_report(Health.IMBALANCED, ("NodeSkew: 2 > 1",)), 1, None, "T1")
    same = balanced_condition(_report(Health.IMBALANCED, ("NodeSkew: 3 > 1",)), 2, keep(first), "T2")
    assert same["lastTransitionTime"] == "T1"
    assert same["message"] == "NodeSkew: 3 > 1"
    spof = balanced_condition(_report(Health.SINGLE_POINT_OF_FAILURE), 2, keep(same), "T3")  # new reason
    assert spof["lastTransitionTime"] == "T3"
    ok = balanced_condition(_report(Health.BALANCED), 2, keep(spof), "T4")
    assert (ok["status"], ok["lastTransitionTime"]) == ("True", "T4")
    assert "message" not in kept_condition(ok)  # type: ignore[operator]


def test_digest_ignores_last_update_time_only() -> None:
    report = _report(Health.BALANCED)
    a = build_status(report, 1, None, "2026-01-01T00:00:00Z")
    b = {**a, "lastUpdateTime": "2027-01-01T00:00:00Z"}
    assert content_digest(a) == content_digest(b)
    assert content_digest(a) == content_digest(dict(reversed(list(a.items()))))
    assert content_digest(a) != content_digest({**a, "observedGeneration": 2})
    assert find_condition(a) == a["conditions"][0]
    assert find_condition({"conditions": ["junk", {"type": "Other"}]}) is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rfc3339())


def test_written_statuses_validate_against_the_crd_schema() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-a1"]))
    bad = controller(
        "Deployment", "broken", {"matchExpressions": [{"key": "a", "operator": "Nope"}]}, {}, namespace="shop"
    )
    skip = controller(
        "StatefulSet",
        "spread",
        {"matchLabels": {"app": "spread"}},
        {"app": "spread"},
        namespace="shop",
        template_spec={
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]
        },
    )
    p.feed(ev("ADDED", bad), ev("ADDED", skip))
    p.settle()
    schema = _status_schema()
    healths = set()
    for (ns, name), obj in p.api.objects.items():
        errors = validate(obj["status"], schema)
        assert not errors, (ns, name, errors)
        healths.add(obj["status"]["health"])
    assert healths == {"SinglePointOfFailure", "Error", "Skipped"}


def _hard(name: str, key: str) -> dict[str, Any]:
    """A StatefulSet whose pods carry a DoNotSchedule constraint on ``key`` (maxSkew 1), selecting web's pods."""
    constraint = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2}
    constraint["labelSelector"] = {"matchLabels": {"app": "web"}}
    return controller(
        "StatefulSet", name, {"matchLabels": {"app": name}}, {"app": name}, namespace="shop",
        template_spec={"topologySpreadConstraints": [constraint]},
    )  # fmt: skip


def test_v129_filter_statuses_validate_against_the_crd_schema() -> None:
    """v1.29: PodTopologySpread's Filter rejects zone-a (web's 2 pods there, 0 elsewhere: 2 + 0 - 0 > 1), and a
    constraint on a key no node has leaves the next pod Pending: both statuses fit the schema."""
    p = pipeline(profile="v1.29")
    p.feed(*web_cluster(pods_on=["node-a1", "node-a1"]))
    p.feed(ev("ADDED", _hard("zonal", GA_ZONE)), ev("ADDED", _hard("pending", "rack")))
    p.settle()
    schema = _status_schema()
    statuses = {name: obj["status"] for (_, name), obj in p.api.objects.items()}
    for name, status in statuses.items():
        assert not validate(status, schema), (name, validate(status, schema))
    zonal, pending = statuses["statefulset-zonal"], statuses["statefulset-pending"]
    assert zonal["excludedNodes"] == {"PodTopologySpread": 2} and zonal["candidateNodes"] == 4
    assert zonal["filteredNodes"] == [{"node": "node-a1", "zone": "zone-a", "region": "", "pods": 2}]
    assert zonal["constraints"] == [
        {"topologyKey": GA_ZONE, "maxSkew": 1, "minDomains": 2, "skew": 2, "eligibleDomains": 3, "satisfied": False}
    ]
    assert zonal["health"] == "SinglePointOfFailure" and zonal["nextPodSchedulable"] is True
    assert f"ConstraintViolated: {GA_ZONE} skew 2 > maxSkew 1 (DoNotSchedule)" in zonal["reasons"]
    assert pending["health"] == "Unschedulable" and pending["nextPodSchedulable"] is False
    assert pending["unschedulablePlugin"] == "PodTopologySpread"
    assert pending["unschedulableReason"] == (
        "0/6 nodes are available: 6 node(s) didn't match pod topology spread constraints (missing required label)."
    )


def test_event_on_health_change_only() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    p.settle()
    assert p.api.events == []  # a first Balanced report is no news
    p.feed(ev("ADDED", pod_of("web", 5, "node-a1")), ev("ADDED", pod_of("web", 6, "node-a1")))
    p.settle()
    assert [(e["type"], e["reason"]) for e in p.api.events] == [("Warning", "Imbalanced")]
    assert "Balanced -> Imbalanced" in p.api.events[0]["message"]
    assert "NodeSkew" in p.api.events[0]["message"]
    p.feed(ev("MODIFIED", deployment("web", generation=2)))  # same health
    p.settle()
    assert len(p.api.events) == 1
    p.feed(ev("DELETED", pod_of("web", 5, "node-a1")), ev("DELETED", pod_of("web", 6, "node-a1")))
    p.settle()
    assert [(e["type"], e["reason"]) for e in p.api.events][-1] == ("Normal", "Balanced")


def test_a_new_report_posts_no_event_even_with_a_problem_its_health_label_tells() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-a1"]))
    p.settle()
    assert p.report("shop", "deployment-web")["health"] == "SinglePointOfFailure"
    assert p.api.events == []  # no transition: the verdict is in the report (and its label)
    labels = p.api.objects[("shop", "deployment-web")]["metadata"]["labels"]
    assert labels[HEALTH_LABEL] == "SinglePointOfFailure"
    moved = [ev("DELETED", pod_of("web", 1, "node-a1")), ev("ADDED", pod_of("web", 1, "node-b1"))]
    p.feed(*moved, ev("ADDED", pod_of("web", 2, "node-c1")))  # one pod per zone
    p.settle()
    assert [(e["type"], e["reason"]) for e in p.api.events] == [("Normal", "Balanced")]
    assert "SinglePointOfFailure -> Balanced" in p.api.events[0]["message"]
    assert p.api.objects[("shop", "deployment-web")]["metadata"]["labels"][HEALTH_LABEL] == "Balanced"


def test_events_can_be_disabled() -> None:
    quiet = pipeline(events=False)
    quiet.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    quiet.settle()
    quiet.feed(ev("ADDED", pod_of("web", 5, "node-a1")), ev("ADDED", pod_of("web", 6, "node-a1")))
    quiet.settle()
    assert quiet.report("shop", "deployment-web")["health"] == "Imbalanced"  # a transition, written
    assert quiet.api.events == []
    assert quiet.writer.stats.events == 0


def test_a_failed_event_does_not_fail_the_write() -> None:
    p = pipeline()
    p.feed(*web_cluster(pods_on=["node-a1", "node-b1", "node-c1"]))
    p.settle()
    p.api.fail_next["event"] = [500]
    p.feed(ev("ADDED", pod_of("web", 5, "node-a1")), ev("ADDED", pod_of("web", 6, "node-a1")))
    p.settle()
    assert [c.verb for c in p.api.calls][-1] == "event"  # the Event was tried (and failed)
    assert p.api.events == []
    assert p.report("shop", "deployment-web")["health"] == "Imbalanced"
    assert p.writer.stats.failures == 0
    assert p.writer.pending == 0  # not retried: an Event is best effort


def test_a_new_leader_posts_an_event_when_the_listed_health_changes() -> None:
    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web", "uid": "uid-web"}
    p = pipeline()
    p.api.put("shop", "deployment-web", workload, {"health": "Balanced", "pods": 3})  # a previous leader's
    p.api.put("shop", "deployment-api", {**workload, "name": "api", "uid": "uid-api"})  # no status: no health
    p.feed(*web_cluster(pods_on=["node-a1", "node-a1"]), *web_cluster(name="api", pods_on=["node-b1", "node-b1"]))
    p.settle()
    assert p.report("shop", "deployment-api")["health"] == "SinglePointOfFailure"
    assert [(e["report"], e["reason"]) for e in p.api.events] == [("deployment-web", "SinglePointOfFailure")]
    assert "Balanced -> SinglePointOfFailure" in p.api.events[0]["message"]
