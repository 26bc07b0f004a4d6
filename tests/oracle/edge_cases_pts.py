"""Hand-written PodTopologySpread cases with scores worked out by hand.

Each case is ``{"name", "cluster", "incoming": [pod], "candidates": [...] | None,
"schedulerConfig": str | None, "schedulerName"?: str, "expect": {...}}``.  ``expect`` has ``skipped``
and ``scores`` (and, when ``candidates`` is None — the real filters pick them, PodTopologySpread's
among them — the ``candidates`` they leave), or ``error: True`` for a configuration kube-scheduler rejects.
test_oracle_pts_selfcheck.py asserts them against the oracle (if the oracle
disagrees, the arithmetic below, not the port, is wrong);
test_oracle_pts_differential.py compares spreadwatch with the oracle on each.

The Filter's arithmetic, from filtering.go: per DoNotSchedule constraint the domains of the nodes with
every hard key that pass its inclusion policies, their matching pods, the minimum (0 with fewer domains
than minDomains); a node passes when ``count + selfMatch − minimum ≤ maxSkew``.

The arithmetic, from pkg/scheduler/framework/plugins/podtopologyspread/scoring.go:
weight ``w = ln(domains + 2)`` (hostname: domains = scored candidates);
raw ``round(sum(count * w + maxSkew - 1))``; normalized
``100 * (max + min - raw) // max`` (all 100 when max is 0); candidates lacking a
key of an explicit or List constraint score 0 outside min/max.  ln 3 = 1.0986,
ln 4 = 1.3863, ln 5 = 1.6094.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from edge_cases import apps, cluster, node, owned, pod, pods_on
from gen import HOSTNAME, LEGACY_ZONE, ZONE
from gen_pts import RACK
from hack.oracle_client import cluster_from_objects

Obj = dict[str, Any]
WEB = {"app": "web"}
DISK_SSD = {"disk": "ssd"}


def spread(
    key: str, max_skew: int = 1, action: str = "ScheduleAnyway", selector: Obj | None = None, **extra: Any
) -> Obj:
    c: Obj = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action}
    c["labelSelector"] = {"matchLabels": WEB} if selector is None else selector
    c.update(extra)
    return c


def incoming(labels: dict[str, str] | None = None, constraints: list[Obj] | None = None, **spec: Any) -> Obj:
    p = pod("incoming", None, dict(WEB) if labels is None else labels, **spec)
    if constraints is not None:
        p["spec"]["topologySpreadConstraints"] = constraints
    return p


def rs_incoming(**spec: Any) -> Obj:
    """A Deployment's next pod: labels app=web, controlled by ReplicaSet web (selector app=web)."""
    return owned(incoming(**spec), "ReplicaSet", "web", "apps/v1")


ZONE_1 = {"topologyKey": ZONE, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}
RACK_1 = {"topologyKey": RACK, "maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}
RS_WEB = apps("ReplicaSet", "web", {"matchLabels": WEB})


def config(args: Obj | None, other_args: Obj | None = None) -> str:
    """A KubeSchedulerConfiguration: profile default-scheduler with ``args``, and
    with ``other_args`` a first profile spread-scheduler with those."""
    profiles = []
    for name, a in (("spread-scheduler", other_args), ("default-scheduler", args)):
        if name == "spread-scheduler" and other_args is None:
            continue
        prof: Obj = {"schedulerName": name}
        if a is not None:
            prof["pluginConfig"] = [{"name": "PodTopologySpread", "args": a}]
        profiles.append(prof)
    return json.dumps(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": profiles}
    )


def _case(
    name: str,
    cl: Obj,
    pod_: Obj,
    candidates: list[str] | None,
    expect: Obj,
    scheduler_config: str | None = None,
    scheduler_name: str | None = None,
) -> Obj:
    case = {
        "name": name,
        "cluster": cl,
        "incoming": [pod_],
        "candidates": candidates,
        "schedulerConfig": scheduler_config,
        "expect": expect,
    }
    if scheduler_name is not None:
        case["schedulerName"] = scheduler_name
    return case


def _three_hosts(*, zone_labels: bool = False) -> Obj:
    """n1: 2 web pods, n2: 1, n3: none; no zone labels unless asked."""
    labels = ({ZONE: "a"}, {ZONE: "b"}, {ZONE: "c"}) if zone_labels else ({}, {}, {})
    return cluster(
        [node("n1", labels[0]), node("n2", labels[1]), node("n3", labels[2])],
        pods_on("n1", 2, WEB) + pods_on("n2", 1, WEB),
        rss=[RS_WEB],
    )


def _zone_a_a_none() -> Obj:
    """n1 and n2 in zone a (n1 holds 1 web pod), n3 zoneless; ReplicaSet web."""
    return cluster([node("n1", {ZONE: "a"}), node("n2", {ZONE: "a"}), node("n3")], pods_on("n1", 1, WEB), rss=[RS_WEB])


def _taint_or_affinity_cluster(n3_spec: Obj, n3_labels: dict[str, str]) -> Obj:
    """n1 zone a, n2 zone b (1 web pod), n3 zone a (2 web pods; not a candidate)."""
    return cluster(
        [node("n1", {ZONE: "a", **DISK_SSD}), node("n2", {ZONE: "b", **DISK_SSD}), node("n3", n3_labels, **n3_spec)],
        pods_on("n3", 2, WEB) + pods_on("n2", 1, WEB),
    )


def _cases() -> list[Obj]:
    skipped3 = {"skipped": True, "scores": {"n1": 0, "n2": 0, "n3": 0}}
    cases = [
        # w = ln 5; raw n1 2w=3.22->3, n2 w=1.61->2, n3 0; min 0 max 3: 100*(3-3)/3, 100*(3-2)/3, 100*3/3.
        _case(
            "explicit-hostname-2-1-0",
            _three_hosts(),
            incoming(constraints=[spread(HOSTNAME)]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 0, "n2": 33, "n3": 100}},
        ),
        # maxSkew 3 adds 2: raw 5.22->5, 3.61->4, 2; min 2 max 5: 100*2/5, 100*3/5, 100*5/5.
        _case(
            "explicit-hostname-maxskew-3",
            _three_hosts(),
            incoming(constraints=[spread(HOSTNAME, 3)]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 40, "n2": 60, "n3": 100}},
        ),
        # A DoNotSchedule constraint with minDomains changes nothing in scoring (same numbers as
        # explicit-hostname-2-1-0; the candidates are given, so it filters nothing either).
        _case(
            "min-domains-no-effect",
            _three_hosts(),
            incoming(constraints=[spread(HOSTNAME), spread(RACK, action="DoNotSchedule", minDomains=3)]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 0, "n2": 33, "n3": 100}},
        ),
        # The DoNotSchedule zone constraint is a filter: its key is not required of
        # scored nodes (none has a zone) and it adds no term.
        _case(
            "hard-constraint-adds-no-term",
            _three_hosts(),
            incoming(constraints=[spread(ZONE, action="DoNotSchedule"), spread(HOSTNAME)]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 0, "n2": 33, "n3": 100}},
        ),
        # Only DoNotSchedule constraints: PreScore skips; system defaults are not applied.
        _case(
            "only-donotschedule-skips",
            _three_hosts(zone_labels=True),
            rs_incoming(constraints=[spread(ZONE, action="DoNotSchedule")]),
            ["n1", "n2", "n3"],
            skipped3,
        ),
        # labelSelector {} selects everything, but an empty selector counts no pod: all raw 0 -> all 100.
        _case(
            "empty-label-selector-counts-nothing",
            _three_hosts(),
            incoming(constraints=[spread(HOSTNAME, selector={})]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 100, "n2": 100, "n3": 100}},
        ),
        # n3 lacks the zone: ignored (0) and its pod uncounted; zones a, b: w = ln 4;
        # raw n1 2w=2.77->3, n2 0; min 0 max 3.
        _case(
            "explicit-missing-key-scores-zero",
            cluster(
                [node("n1", {ZONE: "a"}), node("n2", {ZONE: "b"}), node("n3")],
                pods_on("n1", 2, WEB) + pods_on("n3", 1, WEB),
            ),
            incoming(constraints=[spread(ZONE)]),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 0, "n2": 100, "n3": 0}},
        ),
        # System defaults (hostname maxSkew 3, zone maxSkew 5): zone domains "a" and ""
        # (zoneless n3) -> ln 4; hostname ln 5.  n1: 1*1.61+2 + 1*1.39+4 = 9.00->9;
        # n2: 2 + 1.39+4 = 7.39->7; n3 (no zone term): 2.  min 2 max 9: 200/9, 400/9, 900/9.
        _case(
            "system-defaults-zoneless-node",
            _zone_a_a_none(),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 22, "n2": 44, "n3": 100}},
        ),
        # Only the beta zone label: zoneless for the defaults.  hostname ln 4, zones "a", "" -> ln 4;
        # n1: 1.39+2+1.39+4 = 8.77->9; n2: 2.  min 2 max 9: 100*2/9, 100*9/9.
        _case(
            "system-defaults-beta-only-zone",
            cluster([node("n1", {ZONE: "a"}), node("n2", {LEGACY_ZONE: "a"})], pods_on("n1", 1, WEB), rss=[RS_WEB]),
            rs_incoming(),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 22, "n2": 100}},
        ),
        # No Service or owner selects the pod: empty default selector -> skip.
        _case(
            "system-defaults-empty-selector-skips",
            _three_hosts(zone_labels=True),
            incoming(),
            ["n1", "n2", "n3"],
            skipped3,
        ),
        # Deleting, Succeeded, Failed and other-namespace pods on n1 do not count:
        # w = ln 4; raw n1 1.39->1, n2 2.77->3; min 1 max 3: 100*3/3, 100*1/3.
        _case(
            "terminating-terminal-other-namespace-uncounted",
            cluster(
                [node("n1"), node("n2")],
                [
                    pod("live", "n1", WEB),
                    pod("deleting", "n1", WEB, deleting=True),
                    pod("done", "n1", WEB, phase="Succeeded"),
                    pod("failed", "n1", WEB, phase="Failed"),
                    pod("elsewhere", "n1", WEB, ns="other"),
                    *pods_on("n2", 2, WEB),
                ],
            ),
            incoming(constraints=[spread(HOSTNAME)]),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 100, "n2": 33}},
        ),
        # nodeTaintsPolicy Honor: tainted n3's 2 pods leave zone a: a=0, b=1, w = ln 4;
        # raw n1 0, n2 1.39->1; min 0 max 1.
        _case(
            "taints-policy-honor",
            _taint_or_affinity_cluster({"taints": [{"key": "gpu", "effect": "NoSchedule"}]}, {ZONE: "a"}),
            incoming(constraints=[spread(ZONE, nodeTaintsPolicy="Honor")]),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 100, "n2": 0}},
        ),
        # Default Ignore: a=2 -> raw n1 2.77->3, n2 1; min 1 max 3: 100*1/3, 100*3/3.
        _case(
            "taints-policy-ignore-default",
            _taint_or_affinity_cluster({"taints": [{"key": "gpu", "effect": "NoSchedule"}]}, {ZONE: "a"}),
            incoming(constraints=[spread(ZONE)]),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 33, "n2": 100}},
        ),
        # nodeSelector disk=ssd; default nodeAffinityPolicy Honor drops n3 (hdd) -> like taints-policy-honor.
        _case(
            "affinity-policy-honor-default",
            _taint_or_affinity_cluster({}, {ZONE: "a", "disk": "hdd"}),
            incoming(constraints=[spread(ZONE)], nodeSelector=DISK_SSD),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 100, "n2": 0}},
        ),
        _case(
            "affinity-policy-ignore",
            _taint_or_affinity_cluster({}, {ZONE: "a", "disk": "hdd"}),
            incoming(constraints=[spread(ZONE, nodeAffinityPolicy="Ignore")], nodeSelector=DISK_SSD),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 33, "n2": 100}},
        ),
        # matchLabelKeys [version] adds version=v2: n1's v1 pods stop counting; w = ln 4;
        # raw n1 0, n2 1.39->1 (without it: 33/100 as above).
        _case(
            "match-label-keys",
            cluster(
                [node("n1"), node("n2")],
                pods_on("n1", 2, {"app": "web", "version": "v1"}) + pods_on("n2", 1, {"app": "web", "version": "v2"}),
            ),
            incoming({"app": "web", "version": "v2"}, [spread(HOSTNAME, matchLabelKeys=["version"])]),
            ["n1", "n2"],
            {"skipped": False, "scores": {"n1": 100, "n2": 0}},
        ),
        # One candidate: min = max -> 100.
        _case(
            "single-candidate",
            _three_hosts(),
            incoming(constraints=[spread(HOSTNAME)]),
            ["n1"],
            {"skipped": False, "scores": {"n1": 100}},
        ),
        # AKS-style List default (zone maxSkew 1): n4 lacks the zone -> 0, pods uncounted;
        # zones a, b, c: w = ln 5; raw n1 3.22->3, n2 1.61->2, n3 0.
        _case(
            "list-defaults-zone-maxskew-1",
            cluster(
                [node("n1", {ZONE: "a"}), node("n2", {ZONE: "b"}), node("n3", {ZONE: "c"}), node("n4")],
                pods_on("n1", 2, WEB) + pods_on("n2", 1, WEB) + pods_on("n4", 3, WEB),
                rss=[RS_WEB],
            ),
            rs_incoming(),
            ["n1", "n2", "n3", "n4"],
            {"skipped": False, "scores": {"n1": 0, "n2": 33, "n3": 100, "n4": 0}},
            config(
                {
                    "defaultingType": "List",
                    "defaultConstraints": [ZONE_1],
                }
            ),
        ),
        # List with no constraints: no default spreading -> skip.
        _case(
            "list-defaults-none-skips",
            _three_hosts(zone_labels=True),
            rs_incoming(),
            ["n1", "n2", "n3"],
            skipped3,
            config({"defaultingType": "List"}),
        ),
        # Explicit System behaves like no configuration (system-defaults-zoneless-node's numbers).
        _case(
            "explicit-system-defaulting",
            _zone_a_a_none(),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 22, "n2": 44, "n3": 100}},
            config({"defaultingType": "System"}),
        ),
        # --scheduler-name spread-scheduler: that profile's List default (rack maxSkew 1), not
        # default-scheduler's System; racks r1, r2, r3: w = ln 5; raw 3.22->3, 1.61->2, 0.
        _case(
            "scheduler-name-selects-profile",
            cluster(
                [node("n1", {RACK: "r1"}), node("n2", {RACK: "r2"}), node("n3", {RACK: "r3"})],
                pods_on("n1", 2, WEB) + pods_on("n2", 1, WEB),
                rss=[RS_WEB],
            ),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"skipped": False, "scores": {"n1": 0, "n2": 33, "n3": 100}},
            config({"defaultingType": "System"}, {"defaultingType": "List", "defaultConstraints": [RACK_1]}),
            "spread-scheduler",
        ),
        _case(
            "unknown-scheduler-name",
            _three_hosts(zone_labels=True),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"error": True},
            config({"defaultingType": "System"}),
            "no-such-scheduler",
        ),
        # System (also by omission) with defaultConstraints is rejected by validation.
        _case(
            "invalid-system-with-constraints",
            _three_hosts(zone_labels=True),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"error": True},
            config({"defaultConstraints": [ZONE_1]}),
        ),
        _case(
            "invalid-default-constraint-selector",
            _three_hosts(zone_labels=True),
            rs_incoming(),
            ["n1", "n2", "n3"],
            {"error": True},
            config(
                {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {
                            "topologyKey": ZONE,
                            "maxSkew": 1,
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": WEB},
                        }
                    ],
                }
            ),
        ),
    ]
    return cases + _filter_cases()


def _hard_zone_cluster() -> Obj:
    """n1, n2 zone a (n1: 2 web pods), n3 zone b (1), n4 and n5 zone c (n4: 1)."""
    nodes = [node("n1", {ZONE: "a"}), node("n2", {ZONE: "a"}), node("n3", {ZONE: "b"})]
    nodes += [node("n4", {ZONE: "c"}), node("n5", {ZONE: "c"})]
    return cluster(nodes, pods_on("n1", 2, WEB) + pods_on("n3", 1, WEB) + pods_on("n4", 1, WEB))


def _one_pod_per_zone() -> Obj:
    """Zones a, b, c with one node and one web pod each."""
    return cluster([node(n, {ZONE: z}) for n, z in (("n1", "a"), ("n2", "b"), ("n3", "c"))],
                   [p for n in ("n1", "n2", "n3") for p in pods_on(n, 1, WEB)])  # fmt: skip


def _tainted_empty_host() -> Obj:
    """n1 tainted gpu:NoSchedule, no pod; n2 and n3 one web pod each; no zones."""
    taint = [{"key": "gpu", "value": "1", "effect": "NoSchedule"}]
    return cluster([node("n1", taints=taint), node("n2"), node("n3")], pods_on("n2", 1, WEB) + pods_on("n3", 1, WEB))


def _filter_cases() -> list[Obj]:
    """PodTopologySpread's Filter: the filters pick the candidates (``candidates`` None)."""
    return [
        # Hard zone maxSkew 1: zones a=2, b=1, c=1, minimum 1; a 2+1-1=2 > 1 rejects n1, n2; b, c 1+1-1=1 pass.
        # Soft hostname over n3 (1 pod), n4 (1), n5 (0): w = ln 5 = 1.61; raw 2, 2, 0; min 0 max 2: 0, 0, 100.
        _case(
            "hard-zone-rejects-the-full-zone",
            _hard_zone_cluster(),
            incoming(constraints=[spread(ZONE, action="DoNotSchedule"), spread(HOSTNAME)]),
            None,
            {"candidates": ["n3", "n4", "n5"], "skipped": False, "scores": {"n3": 0, "n4": 0, "n5": 100}},
        ),
        # minDomains 4 > 3 zones: the minimum is 0, every zone 1+1-0=2 > 1: no candidate, the pod stays Pending.
        _case(
            "min-domains-above-the-zones-leaves-no-candidate",
            _one_pod_per_zone(),
            incoming(constraints=[spread(ZONE, action="DoNotSchedule", minDomains=4)]),
            None,
            {"candidates": [], "skipped": True, "scores": {}},
        ),
        # The same with minDomains 3 = the zones: minimum 1, every zone 1+1-1=1 passes; no soft constraint: skipped.
        _case(
            "min-domains-met-passes-every-zone",
            _one_pod_per_zone(),
            incoming(constraints=[spread(ZONE, action="DoNotSchedule", minDomains=3)]),
            None,
            {"candidates": ["n1", "n2", "n3"], "skipped": True, "scores": {"n1": 0, "n2": 0, "n3": 0}},
        ),
        # Hard hostname, nodeTaintsPolicy Honor: tainted n1 is no domain; n2, n3 1 pod each, minimum 1: 1+1-1=1
        # passes both (n1 fails TaintToleration anyway).
        _case(
            "hard-hostname-taints-honor",
            _tainted_empty_host(),
            incoming(constraints=[spread(HOSTNAME, action="DoNotSchedule", nodeTaintsPolicy="Honor")]),
            None,
            {"candidates": ["n2", "n3"], "skipped": True, "scores": {"n2": 0, "n3": 0}},
        ),
        # nodeTaintsPolicy Ignore (the default): n1's empty domain counts, minimum 0: n2, n3 1+1-0=2 > 1.
        _case(
            "hard-hostname-taints-ignore-leaves-no-candidate",
            _tainted_empty_host(),
            incoming(constraints=[spread(HOSTNAME, action="DoNotSchedule")]),
            None,
            {"candidates": [], "skipped": True, "scores": {}},
        ),
    ]


EDGE_CASES: list[Obj] = _cases()

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster.yaml"
# Issue 14's numbers for Deployment shop/checkout on examples/cluster.yaml (candidates:
# the real filters drop cordoned node-c2 and tainted node-gpu).  hostname w = ln 8,
# zones eu-west-1a/1b/1c and "" (node-legacy has only the beta label) w = ln 6;
# raw a1 2+4 = 6, b1 3*2.08+2 + 3*1.79+4 = 17.6->18, b2 2+5.38+4 = 11.4->11,
# c1 2.08+2+1.79+4 = 9.9->10, legacy 2; min 2 max 18: 100*(20-raw)//18.
EXAMPLE_CHECKOUT_SCORES = {
    "node-a1": 77,
    "node-a2": 77,
    "node-b1": 11,
    "node-b2": 50,
    "node-c1": 55,
    "node-legacy": 100,
}


def example_checkout_case() -> Obj:
    """examples/cluster.yaml with shop/checkout's next pod (its ReplicaSet's template,
    controlled by it); candidates None: the oracle's filters pick them."""
    objects = yaml.safe_load(EXAMPLE.read_text())["items"]
    rs = next(o for o in objects if o["kind"] == "ReplicaSet" and o["metadata"]["name"] == "checkout-6f7d5b9c4")
    template = rs["spec"]["template"]
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"], "controller": True}
    ref["uid"] = rs["metadata"]["uid"]
    pod_ = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "checkout-next",
            "namespace": "shop",
            "labels": dict(template["metadata"]["labels"]),
            "ownerReferences": [ref],
        },
        "spec": template["spec"],
    }
    return {
        "name": "examples-cluster-shop-checkout",
        "cluster": cluster_from_objects(objects),
        "incoming": [pod_],
        "candidates": None,
        "unfit": [],
        "schedulerConfig": None,
    }
