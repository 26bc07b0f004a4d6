"""Deterministic synthetic clusters for the spreadwatch benchmarks.

``generate(scale, seed)`` returns Kubernetes API objects (plain dicts, as ``kubectl get -o json`` prints
them). At scale 1.0:

* 5,000 nodes in 3 zones (``topology.kubernetes.io/zone``; a third also carry the matching legacy
  ``failure-domain.beta.kubernetes.io/*`` labels); 5 % carry **only** the legacy labels, 2 % have no zone,
  1 % are cordoned (``spec.unschedulable`` + the unschedulable taint), 2.5 % are ``dedicated=infra:NoSchedule``
  infra nodes, 4 % are ``nvidia.com/gpu=present:NoSchedule`` GPU nodes, 2 % have a ``PreferNoSchedule``
  taint (which does not filter); a third have ``disk=ssd``;
  allocatable by instance type (8 CPUs and 32 GiB, 16 and 64, 16 and 32; 110 pods) and 24 images in
  ``status.images`` (four system images on every node, 20 workload images, sizes 20–900 MiB), as the whole
  profile's prediction reads them;
* 1,000 namespaces (a few big ones, many small ones);
* 10,000 workloads, kinds in the fixed ratio 12 Deployment : 3 StatefulSet : 2 ReplicaSet :
  3 ReplicationController (every 20 consecutive workloads), each with one Service selecting ``app=<name>``.
  A Deployment has its ReplicaSet (``pod-template-hash``, revision annotation, controller ownerReference);
  15 % are mid-rollout (an old ReplicaSet still owns some pods) and 25 % keep an old ReplicaSet scaled to 0.
  StatefulSet pods carry ``statefulset.kubernetes.io/pod-name`` and ``controller-revision-hash``
  (``status.updateRevision``). Standalone ReplicaSets sometimes use ``matchExpressions``;
* ~150,000 pods (replicas average ~15), placed at random on the nodes the workload's constraints allow;
  2 % of workloads are packed on one node and 4 % in one zone; 0.5 % of pods are unscheduled (Pending, no
  nodeName), 0.5 % are being deleted (``deletionTimestamp``) and 0.5 % extra pods are terminal
  (Succeeded/Failed);
* requests by workload (one of five shapes from 50m/64Mi to 500m/1Gi; 10 % without any, 5 % with an init
  container);
* scheduling-constraint signatures (6 distinct): none (80 %), infra toleration + nodeSelector (6 %),
  GPU toleration + nodeSelector (4 %), ``disk=ssd`` nodeSelector (4 %), required zone affinity (4 %),
  tolerate-everything (2 %); 3 % of workloads have ``topologySpreadConstraints`` (SelectorSpread skips
  them): 1 % a ScheduleAnyway zone one, 1 % a DoNotSchedule zone and a ScheduleAnyway hostname one, 1 % a
  DoNotSchedule hostname one with minDomains 3 (PodTopologySpread's Filter, profile v1.29). Pods are placed
  whatever the constraints say, so some of them start out violated.

Categories are assigned by index patterns (not by chance) so every one is present even at scale 0.005;
everything else comes from ``random.Random`` seeded per namespace, so the output depends only on
(scale, seed). Objects are generated namespace by namespace (:func:`iter_objects`), so a consumer can
parse them without holding every dict at once.

    python bench/synth.py --scale 0.1 --out /tmp/cluster-0.1.json
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

Obj = dict[str, Any]

BASE_NODES = 5_000
BASE_NAMESPACES = 1_000
BASE_WORKLOADS = 10_000

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
REGION = "eu-west-1"
GA_ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
GA_REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
#: every node's status.nodeInfo.kubeletVersion: ``--profile auto`` on a dump takes v1.29 (PodTopologySpread)
KUBELET_VERSION = "v1.28.9"

#: Kind of workload j is KIND_PATTERN[j % 20]: 12 Deployments, 3 StatefulSets, 2 ReplicaSets, 3 RCs.
KIND_PATTERN = ("Deployment",) * 12 + ("StatefulSet",) * 3 + ("ReplicaSet",) * 2 + ("ReplicationController",) * 3
REPLICAS = (1, 2, 3, 3, 5, 5, 8, 10, 12, 15, 20, 25, 30, 40, 45)  # mean 14.9
PREFIXES = ("web", "api", "worker", "cache", "auth", "search", "billing", "ingest", "report", "gateway")
TIERS = ("frontend", "backend", "worker", "data")
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)

# --- scheduling-constraint signatures ---------------------------------------------------------------------

_SIG_DEFAULT, _SIG_INFRA, _SIG_GPU, _SIG_SSD, _SIG_ZONES, _SIG_ALL = range(6)
SIGNATURE_NAMES = ("default", "infra", "gpu", "ssd", "zone-affinity", "tolerate-all")


def _signature_of(j: int) -> int:
    """Workload j's constraint signature (by index pattern, per 50 workloads)."""
    k = j % 50
    if k in (5, 17, 33):
        return _SIG_INFRA
    if k in (9, 41):
        return _SIG_GPU
    if k in (12, 28):
        return _SIG_SSD
    if k in (21, 46):
        return _SIG_ZONES
    if k == 37:
        return _SIG_ALL
    return _SIG_DEFAULT


def _signature_spec(sig: int) -> Obj:
    if sig == _SIG_INFRA:
        return {
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
            "nodeSelector": {"node-role.example.com/infra": "true"},
        }
    if sig == _SIG_GPU:
        return {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "nodeSelector": {"accelerator": "nvidia"},
        }
    if sig == _SIG_SSD:
        return {"nodeSelector": {"disk": "ssd"}}
    if sig == _SIG_ZONES:
        term = {"matchExpressions": [{"key": GA_ZONE, "operator": "In", "values": [ZONES[0], ZONES[1]]}]}
        return {
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            }
        }
    if sig == _SIG_ALL:
        return {"tolerations": [{"operator": "Exists"}]}
    return {}


def _ts(seconds: int) -> str:
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- nodes -------------------------------------------------------------------------------------------------


#: (cpu, memory) allocatable per instance type
_ALLOCATABLE = {"m5.2xlarge": ("7910m", "30Gi"), "m5.4xlarge": ("15890m", "62Gi"), "c5.4xlarge": ("15890m", "30Gi")}
_SYSTEM_IMAGES = (
    ("registry.k8s.io/pause:3.9", 321_000),
    ("registry.k8s.io/kube-proxy:v1.28.9", 28_400_000),
    ("registry.example.com/node-exporter:1.7.0", 11_200_000),
    ("registry.example.com/fluent-bit:2.2.2", 36_800_000),
)
#: request shapes of the workloads' containers (None: no requests, BestEffort)
_REQUESTS = (
    {"cpu": "50m", "memory": "64Mi"},
    {"cpu": "100m", "memory": "128Mi"},
    {"cpu": "200m", "memory": "256Mi"},
    {"cpu": "250m", "memory": "512Mi"},
    {"cpu": "500m", "memory": "1Gi"},
)


def _image(j: int, r: random.Random) -> str:
    """A workload image (workload j's prefix, a random version): the pool nodes' images come from."""
    return f"registry.example.com/{PREFIXES[j % len(PREFIXES)]}:1.{r.randrange(40)}.{r.randrange(10)}"


def _image_size(name: str) -> int:
    """A deterministic size of 20–900 MiB for an image name."""
    h = 0
    for ch in name:
        h = (h * 131 + ord(ch)) % 1_000_003
    return (20 + h % 880) * 1024 * 1024


def _node_images(i: int) -> list[Obj]:
    """Node i's ``status.images``: the system images and 20 workload images (with their digests)."""
    r = random.Random(f"images-{i}")
    names = [name for name, _ in _SYSTEM_IMAGES] + [_image(r.randrange(len(PREFIXES)), r) for _ in range(20)]
    out = []
    for name in dict.fromkeys(names):
        size = dict(_SYSTEM_IMAGES).get(name) or _image_size(name)
        digest = f"{name.rsplit(':', 1)[0]}@sha256:{_image_size(name + 'd'):064x}"
        out.append({"names": [digest, name], "sizeBytes": size})
    return out


def _node(i: int) -> tuple[Obj, dict[str, Any]]:
    """Node i and the facts placement needs (zone, taints, labels)."""
    name = f"node-{i:05d}"
    labels: dict[str, str] = {
        HOSTNAME: name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": (instance := ("m5.2xlarge", "m5.4xlarge", "c5.4xlarge")[i % 3]),
    }
    zone: str | None = ZONES[i % 3]
    if i % 50 == 7:
        zone = None  # zoneless
    elif i % 20 == 3:
        labels[BETA_ZONE] = zone  # legacy labels only
        labels[BETA_REGION] = REGION
    else:
        labels[GA_ZONE] = zone
        labels[GA_REGION] = REGION
        if i % 3 == 1:  # older nodes carry both generations
            labels[BETA_ZONE] = zone
            labels[BETA_REGION] = REGION
    if i % 3 == 0:
        labels["disk"] = "ssd"
    spec: Obj = {"podCIDR": f"10.{i // 250}.{i % 250}.0/24", "providerID": f"aws:///{zone or 'none'}/i-{i:08x}"}
    taints: list[Obj] = []
    if i % 40 == 5:
        labels["node-role.example.com/infra"] = "true"
        taints.append({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})
    if i % 25 == 13:
        labels["accelerator"] = "nvidia"
        taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    if i % 50 == 21:
        taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
    cordoned = i % 100 == 11
    if cordoned:
        spec["unschedulable"] = True
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": _ts(60)})
    if taints:
        spec["taints"] = taints
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-8000-{i:012x}",
            "labels": labels,
            "creationTimestamp": _ts(i),
            "resourceVersion": str(1000 + i),
        },
        "spec": spec,
        "status": {
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "allocatable": {"cpu": _ALLOCATABLE[instance][0], "memory": _ALLOCATABLE[instance][1], "pods": "110"},
            "images": _node_images(i),
            "nodeInfo": {"kubeletVersion": KUBELET_VERSION, "containerRuntimeVersion": "containerd://1.7.13"},
            "addresses": [{"type": "InternalIP", "address": f"10.{i // 250}.{i % 250}.1"}],
        },
    }
    facts = {"name": name, "zone": zone, "labels": labels, "taints": taints, "cordoned": cordoned}
    return obj, facts


def _fits(facts: dict[str, Any], sig: int) -> bool:
    """Whether the scheduler would place a pod with signature ``sig`` on the node (generator-side)."""
    if sig == _SIG_ALL:
        return True
    if facts["cordoned"]:
        return False
    hard = [t for t in facts["taints"] if t["effect"] in ("NoSchedule", "NoExecute")]
    labels = facts["labels"]
    if sig == _SIG_INFRA:
        return labels.get("node-role.example.com/infra") == "true" and all(t["key"] == "dedicated" for t in hard)
    if sig == _SIG_GPU:
        return labels.get("accelerator") == "nvidia" and all(t["key"] == "nvidia.com/gpu" for t in hard)
    if hard:
        return False
    if sig == _SIG_SSD:
        return labels.get("disk") == "ssd"
    if sig == _SIG_ZONES:
        return labels.get(GA_ZONE) in (ZONES[0], ZONES[1])
    return True


# --- the generator -----------------------------------------------------------------------------------------


def sizes(scale: float) -> dict[str, int]:
    """Node, namespace and workload counts at ``scale`` (pods follow the replica distribution)."""
    return {
        "nodes": max(3, round(BASE_NODES * scale)),
        "namespaces": max(1, round(BASE_NAMESPACES * scale)),
        "workloads": max(4, round(BASE_WORKLOADS * scale)),
    }


class _Gen:
    def __init__(self, scale: float, seed: int) -> None:
        self.scale = scale
        self.seed = seed
        n = sizes(scale)
        self.n_nodes, self.n_ns, self.n_workloads = n["nodes"], n["namespaces"], n["workloads"]
        self.node_facts: list[dict[str, Any]] = []
        self.pod_counter = 0
        top = random.Random(f"spreadwatch-bench:{seed}:namespaces")
        # Skewed namespace sizes: weight 1/(1 + k % 20), so a few namespaces hold ~3.6x the average.
        weights = [1.0 / (1 + k % 20) for k in range(self.n_ns)]
        owner_ns = top.choices(range(self.n_ns), weights=weights, k=self.n_workloads)
        self.by_ns: list[list[int]] = [[] for _ in range(self.n_ns)]
        for j, k in enumerate(owner_ns):
            self.by_ns[k].append(j)

    # -- helpers
    @staticmethod
    def word(r: random.Random, n: int) -> str:
        return "".join(r.choice(_ALPHABET) for _ in range(n))

    def suffixes(self, r: random.Random, count: int) -> Iterator[str]:
        """``count`` distinct 5-letter pod name suffixes, drawn lazily (interleaved with the caller's draws)."""
        used: set[str] = set()
        for _ in range(count):
            suffix = self.word(r, 5)
            while suffix in used:
                suffix = self.word(r, 5)
            used.add(suffix)
            yield suffix

    def uid(self, r: random.Random) -> str:
        h = f"{r.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:]}"

    def candidates(self, sig: int) -> list[dict[str, Any]]:
        return self._cands[sig]

    def nodes(self) -> Iterator[Obj]:
        for i in range(self.n_nodes):
            obj, facts = _node(i)
            self.node_facts.append(facts)
            yield obj
        self._cands = [[f for f in self.node_facts if _fits(f, sig)] for sig in range(len(SIGNATURE_NAMES))]
        self._by_zone = [{z: [f for f in cands if f["zone"] == z] for z in ZONES} for cands in self._cands]

    def namespace(self, k: int) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": f"team-{k:04d}",
                "uid": f"00000000-0000-4000-9000-{k:012x}",
                "labels": {
                    "kubernetes.io/metadata.name": f"team-{k:04d}",
                    "env": ("prod", "staging", "dev")[k % 3],
                },
                "creationTimestamp": _ts(k),
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }

    # -- pods
    def place(self, r: random.Random, sig: int, mode: str, anchor: dict[str, Any] | None, zone: str | None) -> str:
        if mode == "node" and anchor is not None:
            return str(anchor["name"])
        pool = self._cands[sig]
        if mode == "zone" and zone is not None and self._by_zone[sig][zone]:
            pool = self._by_zone[sig][zone]
        if not pool:
            pool = self.node_facts
        return str(r.choice(pool)["name"])

    def pod(
        self,
        r: random.Random,
        ns: str,
        name: str,
        labels: dict[str, str],
        owner: Obj,
        template_spec: Obj,
        node: str,
        created: int,
    ) -> Iterator[Obj]:
        """One replica's pod (and, every 200th pod, an extra terminal one)."""
        k = self.pod_counter
        self.pod_counter += 1
        spec = {
            **template_spec,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "tolerations": [
                *template_spec.get("tolerations", []),
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
        }
        meta: Obj = {
            "name": name,
            "namespace": ns,
            "uid": self.uid(r),
            "labels": labels,
            "ownerReferences": [owner],
            "creationTimestamp": _ts(created),
            "resourceVersion": str(100_000 + k),
        }
        status: Obj = {"phase": "Running", "qosClass": "Burstable", "startTime": _ts(created + 5)}
        if k % 200 == 17:  # unscheduled
            status = {
                "phase": "Pending",
                "qosClass": "Burstable",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/5000 nodes are available: 5000 Insufficient cpu.",
                    }
                ],
            }
        else:
            spec["nodeName"] = node
            status["hostIP"] = f"10.{r.randrange(20)}.{r.randrange(250)}.1"
            status["podIP"] = f"100.{r.randrange(64)}.{r.randrange(256)}.{r.randrange(256)}"
            if k % 200 == 101:  # being deleted
                meta["deletionTimestamp"] = _ts(86_400 * 120)
                meta["deletionGracePeriodSeconds"] = 30
        yield {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
        if k % 200 == 151:  # an extra, terminal pod (a finished or evicted predecessor)
            phase = "Succeeded" if k % 400 == 151 else "Failed"
            dead_meta = {**meta, "name": f"{name}-old", "uid": self.uid(r), "resourceVersion": str(900_000 + k)}
            yield {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": dead_meta,
                "spec": {**spec, "nodeName": node},
                "status": {"phase": phase, "reason": "Evicted" if phase == "Failed" else "Completed"},
            }

    # -- workloads
    def workload(self, r: random.Random, ns: str, j: int) -> Iterator[Obj]:
        kind = KIND_PATTERN[j % 20]
        sig = _signature_of(j)
        name = f"{PREFIXES[j % len(PREFIXES)]}-{j:05d}"
        tier = TIERS[r.randrange(len(TIERS))]
        replicas = REPLICAS[r.randrange(len(REPLICAS))]
        created = 3600 + j * 7
        uid = self.uid(r)
        pattern = j % 50
        mode = "node" if pattern in (3, 44) else "zone" if pattern in (8, 19, 30, 47) else "random"
        cands = self._cands[sig] or self.node_facts
        anchor = r.choice(cands)
        zone = anchor["zone"] or ZONES[0]
        image = _image(j, r)
        container: Obj = {"name": "main", "image": image, "ports": [{"containerPort": 8080, "protocol": "TCP"}]}
        if j % 10 != 9:
            requests = _REQUESTS[(j * 7) % len(_REQUESTS)]
            container["resources"] = {"requests": requests, "limits": {"memory": requests["memory"]}}
        template_spec: Obj = {"containers": [container], **_signature_spec(sig)}
        if j % 20 == 4:
            init = {"name": "migrate", "image": image, "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}
            template_spec["initContainers"] = [init]
        spread = {"labelSelector": {"matchLabels": {"app": name}}}
        if j % 100 == 57:
            template_spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": GA_ZONE, "whenUnsatisfiable": "ScheduleAnyway", **spread}
            ]
        elif j % 100 == 23:  # the pattern the Kubernetes docs recommend: a hard zone and a soft hostname constraint
            template_spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": GA_ZONE, "whenUnsatisfiable": "DoNotSchedule", **spread},
                {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway", **spread},
            ]
        elif j % 100 == 73:  # a hard hostname constraint (its busy nodes are rejected one by one)
            template_spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3, **spread}
            ]
        base_labels = {"app": name, "tier": tier, "app.kubernetes.io/managed-by": "helm"}
        meta_common = {"namespace": ns, "creationTimestamp": _ts(created), "generation": 1}
        api = "v1" if kind == "ReplicationController" else "apps/v1"

        def owner_ref(okind: str, oname: str, ouid: str) -> Obj:
            oapi = "v1" if okind == "ReplicationController" else "apps/v1"
            return {
                "apiVersion": oapi,
                "kind": okind,
                "name": oname,
                "uid": ouid,
                "controller": True,
                "blockOwnerDeletion": True,
            }

        def template(labels: dict[str, str]) -> Obj:
            return {"metadata": {"labels": labels}, "spec": template_spec}

        # the Service
        yield {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "uid": self.uid(r), **meta_common},
            "spec": {
                "selector": {"app": name},
                "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                "type": "ClusterIP",
                "clusterIP": f"172.20.{r.randrange(256)}.{r.randrange(256)}",
            },
        }

        status = {"replicas": replicas, "readyReplicas": replicas, "observedGeneration": 1}
        if kind == "Deployment":
            rollout = r.random()
            revision = 2 if rollout < 0.40 else 1
            yield {
                "apiVersion": api,
                "kind": kind,
                "metadata": {
                    "name": name,
                    "uid": uid,
                    "labels": {"app": name},
                    "annotations": {"deployment.kubernetes.io/revision": str(revision)},
                    **meta_common,
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": name}},
                    "template": template(base_labels),
                    "strategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                    },
                },
                "status": status,
            }
            # (replica set revision, pods it owns)
            sets: list[tuple[int, int]] = [(revision, replicas)]
            if rollout < 0.15:  # mid-rollout: the old ReplicaSet still has some pods
                old = max(1, replicas // 3)
                sets = [(1, old), (2, replicas - old if replicas > 1 else 1)]
            elif rollout < 0.40:  # finished rollout, old ReplicaSet kept at 0
                sets = [(1, 0), (2, replicas)]
            for rev, count in sets:
                h = self.word(r, 10)
                rs_name = f"{name}-{h}"
                rs_uid = self.uid(r)
                labels = {**base_labels, "pod-template-hash": h}
                yield {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": {
                        "name": rs_name,
                        "uid": rs_uid,
                        "labels": labels,
                        "annotations": {
                            "deployment.kubernetes.io/revision": str(rev),
                            "deployment.kubernetes.io/desired-replicas": str(replicas),
                        },
                        "ownerReferences": [owner_ref("Deployment", name, uid)],
                        **meta_common,
                        "creationTimestamp": _ts(created + rev * 600),
                    },
                    "spec": {
                        "replicas": count,
                        "selector": {"matchLabels": {"app": name, "pod-template-hash": h}},
                        "template": template(labels),
                    },
                    "status": {"replicas": count, "readyReplicas": count, "observedGeneration": 1},
                }
                for suffix in self.suffixes(r, count):
                    node = self.place(r, sig, mode, anchor, zone)
                    yield from self.pod(
                        r,
                        ns,
                        f"{rs_name}-{suffix}",
                        labels,
                        owner_ref("ReplicaSet", rs_name, rs_uid),
                        template_spec,
                        node,
                        created + rev * 600 + 30,
                    )
        elif kind == "StatefulSet":
            rev_hash = f"{name}-{self.word(r, 10)}"
            yield {
                "apiVersion": api,
                "kind": kind,
                "metadata": {"name": name, "uid": uid, "labels": {"app": name}, **meta_common},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": name}},
                    "serviceName": name,
                    "podManagementPolicy": "OrderedReady",
                    "template": template(base_labels),
                },
                "status": {**status, "currentRevision": rev_hash, "updateRevision": rev_hash},
            }
            for i in range(replicas):
                labels = {
                    **base_labels,
                    "controller-revision-hash": rev_hash,
                    "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
                }
                node = self.place(r, sig, mode, anchor, zone)
                yield from self.pod(
                    r, ns, f"{name}-{i}", labels, owner_ref(kind, name, uid), template_spec, node, created + 60 + i
                )
        else:
            if kind == "ReplicaSet":
                selector: Any = {"matchLabels": {"app": name}}
                if j % 2 == 0:
                    selector["matchExpressions"] = [{"key": "tier", "operator": "In", "values": [tier, "frontend"]}]
            else:
                selector = {"app": name}
            labels = dict(base_labels)
            yield {
                "apiVersion": api,
                "kind": kind,
                "metadata": {"name": name, "uid": uid, "labels": {"app": name}, **meta_common},
                "spec": {"replicas": replicas, "selector": selector, "template": template(labels)},
                "status": status,
            }
            for suffix in self.suffixes(r, replicas):
                node = self.place(r, sig, mode, anchor, zone)
                yield from self.pod(
                    r, ns, f"{name}-{suffix}", labels, owner_ref(kind, name, uid), template_spec, node, created + 60
                )

    def objects(self) -> Iterator[Obj]:
        yield from self.nodes()
        for k in range(self.n_ns):
            yield self.namespace(k)
        for k in range(self.n_ns):
            ns = f"team-{k:04d}"
            r = random.Random(f"spreadwatch-bench:{self.seed}:ns:{k}")
            for j in self.by_ns[k]:
                yield from self.workload(r, ns, j)


def iter_objects(scale: float, seed: int = 1) -> Iterator[Obj]:
    """The objects of :func:`generate`, one at a time (nodes, namespaces, then namespace by namespace)."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    return _Gen(scale, seed).objects()


def generate(scale: float, seed: int = 1) -> list[Obj]:
    """A deterministic synthetic cluster: Kubernetes API objects (dicts), same (scale, seed) → same objects."""
    return list(iter_objects(scale, seed))


def as_list(objects: list[Obj]) -> Obj:
    """The ``kubectl get ... -o json`` envelope."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objects}


def write_dump(objects: list[Obj], path: str | Path) -> int:
    """Write the envelope (2-space indented JSON, as kubectl indents); returns the size in bytes."""
    data = orjson.dumps(as_list(objects), option=orjson.OPT_INDENT_2)
    Path(path).write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="JSON file to write ({kind: List, items: [...]})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    objects = generate(args.scale, args.seed)
    size = write_dump(objects, args.out)
    kinds: dict[str, int] = {}
    for o in objects:
        kinds[o["kind"]] = kinds.get(o["kind"], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    print(f"wrote {args.out}: {size / 2**20:.1f} MiB, {summary} in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
