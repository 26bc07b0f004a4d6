"""Records decoded from watch events share their sub-objects as listed ones do, and the tables that share them
stay bounded under churn (model/sharing.py, decode/convert.py)."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from spreadwatch.decode import Converter, decode_event, decode_list_page
from spreadwatch.model import SHARED_OWNERS, SHARED_TEMPLATES, Node, Pod, sharing

_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def _pod(name: str, rollout: int) -> dict[str, Any]:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"web-{rollout}", "uid": f"uid-web-{rollout}",
             "controller": True, "blockOwnerDeletion": True}  # fmt: skip
    labels = {"app": "web", "pod-template-hash": f"h{rollout}"}
    return {
        "metadata": {"namespace": "shop", "name": name, "uid": f"uid-{name}", "labels": labels,
                     "ownerReferences": [owner]},
        "spec": {"nodeName": "n1", "tolerations": _TOLERATIONS, "nodeSelector": {"disk": "ssd"}},
        "status": {"phase": "Running"},
    }  # fmt: skip


def _watched(obj: dict[str, Any], event: str = "ADDED") -> Pod:
    """One watch line decoded with a converter of its own (the watch's converters live a thousand lines)."""
    item = decode_event(orjson.dumps({"type": event, "object": obj}), "Pod", "v1", Converter()).item
    assert isinstance(item, Pod)
    return item


def test_pods_decoded_from_watch_events_share_labels_owner_and_template() -> None:
    a, b = _watched(_pod("web-1-a", 1)), _watched(_pod("web-1-b", 1))
    assert a.labels is b.labels
    assert a.controller is not None and a.controller is b.controller
    assert a.template.tolerations and a.template is b.template
    page = orjson.dumps({"metadata": {"resourceVersion": "7"}, "items": [_pod("web-1-c", 1)]})
    listed, _ = decode_list_page(page, "Pod", "v1", Converter())
    c = listed[0]
    assert isinstance(c, Pod)
    assert (c.labels, c.controller, c.template) == (a.labels, a.controller, a.template)
    assert c.labels is a.labels and c.controller is a.controller and c.template is a.template  # listed = watched


def test_nodes_decoded_from_watch_events_share_their_taints() -> None:
    def node(name: str) -> Node:
        obj = {"metadata": {"name": name, "labels": {"zone": "a"}},
               "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}}  # fmt: skip
        item = decode_event(orjson.dumps({"type": "MODIFIED", "object": obj}), "Node", "v1", Converter()).item
        assert isinstance(item, Node)
        return item

    first, second = node("n1"), node("n2")
    assert first.taints and first.taints is second.taints and first.labels is second.labels


def test_owners_and_templates_of_replaced_pods_do_not_pile_up() -> None:
    # Rollouts of 3 pods, each rollout a new ReplicaSet (owner), template hash and nodeSelector; each pod
    # decoded from its own watch line and the previous rollout's pods dropped, as the index drops replaced
    # pods. Over 3 sweeps' worth of rollouts, the tables stay within about twice a sweep's threshold (a sweep
    # spread over the new values that follow it): the first rollouts' owner and template are gone, the last
    # one's still shared.
    bound = 2 * sharing._MIN_SWEEP + len(SHARED_OWNERS) + len(SHARED_TEMPLATES)
    first: list[object] = []
    held: list[Pod] = []
    for rollout in range(3 * sharing._MIN_SWEEP):
        selector = {"disk": f"ssd-{rollout}"}
        held = []
        for i in range(3):
            obj = _pod(f"web-{rollout}-{i}", rollout)
            obj["spec"]["nodeSelector"] = selector
            held.append(_watched(obj))
        owner = held[0].controller
        assert owner is not None
        if not first:  # (equal keys, not the shared objects themselves)
            first = [msgspec.structs.replace(owner), msgspec.structs.replace(held[0].template)]
        assert len(SHARED_OWNERS) <= bound and len(SHARED_TEMPLATES) <= bound
    assert len({id(p.template) for p in held}) == 1 and len({id(p.controller) for p in held}) == 1
    assert first[0] not in SHARED_OWNERS._values and first[1] not in SHARED_TEMPLATES._values
    assert owner is not None and SHARED_OWNERS.get(msgspec.structs.replace(owner)) is owner  # still shared
