"""Random clusters for the whole-profile differential test (spreadwatch predict vs spreadwatch-oracle-profile).

``generate(seed)`` is deterministic (``random.Random(seed)``) and returns ``{"seed", "cluster", "incoming":
[pod], "schedulerConfig"?}`` in the oracle's input form. Every object is one the API server would accept
(canonical quantities, valid selectors): what both sides must agree on is the scheduler's arithmetic, not
input validation. Each cluster exercises the default profile's plugins at once:

* nodes with allocatable CPU, memory, ephemeral storage, an extended resource and small pod limits (the Fit
  filter and the resource scores), zone/region/hostname/disk labels (some zoneless, some beta-only), taints
  of the three effects, cordons, and images from a shared pool with sizes (ImageLocality);
* bound pods with requests (none, some, init containers, sidecars, overhead, pod-level requests), host
  ports, pod affinity and anti-affinity terms (required and preferred, namespaces and namespace selectors),
  some being deleted, terminal, unbound or on an unknown node;
* Namespaces with labels, PersistentVolumes (zone labels, node affinity) and claims bound to them (or only
  pre-bound), Services and ReplicaSets for PodTopologySpread's default selector;
* an incoming pod with any of: requests, images, tolerations, a nodeSelector, required and preferred node
  affinity, pod (anti-)affinity, host ports, claims, its own ScheduleAnyway constraints; and sometimes a
  KubeSchedulerConfiguration (weights, disabled plugins, MostAllocated or RequestedToCapacityRatio with
  resource weights, hardPodAffinityWeight, addedAffinity, List default constraints).

    python3 tests/oracle/gen_profile.py --seed 7 --pretty
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

Obj = dict[str, Any]

ZONES = ["z1", "z2", "z3"]
APPS = ["web", "db", "cache"]
IMAGES = [  # (name with tag, digest name, size in bytes)
    ("registry.example/web:1", "registry.example/web@sha256:aa", 300 * 2**20),
    ("registry.example/db:14", "registry.example/db@sha256:bb", 800 * 2**20),
    ("busybox:1.36", "busybox@sha256:cc", 4 * 2**20),
    ("registry.example/cache", "registry.example/cache@sha256:dd", 60 * 2**20),
    ("envoy:1.30", "envoy@sha256:ee", 150 * 2**20),
    ("registry.example/big:2", "registry.example/big@sha256:ff", 2500 * 2**20),
]
CPU = ["100m", "250m", "500m", "1", "1500m", "2"]
MEMORY = ["64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi"]
HOSTNAME, ZONE, REGION = "kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
GPU = "example.com/gpu"


def _node(rng: random.Random, i: int) -> Obj:
    name = f"n{i}"
    labels = {HOSTNAME: name, "disk": rng.choice(["ssd", "hdd"])}
    shape = rng.random()
    zone = rng.choice(ZONES)
    if shape < 0.8:
        labels[ZONE] = zone
        labels[REGION] = "r1"
    elif shape < 0.9:
        labels[BETA_ZONE] = zone
    if rng.random() < 0.3:
        labels["rack"] = rng.choice(["a", "b"])
    spec: Obj = {}
    taints = []
    for _ in range(rng.choice([0, 0, 0, 0, 0, 1, 1, 2])):
        taints.append({"key": rng.choice(["dedicated", "spot", "gpu"]), "value": rng.choice(["", "x"]),
                       "effect": rng.choice(["NoSchedule", "PreferNoSchedule", "PreferNoSchedule",
                                             "PreferNoSchedule", "NoExecute"])})  # fmt: skip
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.08:
        spec["unschedulable"] = True
    allocatable = {"cpu": rng.choice(["1", "2", "3900m", "4", "8", "16"]),
                   "memory": rng.choice(["2Gi", "4Gi", "7800Mi", "16Gi", "32Gi"]),
                   "pods": str(rng.choice([3, 6, 110, 110]))}  # fmt: skip
    if rng.random() < 0.4:
        allocatable["ephemeral-storage"] = rng.choice(["10Gi", "50Gi"])
    if rng.random() < 0.25:
        allocatable[GPU] = str(rng.choice([1, 2]))
    images = [{"names": [tag, digest], "sizeBytes": size}
              for tag, digest, size in rng.sample(IMAGES, rng.randint(0, 4))]  # fmt: skip
    status: Obj = {"allocatable": allocatable, "capacity": allocatable}
    if images:
        status["images"] = images
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": status}  # fmt: skip


def _requests(rng: random.Random, heavy: bool = False) -> Obj:
    out: Obj = {}
    if rng.random() < 0.7:
        out["cpu"] = rng.choice(CPU[3:] if heavy else CPU)
    if rng.random() < 0.7:
        out["memory"] = rng.choice(MEMORY[3:] if heavy else MEMORY)
    if rng.random() < 0.1:
        out["ephemeral-storage"] = rng.choice(["1Gi", "5Gi"])
    if rng.random() < 0.08:
        out[GPU] = "1"
    return out


def _container(rng: random.Random, name: str, heavy: bool = False, ports: bool = False) -> Obj:
    c: Obj = {"name": name, "image": rng.choice(IMAGES)[0] if rng.random() < 0.8 else "registry.example/other:3"}
    requests = _requests(rng, heavy)
    if requests:
        c["resources"] = {"requests": requests}
    if ports and rng.random() < 0.12:
        c["ports"] = [{"containerPort": 8080, "hostPort": rng.choice([8080, 9090]),
                       "protocol": rng.choice(["TCP", "UDP"]),
                       **({"hostIP": "10.0.0.1"} if rng.random() < 0.2 else {})}]  # fmt: skip
    return c


def _spec(rng: random.Random, incoming: bool) -> Obj:
    spec: Obj = {"containers": [_container(rng, f"c{i}", heavy=rng.random() < 0.1, ports=True)
                                for i in range(rng.choice([1, 1, 2]))]}  # fmt: skip
    if rng.random() < 0.2:
        init = [_container(rng, "init", heavy=rng.random() < 0.3)]
        if rng.random() < 0.5:
            side = _container(rng, "sidecar", ports=True)
            side["restartPolicy"] = "Always"
            init.append(side)
        spec["initContainers"] = init
    if rng.random() < 0.1:
        spec["overhead"] = {"cpu": "50m", "memory": "32Mi"}
    if rng.random() < 0.08:
        spec["resources"] = {"requests": {"cpu": rng.choice(CPU), **({"memory": "1Gi"} if rng.random() < 0.5 else {})}}
    return spec


def _term(rng: random.Random, namespaces: list[str]) -> Obj:
    term: Obj = {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                 "topologyKey": rng.choice([HOSTNAME, ZONE, ZONE, "rack"])}  # fmt: skip
    r = rng.random()
    if r < 0.15:
        term["namespaces"] = rng.sample(namespaces, 1)
    elif r < 0.25:
        term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"team": "a"}}])
    if rng.random() < 0.1:
        term["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": APPS[:2]}]}
    return term


def _pod_affinity(rng: random.Random, namespaces: list[str], incoming: bool) -> Obj:
    affinity: Obj = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        block: Obj = {}
        if rng.random() < (0.3 if incoming else 0.15):
            block["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng, namespaces)]
        if rng.random() < (0.4 if incoming else 0.2):
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice([1, 10, 50, 100]), "podAffinityTerm": _term(rng, namespaces)}
                for _ in range(rng.choice([1, 2]))
            ]
        if block:
            affinity[kind] = block
    return affinity


def _pod(rng: random.Random, i: int, nodes: list[str], namespaces: list[str]) -> Obj:
    app = rng.choice(APPS)
    meta: Obj = {"name": f"p{i}", "namespace": rng.choice(namespaces), "labels": {"app": app}}
    if rng.random() < 0.05:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = _spec(rng, incoming=False)
    r = rng.random()
    if r < 0.85 and nodes:
        spec["nodeName"] = rng.choice(nodes)
    elif r < 0.9:
        spec["nodeName"] = "gone"
    affinity = _pod_affinity(rng, namespaces, incoming=False)
    if affinity:
        spec["affinity"] = affinity
    status: Obj = {"phase": rng.choice(["Running"] * 8 + ["Pending", "Succeeded", "Failed"])}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _volumes(rng: random.Random, nodes: list[Obj], namespace: str) -> tuple[list[Obj], list[Obj], list[str]]:
    """PVs and claims: (volumes, claims, claim names the incoming pod may use)."""
    pvs, pvcs, names = [], [], []
    for i in range(rng.choice([0, 0, 1, 2, 3])):
        zone = rng.choice(ZONES)
        pv: Obj = {"apiVersion": "v1", "kind": "PersistentVolume",
                   "metadata": {"name": f"pv{i}", "labels": {}},
                   "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": f"/data/{i}"}}}  # fmt: skip
        if rng.random() < 0.6:
            pv["metadata"]["labels"][ZONE] = zone if rng.random() < 0.8 else f"{zone}__{rng.choice(ZONES)}"
        if rng.random() < 0.6:
            target = rng.choice([[ZONE, zone], [HOSTNAME, rng.choice(nodes)["metadata"]["name"]] if nodes
                                 else [ZONE, zone]])  # fmt: skip
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": target[0], "operator": "In", "values": [target[1]]}]}]}}
        pvs.append(pv)
        claim = f"data-{i}"
        annotations = {"pv.kubernetes.io/bind-completed": "yes"} if rng.random() < 0.92 else {}
        pvcs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": claim, "namespace": namespace, "annotations": annotations},
                     "spec": {"volumeName": f"pv{i}", "accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
        names.append(claim)
    return pvs, pvcs, names


def _claim_users(rng: random.Random, pvcs: list[Obj], pods: list[Obj], namespace: str) -> None:
    """Some claims ReadWriteOncePod, some used by existing pods (VolumeRestrictions); a separate random
    stream, so that the rest of each case stays as it was."""
    for pvc in pvcs:
        if rng.random() < 0.3:
            pvc["spec"]["accessModes"] = ["ReadWriteOncePod"]
    users = [p for p in pods if p["metadata"]["namespace"] == namespace]
    if pvcs and users and rng.random() < 0.5:
        pod = rng.choice(users)
        claim = rng.choice(pvcs)["metadata"]["name"]
        pod["spec"].setdefault("volumes", []).append({"name": "data", "persistentVolumeClaim": {"claimName": claim}})


def _hard_constraints(rng: random.Random, pod: Obj) -> Obj:
    """Sometimes DoNotSchedule constraints (PodTopologySpread's Filter): the pod's own made hard, or a hard one
    added (hostname or zone, minDomains now and then)."""
    spec = pod["spec"]
    own = spec.get("topologySpreadConstraints")
    if own and rng.random() < 0.5:
        for c in own:
            c["whenUnsatisfiable"] = "DoNotSchedule"
    elif rng.random() < 0.15:
        constraint: Obj = {"maxSkew": rng.choice([1, 2]), "topologyKey": rng.choice([ZONE, HOSTNAME]),
                           "whenUnsatisfiable": "DoNotSchedule",
                           "labelSelector": {"matchLabels": {"app": pod["metadata"]["labels"]["app"]}}}  # fmt: skip
        if rng.random() < 0.3:
            constraint["minDomains"] = rng.choice([2, 4])
        spec["topologySpreadConstraints"] = [*(own or []), constraint]
    return pod


def _node_term(rng: random.Random) -> Obj:
    return rng.choice([
        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": rng.sample(ZONES, 2)}]},
        {"matchExpressions": [{"key": "rack", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["hdd"]}]},
    ])


def _incoming(rng: random.Random, namespaces: list[str], claims: list[str], owner: Obj | None) -> Obj:
    app = rng.choice(APPS)
    labels = {"app": app, "tier": rng.choice(["a", "b"])}
    meta: Obj = {"name": "incoming", "namespace": namespaces[0], "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner["metadata"]["name"],
                                    "uid": "rs-uid", "controller": True}]  # fmt: skip
    spec = _spec(rng, incoming=True)
    if rng.random() < 0.3:
        spec["tolerations"] = [rng.choice([
            {"key": "spot", "operator": "Exists"},
            {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "PreferNoSchedule"},
            {"operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
        ])]
    if rng.random() < 0.1:
        spec["nodeSelector"] = {"disk": "ssd"}
    affinity = _pod_affinity(rng, namespaces, incoming=True)
    node_affinity: Obj = {}
    if rng.random() < 0.1:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [_node_term(rng)]}
    if rng.random() < 0.3:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice([1, 20, 100]), "preference": _node_term(rng)} for _ in range(rng.choice([1, 2]))
        ]
    if node_affinity:
        affinity["nodeAffinity"] = node_affinity
    if affinity:
        spec["affinity"] = affinity
    if claims and rng.random() < 0.4:
        claim = "missing" if rng.random() < 0.1 else rng.choice(claims)
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    if rng.random() < 0.15:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": rng.choice([1, 2]), "topologyKey": rng.choice([ZONE, HOSTNAME]),
            "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": app}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _config(rng: random.Random) -> str | None:
    if rng.random() < 0.6:
        return None
    plugins: Obj = {}
    config: list[Obj] = []
    r = rng.random()
    if r < 0.3:
        plugins["score"] = {"enabled": [{"name": "NodeResourcesFit", "weight": rng.choice([2, 5])},
                                        {"name": "PodTopologySpread", "weight": rng.choice([1, 3])}]}  # fmt: skip
    elif r < 0.45:
        plugins["multiPoint"] = {"enabled": [{"name": "TaintToleration", "weight": 1},
                                             {"name": "ImageLocality", "weight": 4}]}  # fmt: skip
    elif r < 0.6:
        plugins["score"] = {"disabled": [{"name": rng.choice(["ImageLocality", "TaintToleration",
                                                              "NodeResourcesBalancedAllocation"])}]}  # fmt: skip
    strategy = rng.random()
    if strategy < 0.35:
        config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": rng.choice([1, 3])},
                                                   {"name": "memory", "weight": 1}]}}})  # fmt: skip
    elif strategy < 0.55:
        config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1},
                          *([{"name": GPU, "weight": 3}] if rng.random() < 0.5 else [])],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                   {"utilization": 100, "score": 10}]}}}})  # fmt: skip
    if rng.random() < 0.2:
        config.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": rng.choice([0, 5, 100])}})
    if rng.random() < 0.15:
        config.append({"name": "NodeAffinity", "args": {"addedAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": _node_term(rng)}]}}})
    if rng.random() < 0.1:
        config.append({"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]}})
    profile: Obj = {"schedulerName": "default-scheduler"}
    if plugins:
        profile["plugins"] = plugins
    if config:
        profile["pluginConfig"] = config
    return json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [profile]})  # fmt: skip


def generate(seed: int) -> Obj:
    """One case (see the module docstring)."""
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(rng.choice([1, 2, 3, 4, 5, 6, 6, 8, 8, 10, 12, 12]))]
    names = [n["metadata"]["name"] for n in nodes]
    namespaces = ["default", *rng.sample(["shop", "data"], rng.choice([0, 1, 2]))]
    ns_objects = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ns, "labels": {"team": rng.choice(["a", "b"])}}}
                  for ns in namespaces]  # fmt: skip
    pods = [_pod(rng, i, names, namespaces) for i in range(rng.randint(0, 20))]
    pvs, pvcs, claims = _volumes(rng, nodes, namespaces[0])
    _claim_users(random.Random(f"{seed}-claims"), pvcs, pods, namespaces[0])
    hard = random.Random(f"{seed}-hard")  # (PodTopologySpread's Filter: a separate stream, as _claim_users)
    services = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": ns},
                 "spec": {"selector": {"app": app}}}
                for ns in namespaces for app in APPS if rng.random() < 0.4]  # fmt: skip
    owner = None
    replica_sets = []
    if rng.random() < 0.5:
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                 "metadata": {"name": "incoming-rs", "namespace": namespaces[0], "uid": "rs-uid"},
                 "spec": {"selector": {"matchLabels": {"app": rng.choice(APPS)}},
                          "template": {"metadata": {"labels": {}}, "spec": {"containers": []}}}}  # fmt: skip
        replica_sets.append(owner)
    case: Obj = {
        "seed": seed,
        "cluster": {"nodes": nodes, "pods": pods, "namespaces": ns_objects, "services": services,
                    "replicaSets": replica_sets, "persistentVolumes": pvs, "persistentVolumeClaims": pvcs},
        "incoming": [_hard_constraints(hard, _incoming(rng, namespaces, claims, owner))],
    }  # fmt: skip
    config = _config(rng)
    if config is not None:
        case["schedulerConfig"] = config
    return case


def objects_of(cluster: Obj) -> list[Obj]:
    """The cluster's objects as one list (a snapshot's items). O(objects)."""
    return [o for key in ("nodes", "namespaces", "persistentVolumes", "services", "replicationControllers",
                          "replicaSets", "statefulSets", "persistentVolumeClaims", "pods")
            for o in cluster.get(key, [])]  # fmt: skip


def oracle_line(case: Obj) -> Obj:
    """The oracle's input line of a case."""
    line: Obj = {"cluster": case["cluster"], "incoming": case["incoming"]}
    if case.get("schedulerConfig") is not None:
        line["schedulerConfig"] = case["schedulerConfig"]
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--pretty", action="store_true")
    args = parser.parse_args()
    for seed in range(args.seed, args.seed + args.count):
        line = oracle_line(generate(seed))
        print(json.dumps(line, indent=2 if args.pretty else None))


if __name__ == "__main__":
    main()
