"""Random Kubernetes clusters for differential testing of SelectorSpread.

Everything is derived from one integer seed with ``random.Random(seed)``, so a
seed names a case for good.  Objects are plain dicts in Kubernetes JSON form
(``kind``, ``apiVersion``, ``metadata.name/namespace/uid/labels``, ...), the way
``kubectl get -o json`` prints them, and they are valid as the API server would
accept them (the oracle mirrors what informers deliver), with a few deliberate
exceptions that exercise the plugin's tolerance of bad input: empty or missing
workload selectors, and rare invalid selector requirements.

The vocabularies are deliberately tiny so that selectors often match.

    python3 tests/oracle/gen.py --seed 7 --count 3      # oracle input lines
    python3 tests/oracle/gen.py --seed 7 --pretty       # one case, readable
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
LEGACY_ZONE = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION = "failure-domain.beta.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"

NAMESPACES = ["default", "team-a", "team-b"]
ZONES = ["z1", "z2", "z3"]
REGIONS = ["r1", "r2"]

# Pod label vocabulary: few keys, few values ("" is a valid label value).
LABELS: dict[str, list[str]] = {
    "app": ["web", "db", "cache"],
    "tier": ["front", "back"],
    "track": ["stable", "canary", ""],
    "env": ["prod", "dev"],
}
LABEL_KEYS = list(LABELS)

# Node label vocabulary used by nodeSelector / node affinity.
NODE_LABELS: dict[str, list[str]] = {
    "disk": ["ssd", "hdd"],
    "cpus": ["2", "4", "8", "16", "many"],  # "many" makes Gt/Lt fail to parse
    "pool": ["general", "batch", ""],
}
TAINT_KEYS = ["dedicated", "gpu", "spot"]
TAINT_VALUES = ["", "true", "infra"]
EFFECTS = ["NoSchedule", "NoExecute", "PreferNoSchedule"]

Obj = dict[str, Any]

# Requirements the API server would reject; rare, to cover the error paths.
BAD_LABEL_EXPRS: list[Obj] = [
    {"key": "app", "operator": "In", "values": []},
    {"key": "app", "operator": "Exists", "values": ["web"]},
    {"key": "app", "operator": "Gt", "values": ["1"]},
    {"key": "bad key!", "operator": "Exists"},
    {"key": "app", "operator": "In", "values": ["not valid!"]},
]
BAD_NODE_EXPRS: list[Obj] = [
    {"key": "disk", "operator": "In", "values": []},
    {"key": "cpus", "operator": "Gt", "values": ["four"]},
    {"key": "cpus", "operator": "Lt", "values": ["1", "2"]},
    {"key": "disk", "operator": "Near", "values": ["ssd"]},
]


class _Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.r = random.Random(seed)
        self._uid = 0
        self.templates: list[dict[str, str]] = []
        self.namespaces: list[str] = ["default"]

    # -- helpers -----------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def uid(self) -> str:
        self._uid += 1
        return f"{self.seed & 0xFFFFFFFF:08x}-0000-4000-8000-{self._uid:012x}"

    def meta(self, name: str, namespace: str | None, labels: dict[str, str] | None) -> Obj:
        m: Obj = {"name": name}
        if namespace is not None:
            m["namespace"] = namespace
        m["uid"] = self.uid()
        if labels is not None:
            m["labels"] = labels
        return m

    def ns(self) -> str:
        """A namespace: mostly the first one, so that objects meet."""
        if self.chance(0.65):
            return self.namespaces[0]
        return self.r.choice(self.namespaces)

    def pod_labels(self, lo: int = 0, hi: int = 3) -> dict[str, str]:
        keys = self.r.sample(LABEL_KEYS, self.r.randint(lo, hi))
        return {k: self.r.choice(LABELS[k]) for k in keys}

    def label_map(self, lo: int = 1, hi: int = 2) -> dict[str, str]:
        """A selector map: mostly a non-empty subset of a workload template,
        so that it selects some pods, otherwise random."""
        if self.templates and self.chance(0.75):
            tpl = self.r.choice(self.templates)
            keys = self.r.sample(sorted(tpl), self.r.randint(1, len(tpl)))
            return {k: tpl[k] for k in keys}
        return self.pod_labels(lo, hi)

    def workload_labels(self) -> dict[str, str]:
        """Labels for a pod: usually a workload template, sometimes varied."""
        if self.templates and self.chance(0.7):
            labels = dict(self.r.choice(self.templates))
            if self.chance(0.2):
                labels.update(self.pod_labels(1, 1))
            if labels and self.chance(0.1):
                del labels[self.r.choice(sorted(labels))]
            return labels
        return self.pod_labels(0, 3)

    # -- nodes -------------------------------------------------------------
    def zone_labels(self) -> dict[str, str]:
        z, rg = self.r.choice(ZONES), self.r.choice(REGIONS)
        mode = self.r.choice(
            [
                "none",
                "none",
                "topology",
                "topology",
                "topology-zone-only",
                "legacy",
                "both-equal",
                "both-different",
                "region-only",
                "legacy-region-only",
                "empty",
                "legacy-empty-zone",
                "mixed",
            ]
        )
        if mode == "none":
            return {}
        if mode == "topology":
            return {ZONE: z, REGION: rg}
        if mode == "topology-zone-only":
            return {ZONE: z}
        if mode == "legacy":
            return {LEGACY_ZONE: z, LEGACY_REGION: rg}
        if mode == "both-equal":
            return {ZONE: z, REGION: rg, LEGACY_ZONE: z, LEGACY_REGION: rg}
        if mode == "both-different":
            # The legacy label wins upstream (component-helpers GetZoneKey).
            z2 = self.r.choice([x for x in ZONES if x != z])
            rg2 = self.r.choice([x for x in REGIONS if x != rg])
            return {ZONE: z, REGION: self.r.choice([rg, rg2]), LEGACY_ZONE: z2, LEGACY_REGION: rg2}
        if mode == "region-only":
            return {REGION: rg}
        if mode == "legacy-region-only":
            return {LEGACY_REGION: rg}
        if mode == "empty":
            # Present but empty: no zone at all (region and zone both "").
            return self.r.choice([{ZONE: ""}, {ZONE: "", REGION: ""}, {LEGACY_ZONE: "", LEGACY_REGION: ""}])
        if mode == "legacy-empty-zone":
            # Legacy key present with "", topology key set: "" wins.
            out = {LEGACY_ZONE: "", ZONE: z}
            if self.chance(0.5):
                out[REGION] = rg
            return out
        # mixed: legacy zone with topology region, or the other way round
        if self.chance(0.5):
            return {LEGACY_ZONE: z, REGION: rg}
        return {ZONE: z, LEGACY_REGION: rg}

    def taints(self) -> list[Obj]:
        out = []
        for key in self.r.sample(TAINT_KEYS, self.r.choice([0, 0, 0, 0, 0, 0, 1, 1, 2])):
            t: Obj = {"key": key, "effect": self.r.choice(EFFECTS)}
            v = self.r.choice(TAINT_VALUES)
            if v:
                t["value"] = v
            out.append(t)
        return out

    def node(self, name: str) -> Obj:
        labels = {HOSTNAME: name}
        labels.update(self.zone_labels())
        for k, vals in NODE_LABELS.items():
            if self.chance(0.6):
                labels[k] = self.r.choice(vals)
        spec: Obj = {}
        taints = self.taints()
        if self.chance(0.08):
            spec["unschedulable"] = True
            if self.chance(0.7):  # what the node lifecycle controller adds
                taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
        if taints:
            spec["taints"] = taints
        node: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": self.meta(name, None, labels)}
        if spec:
            node["spec"] = spec
        return node

    # -- workload objects --------------------------------------------------
    def pod(self, name: str, ns: str, node_names: list[str], labels: dict[str, str]) -> Obj:
        spec: Obj = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}
        status: Obj = {}
        roll = self.r.random()
        if node_names and roll < 0.78:
            spec["nodeName"] = self.r.choice(node_names)
            status["phase"] = "Running"
        elif roll < 0.88:
            status["phase"] = "Pending"  # unscheduled
        else:
            spec["nodeName"] = self.r.choice(["gone-1", "gone-2"])  # not a node of the cluster
            status["phase"] = "Running"
        if "nodeName" in spec and self.chance(0.12):
            status["phase"] = self.r.choice(["Succeeded", "Failed"])
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(name, ns, labels or None),
            "spec": spec,
            "status": status,
        }
        if self.chance(0.1):
            pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            pod["metadata"]["deletionGracePeriodSeconds"] = 30
        return pod

    def label_selector(self) -> Obj | None:
        """A metav1.LabelSelector; None means "no selector field at all"."""
        roll = self.r.random()
        if roll < 0.06:
            return None
        if roll < 0.12:
            return {}
        sel: Obj = {}
        if self.chance(0.7):
            sel["matchLabels"] = self.label_map(1, 2)
        if not sel or self.chance(0.5):
            exprs = []
            for key in self.r.sample([*LABEL_KEYS, "absent"], self.r.randint(1, 2)):
                op = self.r.choice(["In", "NotIn", "Exists", "DoesNotExist"])
                e: Obj = {"key": key, "operator": op}
                if op in ("In", "NotIn"):
                    vals = LABELS.get(key, ["x", "y"])
                    e["values"] = self.r.sample(vals, self.r.randint(1, min(2, len(vals))))
                exprs.append(e)
            sel["matchExpressions"] = exprs
        if self.chance(0.03):
            # Rejected by API validation, tolerated by the plugin (the whole
            # selector is then ignored): covers LabelSelectorAsSelector's error path.
            sel.setdefault("matchExpressions", []).append(self.r.choice(BAD_LABEL_EXPRS))
        return sel

    def service(self, name: str, ns: str) -> Obj:
        spec: Obj = {"ports": [{"port": 80, "protocol": "TCP"}]}
        roll = self.r.random()
        if roll < 0.1:
            pass  # no selector: matches nothing
        elif roll < 0.16:
            spec["selector"] = {}  # arrives as nil through the API server
        else:
            spec["selector"] = self.label_map(1, 2)
        return {"apiVersion": "v1", "kind": "Service", "metadata": self.meta(name, ns, None), "spec": spec}

    def rc(self, name: str, ns: str) -> Obj:
        spec: Obj = {"replicas": 1}
        roll = self.r.random()
        if roll < 0.08:
            pass
        elif roll < 0.14:
            spec["selector"] = {}
        else:
            spec["selector"] = self.label_map(1, 2)
        return {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": self.meta(name, ns, None),
            "spec": spec,
        }

    def apps(self, kind: str, name: str, ns: str) -> Obj:
        spec: Obj = {"replicas": 1}
        sel = self.label_selector()
        if sel is not None:
            spec["selector"] = sel
        if kind == "StatefulSet":
            spec["serviceName"] = name
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": self.meta(name, ns, None), "spec": spec}

    # -- the incoming pod --------------------------------------------------
    def owner_refs(self, ns: str, cl: Obj) -> list[Obj] | None:
        kinds = [
            ("ReplicationController", "v1", cl["replicationControllers"]),
            ("ReplicaSet", "apps/v1", cl["replicaSets"]),
            ("StatefulSet", "apps/v1", cl["statefulSets"]),
        ]
        roll = self.r.random()
        if roll < 0.25:
            return None
        kind, api, objs = self.r.choice(kinds)
        same_ns = [o for o in objs if o["metadata"]["namespace"] == ns]
        if same_ns and self.chance(0.75):
            target = self.r.choice(same_ns)
        elif objs and self.chance(0.5):
            target = self.r.choice(objs)  # maybe another namespace: not found
        else:
            target = {"metadata": {"name": f"missing-{kind.lower()}", "uid": self.uid()}}
        ref: Obj = {
            "apiVersion": api,
            "kind": kind,
            "name": target["metadata"]["name"],
            "uid": target["metadata"].get("uid", self.uid()),
        }
        variant = self.r.random()
        if variant < 0.1:
            wrong = "apps/v1" if api == "v1" else "v1"
            ref["apiVersion"] = self.r.choice(["extensions/v1beta1", "apps/v1beta2", wrong])
        if variant < 0.8 or variant >= 0.9:
            ref["controller"] = True
            ref["blockOwnerDeletion"] = True
        elif self.chance(0.5):
            ref["controller"] = False  # non-controller reference: ignored
        refs = [ref]
        if variant >= 0.9:
            # A non-controller reference first; the controller one still wins.
            other_kind, other_api, other_objs = self.r.choice(kinds)
            other = other_objs[0]["metadata"]["name"] if other_objs else "other"
            refs.insert(0, {"apiVersion": other_api, "kind": other_kind, "name": other, "uid": self.uid()})
        return refs

    def tolerations(self) -> list[Obj] | None:
        if self.chance(0.55):
            return None
        out = []
        for _ in range(self.r.randint(1, 3)):
            kind = self.r.random()
            if kind < 0.1:
                out.append({"operator": "Exists"})  # tolerates everything
                continue
            if kind < 0.3:
                t: Obj = {"key": UNSCHEDULABLE_TAINT, "operator": "Exists"}
                if self.chance(0.6):
                    t["effect"] = "NoSchedule"
                out.append(t)
                continue
            t = {"key": self.r.choice(TAINT_KEYS)}
            if self.chance(0.5):
                t["operator"] = "Exists"
            else:
                if self.chance(0.5):
                    t["operator"] = "Equal"
                v = self.r.choice(TAINT_VALUES)
                if v:
                    t["value"] = v
            if self.chance(0.6):
                t["effect"] = self.r.choice(EFFECTS)
            out.append(t)
        return out

    def node_affinity(self, node_names: list[str]) -> Obj | None:
        if self.chance(0.8):
            return None
        terms = []
        for _ in range(self.r.choice([1, 1, 2])):
            term: Obj = {}
            if self.chance(0.04):
                terms.append(term)  # an empty term matches no node
                continue
            if self.chance(0.85):
                exprs = []
                for _ in range(self.r.randint(1, 2)):
                    op = self.r.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
                    if op in ("Gt", "Lt"):
                        exprs.append({"key": "cpus", "operator": op, "values": [self.r.choice(["3", "4", "10"])]})
                        continue
                    key = self.r.choice([*NODE_LABELS, ZONE, LEGACY_ZONE])
                    e: Obj = {"key": key, "operator": op}
                    if op in ("In", "NotIn"):
                        pool = NODE_LABELS.get(key, ZONES)
                        e["values"] = self.r.sample(pool, self.r.randint(1, 2))
                    exprs.append(e)
                if self.chance(0.03):
                    exprs.append(self.r.choice(BAD_NODE_EXPRS))  # the term then matches no node
                term["matchExpressions"] = exprs
            if node_names and (not term or self.chance(0.3)):
                name = self.r.choice([*node_names, "no-such-node"])
                term["matchFields"] = [
                    {"key": "metadata.name", "operator": self.r.choice(["In", "NotIn"]), "values": [name]}
                ]
            terms.append(term)
        return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}

    def incoming(self, cl: Obj, node_names: list[str]) -> Obj:
        ns = self.ns()
        same_ns = [p for p in cl["pods"] if p["metadata"]["namespace"] == ns and p["metadata"].get("labels")]
        svcs = [s for s in cl["services"] if s["metadata"]["namespace"] == ns and s["spec"].get("selector")]
        if svcs and self.chance(0.6):
            labels = dict(self.r.choice(svcs)["spec"]["selector"])  # a service's pod
            if self.chance(0.5):
                labels.update(self.r.choice(self.templates))
        elif same_ns and self.chance(0.3):
            labels = dict(self.r.choice(same_ns)["metadata"]["labels"])  # a sibling's labels
            if self.chance(0.3):
                labels.update(self.pod_labels(1, 1))
        else:
            labels = self.workload_labels()
        meta = self.meta(f"incoming-{self.seed}", ns, labels or None)
        refs = self.owner_refs(ns, cl)
        if refs:
            meta["ownerReferences"] = refs
        spec: Obj = {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
            "schedulerName": "default-scheduler",
        }
        tols = self.tolerations()
        if tols:
            spec["tolerations"] = tols
        if self.chance(0.12):
            k = self.r.choice(["disk", "pool", ZONE])
            spec["nodeSelector"] = {k: self.r.choice(NODE_LABELS.get(k, ZONES))}
        aff = self.node_affinity(node_names)
        if aff:
            spec["affinity"] = {"nodeAffinity": aff}
        if self.chance(0.08):
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": labels or {"app": "web"}},
                }
            ]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}

    # -- whole case ----------------------------------------------------------
    def case(self) -> Obj:
        r = self.r
        self.namespaces = NAMESPACES[: r.randint(1, 3)]
        n_nodes = r.choice([0, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 9, 10, 11, 12])
        node_names = [f"node-{i}" for i in range(n_nodes)]
        if self.chance(0.3):
            r.shuffle(node_names)  # input order is not alphabetical
        nodes = [self.node(n) for n in node_names]

        # A few workload templates (label sets) shared by pods and selectors.
        self.templates = [self.pod_labels(1, 3) for _ in range(r.randint(1, 4))]
        pods = []
        sizes = [
            0,
            r.randint(1, 10),
            r.randint(1, 10),
            r.randint(0, 40),
            r.randint(10, 40),
            r.randint(10, 40),
            r.randint(0, 40),
            r.randint(20, 40),
        ]
        for i in range(r.choice(sizes)):
            ns = self.ns()
            pods.append(self.pod(f"pod-{i}", ns, node_names, self.workload_labels()))

        cl: Obj = {
            "nodes": nodes,
            "pods": pods,
            "services": [self.service(f"svc-{i}", self.ns()) for i in range(r.choice([0, 1, 2, 2, 3, 4]))],
            "replicationControllers": [self.rc(f"rc-{i}", self.ns()) for i in range(r.randint(0, 2))],
            "replicaSets": [self.apps("ReplicaSet", f"rs-{i}", self.ns()) for i in range(r.randint(0, 3))],
            "statefulSets": [self.apps("StatefulSet", f"ss-{i}", self.ns()) for i in range(r.randint(0, 2))],
        }
        pod = self.incoming(cl, node_names)
        return {"seed": self.seed, "cluster": cl, "incoming": [pod]}


def generate(seed: int) -> dict[str, Any]:
    """One case: ``{"seed", "cluster": {nodes, pods, services, replicationControllers,
    replicaSets, statefulSets}, "incoming": [pod]}``."""
    return _Gen(seed).case()


def candidates_for(seed: int, case: dict[str, Any]) -> list[str]:
    """All node names of the case, shuffled deterministically from the seed."""
    names = [n["metadata"]["name"] for n in case["cluster"]["nodes"]]
    random.Random(f"candidates-{seed}").shuffle(names)
    return names


CLUSTER_KEYS = ("nodes", "pods", "services", "replicationControllers", "replicaSets", "statefulSets")


def objects_of(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """The cluster as one mixed list of objects (nodes first, like a dump)."""
    out: list[dict[str, Any]] = []
    for key in CLUSTER_KEYS:
        out.extend(cluster.get(key) or [])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--count", type=int, default=1, help="number of consecutive seeds")
    ap.add_argument("--explicit", action="store_true", help="give all nodes (shuffled) as candidates")
    ap.add_argument("--pretty", action="store_true", help="indented JSON (not oracle input)")
    args = ap.parse_args(argv)
    for seed in range(args.seed, args.seed + args.count):
        case = generate(seed)
        line: dict[str, Any] = {"cluster": case["cluster"], "incoming": case["incoming"]}
        if args.explicit:
            line["candidates"] = candidates_for(seed, case)
        if args.pretty:
            sys.stdout.write(json.dumps(line, indent=2))
        else:
            sys.stdout.write(json.dumps(line, separators=(",", ":")))
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
