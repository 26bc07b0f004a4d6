"""The typed JSON decoder (spreadwatch.decode) gives exactly what the reference parser gives.

Every case compares the JSON path of ``load_snapshot`` (msgspec, straight into records) with the reference
path (dicts → ``parse_object``): the same records, or the same one-line ObjectError naming object and field.
"""

from __future__ import annotations

import copy
import io
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import synth
from k8s_objects import controller, node, owner, pod, service
from spreadwatch.decode import Converter, Malformed, Unparsed, decode_json, decode_list_page, decode_page, settle
from spreadwatch.errors import ObjectError, SnapshotError
from spreadwatch.model import Pod, parse_object
from spreadwatch.snapshot import Snapshot, iter_documents, load_snapshot

ROOT = Path(__file__).resolve().parents[1]
_RECORD_LISTS = ("nodes", "pods", "services", "controllers", "namespaces", "claims", "volumes", "ignored")


def _outcome(load: Any) -> tuple[Any, ...] | str:
    """The snapshot's records, or the error's one line (without the file name a file's errors start with)."""
    try:
        snap = load()
    except ObjectError as err:
        return f"ObjectError: {ObjectError(err.ref.rpartition('.json: ')[2], err.path, err.problem)}"
    return tuple(getattr(snap, k) for k in _RECORD_LISTS)


def _both(tmp_path: Path, objects: list[Any], indent: bool = False) -> tuple[Any, Any]:
    """(typed JSON path, reference path) outcomes of the same objects in a ``kind: List`` file."""
    path = tmp_path / "snap.json"
    option = orjson.OPT_INDENT_2 if indent else 0
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, option=option))
    typed = _outcome(lambda: load_snapshot([path]))
    reference = _outcome(lambda: Snapshot.from_objects(objects))
    return typed, reference


def _rs_pod() -> dict[str, Any]:
    p = pod("web-1", {"app": "web"}, "n1", owners=[owner("ReplicaSet", "web-abc")])
    p["metadata"]["annotations"] = {"note": "x"}
    p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    p["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}]
    p["spec"]["nodeSelector"] = {"disk": "ssd"}
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                ]
            }
        }
    }
    p["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "zone"},
        {
            "maxSkew": 2,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"},
                              "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            "matchLabelKeys": ["pod-template-hash"],
            "minDomains": 3,
            "nodeAffinityPolicy": "Ignore",
            "nodeTaintsPolicy": "Honor",
        },
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}},
    ]
    p["spec"]["affinity"]["podAntiAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
        ],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a"]}]}, "topologyKey": "zone",
                "namespaces": ["x"], "namespaceSelector": {"matchLabels": {"team": "a"}}}}
        ],
    }
    p["spec"]["affinity"]["podAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone", "matchLabelKeys": ["a"]}
        ],
    }
    p["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
        {"weight": 3, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}
    ]
    p["spec"]["containers"] = [
        {"name": "app", "image": "registry.example/web:1", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}},
         "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
         "volumeMounts": [{"name": "kube-api-access-x1", "mountPath": "/var/run"}]},
        {"name": "log", "image": "busybox",
         "resources": {"requests": {"ephemeral-storage": "1Gi", "example.com/dev": 1}}},
    ]
    p["spec"]["initContainers"] = [
        {"name": "init", "image": "init:2", "resources": {"requests": {"cpu": "1"}}},
        {"name": "proxy", "image": "proxy:3", "restartPolicy": "Always", "resources": {"requests": {"memory": "64Mi"}}},
    ]
    p["spec"]["overhead"] = {"cpu": "10m"}
    p["spec"]["volumes"] = [
        {"name": "kube-api-access-x1", "projected": {"sources": []}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
        {"name": "model", "image": {"reference": "models/llm:7"}},
    ]
    p["status"] = {"phase": "Running", "nominatedNodeName": "n2"}
    return p


def _deployment() -> dict[str, Any]:
    d = controller("Deployment", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=3)
    d["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "4"}
    d["metadata"]["generation"] = 7
    d["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    d["spec"]["template"]["spec"] = {
        "tolerations": [{"key": "dedicated", "value": "infra"}],
        "containers": [{"name": "app", "image": "web", "resources": {"requests": {"cpu": "100m"}}}],
        "resources": {"requests": {"memory": "2Gi"}},
    }
    return d


def _statefulset() -> dict[str, Any]:
    s = controller("StatefulSet", "db", {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]})
    s["status"] = {"updateRevision": "db-123"}
    s["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {"storageClassName": "ssd"}}]
    return s


def _rc() -> dict[str, Any]:
    return controller("ReplicationController", "legacy", {"app": "legacy"}, {"app": "legacy"})


def _node() -> dict[str, Any]:
    return node(
        "n1", "zone-a", labels={"disk": "ssd"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]
    ) | {"status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110",
                                                           "nvidia.com/gpu": "1", "hugepages-2Mi": "0"},
                    "images": [{"names": ["registry.example/web:1", "registry.example/web@sha256:ab"],
                                "sizeBytes": 52428800}, {"names": ["busybox:latest"]}]}}


def _claim() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-db-0", "namespace": "default",
                         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"volumeName": "pv-a", "storageClassName": "ssd"}}  # fmt: skip


def _volume() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-a", "labels": {"topology.kubernetes.io/zone": "zone-a"}},
            "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                       "values": ["zone-a"]}]}]}}}}  # fmt: skip


def _namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}}


def _all_kinds() -> list[dict[str, Any]]:
    return [
        _node(),
        _namespace(),
        service("web", {"app": "web"}),
        service("headless", None),
        _deployment(),
        _statefulset(),
        _rc(),
        controller("ReplicaSet", "web-abc", {"matchLabels": {"app": "web"}}, {"app": "web"}),
        _rs_pod(),
        pod("bare", {"app": "web"}),
        _claim(),
        _volume(),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}, "data": {"a": "b"}},
    ]


def test_every_kind_decodes_to_the_reference_records(tmp_path: Path) -> None:
    typed, reference = _both(tmp_path, _all_kinds(), indent=True)
    assert not isinstance(typed, str)
    assert typed == reference
    pods = typed[1]
    assert [p.name for p in pods] == ["web-1", "bare"]  # not vacuous: the records are there
    assert pods[0].template.required_terms is not None and pods[0].template.topology_spread


def test_synthetic_cluster_decodes_to_the_reference_records(tmp_path: Path) -> None:
    objects = synth.generate(0.01, seed=3)
    typed, reference = _both(tmp_path, objects)
    assert typed == reference
    assert len(typed[1]) > 1000


def test_example_snapshot_as_json(tmp_path: Path) -> None:
    objects = list(iter_documents([ROOT / "examples" / "cluster.yaml"]))
    typed, reference = _both(tmp_path, objects)
    assert typed == reference


def test_shared_sub_objects_are_one_object(tmp_path: Path) -> None:
    pods = [pod(f"p{i}", {"app": "web"}, "n1", owners=[owner("ReplicaSet", "rs")]) for i in range(3)]
    for p in pods:
        p["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    path = tmp_path / "p.json"
    path.write_bytes(orjson.dumps({"kind": "PodList", "items": pods}))
    records = load_snapshot([path]).pods
    assert len({id(p.labels) for p in records}) == 1
    assert len({id(p.controller) for p in records}) == 1
    assert len({id(p.template) for p in records}) == 1


# Wrongly typed (or unusual) fields: the typed path gives what the reference gives, error line or records.
_BAD_FIELDS = [
    # (object builder, path, value)
    pytest.param(_rs_pod, "metadata.labels", ["a", "b"], id="pod labels a list"),
    pytest.param(_rs_pod, "metadata.labels.app", 3, id="pod label value an integer"),
    pytest.param(_rs_pod, "metadata.name", 5, id="pod name an integer"),
    pytest.param(_rs_pod, "metadata.name", "", id="pod name empty (required)"),
    pytest.param(_rs_pod, "metadata.name", None, id="pod name null (required)"),
    pytest.param(_rs_pod, "metadata", None, id="pod metadata null"),
    pytest.param(_rs_pod, "metadata", "x", id="pod metadata a string"),
    pytest.param(_rs_pod, "metadata.namespace", 1, id="pod namespace an integer"),
    pytest.param(_rs_pod, "metadata.annotations", {"a": 1}, id="pod annotations not read: accepted"),
    pytest.param(_rs_pod, "metadata.deletionTimestamp", 12, id="pod deletionTimestamp any value counts"),
    pytest.param(_rs_pod, "metadata.ownerReferences", {"a": 1}, id="ownerReferences a mapping"),
    pytest.param(_rs_pod, "metadata.ownerReferences.0.controller", "yes", id="controller a string"),
    pytest.param(_rs_pod, "metadata.ownerReferences.0.name", 1, id="owner name an integer"),
    pytest.param(_rs_pod, "metadata.ownerReferences.0", "x", id="owner reference a string"),
    pytest.param(_rs_pod, "spec", [], id="pod spec a list"),
    pytest.param(_rs_pod, "spec.nodeName", 7, id="nodeName an integer"),
    pytest.param(_rs_pod, "spec.tolerations", "x", id="tolerations a string"),
    pytest.param(_rs_pod, "spec.tolerations.0.key", 1, id="toleration key an integer"),
    pytest.param(_rs_pod, "spec.tolerations.0.tolerationSeconds", "x", id="tolerationSeconds not read"),
    pytest.param(_rs_pod, "spec.nodeSelector", {"disk": True}, id="nodeSelector value a boolean"),
    pytest.param(_rs_pod, "spec.affinity", 1, id="affinity an integer"),
    pytest.param(_rs_pod, "spec.affinity.nodeAffinity", [], id="nodeAffinity a list"),
    pytest.param(
        _rs_pod,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0"
        ".matchExpressions.0.values",
        [1],
        id="requirement values not strings",
    ),
    pytest.param(
        _rs_pod,
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        None,
        id="required affinity null: no terms",
    ),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints", [1], id="spread constraint an integer"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints", [], id="no spread constraints"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.maxSkew", "2", id="maxSkew a string"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.maxSkew", True, id="maxSkew a boolean"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.maxSkew", None, id="maxSkew null: 0"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.topologyKey", 1, id="topologyKey an integer"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.labelSelector", ["x"], id="labelSelector a list"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.labelSelector", None, id="labelSelector null"),
    pytest.param(
        _rs_pod,
        "spec.topologySpreadConstraints.1.labelSelector",
        {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
        id="labelSelector invalid: kept as its error",
    ),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.matchLabelKeys", [1], id="matchLabelKeys not strings"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.minDomains", "3", id="minDomains a string"),
    pytest.param(_rs_pod, "spec.topologySpreadConstraints.1.nodeTaintsPolicy", 0, id="nodeTaintsPolicy an integer"),
    pytest.param(_rs_pod, "spec.taints", "x", id="taints on a pod are not read"),
    pytest.param(_rs_pod, "status.phase", ["Running"], id="phase a list"),
    pytest.param(_rs_pod, "status", None, id="status null"),
    pytest.param(_rs_pod, "kind", 5, id="kind an integer"),
    pytest.param(_rs_pod, "apiVersion", 5, id="apiVersion of a pod is not read"),
    pytest.param(_node, "spec.taints.0.effect", 1, id="taint effect an integer"),
    pytest.param(_node, "spec.unschedulable", "true", id="unschedulable a string"),
    pytest.param(_node, "metadata.namespace", 3, id="namespace of a node is not read"),
    pytest.param(_node, "metadata.labels", None, id="node labels null"),
    pytest.param(_deployment, "spec.replicas", "3", id="replicas a string"),
    pytest.param(_deployment, "spec.replicas", 2.0, id="replicas a float"),
    pytest.param(_deployment, "spec.replicas", True, id="replicas a boolean"),
    pytest.param(_deployment, "spec.replicas", None, id="replicas null: 1"),
    pytest.param(_deployment, "spec.replicas", 0, id="replicas 0"),
    pytest.param(_deployment, "metadata.generation", "7", id="generation a string"),
    pytest.param(_deployment, "metadata.annotations", {"deployment.kubernetes.io/revision": 4}, id="revision int"),
    pytest.param(_deployment, "metadata.annotations", {"deployment.kubernetes.io/revision": "x"}, id="revision nan"),
    pytest.param(_deployment, "spec.selector", {"matchLabels": {"app": 1}}, id="invalid selector: error report"),
    pytest.param(_deployment, "spec.selector", None, id="selector null"),
    pytest.param(_deployment, "spec.selector", {}, id="selector empty: everything"),
    pytest.param(_deployment, "spec.selector", {"matchLabels": None}, id="selector matchLabels null"),
    pytest.param(_deployment, "spec.selector", {"matchLabels": {}}, id="selector matchLabels empty"),
    pytest.param(_deployment, "spec.selector", {"matchLabels": ["x"]}, id="selector matchLabels a list"),
    pytest.param(_deployment, "spec.selector", {"matchExpressions": []}, id="selector expressions empty"),
    pytest.param(_deployment, "spec.selector", "app=web", id="selector a string"),
    pytest.param(_deployment, "spec.selector", {"matchLabels": {"b": "1", "a": "2"}}, id="selector two labels"),
    pytest.param(
        _deployment, "spec.selector", {"matchLabels": {"b": ":", "a/b/c": "x"}}, id="selector two invalid labels"
    ),
    pytest.param(
        _deployment,
        "spec.selector",
        {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["x"]}]},
        id="selector labels and expressions",
    ),
    pytest.param(_deployment, "spec.template", "x", id="template a string"),
    pytest.param(_deployment, "spec.template.metadata.labels", {"a": []}, id="template label a list"),
    pytest.param(_deployment, "spec.template.spec.tolerations.0.value", 2, id="template toleration value"),
    pytest.param(_deployment, "spec.template.spec", None, id="template spec null"),
    pytest.param(_deployment, "apiVersion", 2, id="workload apiVersion an integer"),
    pytest.param(_statefulset, "status.updateRevision", 1, id="updateRevision an integer"),
    pytest.param(_rc, "spec.selector", {"app": 1}, id="rc selector value an integer"),
    pytest.param(_rc, "spec.selector", {"app": ":"}, id="rc selector value invalid: error report"),
    pytest.param(_rc, "spec.selector", None, id="rc selector null: template labels"),
    pytest.param(_rc, "spec.selector", {"b": "1", "a": ":"}, id="rc selector two labels, one invalid"),
    pytest.param(_rc, "spec.selector", "app=legacy", id="rc selector a string"),
    pytest.param(lambda: service("web", {"app": "web"}), "spec.selector", ["x"], id="service selector a list"),
    pytest.param(lambda: service("web", {"app": "web"}), "spec.selector", {}, id="service selector empty"),
    pytest.param(_namespace, "metadata.labels", "x", id="namespace labels a string"),
]


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, last = path.split(".")
    target: Any = out
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out


@pytest.mark.parametrize(("build", "path", "value"), _BAD_FIELDS)
def test_bad_or_unusual_field_same_outcome_as_the_reference(
    tmp_path: Path, build: Any, path: str, value: Any
) -> None:
    typed, reference = _both(tmp_path, [_node(), _set(build(), path, value)])
    assert typed == reference


def test_workload_selectors_cached_by_their_bytes_same_as_the_reference(tmp_path: Path) -> None:
    """A selector whose matchLabels bytes are another object's labels (label cache hit), a requirement shared by
    two workloads (requirement cache hit), and an invalid map met first as labels in another key order."""
    first = _deployment()
    first["metadata"]["labels"] = {"b": ":", "a": "-x"}  # (labels are not validated)
    second = controller("Deployment", "api", {"matchLabels": {"a": "-x", "b": ":"}}, {"app": "api"})
    third = controller("Deployment", "other", {"matchLabels": {"b": ":", "a": "-x"}}, {"app": "other"})
    rs = controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web", "pod-template-hash": "1"}}, {"app": "web"})
    typed, reference = _both(tmp_path, [first, second, third, _deployment(), rs])
    assert typed == reference
    controllers = load_snapshot([tmp_path / "snap.json"]).controllers
    errors = [c.selector_error for c in controllers]
    assert errors[0] is None and errors[1] and errors[2] and errors[1] != errors[2]  # (each in its own key order)
    assert str(controllers[4].selector) == "app=web,pod-template-hash=1"


def test_wrong_type_names_object_and_field_in_one_line(tmp_path: Path) -> None:
    typed, _ = _both(tmp_path, [_set(_rs_pod(), "metadata.labels", ["a"])])
    assert typed == "ObjectError: Pod default/web-1: metadata.labels: expected a mapping of strings, got list"


def test_a_broken_item_does_not_hide_the_others() -> None:
    good = [pod(f"p{i}", {"app": "web"}, "n1") for i in range(3)]
    broken = _set(pod("bad", {"app": "web"}), "spec.nodeName", 1)
    data = orjson.dumps({"kind": "List", "items": [good[0], broken, good[1], 42, good[2]]})
    out = list(decode_json(data))
    assert [type(x) for x in out] == [Pod, Unparsed, Pod, Unparsed, Pod]
    assert [x.name for x in out if isinstance(x, Pod)] == ["p0", "p1", "p2"]
    assert out[1] == Unparsed(broken) and out[3] == Unparsed(42)


def test_the_informers_list_pages_settle_what_the_typed_path_leaves_where_it_is_decoded() -> None:
    """An API list page's items for the informers (``decode_list_page``): what the typed path leaves goes
    through the reference parser there — its record when it accepts the item, else ``Malformed`` with the
    object's name and the reference parser's one line — so the router gets records only."""
    good = [pod(f"p{i}", {"app": "web"}, "n1", namespace="shop") for i in range(3)]
    broken = _set(pod("bad", {"app": "web"}, namespace="shop"), "spec.nodeName", 1)
    listed = [good[0], broken, good[1], good[2]]
    items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in listed]
    page = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": [*items, 42]})
    out, token = decode_list_page(page, "Pod", "v1", Converter())
    assert token == ""
    assert [type(x) for x in out] == [Pod, Malformed, Pod, Pod, Malformed]
    problem = "Pod shop/bad: spec.nodeName: expected a string, got integer"
    with pytest.raises(ObjectError) as err:
        parse_object(broken)
    assert out[1] == Malformed("shop", "bad", str(err.value)) and str(err.value) == problem
    assert out[4] == Malformed("", "", "object: expected a mapping, got integer")
    assert settle(out[0]) is out[0]  # a record as it is


@pytest.mark.parametrize(
    ("document", "names"),
    [
        pytest.param([pod("a"), {"kind": "List", "items": [pod("b")]}], ["a", "b"], id="array with a nested List"),
        pytest.param(pod("a"), ["a"], id="one object"),
        pytest.param({"kind": "PodList", "items": None}, [], id="items null"),
        pytest.param({"kind": "List", "items": [{"kind": "List", "items": [pod("a")]}]}, ["a"], id="nested List"),
    ],
)
def test_document_shapes(tmp_path: Path, document: Any, names: list[str]) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(orjson.dumps(document))
    assert [p.name for p in load_snapshot([path]).pods] == names


def test_malformed_json_and_non_objects_are_snapshot_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"kind": "List", "items": [{"kind": "Pod",')
    with pytest.raises(SnapshotError, match=r"bad\.json: malformed JSON"):
        load_snapshot([bad])
    scalar = tmp_path / "scalar.json"
    scalar.write_bytes(b'["just a string"]')
    with pytest.raises(SnapshotError, match="expected Kubernetes objects"):
        load_snapshot([scalar])


def test_yaml_keeps_the_reference_path(tmp_path: Path) -> None:
    objects = _all_kinds()
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump({"kind": "List", "items": objects}))
    assert _outcome(lambda: load_snapshot([path])) == _outcome(lambda: Snapshot.from_objects(objects))


def test_api_pages_fill_in_kind_and_api_version() -> None:
    """API server list items carry no kind/apiVersion: the page's resource gives them."""
    rs = controller("ReplicaSet", "web-abc", {"matchLabels": {"app": "web"}}, {"app": "web"})
    broken = _set(controller("ReplicaSet", "bad", {}), "spec.replicas", "x")
    for item in (rs, broken):
        del item["kind"], item["apiVersion"]
    data = orjson.dumps({"kind": "ReplicaSetList", "metadata": {"continue": "tok"}, "items": [rs, broken]})
    items, token = decode_page(data, "ReplicaSet", "apps/v1", Converter())
    first, second = list(items)
    assert token == "tok"
    assert first == parse_object(rs | {"kind": "ReplicaSet", "apiVersion": "apps/v1"})
    assert isinstance(second, Unparsed) and second.value["kind"] == "ReplicaSet"
    with pytest.raises(ObjectError, match=r"spec\.replicas: expected an integer"):
        parse_object(second.value)
    last, token = decode_page(b'{"metadata": {}, "items": []}', "Pod", "v1", Converter())
    assert (list(last), token) == ([], "")


def test_a_page_item_only_the_reference_decides_keeps_its_neighbours() -> None:
    """A well-typed page is decoded in one pass; an item its converter cannot take (no name) is re-read raw
    for the reference parser, and the items around it stay records."""
    items = [
        controller("ReplicaSet", "a", {"matchLabels": {"app": "a"}}, {"app": "a"}),
        _set(controller("ReplicaSet", "unnamed", {}), "metadata.name", ""),
        controller("ReplicaSet", "c", {"matchLabels": {"app": "c"}}, {"app": "c"}),
    ]
    for item in items:
        del item["kind"], item["apiVersion"]
    data = orjson.dumps({"kind": "ReplicaSetList", "metadata": {}, "items": items})
    decoded, _ = decode_page(data, "ReplicaSet", "apps/v1", Converter())
    first, second, third = list(decoded)
    assert first == parse_object(items[0] | {"kind": "ReplicaSet", "apiVersion": "apps/v1"})
    assert third == parse_object(items[2] | {"kind": "ReplicaSet", "apiVersion": "apps/v1"})
    assert isinstance(second, Unparsed) and second.value["metadata"]["name"] == ""
    with pytest.raises(ObjectError, match=r"ReplicaSet default/: metadata\.name: is required"):
        parse_object(second.value)


# Property: any JSON value at any field of any kind decodes exactly as the reference parses it.
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.lists(st.one_of(st.text(max_size=2), st.integers(0, 2)), max_size=2),
    st.dictionaries(st.text(max_size=2), st.one_of(st.text(max_size=2), st.integers(0, 2)), max_size=2),
)


def _paths(value: Any, prefix: str = "") -> list[str]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, f"{prefix}.{i}")
    return out


_OBJECTS = _all_kinds()
_CASES = [(i, p) for i, o in enumerate(_OBJECTS) for p in _paths(o)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(_CASES), value=_VALUES)
def test_any_value_anywhere_same_outcome_as_the_reference(tmp_path: Path, case: tuple[int, str], value: Any) -> None:
    index, path = case
    # (a Node beside it: a file of which nothing is read is an error of its own, test_hostile_input.py)
    typed, reference = _both(tmp_path, [_node(), _set(_OBJECTS[index], path, value)])
    assert typed == reference



@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_stdin_snapshot(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    objects = _all_kinds()
    doc = {"kind": "List", "items": objects}
    data = orjson.dumps(doc) if fmt == "json" else yaml.safe_dump(doc).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert _outcome(lambda: load_snapshot(["-"])) == _outcome(lambda: Snapshot.from_objects(objects))


def test_snapshot_from_a_decoded_listing_is_the_reference_snapshot() -> None:
    """Live ``analyze`` builds its snapshot from the listing's decoded pages: the same records as parsing the
    objects, and a broken object is the reference parser's one-line error."""
    objects = [node("n1", "zone-a"), pod("web-1", {"app": "web"}, "n1", owners=[owner("ReplicaSet", "web-abc")])]
    pages = []
    for obj in objects:
        item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
        pages.append((obj["kind"], obj["apiVersion"], orjson.dumps({"metadata": {}, "items": [item]})))
    converter = Converter()
    decoded = [d for kind, version, data in pages for d in decode_page(data, kind, version, converter)[0]]
    assert _outcome(lambda: Snapshot.from_decoded(decoded)) == _outcome(lambda: Snapshot.from_objects(objects))
    broken = _set(objects[1], "spec.nodeName", 3)
    del broken["kind"], broken["apiVersion"]
    items, _ = decode_page(orjson.dumps({"items": [broken]}), "Pod", "v1", Converter())
    with pytest.raises(ObjectError, match=r"Pod default/web-1: spec\.nodeName: expected a string"):
        Snapshot.from_decoded(items)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(_CASES), value=_VALUES)
def test_page_any_value_anywhere_same_outcome_as_the_reference(case: tuple[int, str], value: Any) -> None:
    """The operator's list pages (typed per kind, one pass) give what the reference parser gives, any value at
    any field: the same record or the same one-line error; the neighbours of a broken item stay records."""
    index, path = case
    original = _OBJECTS[index]
    changed = _set(original, path, value)
    kind, version = original["kind"], original["apiVersion"]
    item = {k: v for k, v in changed.items() if k not in ("kind", "apiVersion") or k == path.split(".")[0]}
    reference = {"kind": kind, "apiVersion": version} | item
    good = {k: v for k, v in original.items() if k not in ("kind", "apiVersion")}
    data = orjson.dumps({"metadata": {"continue": "next"}, "items": [good, item, good]})
    decoded, token = decode_page(data, kind, version, Converter())
    assert token == "next"
    typed = _outcome(lambda: Snapshot.from_decoded([decoded[1]]))
    assert typed == _outcome(lambda: Snapshot.from_objects([reference]))
    neighbours = _outcome(lambda: Snapshot.from_decoded([decoded[0], decoded[2]]))
    assert neighbours == _outcome(lambda: Snapshot.from_objects([original, original]))


def test_a_page_item_naming_another_kind_is_read_as_that_kind() -> None:
    node_item = {k: v for k, v in _node().items() if k != "apiVersion"}
    pod_item = {k: v for k, v in _rs_pod().items() if k not in ("kind", "apiVersion")}
    data = orjson.dumps({"items": [pod_item, node_item]})
    decoded, _ = decode_page(data, "Pod", "v1", Converter())
    assert decoded[0] == parse_object(_rs_pod())
    assert isinstance(decoded[1], Unparsed)
    assert parse_object(decoded[1].value) == parse_object(_node())


def test_a_typed_list_item_only_the_reference_decides_is_read_raw_in_any_chunk() -> None:
    """A List decoded whole (typed in one pass) is converted a few thousand items at a time: an item its
    converter cannot take (an empty name), far into the List, comes out as that very item, Unparsed."""
    pods = [pod(f"p{i}", {"app": f"a{i % 7}"}, "n1") for i in range(9000)]
    pods[8500] = _set(pods[8500], "metadata.name", "")
    out = list(decode_json(orjson.dumps({"kind": "List", "items": pods})))
    assert len(out) == 9000
    assert out[8500] == Unparsed(pods[8500])
    assert [p.name for p in out if isinstance(p, Pod)] == [f"p{i}" for i in range(9000) if i != 8500]
