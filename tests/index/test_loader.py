"""The bulk-loading part alone (index/loading.py): a :class:`ListLoader` over bare namespace states, without
a :class:`~spreadwatch.index.SpreadIndex`."""

from __future__ import annotations

from typing import Any

from k8s_objects import controller, owner, pod, service
from spreadwatch.index.loading import ListLoader
from spreadwatch.index.state import NamespaceState, Workload
from spreadwatch.model import Controller, Record, parse_object
from spreadwatch.scoring import WorkloadRef


def _record(body: dict[str, Any]) -> Record:
    record = parse_object(body)
    assert record is not None
    return record


def _ctrl(body: dict[str, Any]) -> Controller:
    record = _record(body)
    assert isinstance(record, Controller)
    return record


def _loader() -> tuple[ListLoader, dict[str, NamespaceState]]:
    spaces: dict[str, NamespaceState] = {}
    return ListLoader(lambda name: spaces.setdefault(name, NamespaceState())), spaces


def test_not_loading_takes_nothing_in_bulk() -> None:
    loader, _ = _loader()
    web = _ctrl(controller("Deployment", "web", {"matchLabels": {"app": "web"}}))
    p = _record(pod("p1", {"app": "web"}, "n1"))
    assert loader.split([p]) == ([], [p])
    assert not loader.defer(web)
    assert loader.take(10) == ([], True)


def test_loading_files_pods_once_and_defers_workloads() -> None:
    loader, spaces = _loader()
    loader.start()
    first = _record(pod("p1", {"app": "web"}, "n1"))
    again = _record(pod("p1", {"app": "web"}, "n2"))  # the same pod's second state in one page
    svc = _record(service("web", {"app": "web"}))
    bulk, rest = loader.split([first, svc, again])
    assert (bulk, rest) == ([first], [svc, again])
    web = _ctrl(controller("Deployment", "web", {"matchLabels": {"app": "web"}}))
    rs = _ctrl(controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}, owners=[owner("Deployment", "web")]))
    assert loader.defer(web)
    assert loader.defer(rs)  # stored, not a workload: not deferred
    ns = spaces["default"]
    assert ns.controllers["Deployment"]["web"] is web
    assert ns.controllers["ReplicaSet"]["web-1"] is rs
    assert loader.take(10) == ([web], True)
    assert loader.take(10) == ([], True)  # loading has ended
    assert not loader.defer(web)


def test_a_namespace_with_workloads_takes_the_event_path() -> None:
    loader, spaces = _loader()
    loader.start()
    web = _ctrl(controller("Deployment", "web", {"matchLabels": {"app": "web"}}))
    ns = spaces.setdefault("default", NamespaceState())
    ns.workloads[web.key] = Workload(web, WorkloadRef.of(web))
    p = _record(pod("p1", {"app": "web"}, "n1"))
    assert loader.split([p]) == ([], [p])
    assert not loader.defer(web)


def test_take_by_namespace_within_the_budget_and_forget() -> None:
    loader, _ = _loader()
    loader.start()
    ctrls = [
        _ctrl(controller("StatefulSet", f"db{i}", {"matchLabels": {"app": f"db{i}"}}, namespace=f"ns{i // 2}"))
        for i in range(6)
    ]
    for ctrl in ctrls:
        assert loader.defer(ctrl)
    loader.forget(ctrls[5])
    taken, done = loader.take(1)  # one whole namespace at least
    assert (taken, done) == (ctrls[:2], False)
    taken, done = loader.take(3)
    assert (taken, done) == (ctrls[2:5], True)
