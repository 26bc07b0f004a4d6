"""Random clusters for differential testing of PodTopologySpread (profile ``v1.29``).

Built on gen.py's generator (same seeds-name-cases rule, same object shapes, same
workload/owner/taint/toleration/node-affinity vocabulary), with what changes
PodTopologySpread's integers on top:

* sizes: 1-12 nodes and up to 50 pods, one case in ten 15-40 nodes and 60-200 pods;
* nodes: only the GA zone label, GA + beta (equal or different), **only the beta
  zone label**, no zone, an empty zone value; a custom topology key
  (``example.com/rack``) present on some nodes only; rarely no hostname label;
* the incoming pod: no constraints (then the system or custom defaults apply) or
  1-3 explicit constraints mixing ScheduleAnyway and DoNotSchedule (40 %), hostname /
  zone / beta zone / region / rack keys, maxSkew 1-5, ``labelSelector`` from the
  pod's labels, random, ``{}`` or absent, ``matchLabelKeys``,
  ``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` (absent, Honor, Ignore),
  ``minDomains`` 1-5 on DoNotSchedule ones (rarely on a ScheduleAnyway one, which
  the API refuses: spreadwatch must too);
* a KubeSchedulerConfiguration (``schedulerConfig``, YAML or JSON text) in about
  half the cases: explicit System, List with 1-3 constraints (AKS-style zone
  maxSkew 1, DoNotSchedule ones, inclusion policies), List with none, a second
  profile (read with ``schedulerName`` half the time), and rarely an invalid one
  or an unknown ``schedulerName`` (which both sides must reject);
* candidates: ``None`` (the oracle's real filters pick them — NodeUnschedulable,
  TaintToleration, NodeAffinity, PodTopologySpread — and spreadwatch must pick the
  same, without ``--nodes``) or an explicit random non-empty subset in random order
  (scores only: filtered-out nodes still hold pods).

    python3 tests/oracle/gen_pts.py --seed 7 --count 3     # oracle input lines
    python3 tests/oracle/gen_pts.py --seed 7 --pretty      # one case, readable
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

import gen
import yaml
from gen import HOSTNAME, LEGACY_ZONE, REGION, ZONE, ZONES, Obj

RACK = "example.com/rack"
RACKS = ["rack-1", "rack-2", "rack-3"]
SCHEDULER_CONFIG_API = "kubescheduler.config.k8s.io/v1"
OTHER_SCHEDULER = "spread-scheduler"
# Keys an explicit constraint spreads over; the beta zone key and region are
# ordinary label keys for PodTopologySpread.
CONSTRAINT_KEYS = [ZONE, ZONE, HOSTNAME, HOSTNAME, RACK, LEGACY_ZONE, REGION]
DEFAULT_KEYS = [ZONE, ZONE, HOSTNAME, RACK, LEGACY_ZONE]


class _PtsGen(gen._Gen):
    # -- nodes -------------------------------------------------------------
    def zone_labels(self) -> dict[str, str]:
        z, rg = self.r.choice(ZONES), self.r.choice(gen.REGIONS)
        mode = self.r.choice(
            ["ga", "ga", "ga", "ga-region", "ga-region", "beta-only", "ga-beta", "ga-beta-different", "none", "empty"]
        )
        out: dict[str, str] = {}
        if mode == "ga":
            out = {ZONE: z}
        elif mode == "ga-region":
            out = {ZONE: z, REGION: rg}
        elif mode == "beta-only":
            out = {LEGACY_ZONE: z, gen.LEGACY_REGION: rg}
        elif mode == "ga-beta":
            out = {ZONE: z, REGION: rg, LEGACY_ZONE: z, gen.LEGACY_REGION: rg}
        elif mode == "ga-beta-different":
            out = {ZONE: z, LEGACY_ZONE: self.r.choice([x for x in ZONES if x != z])}
        elif mode == "empty":
            out = {ZONE: ""}
        if self.chance(0.6):
            out[RACK] = self.r.choice([*RACKS, *RACKS, ""])
        return out

    def taints(self) -> list[Obj]:
        # Fewer tainted nodes than gen.py: enough for nodeTaintsPolicy, while
        # most nodes stay candidates.
        return super().taints() if self.chance(0.45) else []

    def node(self, name: str) -> Obj:
        node = super().node(name)
        if self.chance(0.05):
            del node["metadata"]["labels"][HOSTNAME]  # hostname spreading then has no value here
        return node

    # -- the incoming pod's constraints ----------------------------------------
    def spread_selector(self, labels: dict[str, str]) -> Obj | None:
        roll = self.r.random()
        if labels and roll < 0.45:
            keys = self.r.sample(sorted(labels), self.r.randint(1, len(labels)))
            return {"matchLabels": {k: labels[k] for k in keys}}
        if labels and roll < 0.55:
            key = self.r.choice(sorted(labels))
            return {"matchExpressions": [{"key": key, "operator": "In", "values": [labels[key]]}]}
        if roll < 0.7:
            sel = self.label_selector()
            if sel and "matchExpressions" in sel:
                # The API server rejects a pod whose constraint has an invalid
                # requirement (and PreScore would fail): keep the valid ones.
                sel["matchExpressions"] = [e for e in sel["matchExpressions"] if e not in gen.BAD_LABEL_EXPRS]
                if not sel["matchExpressions"]:
                    del sel["matchExpressions"]
            return sel
        if roll < 0.85:
            return {}  # matches everything as a selector, but counts no pod
        return None  # no selector: matches nothing

    def constraint(self, labels: dict[str, str], key: str, action: str) -> Obj:
        c: Obj = {"maxSkew": self.r.choice([1, 1, 1, 2, 3, 5]), "topologyKey": key, "whenUnsatisfiable": action}
        sel = self.spread_selector(labels)
        if sel is not None:
            c["labelSelector"] = sel
        if self.chance(0.3):
            keys = self.r.sample(sorted(labels), self.r.randint(0, len(labels))) if labels else []
            if self.chance(0.4):
                keys.append("pod-template-hash")  # usually absent from the pod: ignored
            if keys:
                c["matchLabelKeys"] = keys
        if self.chance(0.3):
            c["nodeAffinityPolicy"] = self.r.choice(["Honor", "Ignore"])
        if self.chance(0.35):
            c["nodeTaintsPolicy"] = self.r.choice(["Honor", "Ignore"])
        if action == "DoNotSchedule" and self.chance(0.4):
            c["minDomains"] = self.r.randint(1, 5)
        elif self.chance(0.03):
            c["minDomains"] = self.r.randint(2, 4)  # the API refuses it with ScheduleAnyway (the plugin ignores it)
        return c

    def constraints(self, labels: dict[str, str]) -> list[Obj]:
        out: list[Obj] = []
        used: set[tuple[str, str]] = set()
        for _ in range(self.r.choice([1, 1, 2, 2, 3])):
            key = self.r.choice(CONSTRAINT_KEYS)
            action = "ScheduleAnyway" if self.chance(0.6) else "DoNotSchedule"
            if (key, action) in used:  # the API rejects duplicates
                continue
            used.add((key, action))
            out.append(self.constraint(labels, key, action))
        return out

    # -- scheduler configuration -----------------------------------------------
    def default_constraints(self) -> list[Obj]:
        out: list[Obj] = []
        if self.chance(0.35):  # AKS-style
            out.append({"topologyKey": ZONE, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"})
            if self.chance(0.5):
                out.append({"topologyKey": HOSTNAME, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"})
            return out
        used: set[tuple[str, str]] = set()
        for _ in range(self.r.choice([1, 1, 2, 2, 3])):
            key = self.r.choice(DEFAULT_KEYS)
            action = "ScheduleAnyway" if self.chance(0.8) else "DoNotSchedule"
            if (key, action) in used:
                continue
            used.add((key, action))
            c: Obj = {"topologyKey": key, "maxSkew": self.r.choice([1, 1, 2, 3, 5]), "whenUnsatisfiable": action}
            if self.chance(0.2):
                c["nodeAffinityPolicy"] = self.r.choice(["Honor", "Ignore"])
            if self.chance(0.2):
                c["nodeTaintsPolicy"] = self.r.choice(["Honor", "Ignore"])
            out.append(c)
        return out

    def pts_args(self) -> Obj | None:
        """PodTopologySpreadArgs; None: no pluginConfig entry (the defaults)."""
        roll = self.r.random()
        if roll < 0.1:
            return None
        if roll < 0.25:
            return {"defaultingType": "System"}
        if roll < 0.35:
            return {"defaultingType": "List"}  # no default spreading at all
        if roll < 0.4:
            return {"defaultingType": "List", "defaultConstraints": []}
        args: Obj = {"defaultingType": "List", "defaultConstraints": self.default_constraints()}
        if self.chance(0.04):
            # Invalid: System with constraints (also when defaultingType is
            # left out, which defaults to System).
            if self.chance(0.5):
                args["defaultingType"] = "System"
            else:
                del args["defaultingType"]
        elif self.chance(0.03):
            args["defaultConstraints"][0]["labelSelector"] = {"matchLabels": {"app": "web"}}  # forbidden
        return args

    def scheduler_config(self) -> tuple[str | None, str | None]:
        """The configuration text (YAML or JSON) and the profile name to read it
        with (None: the default, ``default-scheduler``)."""
        if self.chance(0.45):
            return None, None
        profiles: list[Obj] = []
        if self.chance(0.15):  # another profile first, with other args: looked up by name
            profiles.append(
                {
                    "schedulerName": OTHER_SCHEDULER,
                    "pluginConfig": [
                        {
                            "name": "PodTopologySpread",
                            "args": {
                                "defaultingType": "List",
                                "defaultConstraints": [
                                    {"topologyKey": RACK, "maxSkew": 2, "whenUnsatisfiable": "ScheduleAnyway"}
                                ],
                            },
                        }
                    ],
                }
            )
        prof: Obj = {"schedulerName": "default-scheduler"}
        args = self.pts_args()
        if args is not None:
            prof["pluginConfig"] = [{"name": "PodTopologySpread", "args": args}]
        profiles.append(prof)
        if self.chance(0.3):
            profiles.reverse()
        cfg = {"apiVersion": SCHEDULER_CONFIG_API, "kind": "KubeSchedulerConfiguration", "profiles": profiles}
        text = yaml.safe_dump(cfg, sort_keys=False) if self.chance(0.5) else json.dumps(cfg, indent=2)
        name = None
        if len(profiles) > 1 and self.chance(0.5):
            name = OTHER_SCHEDULER
        elif self.chance(0.02):
            name = "no-such-scheduler"  # both sides must reject it
        return text, name

    # -- whole case ----------------------------------------------------------
    def case(self) -> Obj:
        """gen.py's case with more nodes and pods (spreading needs several domains
        and candidates to show differences)."""
        r = self.r
        self.namespaces = gen.NAMESPACES[: r.randint(1, 3)]
        # One case in ten is big: many domains and counts, so raw sums land near
        # .5 and weights ln(n + 2) take many values (Go's log, math.Round).
        big = self.chance(0.1)
        n_nodes = r.randint(15, 40) if big else r.choice([1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10, 12])
        node_names = [f"node-{i}" for i in range(n_nodes)]
        if self.chance(0.3):
            r.shuffle(node_names)
        nodes = [self.node(n) for n in node_names]
        self.templates = [self.pod_labels(1, 3) for _ in range(r.randint(1, 3))]
        pods = [
            self.pod(f"pod-{i}", self.ns(), node_names, self.workload_labels())
            for i in range(
                r.randint(60, 200) if big else r.choice([0, r.randint(1, 10), r.randint(5, 25), r.randint(10, 50)])
            )
        ]
        cl: Obj = {
            "nodes": nodes,
            "pods": pods,
            "services": [self.service(f"svc-{i}", self.ns()) for i in range(r.choice([0, 1, 1, 2, 3]))],
            "replicationControllers": [self.rc(f"rc-{i}", self.ns()) for i in range(r.randint(0, 1))],
            "replicaSets": [self.apps("ReplicaSet", f"rs-{i}", self.ns()) for i in range(r.randint(0, 3))],
            "statefulSets": [self.apps("StatefulSet", f"ss-{i}", self.ns()) for i in range(r.randint(0, 2))],
        }
        return {"seed": self.seed, "cluster": cl, "incoming": [self.incoming(cl, node_names)]}

    def pts_case(self) -> Obj:
        base = self.case()
        cl = base["cluster"]
        pod = base["incoming"][0]
        spec = pod["spec"]
        spec.pop("topologySpreadConstraints", None)
        if self.chance(0.55):
            spec["topologySpreadConstraints"] = self.constraints(pod["metadata"].get("labels") or {})
        if self.chance(0.06):
            spec["nodeSelector"] = {RACK: self.r.choice(RACKS)}
        names = [n["metadata"]["name"] for n in cl["nodes"]]
        config, scheduler_name = self.scheduler_config()
        case: Obj = {"seed": self.seed, "cluster": cl, "incoming": [pod], "schedulerConfig": config}
        if scheduler_name is not None:
            case["schedulerName"] = scheduler_name
        if self.chance(0.3):
            cands = self.r.sample(names, self.r.randint(1, len(names)))
            case["candidates"] = cands
            case["unfit"] = []
        else:  # the filters pick them: spreadwatch's candidates are compared with the oracle's
            case["candidates"] = None
            case["unfit"] = []
        return case


def generate(seed: int) -> dict[str, Any]:
    """One case: ``{"seed", "cluster", "incoming": [pod], "schedulerConfig": str | None,
    "candidates": [names] | None, "unfit": [names]}``, deterministic in ``seed``."""
    return _PtsGen(seed).pts_case()


def fallback_candidates(seed: int, case: dict[str, Any]) -> list[str]:
    """Every node, shuffled from the seed: the candidates when the filters leave none
    (the CLI contract needs at least one ``--nodes`` name)."""
    names = [n["metadata"]["name"] for n in case["cluster"]["nodes"]]
    random.Random(f"pts-fallback-{seed}").shuffle(names)
    return names


def oracle_line(case: dict[str, Any]) -> dict[str, Any]:
    """The case as a spreadwatch-oracle-pts input line."""
    line: dict[str, Any] = {"cluster": case["cluster"], "incoming": case["incoming"]}
    if case.get("candidates") is not None:
        line["candidates"] = case["candidates"]
    elif case.get("unfit"):
        line["unfit"] = case["unfit"]
    if case.get("schedulerConfig") is not None:
        line["schedulerConfig"] = case["schedulerConfig"]
    if case.get("schedulerName") is not None:
        line["schedulerName"] = case["schedulerName"]
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--count", type=int, default=1, help="number of consecutive seeds")
    ap.add_argument("--pretty", action="store_true", help="indented JSON")
    args = ap.parse_args(argv)
    for seed in range(args.seed, args.seed + args.count):
        line = oracle_line(generate(seed))
        text = json.dumps(line, indent=2) if args.pretty else json.dumps(line, separators=(",", ":"))
        sys.stdout.write(text)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
