"""Records are frozen msgspec Structs: copied with a changed field, compared, hashed and pickled by fields."""

from __future__ import annotations

import pickle
from typing import Any

import msgspec
import pytest

from spreadwatch.model import (
    Controller,
    Namespace,
    Node,
    OwnerRef,
    Pod,
    PodTemplate,
    Service,
    Taint,
    Toleration,
    WorkloadKey,
    intern_labels,
)
from spreadwatch.selectors import selector_from_set

_LABELS = intern_labels({"app": "web"})
_TEMPLATE = PodTemplate(tolerations=(Toleration("k", "Equal", "v", "NoSchedule"),), node_selector=(("disk", "ssd"),))
_RECORDS: list[tuple[Any, str, Any]] = [  # a record, one of its fields, another value for it
    (Pod("ns", "web-1", _LABELS, "n1", controller=OwnerRef("apps/v1", "ReplicaSet", "web-x")), "node_name", "n2"),
    (Node("n1", _LABELS, (Taint("k", "v", "NoSchedule"),)), "unschedulable", True),
    (Service("ns", "web", _LABELS), "selector", None),
    (Namespace("ns", _LABELS), "name", "other"),
    (
        Controller("ReplicaSet", "apps/v1", "ns", "web-x", "u1", _LABELS, selector_from_set(_LABELS), None, None,
                   _LABELS, _TEMPLATE),
        "replicas",
        3,
    ),
    (_TEMPLATE, "node_selector", ()),
]  # fmt: skip


@pytest.mark.parametrize(("record", "name", "value"), _RECORDS)
def test_replace_changes_one_field_and_equality_is_by_fields(record: Any, name: str, value: Any) -> None:
    changed = msgspec.structs.replace(record, **{name: value})
    assert getattr(changed, name) == value
    assert changed != record
    assert msgspec.structs.replace(changed, **{name: getattr(record, name)}) == record
    assert type(changed) is type(record)


@pytest.mark.parametrize(("record", "name", "value"), _RECORDS)
def test_records_are_frozen_and_pickle_to_an_equal_record(record: Any, name: str, value: Any) -> None:
    with pytest.raises(AttributeError):
        setattr(record, name, value)
    assert pickle.loads(pickle.dumps(record)) == record


def test_hashable_records_hash_by_fields() -> None:
    assert hash(_TEMPLATE) == hash(PodTemplate(_TEMPLATE.tolerations, (("disk", "ssd"),)))
    assert _TEMPLATE.constraint_key == (_TEMPLATE.tolerations, (("disk", "ssd"),), None)
    assert {OwnerRef("v1", "ReplicationController", "rc"), OwnerRef("v1", "ReplicationController", "rc")} == {
        OwnerRef("v1", "ReplicationController", "rc")
    }
    controller = _RECORDS[4][0]
    assert controller.key == WorkloadKey("ns", "ReplicaSet", "web-x")
