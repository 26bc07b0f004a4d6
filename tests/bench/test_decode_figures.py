"""bench/decode_figures.py at scale 0.005: the floors and the initial-list decoding really do their work.

Nothing is timed or asserted about speed: that the floor decodes and counts every pod and answers every
workload (a floor that skipped work would understate it), and that the initial list the figures time yields
the records of the previous path.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
import pytest

from bench import decode_figures, synth

_WORKLOADS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return list(synth.generate(0.005, seed=1))


def test_the_floor_counts_every_pod_and_answers_every_workload(objects: list[dict[str, Any]]) -> None:
    data = orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    kinds = Counter(str(o["kind"]) for o in objects)
    *_, pods, answers = decode_figures._cold_once(data)
    assert pods == kinds["Pod"] > 0
    assert len(answers) == sum(kinds[k] for k in _WORKLOADS) > 0


def test_the_floor_groups_pods_by_namespace_labels_and_node() -> None:
    # 3 pods of app=a (2 on n1, 1 on n2), 1 pod of app=b: the Deployment of app=a sees 2 on its busiest node, 2 nodes
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}}}
    items = [
        {**pod, "spec": {"nodeName": "n1"}},
        {**pod, "spec": {"nodeName": "n1"}},
        {**pod, "spec": {"nodeName": "n2"}},
        {**pod, "metadata": {"name": "q", "namespace": "ns", "labels": {"app": "b"}}, "spec": {"nodeName": "n1"}},
        {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
         "spec": {"template": {"metadata": {"labels": {"app": "a"}}}}},
        {"kind": "Node", "metadata": {"name": "n1"}},
    ]  # fmt: skip
    decode_s, count_s, workloads_s, pods, answers = decode_figures._cold_once(
        orjson.dumps({"kind": "List", "items": items})
    )
    assert (pods, answers) == (4, [("d", 2, 2)])
    assert min(decode_s, count_s, workloads_s) >= 0


def test_the_initial_list_decodes_every_page_into_the_records_of_the_previous_path(
    objects: list[dict[str, Any]],
) -> None:
    pages = decode_figures.api_pages(objects)
    pods = sum(1 for kind, _, _ in pages if kind == "Pod")
    assert pods == -(-Counter(str(o["kind"]) for o in objects)["Pod"] // decode_figures.PAGE)  # pages of 500
    assert decode_figures._typed_pages(pages) == decode_figures._dict_pages(pages)
