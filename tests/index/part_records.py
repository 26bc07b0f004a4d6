"""Records the index's part tests build their parts from: parsed objects, nodes by name with their zones and
the candidate layout of all of them, a workload with its candidate set."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from k8s_objects import GA_ZONE, controller, node
from spreadwatch.index.state import CandidateSet, Workload
from spreadwatch.model import Controller, Node, parse_object
from spreadwatch.report import CandidateLayout
from spreadwatch.scoring import Profile, WorkloadRef, ZoneKey, representative_pod, zone_key


def parsed(body: dict[str, Any]) -> Any:
    """The record of one API object (a test's own: never None)."""
    record = parse_object(body)
    assert record is not None
    return record


def zoned_nodes(
    names_zones: Iterable[tuple[str, str]], profile: Profile
) -> tuple[dict[str, Node], dict[str, ZoneKey | None], CandidateLayout]:
    """Nodes (name, GA zone label) by name, their zones under ``profile``, and their layout as one candidate
    set (names in order)."""
    nodes: dict[str, Node] = {}
    zones: dict[str, ZoneKey | None] = {}
    by_zone: dict[ZoneKey | None, list[str]] = {}
    for name, zone in names_zones:
        n = nodes[name] = parsed(node(name, zone, key=GA_ZONE))
        zones[name] = zone_key(n.labels, profile)
        by_zone.setdefault(zones[name], []).append(name)
    return nodes, zones, CandidateLayout(by_zone, {})


def web_workload(
    layout: CandidateLayout, replicas: int = 1, spec: dict[str, Any] | None = None, **fields: Any
) -> tuple[Workload, CandidateSet]:
    """StatefulSet ``web`` (pods labelled app=web, ``spec`` its pod template's) as a workload with its next
    pod and ``fields``, and one candidate set of ``layout``'s nodes for its constraints."""
    body = controller(
        "StatefulSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=replicas, template_spec=spec
    )
    ctrl = parsed(body)
    assert isinstance(ctrl, Controller)
    w = Workload(ctrl, WorkloadRef.of(ctrl), pod=representative_pod(ctrl, ())[0], **fields)
    names = frozenset(name for names in layout.by_zone.values() for name in names)
    return w, CandidateSet(names, layout, ctrl.template)
