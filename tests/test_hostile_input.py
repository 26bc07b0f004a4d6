"""Hostile input (issue 26): every class the fuzzer found is one line naming the file, exit 2, bounded work;
nothing read is said; one broken workload leaves the others' reports as they are; the decoder's entry
points raise only spreadwatch's errors for any bytes; and the fuzzer itself runs (tests/fuzzing.py)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import selectors
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import SCHEDULER_CONFIG, base_objects
from spreadwatch.cli import main
from spreadwatch.cli.output import write_json
from spreadwatch.decode import (
    Converter,
    Unparsed,
    decode_event,
    decode_items,
    decode_json,
    decode_list_page,
    decode_page,
    list_resource_version,
)
from spreadwatch.errors import InputError, ObjectError
from spreadwatch.model import parse_object, revision_number
from spreadwatch.selectors import Operator, Requirement

TESTS = Path(__file__).resolve().parent
#: Cases of the fuzzer run here (``make fuzz`` runs 10,000); a case silent for CASE_TIMEOUT seconds is a hang.
FUZZ_CASES = int(os.environ.get("SPREADWATCH_FUZZ_CASES", "300"))
CASE_TIMEOUT = 60.0


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def dump(objects: list[dict[str, Any]]) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()


def one_error_line(code: int, out: str, err: str) -> str:
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith("spreadwatch: error: ") and "Traceback" not in err, err
    return err


@pytest.fixture
def cluster() -> list[dict[str, Any]]:
    return base_objects()


def _web(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "web")


DEEP = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda b: b.replace(b'"web"', b'"w\xffb"', 1), "not valid UTF-8", id="byte 0xff"),
        pytest.param(lambda b: b.replace(b'"web"', b'"w\xed\xa0\x80b"', 1), "not valid UTF-8", id="encoded surrogate"),
        pytest.param(lambda b: b.replace(b'"web"', b'"w\xc0\xafb"', 1), "not valid UTF-8", id="overlong sequence"),
        pytest.param(
            lambda b: b.replace(b'"items": [', b'"junk": ' + DEEP.encode() + b', "items": [', 1),
            "nested too deeply",
            id="deep array beside the items",
        ),
        pytest.param(
            lambda b: b.replace(b'"metadata": {', b'"metadata": {"managedFields": ' + DEEP.encode() + b", ", 1),
            "nested too deeply",
            id="deep managedFields in one object",
        ),
        pytest.param(lambda b: b'{"a":' * 20_000 + b"1" + b"}" * 20_000, "", id="deep object"),
    ],
)
def test_undecodable_json_is_one_line_naming_the_file(
    tmp_path: Path, cluster: list[dict[str, Any]], edit: Any, message: str
) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(edit(dump(cluster)))
    err = one_error_line(*run("analyze", "--cluster", str(path)))
    assert f"{path}: malformed JSON" in err and message in err


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param("spec.replicas", 2**80, "spec.replicas: expected an integer", id="replicas 2**80"),
        pytest.param(
            "spec.replicas", 2**40, "spec.replicas: expected an integer of at most 32 bits", id="replicas 2**40"
        ),
        pytest.param(
            "metadata.generation",
            2**63,
            "metadata.generation: expected an integer of at most 64 bits",
            id="generation 2**63",
        ),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_integers_beyond_their_type_name_the_object_and_field(
    tmp_path: Path, cluster: list[dict[str, Any]], field: str, value: int, message: str, fmt: str
) -> None:
    web = _web(cluster)
    parent = web
    *head, last = field.split(".")
    for key in head:
        parent = parent[key]
    parent[last] = value
    path = tmp_path / f"dump.{fmt}"
    path.write_bytes(dump(cluster) if fmt == "json" else yaml.safe_dump_all(cluster).encode())
    err = one_error_line(*run("analyze", "-o", "json", "--cluster", str(path)))
    assert f"{path}: Deployment shop/web: " in err and message in err


def test_the_json_writer_writes_integers_beyond_64_bits() -> None:
    out = io.StringIO()
    write_json({"n": 2**80, "m": [-(2**70)]}, out)
    assert json.loads(out.getvalue()) == {"n": 2**80, "m": [-(2**70)]}


@pytest.mark.parametrize(
    ("text", "number"),
    [
        pytest.param("7", 7, id="7"),
        pytest.param("007", 7, id="leading zeros"),
        pytest.param("²", 0, id="superscript two: not a digit for Go"),
        pytest.param("٣", 0, id="Arabic-Indic three: not a digit for Go"),
        pytest.param("9223372036854775807", 2**63 - 1, id="int64 max"),
        pytest.param("9223372036854775808", 0, id="int64 max + 1"),
        pytest.param("9" * 5_000, 0, id="5,000 digits: never converted"),
        pytest.param("-1", 0, id="a sign"),
    ],
)
def test_revision_annotations_read_as_go_parses_them(text: str, number: int) -> None:
    assert revision_number(text) == number


@pytest.mark.parametrize("revision", ["²", "٣", "9" * 5_000])
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_hostile_revision_changes_no_report(
    tmp_path: Path, cluster: list[dict[str, Any]], revision: str, fmt: str
) -> None:
    path = tmp_path / f"dump.{fmt}"
    path.write_bytes(dump(cluster))
    before = run("analyze", "-o", "json", "--cluster", str(path))
    _web(cluster)["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/revision"] = revision
    path.write_bytes(dump(cluster) if fmt == "json" else yaml.safe_dump_all(cluster).encode())
    assert run("analyze", "-o", "json", "--cluster", str(path)) == before


def _laughs(levels: int) -> str:
    lines = ["kind: List", "items:", "- &l0 {kind: Namespace, metadata: {name: ns}}"]
    lines += [f"- &l{i} {{kind: List, items: [{', '.join([f'*l{i - 1}'] * 9)}]}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(_laughs(10), "aliases expand to more than 100,000 nodes", id="billion laughs of nested Lists"),
        pytest.param(
            "kind: List\nitems: &a\n- kind: List\n  items: *a\n",
            "an alias refers to a node that contains it",
            id="an alias inside its own anchor",
        ),
        pytest.param(
            "a: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 1_200)) + "kind: Pod\n",
            "nests deeper than 1,000 levels",
            id="aliases nesting 1,200 deep",
        ),
        pytest.param("[" * 1_100 + "]" * 1_100, "malformed JSON", id="written-out nesting (as JSON)"),
        pytest.param(
            "x:\n" + "".join(" " * i + "- \n" for i in range(1, 1_100)),
            "malformed YAML",
            id="written-out block nesting",
        ),
        pytest.param(
            "kind: Pod\nmetadata: {name: p}\nspec: {x: " + "9" * 5_000 + "}\n",
            "unreadable YAML value",
            id="an integer of 5,000 digits",
        ),
    ],
)
def test_yaml_expansion_and_depth_are_refused_early(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    err = one_error_line(*run("analyze", "--cluster", str(path)))
    assert str(path) in err and message in err


def test_a_pyyaml_dump_sharing_one_spec_among_thousands_of_pods_is_read(tmp_path: Path) -> None:
    """3,000 pods of a ReplicaSet whose one spec and label map PyYAML writes once each (anchors) and 2,999 times
    as aliases: the aliases add ~130,000 nodes, more than 100,000 but a few times the document's own, so it
    is read like the plain dump (a billion-laughs document adds millions of times its own)."""
    labels = {"app": "a"}
    spec = {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": p} for p in range(8)]}],
            "tolerations": [{"key": f"k{i}", "operator": "Exists"} for i in range(4)], "nodeName": "n"}  # fmt: skip
    items: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": {}}, "spec": {}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "a", "namespace": "ns"},
         "spec": {"replicas": 3_000, "selector": {"matchLabels": {"app": "a"}},
                  "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}}},
    ]  # fmt: skip
    items += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"a-{i}", "namespace": "ns", "labels": labels},
               "spec": spec, "status": {"phase": "Running"}} for i in range(3_000)]  # fmt: skip
    shared = tmp_path / "shared.yaml"
    shared.write_text(yaml.safe_dump({"kind": "List", "items": items}))
    assert shared.read_text().count("*id00") == 2 * 2_999
    code, out, err = run("analyze", "-o", "json", "--cluster", str(shared))
    assert (code, err) == (0, "")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"kind": "List", "items": items}))
    assert out == run("analyze", "-o", "json", "--cluster", str(plain))[1]
    assert json.loads(out)["reports"][0]["pods"] == 3_000


def test_a_few_harmless_aliases_are_read(tmp_path: Path, cluster: list[dict[str, Any]]) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump_all(cluster))
    shared = tmp_path / "shared.yaml"  # PyYAML writes the repeated label maps as anchors and aliases
    labels = {"app": "x"}
    for obj in cluster:
        if obj["kind"] == "Namespace":
            obj["metadata"]["labels"] = labels
    shared.write_text(yaml.safe_dump_all(cluster))
    assert "*id" in shared.read_text()
    code, out, err = run("analyze", "-o", "json", "--cluster", str(shared))
    assert (code, err) == (0, "")
    assert out == run("analyze", "-o", "json", "--cluster", str(plain))[1]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "", "items": "ITEMS"}, '1 object of other kinds: "" ×1', id="kind empty"
        ),
        pytest.param({"apiVersion": "v1", "kind": "list", "items": "ITEMS"}, "list ×1", id="kind list"),
        pytest.param({"apiVersion": "v1", "kind": "Listx", "items": "ITEMS"}, "Listx ×1", id="kind Listx"),
        pytest.param({"apiVersion": "v1", "kind": "PodList", "metadata": {}}, "PodList ×1", id="a List without items"),
        pytest.param(
            {"apiVersion": "v1", "kind": "List", "items": {}},
            "List.items must be a list, found a dict",
            id="items a mapping",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "List", "items": [{"kind": "ConfigMap", "metadata": {"name": "c"}}]},
            "ConfigMap ×1",
            id="only kinds not read",
        ),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_file_of_which_nothing_is_read_says_so(
    tmp_path: Path, cluster: list[dict[str, Any]], document: dict[str, Any], message: str, fmt: str
) -> None:
    doc = {k: (cluster if v == "ITEMS" else v) for k, v in document.items()}
    path = tmp_path / f"dump.{fmt}"
    path.write_bytes(orjson.dumps(doc) if fmt == "json" else yaml.safe_dump(doc).encode())
    for command in (["analyze"], ["summary"], ["score", "--pod", str(TESTS.parent / "examples" / "pod.yaml")]):
        err = one_error_line(*run(*command, "--cluster", str(path)))
        assert str(path) in err and message in err


def test_an_empty_list_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(dump([]))
    assert run("analyze", "--cluster", str(path)) == (0, "No workloads found.\n", "")


def test_kinds_not_read_are_counted_in_a_note(tmp_path: Path, cluster: list[dict[str, Any]]) -> None:
    """``kubectl get all -o json`` holds DaemonSets, Jobs, ...: read what is used, say what was skipped."""
    path = tmp_path / "all.json"
    path.write_bytes(dump(cluster))
    before = run("analyze", "-o", "json", "--cluster", str(path))
    extra = [
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"j{i}", "namespace": "shop"}} for i in range(3)
    ]
    extra.append({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "namespace": "shop"}})
    path.write_bytes(dump(extra[:2] + cluster + extra[2:]))
    code, out, err = run("analyze", "-o", "json", "--cluster", str(path))
    assert (code, out) == (0, before[1])
    assert (
        err
        == f"spreadwatch: note: {path}: skipped 4 objects of kinds spreadwatch does not read: Job ×3, DaemonSet ×1\n"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param(
            "spec.selector", {"matchExpressions": [{"key": "a", "operator": "Within"}]}, id="invalid selector"
        ),
        pytest.param("spec.selector", {"matchLabels": {"-bad-": "x"}}, id="invalid selector key"),
        pytest.param(
            "spec.template.spec.topologySpreadConstraints",
            [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["²"]}]},
                }
            ],
            id="invalid constraint selector",
        ),
        pytest.param(
            "spec.template.spec.topologySpreadConstraints",
            [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe"}],
            id="invalid constraint",
        ),
        pytest.param(
            "spec.template.spec.topologySpreadConstraints",
            [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
            id="maxSkew 0",
        ),
        pytest.param(
            "spec.template.spec.topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Whenever"}],
            id="unknown whenUnsatisfiable",
        ),
        pytest.param(
            "spec.template.spec.topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}],
            id="minDomains with ScheduleAnyway",
        ),
    ],
)
@pytest.mark.parametrize("profile", ["v1.28", "v1.29"])
def test_one_broken_workload_leaves_the_others_as_without_it(
    tmp_path: Path, cluster: list[dict[str, Any]], field: str, value: Any, profile: str
) -> None:
    without = tmp_path / "without.json"
    without.write_bytes(dump([o for o in cluster if o is not _web(cluster)]))
    web = _web(cluster)
    parent = web
    *head, last = field.split(".")
    for key in head:
        parent = parent[key]
    parent[last] = value
    broken = tmp_path / "broken.json"
    broken.write_bytes(dump(cluster))
    reports = {}
    for path in (without, broken):
        code, out, err = run("analyze", "-o", "json", "--profile", profile, "--cluster", str(path))
        assert (code, err) == (0, "")
        reports[path] = {(r["workload"]["kind"], r["workload"]["name"]): r for r in json.loads(out)["reports"]}
    others = reports[without]
    assert reports[broken].keys() - {("Deployment", "web")} == others.keys()
    assert {k: reports[broken][k] for k in others} == others


def _page(objects: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": ""}, "items": objects})


_PAGE = _page([o for o in base_objects() if o["kind"] == "Pod"])
_EVENT = orjson.dumps({"type": "MODIFIED", "object": next(o for o in base_objects() if o["kind"] == "Pod")})


@st.composite
def _hostile_bytes(draw: st.DrawFn) -> bytes:
    """A valid page with bytes replaced, cut or inserted, or any bytes at all."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    data = bytearray(draw(st.sampled_from([_PAGE, _EVENT])))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        chunk = draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"[" * 1_500, b"9" * 30, b"", b"{", b'"']))
        data[at : at + draw(st.integers(0, 3))] = chunk
    return bytes(data)


@settings(max_examples=int(os.environ.get("HX", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_hostile_bytes(), st.sampled_from(["Pod", "Node", "ReplicaSet", "ConfigMap", ""]))
def test_decode_entry_points_raise_only_spreadwatch_errors_for_any_bytes(data: bytes, kind: str) -> None:
    """What the operator's list and watch paths call per page, event or object: only InputError (DecodeError)
    from the decoder, only ObjectError from ``parse_object`` of what it leaves."""
    calls = [
        lambda: list(decode_json(data)),
        lambda: list(decode_items([msgspec.Raw(data)], kind, "v1", Converter())),
        lambda: list(decode_page(data, kind or "Pod", "v1", Converter())[0]),
        lambda: list(decode_list_page(data, kind or "Pod", "v1", Converter())[0]),  # (settled: ObjectError caught)
        lambda: [decode_event(data, kind or "Pod", "v1", Converter()).item],
        lambda: [list_resource_version(data)],
    ]
    for call in calls:
        try:
            items = call()
        except InputError:
            continue
        for item in items:
            if isinstance(item, Unparsed):
                with contextlib.suppress(ObjectError):
                    parse_object(item.value)


def test_the_fuzzer_finds_no_traceback_hang_or_changed_neighbour(tmp_path: Path) -> None:
    """tests/fuzzing.py's cases in a child process; a case silent for CASE_TIMEOUT seconds is a hang (the
    child is stopped: SIGTERM, then SIGKILL). Not a speed assertion: only a detector of no progress."""
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "fuzzing.py"), "--count", str(FUZZ_CASES), "--workdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=TESTS,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    watcher = selectors.DefaultSelector()
    watcher.register(proc.stdout, selectors.EVENT_READ)
    try:
        while True:
            if not watcher.select(timeout=CASE_TIMEOUT):
                pytest.fail(f"no progress for {CASE_TIMEOUT:.0f} s after: {lines[-1] if lines else 'start'}")
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()
    cases = [ln for ln in lines if ln.startswith(("ok ", "FAIL "))]
    failures = "\n".join(ln for ln in lines if not ln.startswith("ok "))
    assert proc.returncode == 0 and len(cases) == FUZZ_CASES and not failures, failures[-4000:]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(2**80, "maxSkew: an integer of 81 bits (at most 64)", id="maxSkew 2**80"),
        pytest.param("DEEP", "nested deeper than 64 levels", id="maxSkew nested 500 deep"),
    ],
)
def test_a_scheduler_config_beyond_its_bounds_is_refused(tmp_path: Path, value: Any, message: str) -> None:
    config = copy.deepcopy(SCHEDULER_CONFIG)
    config["profiles"][0]["pluginConfig"][0]["args"]["defaultConstraints"][0]["maxSkew"] = value
    text = yaml.safe_dump(config).replace("DEEP", "[" * 500 + "]" * 500)
    path = tmp_path / "config.yaml"
    path.write_text(text)
    cluster = str(TESTS.parent / "examples" / "cluster.yaml")
    err = one_error_line(*run("analyze", "--profile", "v1.29", "--scheduler-config", str(path), "--cluster", cluster))
    assert f"{path}: profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew" in err and message in err


def test_a_directory_names_its_hostile_file_and_counts_as_one_input(
    tmp_path: Path, cluster: list[dict[str, Any]]
) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a-cluster.json").write_bytes(dump(cluster))
    (tmp_path / "m" / "b-configmaps.yaml").write_text("kind: ConfigMap\nmetadata: {name: c}\n")
    code, _, err = run("analyze", "--cluster", str(tmp_path / "m"))
    assert (code, err) == (
        0,
        f"spreadwatch: note: {tmp_path / 'm'}: skipped 1 object of kinds spreadwatch does not read: ConfigMap ×1\n",
    )
    (tmp_path / "m" / "c-broken.json").write_bytes(
        b'{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "\xff"}}]}'
    )
    err = one_error_line(*run("analyze", "--cluster", str(tmp_path / "m")))
    assert f"{tmp_path / 'm' / 'c-broken.json'}: malformed JSON: a string is not valid UTF-8" in err
    (tmp_path / "m" / "c-broken.json").unlink()
    (tmp_path / "m" / "a-cluster.json").unlink()
    err = one_error_line(*run("analyze", "--cluster", str(tmp_path / "m")))
    assert f"{tmp_path / 'm'}: nothing spreadwatch reads" in err and "ConfigMap ×1" in err


def test_score_names_the_file_of_a_malformed_object(tmp_path: Path, cluster: list[dict[str, Any]]) -> None:
    pod = yaml.safe_load((TESTS.parent / "examples" / "pod.yaml").read_text())
    pod["spec"] = {"topologySpreadConstraints": [{"maxSkew": 2**40}]}
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod))
    good = str(TESTS.parent / "examples" / "pod.yaml")
    err = one_error_line(
        *run("score", "--cluster", str(TESTS.parent / "examples" / "cluster.yaml"), "--pod", str(pod_file))
    )
    field = "spec.topologySpreadConstraints[0].maxSkew"
    assert f"{pod_file}: Pod shop/checkout-next: {field}: expected an integer of at most 32 bits" in err
    _web(cluster)["spec"]["replicas"] = "three"
    path = tmp_path / "cluster.json"
    path.write_bytes(dump(cluster))
    err = one_error_line(*run("score", "--cluster", str(path), "--pod", good))
    assert f"{path}: Deployment shop/web: spec.replicas: expected an integer, got string" in err


@pytest.mark.parametrize(
    ("label", "bound", "matches"),
    [
        pytest.param("0" * 5_000 + "7", "5", True, id="7 with 5,000 leading zeros > 5"),
        pytest.param("9" * 5_000, "5", False, id="5,000 nines: out of int64, no match"),
        pytest.param("6", "9" * 5_000, False, id="bound of 5,000 nines: no match"),
        pytest.param("9223372036854775807", "9223372036854775806", True, id="int64 max > max - 1"),
        pytest.param("²", "1", False, id="a Unicode digit is no number"),
    ],
)
def test_gt_compares_as_go_int64_for_any_length(label: str, bound: str, matches: bool) -> None:
    assert Requirement("k", Operator.GREATER_THAN, (bound,)).matches({"k": label}) is matches


def test_compare_of_a_workload_whose_target_profile_reports_error(
    tmp_path: Path, cluster: list[dict[str, Any]]
) -> None:
    """Found by ``make fuzz``: an invalid constraint selector makes the v1.29 report Error (no scores)."""
    web = _web(cluster)
    web["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["²"]}]},
        }
    ]
    for obj in cluster:  # (its ReplicaSet's template is what the next pod is made of)
        if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"].startswith("web-"):
            obj["spec"]["template"]["spec"]["topologySpreadConstraints"] = web["spec"]["template"]["spec"][
                "topologySpreadConstraints"
            ]
    path = tmp_path / "dump.json"
    path.write_bytes(dump(cluster))
    code, out, err = run("compare", "-o", "json", "--cluster", str(path))
    assert (code, err) == (0, "")
    row = next(w for w in json.loads(out)["workloads"] if w["workload"]["name"] == "web")
    assert row["to"]["bestNodes"] == [] and row["bestNodesOverlap"] is False


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        pytest.param(lambda s: s["containers"][0].update(resources={"requests": {"cpu": "1.5.5"}}),
                     "InvalidResources: ", id="malformed quantity"),
        pytest.param(lambda s: s["containers"][0].update(resources={"requests": {"memory": "-1Gi"}}),
                     "InvalidResources: ", id="negative request"),
        pytest.param(lambda s: s.update(overhead={"cpu": "lots"}), "InvalidResources: ", id="malformed overhead"),
        pytest.param(lambda s: s.update(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]},
             "topologyKey": "zone"}]}}), "InvalidAffinity: ", id="pod affinity unknown operator"),
        pytest.param(lambda s: s.update(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}}]}}),
            "InvalidAffinity: ", id="node affinity unknown operator"),
    ],
)
def test_a_template_the_prediction_cannot_read_is_one_error_report(
    tmp_path: Path, cluster: list[dict[str, Any]], edit: Any, reason: str
) -> None:
    """The whole profile's prediction (profile v1.29, on by default): web's template (the Deployment's and its
    current ReplicaSet's) with requests or affinity terms the API server would refuse makes web's report Error
    with one reason; every other workload's report is as without web."""
    without = tmp_path / "without.json"
    without.write_bytes(dump([o for o in cluster if o is not _web(cluster)]))
    for obj in cluster:
        if obj["kind"] in ("Deployment", "ReplicaSet") and obj["metadata"]["name"].startswith("web"):
            edit(obj["spec"]["template"]["spec"])
    broken = tmp_path / "broken.json"
    broken.write_bytes(dump(cluster))
    reports = {}
    for path in (without, broken):
        code, out, err = run("analyze", "-o", "json", "--profile", "v1.29", "--prediction", "--cluster", str(path))
        assert (code, err) == (0, "")
        reports[path] = {(r["workload"]["kind"], r["workload"]["name"]): r for r in json.loads(out)["reports"]}
    web = reports[broken][("Deployment", "web")]
    assert web["health"] == "Error" and len(web["reasons"]) == 1 and web["reasons"][0].startswith(reason), web
    assert "prediction" not in web
    others = reports[without]
    assert {k: reports[broken][k] for k in others} == others
    assert all("prediction" in r for r in others.values() if r["health"] != "Error")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda n: n["status"]["allocatable"].update(cpu="-4"), "status.allocatable.cpu: must not be "
                     "negative", id="negative allocatable"),
        pytest.param(lambda n: n["status"]["allocatable"].update(memory="12Gibibytes"), "status.allocatable.memory: "
                     "expected a quantity", id="malformed allocatable"),
    ],
)
def test_a_node_the_prediction_cannot_read_is_one_error_line(
    tmp_path: Path, cluster: list[dict[str, Any]], edit: Any, message: str
) -> None:
    """A node whose allocatable the API server would refuse: the snapshot is refused with one line naming the
    node and the field (a live operator refuses the object, as any malformed one)."""
    node = next(o for o in cluster if o["kind"] == "Node" and o["status"].get("allocatable"))
    edit(node)
    path = tmp_path / "cluster.json"
    path.write_bytes(dump(cluster))
    err = one_error_line(*run("analyze", "-o", "json", "--profile", "v1.29", "--cluster", str(path)))
    assert f"Node {node['metadata']['name']}: {message}" in err, err


def test_images_without_sizes_count_zero(tmp_path: Path, cluster: list[dict[str, Any]]) -> None:
    """``node.status.images`` entries without ``sizeBytes`` are read (size 0, as kube-scheduler's cache has it)."""
    for node in cluster:
        for image in node.get("status", {}).get("images", []):
            image.pop("sizeBytes", None)
    path = tmp_path / "cluster.json"
    path.write_bytes(dump(cluster))
    code, out, err = run("predict", "--cluster", str(path), "deployment/shop/web", "-o", "json")
    assert (code, err) == (0, "")
    assert all(n["plugins"].get("ImageLocality", 0) == 0 for n in json.loads(out)["nodes"])


_REFUSED = [
    pytest.param(
        {"maxSkew": 0, "whenUnsatisfiable": "DoNotSchedule"}, "maxSkew must be greater than 0, got 0", id="maxSkew 0"
    ),
    pytest.param(
        {"maxSkew": 1, "whenUnsatisfiable": "Whenever"},
        "whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway, got 'Whenever'",
        id="unknown whenUnsatisfiable",
    ),
    pytest.param(
        {"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2},
        "minDomains can only be set with whenUnsatisfiable DoNotSchedule",
        id="minDomains with ScheduleAnyway",
    ),
]


@pytest.mark.parametrize(("fields", "message"), _REFUSED)
@pytest.mark.parametrize("profile", ["v1.28", "v1.29"])
def test_a_constraint_the_api_refuses_is_one_error_report(
    tmp_path: Path, cluster: list[dict[str, Any]], fields: dict[str, Any], message: str, profile: str
) -> None:
    """analyze: only that workload's report turns Error, with one reason naming the constraint, every other
    report unchanged; explain prints it; score of such a pod (nothing else to report) is one line, exit 2."""
    reports = {}
    for broken in (False, True):
        objects = copy.deepcopy(cluster)
        constraint = {"topologyKey": "topology.kubernetes.io/zone", **fields}
        if broken:
            sts = next(o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "postgres")
            sts["spec"]["template"]["spec"]["topologySpreadConstraints"] = [constraint]
        path = tmp_path / f"c{int(broken)}.json"
        path.write_bytes(dump(objects))
        code, out, err = run("analyze", "-o", "json", "--profile", profile, "--cluster", str(path))
        assert (code, err) == (0, "")
        reports[broken] = {r["workload"]["name"]: r for r in json.loads(out)["reports"]}
    postgres = reports[True].pop("postgres")
    reports[False].pop("postgres")
    assert postgres["health"] == "Error" and "nextPodSchedulable" not in postgres
    where = "topologySpreadConstraints[0] (topology.kubernetes.io/zone)"
    assert postgres["reasons"] == [f"InvalidConstraint: {where}: {message}"]
    assert reports[True] == reports[False]
    code, out, err = run("explain", "statefulset/data/postgres", "--profile", profile, "--cluster", str(path))
    assert code == 0 and "Health:      Error" in out and message in out
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
                               "spec": {"topologySpreadConstraints": [constraint]}}))  # fmt: skip
    assert message in one_error_line(*run("score", "--cluster", str(path), "--pod", str(pod), "--profile", profile))
