"""A deterministic, structure-aware fuzzer of spreadwatch's inputs (tests/test_hostile_input.py, ``make fuzz``).

Each case is drawn from a seeded ``random.Random(f"{seed}/{index}")`` (so any case is reproduced alone by its
seed and index): a valid dump (``examples/cluster.yaml``'s objects, as JSON or YAML) with one object mutated —
a wrongly typed value or a missing field at a random path, a huge or hostile value, deep nesting, broken
owner references, an invalid selector or topology spread constraint — or the whole file made hostile (bytes
flipped or cut, invalid UTF-8, deep nesting, odd List kinds, billion-laughs and self-referring YAML aliases).
It is run in-process through one of ``analyze`` (also under ``--profile v1.29`` with the whole profile's
prediction, whose requests, ports, images and affinity terms get hostile values too), ``predict``,
``explain``, ``score``, ``compare``, ``simulate`` (``--add``, ``--remove``), ``rebalance``, ``summary`` or
``analyze --scheduler-config`` (the scheduler configuration mutated instead), and checked:

* the exit code is 0 or 2 and nothing escapes ``main`` (no traceback);
* exit 2: nothing on stdout, one line on stderr (``spreadwatch: error: ...``); exit 0: only
  ``spreadwatch: note: ...`` lines on stderr;
* a workload object mutated (not its identity or owner references) and still read: under the default
  profile, every other workload's report is the same as with that object removed from the dump.

:func:`main` runs a range of cases and prints one line per case (``ok``/``FAIL``), so a parent process can
notice a hang (no line within its time bound) and kill it. O(cases × dump size).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from spreadwatch.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cluster.yaml"
POD = ROOT / "examples" / "pod.yaml"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
SCHEDULER_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            }
                        ],
                    },
                }
            ],
        }
    ],
}


def base_objects() -> list[dict[str, Any]]:
    """The objects of the bundled example cluster, Lists flattened."""
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(EXAMPLE.read_text()):
        if doc and str(doc.get("kind", "")).endswith("List"):
            out.extend(doc["items"])
        elif doc:
            out.append(doc)
    return out


class Deep:
    """A value nested ``depth`` levels deep (written as text: the encoders would recurse)."""

    def __init__(self, depth: int, shape: str) -> None:
        self.depth, self.shape = depth, shape

    def text(self) -> str:
        if self.shape == "list":
            return "[" * self.depth + "]" * self.depth
        return '{"a": ' * self.depth + "1" + "}" * self.depth


def hostile_value(rng: random.Random) -> Any:
    """One value of a class that has broken readers: wrong types, huge integers, Unicode digits, long
    strings, deep nesting, empty containers."""
    choices: list[Callable[[], Any]] = [
        lambda: None,
        lambda: True,
        lambda: rng.choice([0, -1, 1, 2**31, -(2**31) - 1, 2**63, 2**64, 2**80, -(2**90)]),
        lambda: rng.choice([1.5, 1e308, -0.0]),
        lambda: rng.choice(["", "²", "٣", "¹²", "9" * rng.choice([19, 20, 4301, 5000]), "*", "a b", "🙂", "\u0000"]),
        lambda: "x" * rng.choice([64, 254, 10_000]),
        lambda: rng.choice([[], {}, [1, "a"], {"a": 1}, ["x"] * 1000]),
        lambda: Deep(rng.choice([20, 500, 999, 1_100, 3_000, 10_000]), rng.choice(["list", "map"])),
    ]
    return rng.choice(choices)()


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) into ``obj``'s containers and leaves."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(_paths(value, (*prefix, key)))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.extend(_paths(value, (*prefix, i)))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> None:
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


#: hostile requests and affinity terms for the whole profile's prediction (a workload's template: its report is
#: Error with one reason; an existing pod or a node: the object is refused with one line)
_QUANTITIES: tuple[Any, ...] = ("1.5.5", "-1", "1e999", "9" * 5000, "²", "1Gibibyte", "0x10", 2**80, None, [], "")


def _container(rng: random.Random) -> list[dict[str, Any]]:
    resource = rng.choice(["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi", "pods"])
    return [{"name": "c", "image": rng.choice(["x", "", "a/b:1@sha256:zz", "🙂"]),
             "resources": {"requests": {resource: rng.choice(_QUANTITIES)}},
             "ports": rng.choice([[], [{"containerPort": 80, "hostPort": rng.choice([0, -1, 80, 2**31, "80"])}]])}]


def _affinity(rng: random.Random) -> dict[str, Any]:
    expression = {"key": rng.choice(["a", "", "-bad-"]), "operator": rng.choice(["Near", "In", "Gt", "Exists", 1]),
                  "values": rng.choice([["x"], [], ["²"], None])}  # fmt: skip
    term = {"labelSelector": {"matchExpressions": [expression]}, "topologyKey": rng.choice(["zone", "", 7])}
    return rng.choice([
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice([0, 1, 101, -5, "1"]), "podAffinityTerm": term}]}},
        {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": rng.choice([0, 1, 101]), "preference": {"matchExpressions": [expression]}}]}},
    ])  # fmt: skip


_TARGETED: list[tuple[str, Any]] = [
    ("spec.template.spec.containers", _container),
    ("spec.template.spec.initContainers", _container),
    ("spec.template.spec.overhead", lambda rng: {"cpu": rng.choice(_QUANTITIES)}),
    ("spec.template.spec.affinity", _affinity),
    ("spec.replicas", lambda rng: rng.choice([2**31, 2**80, -1, "3", 3.5, None])),
    (
        "metadata.annotations",
        lambda rng: {"deployment.kubernetes.io/revision": rng.choice(["²", "٣", "9" * 5000, "-1", ""])},
    ),
    (
        "metadata.ownerReferences",
        lambda rng: rng.choice(
            [
                [{"kind": "ReplicaSet", "name": "nope", "controller": True}],
                [{"controller": "yes"}],
                "owner",
                [{"apiVersion": 1, "kind": [], "name": {}, "uid": None, "controller": True}],
                [None],
            ]
        ),
    ),
    (
        "spec.selector",
        lambda rng: rng.choice(
            [
                {"matchExpressions": [{"key": "a", "operator": "Within", "values": ["b"]}]},
                {"matchExpressions": [{"key": "-bad-", "operator": "In", "values": ["b"]}]},
                {"matchLabels": {"a": "b c"}},
                {"matchLabels": ["a"]},
                {"matchExpressions": "x"},
                "app=web",
                {},
            ]
        ),
    ),
    (
        "spec.template.spec.topologySpreadConstraints",
        lambda rng: rng.choice(
            [
                [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe"}],
                [{"maxSkew": 2**40, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
                [
                    {
                        "maxSkew": 1,
                        "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["²"]}]},
                    }
                ],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": -(2**70)}],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": "x"}],
                [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Sometimes"}],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0}],
                [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "All"}],
                [{"maxSkew": 2, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2**20}],
                {"maxSkew": 1},
            ]
        ),
    ),
    (
        "spec.template.spec.affinity",
        lambda rng: {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "k",
                                    "operator": rng.choice(["Gt", "Lt", "Foo"]),
                                    "values": [rng.choice(["²", "9" * 5000, "1", "-"])],
                                }
                            ]
                        }
                    ]
                }
            }
        },
    ),
    ("metadata.labels", lambda rng: rng.choice([{"a": 1}, {"": "x"}, {"a/b/c": "d"}, ["a"], {"k": "²" * 70}])),
    ("metadata.managedFields", lambda rng: [{"fieldsV1": Deep(rng.choice([50, 999, 2_000]), "map")}]),
]


def mutate_object(rng: random.Random, obj: dict[str, Any]) -> tuple[str, bool]:
    """Mutate ``obj`` in place; returns (what was done, whether the "others unchanged" property applies)."""
    meta = obj.get("metadata")
    if rng.random() < 0.08 and isinstance(meta, dict) and isinstance(meta.get("name"), str):
        suffix = rng.choice(["²", "٣", "9" * rng.choice([10, 11, 5_000]), "2147483648", "-1", "007", ""])
        meta["name"] = f"{meta['name'].rpartition('-')[0] or meta['name']}-{suffix}"
        return "hostile name suffix (an ordinal)", False
    if rng.random() < 0.45:
        field, make = rng.choice(_TARGETED)
        keys = field.split(".")
        parent = obj
        for key in keys[:-1]:
            if not isinstance(parent.get(key), dict):
                parent[key] = {}
            parent = parent[key]
        parent[keys[-1]] = make(rng)
        return f"set {field}", not field.endswith("ownerReferences")
    paths = _paths(obj)
    path = rng.choice(paths)
    identity = path[:1] in {("kind",), ("apiVersion",)} or path[:2] in {
        ("metadata", "name"),
        ("metadata", "namespace"),
        ("metadata", "uid"),
    }
    eligible = not identity and "ownerReferences" not in path
    if rng.random() < 0.25:
        _set(obj, path, None, delete=True)
        return f"delete {'.'.join(map(str, path))}", eligible
    _set(obj, path, hostile_value(rng))
    return f"replace {'.'.join(map(str, path))}", eligible


_NUMBERS = ("1", "-1", "9" * 19, "9" * 20, "9" * 5_000, "0" * 5_000 + "7", "²", "٣", "+5", "")


def mutate_pair(rng: random.Random, objects: list[dict[str, Any]]) -> str:
    """Two objects that meet: every node labelled ``k`` with a hostile number, one workload requiring
    ``k Gt|Lt`` another (node affinity compares them as Go's int64)."""
    value = rng.choice(_NUMBERS)
    for obj in objects:
        if obj.get("kind") == "Node":
            obj["metadata"].setdefault("labels", {})["k"] = value
    workload = rng.choice([o for o in objects if o.get("kind") in WORKLOAD_KINDS])
    spec = workload["spec"]["template"].setdefault("spec", {})
    operator, bound = rng.choice(["Gt", "Lt"]), rng.choice(_NUMBERS)
    term = {"matchExpressions": [{"key": "k", "operator": operator, "values": [bound]}]}
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    return f"nodes k={value[:8]}..., {workload['metadata']['name']} requires k {operator} {bound[:8]}..."


def render(objects: list[dict[str, Any]], fmt: str, rng: random.Random) -> bytes:
    """A dump of ``objects``: a JSON List, or YAML (one List, or one document per object)."""
    deep: dict[str, Deep] = {}

    def swap(value: Any) -> Any:
        if isinstance(value, Deep):
            token = f"DEEP{len(deep)}TOKEN"
            deep[token] = value
            return token
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    plain = [swap(o) for o in objects]
    if fmt == "json":
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": plain}, ensure_ascii=rng.random() < 0.5)
    elif rng.random() < 0.5:
        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": plain}, allow_unicode=True)
    else:
        text = yaml.safe_dump_all(plain, allow_unicode=True)
    for token, value in deep.items():
        text = text.replace(f'"{token}"', value.text()).replace(f"'{token}'", value.text()).replace(token, value.text())
    return text.encode()


def _laughs(levels: int, width: int) -> bytes:
    """Anchors under a key no reader looks at, the List's one item an alias of the last (width**levels Pods)."""
    lines = ["a0: &a0 {kind: Pod, metadata: {name: p}}"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} {{kind: List, items: [{', '.join([f'*a{i - 1}'] * width)}]}}")
    anchors = "x:\n" + "".join(f"  {line}\n" for line in lines)
    return f"{anchors}kind: List\nitems:\n- *a{levels - 1}\n".encode()


def _laughs_items(levels: int, width: int) -> bytes:
    """A List whose items are aliases of Lists of aliases: flattening it would walk width**levels objects."""
    anchors = ["- &a0 {kind: Namespace, metadata: {name: ns}}"]
    for i in range(1, levels):
        anchors.append(f"- &a{i} {{kind: List, items: [{', '.join([f'*a{i - 1}'] * width)}]}}")
    return ("kind: List\nitems:\n" + "\n".join(anchors) + "\n").encode()


def mutate_file(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Whole-file hostility on a rendered dump."""
    ops: list[tuple[str, Callable[[], bytes]]] = [
        ("flip bytes", lambda: _flip(rng, data)),
        ("truncate", lambda: data[: rng.randrange(len(data) + 1)]),
        (
            "invalid UTF-8",
            lambda: _insert(
                rng, data, rng.choice([b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\x80"])
            ),
        ),
        ("deep array", lambda: b"[" * rng.choice([1_000, 5_000, 100_000]) + data + b"]" * 10),
        ("deep object", lambda: b'{"a":' * rng.choice([1_100, 20_000]) + b"1" + b"}" * 10),
        (
            "odd list kind",
            lambda: json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": rng.choice(["", "list", "Listx", "LIST", 7, None]),
                    "items": json.loads(_json_items()),
                }
            ).encode(),
        ),
        (
            "items not a list",
            lambda: json.dumps(
                {"apiVersion": "v1", "kind": "List", "items": rng.choice([{}, "x", 1, {"a": []}])}
            ).encode(),
        ),
        ("billion laughs", lambda: rng.choice([_laughs(9, 9), _laughs_items(rng.choice([9, 30]), rng.choice([2, 9]))])),
        ("self-referring alias", lambda: b"kind: List\nitems: &a\n- kind: List\n  items: *a\n"),
        ("huge integer", lambda: data.replace(b"1", b"9" * rng.choice([20, 4301, 50_000]), 1)),
        ("empty", lambda: rng.choice([b"", b"{}", b"[]", b"null", b"---\n", b"\xef\xbb\xbf{}"])),
        ("garbage", lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))),
        (
            "unknown kinds",
            lambda: json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [
                        {"apiVersion": "v1", "kind": k, "metadata": {"name": f"o{i}"}}
                        for i, k in enumerate(["ConfigMap", "Job", "Job"])
                    ],
                }
            ).encode(),
        ),
    ]
    name, make = rng.choice(ops)
    return make(), name


_ITEMS_CACHE: list[str] = []


def _json_items() -> str:
    if not _ITEMS_CACHE:
        _ITEMS_CACHE.append(json.dumps(base_objects()))
    return _ITEMS_CACHE[0]


def _flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _insert(rng: random.Random, data: bytes, chunk: bytes) -> bytes:
    at = data.find(b'"', rng.randrange(max(1, len(data))))
    at = at + 1 if at >= 0 else 0
    return data[:at] + chunk + data[at:]


COMMANDS = (
    "analyze",
    "analyze-prediction",
    "predict",
    "explain",
    "score",
    "compare",
    "simulate",
    "simulate-remove",
    "rebalance",
    "summary",
    "scheduler-config",
)
WORKLOADS = ("deployment/shop/checkout", "statefulset/data/postgres", "replicationcontroller/data/legacy-api")


def argv_for(command: str, cluster: str, pod: str, config: str, workload: str) -> list[str]:
    return {
        "analyze": ["analyze", "-o", "json", "--cluster", cluster],
        "analyze-prediction": ["analyze", "-o", "json", "--profile", "v1.29", "--prediction", "--cluster", cluster],
        "predict": ["predict", "--cluster", cluster, workload, "-o", "json"],
        "explain": ["explain", "--cluster", cluster, "deployment/shop/checkout"],
        "score": ["score", "--cluster", cluster, "--pod", pod, "-o", "json"],
        "compare": ["compare", "--cluster", cluster, "-o", "json"],
        "simulate": ["simulate", "--cluster", cluster, workload, "--add", "3"],
        "simulate-remove": ["simulate", "--cluster", cluster, workload, "--remove", "2"],
        "rebalance": ["rebalance", "--cluster", cluster, workload],
        "summary": ["summary", "--cluster", cluster],
        "scheduler-config": [
            "analyze",
            "-o",
            "json",
            "--profile",
            "v1.29",
            "--scheduler-config",
            config,
            "--cluster",
            cluster,
        ],
    }[command]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


def _reports(out: str) -> dict[str, Any]:
    return {"/".join(r["workload"][k] for k in ("kind", "namespace", "name")): r for r in json.loads(out)["reports"]}


def _related(obj: dict[str, Any]) -> set[str]:
    """Workload ids an object's report may legitimately share state with: itself and its owners."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else "default"
    out = {f"{obj.get('kind')}/{ns}/{meta.get('name')}"}
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict):
            out.add(f"{ref.get('kind')}/{ns}/{ref.get('name')}")
    return out


class Fuzzer:
    """Runs cases in ``workdir``; baselines (a dump without one object) are computed once each."""

    def __init__(self, seed: int, workdir: Path) -> None:
        self.seed, self.workdir = seed, workdir
        self.objects = base_objects()
        self._baselines: dict[tuple[int, str], dict[str, Any]] = {}
        self.last = ""  # the last case's exit code and first stderr line

    def _write(self, name: str, data: bytes) -> str:
        path = self.workdir / name
        path.write_bytes(data)
        return str(path)

    def _baseline(self, removed: int, fmt: str) -> dict[str, Any]:
        key = (removed, fmt)
        if key not in self._baselines:
            rest = [o for i, o in enumerate(self.objects) if i != removed]
            cluster = self._write(f"baseline.{fmt}", render(rest, fmt, random.Random(0)))
            code, out, err = run_cli(["analyze", "-o", "json", "--cluster", cluster])
            assert code == 0, err
            self._baselines[key] = _reports(out)
        return self._baselines[key]

    def case(self, index: int) -> tuple[str, list[str]]:
        """Run case ``index``: (its description, the failures found)."""
        rng = random.Random(f"{self.seed}/{index}")
        command = rng.choice(COMMANDS)
        fmt = rng.choice(["json", "yaml"])
        objects = copy.deepcopy(self.objects)
        pod = str(POD)
        config = self._write("config.yaml", yaml.safe_dump(SCHEDULER_CONFIG).encode())
        target, eligible, what = -1, False, ""
        roll = rng.random()
        if command == "scheduler-config" and roll < 0.7:
            conf = copy.deepcopy(SCHEDULER_CONFIG)
            what, _ = mutate_object(rng, conf)
            data = render([conf], fmt, rng)
            if rng.random() < 0.3:
                data, how = mutate_file(rng, data)
                what += f", {how}"
            config = self._write(f"config.{fmt}", data)
            cluster = self._write("cluster.yaml", render(objects, "yaml", rng))
        elif roll < 0.08:
            what = mutate_pair(rng, objects)
            cluster = self._write(f"cluster.{fmt}", render(objects, fmt, rng))
        elif roll < 0.6:
            workloads = [i for i, o in enumerate(objects) if o.get("kind") in WORKLOAD_KINDS]
            target = rng.choice(workloads) if rng.random() < 0.5 else rng.randrange(len(objects))
            what, eligible = mutate_object(rng, objects[target])
            what = f"{objects[target].get('kind')} #{target}: {what}"
            cluster = self._write(f"cluster.{fmt}", render(objects, fmt, rng))
        else:
            data, what = mutate_file(rng, render(objects, fmt, rng))
            cluster = self._write(f"cluster.{fmt}", data)
        if command == "score" and rng.random() < 0.3:
            pod_obj = yaml.safe_load(POD.read_text())
            what += f"; pod: {mutate_object(rng, pod_obj)[0]}"
            pod = self._write(f"pod.{fmt}", render([pod_obj], fmt, rng))
        argv = argv_for(command, cluster, pod, config, rng.choice(WORKLOADS))
        desc = f"case {self.seed}/{index}: {command} {fmt} {what}"
        failures = self.check(argv)
        kind = objects[target].get("kind") if target >= 0 else None
        if not failures and eligible and kind in WORKLOAD_KINDS:
            failures += self.others_unchanged(
                argv_for("analyze", cluster, pod, config, ""), target, fmt, objects[target]
            )
            desc += " [others compared]"
        return desc, failures

    def check(self, argv: list[str]) -> list[str]:
        try:
            code, out, err = run_cli(argv)
        except BaseException as exc:
            return [f"escaped main: {type(exc).__name__}: {str(exc)[:200]}"]
        lines = err.splitlines()
        self.last = f"{code} {lines[0][:160] if lines else ''}"
        if code == 2:
            problems = []
            if out:
                problems.append("exit 2 with output on stdout")
            if len(lines) != 1 or not lines[0].startswith("spreadwatch: error: "):
                problems.append(f"exit 2 without one error line: {err[:300]!r}")
            return problems
        if code != 0:
            return [f"exit code {code}: {err[:300]!r}"]
        if any(not ln.startswith("spreadwatch: note: ") for ln in lines) or "Traceback" in err:
            return [f"exit 0 with stderr {err[:300]!r}"]
        return []

    def others_unchanged(self, argv: list[str], target: int, fmt: str, mutated: dict[str, Any]) -> list[str]:
        code, out, _ = run_cli(argv)
        if code != 0:
            return []
        reports = _reports(out)
        base = self._baseline(target, fmt)
        skip = _related(self.objects[target]) | _related(mutated)
        return [
            f"report of {key} changed by another object's mutation"
            for key in sorted(base.keys() & reports.keys() - skip)
            if base[key] != reports[key]
        ]


def main(argv: list[str] | None = None) -> int:
    """Run cases ``--start`` .. ``--start + --count``; one line each (``ok`` or ``FAIL``) on stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--verbose", action="store_true", help="also print each case's exit code and stderr")
    args = parser.parse_args(argv)
    fuzzer = Fuzzer(args.seed, args.workdir)
    for index in range(args.start, args.start + args.count):
        started = time.monotonic()
        desc, failures = fuzzer.case(index)
        took = time.monotonic() - started
        status = "FAIL" if failures else "ok"
        print(f"{status} {took:.3f}s {desc}" + "".join(f"\n  - {f}" for f in failures), flush=True)
        if args.verbose:
            print(f"  = {fuzzer.last}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
