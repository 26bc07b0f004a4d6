"""``--profile auto``: version strings → the generation of that release's default kube-scheduler, the operator's
``--compare-profile auto``, ``analyze``/``explain`` on a snapshot's kubelet versions, and unusable versions as
one line, exit 2. The mapping's sources are named in docs/scoring.md §14."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from k8s_objects import GA_ZONE, controller, node, owner, pod
from spreadwatch.cli import build_parser, main, operator_config
from spreadwatch.errors import InputError
from spreadwatch.index import SpreadIndex
from spreadwatch.model import parse_object
from spreadwatch.profile_args import operator_profiles, operator_report_options, server_choice
from spreadwatch.report import NAMESPACED_PARTIAL, ReportOptions
from spreadwatch.scoring import PROFILES, get_profile
from spreadwatch.scoring.releases import DEFAULT_SCHEDULER, NEWEST_MINOR, choose_from_kubelets, parse_release
from spreadwatch.scoring.scheduler_profile import default_scheduler_profile
from spreadwatch.snapshot import Snapshot


@pytest.mark.parametrize(
    ("version", "profile", "warned"),
    [
        # plain releases at each generation's edges
        pytest.param("v1.12.0", "v1.12", False, id="v1.12.0 -> v1.12 (SelectorSpreadPriority, any-of)"),
        pytest.param("v1.13.12", "v1.12", False, id="v1.13.12 -> v1.12"),
        pytest.param("v1.14.0", "v1.16", False, id="v1.14.0 -> v1.16 (all-of)"),
        pytest.param("v1.16.15", "v1.16", False, id="v1.16.15 -> v1.16"),
        pytest.param("v1.17.0", "v1.18", False, id="v1.17.0 -> v1.18 (merged, by labels)"),
        pytest.param("v1.19.16", "v1.18", False, id="v1.19.16 -> v1.18 (DefaultPodTopologySpread alpha, off)"),
        pytest.param("v1.20.0", "v1.29", False, id="v1.20.0 -> v1.29 (DefaultPodTopologySpread beta, on)"),
        pytest.param("v1.28.15", "v1.29", False, id="v1.28.15 -> v1.29 (SelectorSpread left the default in v1.20)"),
        pytest.param("v1.36.4", "v1.29", False, id="v1.36.4 -> v1.29"),
        # managed clusters' strings
        pytest.param("v1.31.4-gke.1234", "v1.29", False, id="GKE v1.31.4-gke.1234 -> v1.29"),
        pytest.param("v1.30.2-eks-7f3c1a2", "v1.29", False, id="EKS v1.30.2-eks-7f3c1a2 -> v1.29"),
        pytest.param("v1.29.3+k3s1", "v1.29", False, id="k3s v1.29.3+k3s1 -> v1.29"),
        pytest.param("v1.32.1+rke2r1", "v1.29", False, id="RKE2 v1.32.1+rke2r1 -> v1.29"),
        pytest.param("v1.33.0-rc.1", "v1.29", False, id="a release candidate v1.33.0-rc.1 -> v1.29"),
        pytest.param("1.27", "v1.29", False, id="no v, no patch: 1.27 -> v1.29"),
        pytest.param("  v1.30.5\n", "v1.29", False, id="surrounding whitespace is dropped"),
        # outside what spreadwatch mirrors: the nearest generation, with a warning
        pytest.param(f"v1.{NEWEST_MINOR + 1}.0", "v1.29", True, id="a future minor -> the newest, warned"),
        pytest.param("v2.0.0", "v1.29", True, id="a future major -> the newest, warned"),
        pytest.param("v1.11.10", "v1.12", True, id="older than v1.12 -> the oldest, warned"),
    ],
)
def test_a_version_takes_its_default_schedulers_generation(version: str, profile: str, warned: bool) -> None:
    choice = server_choice(version)
    assert (choice.profile, bool(choice.warning)) == (profile, warned)
    assert version.strip() in choice.why


@pytest.mark.parametrize(
    "version",
    ["", "banana", "v1", "1.x.3", "v1.31.4garbage", "v0.9.0", "version 1.30", "v1..2", "v1.30.2 extra"],
)
def test_garbage_is_one_input_error_naming_the_version(version: str) -> None:
    with pytest.raises(InputError) as err:
        parse_release(version, "kube-apiserver version")
    message = str(err.value)
    assert "\n" not in message and "is not a Kubernetes version" in message and repr(version.strip()) in message


def test_the_table_covers_every_minor_release_once_and_names_only_profiles() -> None:
    minors = [m for span in DEFAULT_SCHEDULER for m in range(span.first, span.last + 1)]
    assert minors == list(range(12, NEWEST_MINOR + 1))
    assert {span.profile for span in DEFAULT_SCHEDULER} <= set(PROFILES)
    # the newest release is the last one the PodTopologySpread profile mirrors
    assert PROFILES["v1.29"].releases.endswith(f"v1.{NEWEST_MINOR}")


def test_the_newest_kubelet_decides_and_the_oldest_is_named() -> None:
    choice = choose_from_kubelets([("a", "v1.19.16"), ("b", ""), ("c", "v1.20.15-eks-1"), ("d", "v1.20.2")])
    assert choice is not None and choice.profile == "v1.29" and choice.release.text == "v1.20.15-eks-1"
    assert "3 nodes" in choice.source and "v1.19.16" in choice.source
    assert choose_from_kubelets([("a", ""), ("b", "")]) is None
    with pytest.raises(InputError, match=r"node b: status\.nodeInfo\.kubeletVersion 'junk' is not"):
        choose_from_kubelets([("a", "v1.30.1"), ("b", "junk")])


# --- the operator ---------------------------------------------------------------------------------------------


def _config(*argv: str) -> Any:
    return operator_config(build_parser().parse_args(["run", *argv]))


@pytest.mark.parametrize(
    ("argv", "version", "expected"),
    [
        pytest.param((), "v1.36.4", ("v1.29", "v1.28"), id="defaults on v1.36: PodTopologySpread, v1.28 beside"),
        pytest.param((), "v1.19.16", ("v1.18", "v1.29"), id="defaults on v1.19: SelectorSpread, v1.29 beside"),
        pytest.param(("--compare-profile", "none"), "v1.31.4-gke.1", ("v1.29", None), id="none: no comparison"),
        pytest.param(("--profile", "v1.28"), None, ("v1.28", "v1.29"), id="an explicit profile wins, no version read"),
        pytest.param(("--profile", "v1.16", "--compare-profile", "v1.12"), None, ("v1.16", "v1.12"), id="both named"),
    ],
)
def test_operator_profiles(argv: tuple[str, ...], version: str | None, expected: tuple[str, str | None]) -> None:
    def server_version() -> str:
        assert version is not None, "the version was read for a named profile"
        return version

    profile, compared, choice = operator_profiles(_config(*argv), server_version)
    assert (profile.name, compared.name if compared is not None else None) == expected
    assert (choice is not None) == (version is not None)


def test_an_unusable_server_version_is_one_line() -> None:
    with pytest.raises(InputError, match="kube-apiserver version 'v1' is not a Kubernetes version"):
        operator_profiles(_config(), lambda: "v1")


@pytest.mark.parametrize(
    ("argv", "predicts", "partial"),
    [
        pytest.param((), True, (), id="defaults: the prediction under kube-scheduler's default profile"),
        pytest.param(("--namespace", "a"), True, (NAMESPACED_PARTIAL,), id="namespaced: the prediction is partial"),
        pytest.param(("--no-prediction",), False, (), id="--no-prediction: the flags' report options as they are"),
    ],
)
def test_operator_report_options(argv: tuple[str, ...], predicts: bool, partial: tuple[str, ...]) -> None:
    """What the operator's index and the harnesses that check its reports (bench/envelope.py, bench/soak.py)
    build from the flags: the envelope's expectation once lacked the prediction the operator reports."""
    config = _config(*argv)
    options = operator_report_options(config)
    assert options.scheduler == (default_scheduler_profile() if predicts else None)
    assert options.prediction_partial == partial
    assert dataclasses.replace(options, scheduler=None, prediction_partial=()) == dataclasses.replace(
        config.report, scheduler=None, prediction_partial=()
    )


# --- snapshots ------------------------------------------------------------------------------------------------


def _cluster(tmp_path: Path, kubelet: str | None) -> str:
    """Three zoned nodes (with ``kubelet`` as their kubeletVersion, when given) and a Deployment's ReplicaSet
    with two pods on n1: SelectorSpread and PodTopologySpread both score n2 and n3 best."""
    zones = (("n1", "a"), ("n2", "b"), ("n3", "c"))
    nodes = [node(n, z, key=GA_ZONE, labels={"kubernetes.io/hostname": n}) for n, z in zones]
    if kubelet is not None:
        for obj in nodes:
            obj["status"] = {"nodeInfo": {"kubeletVersion": kubelet}}
    rs = controller("ReplicaSet", "web", {"matchLabels": {"app": "web"}}, {"app": "web"}, replicas=2)
    pods = [pod(f"web-{i}", {"app": "web"}, "n1", owners=[owner("ReplicaSet", "web")]) for i in (1, 2)]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, rs, *pods]}))
    return str(path)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_analyze_auto_takes_the_kubelets_version(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path, "v1.31.4-gke.1234")
    code, out, err = _run("analyze", "--cluster", cluster, "--profile", "auto", "-o", "json")
    assert code == 0
    assert [r["profile"] for r in json.loads(out)["reports"]] == ["v1.29"]
    assert "note: --profile auto: v1.29 (auto: the newest kubelet of 3 nodes is v1.31.4-gke.1234" in err


def test_analyze_auto_on_an_old_cluster_is_selector_spread(tmp_path: Path) -> None:
    code, out, _ = _run("analyze", "--cluster", _cluster(tmp_path, "v1.18.20"), "--profile", "auto", "-o", "json")
    assert code == 0 and [r["profile"] for r in json.loads(out)["reports"]] == ["v1.18"]


def test_an_explicit_profile_wins_over_the_kubelets(tmp_path: Path) -> None:
    code, out, err = _run("analyze", "--cluster", _cluster(tmp_path, "v1.31.4"), "--profile", "v1.16", "-o", "json")
    assert code == 0 and [r["profile"] for r in json.loads(out)["reports"]] == ["v1.16"] and "auto" not in err


def test_auto_says_when_the_snapshot_cannot_tell(tmp_path: Path) -> None:
    code, out, err = _run("analyze", "--cluster", _cluster(tmp_path, None), "--profile", "auto")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "--profile auto cannot tell kube-scheduler's release" in err and "status.nodeInfo.kubeletVersion" in err


def test_a_garbage_kubelet_version_is_one_line(tmp_path: Path) -> None:
    code, out, err = _run("analyze", "--cluster", _cluster(tmp_path, "next-week"), "--profile", "auto")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "'next-week' is not a Kubernetes version" in err


def test_a_future_kubelet_is_scored_with_the_newest_generation_and_a_warning(tmp_path: Path) -> None:
    future = f"v1.{NEWEST_MINOR + 4}.0+k3s1"
    code, out, err = _run("analyze", "--cluster", _cluster(tmp_path, future), "--profile", "auto", "-o", "json")
    assert code == 0 and [r["profile"] for r in json.loads(out)["reports"]] == ["v1.29"]
    assert f"{future} (the newest kubelet of 3 nodes) is newer than v1.{NEWEST_MINOR}" in err


def test_explain_says_which_profile_was_chosen_and_why(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path, "v1.36.4")
    code, out, _ = _run("explain", "--cluster", cluster, "--profile", "auto", "replicaset/default/web")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("Profile:     v1.29 ")
    assert lines[2] == (
        "Chosen by:   auto: the newest kubelet of 3 nodes is v1.36.4: kube-scheduler v1.20-v1.36 spreads with "
        "PodTopologySpread and its system default constraints (DefaultPodTopologySpread on)"
    )
    code, out, _ = _run("explain", "--cluster", cluster, "--profile", "v1.28", "replicaset/default/web")
    assert code == 0 and out.splitlines()[2] == "Chosen by:   --profile v1.28"


def test_the_node_record_keeps_the_kubelet_version_on_both_decoding_paths(tmp_path: Path) -> None:
    from spreadwatch.snapshot import load_snapshot

    path = _cluster(tmp_path, "v1.30.2-eks-7f3c1a2")
    as_json = tmp_path / "cluster.json"
    as_json.write_text(json.dumps(yaml.safe_load(Path(path).read_text())))
    for source in (path, str(as_json)):  # YAML: the reference parser; JSON: the typed decoder
        assert {n.kubelet_version for n in load_snapshot([source]).nodes} == {"v1.30.2-eks-7f3c1a2"}


def test_an_invalid_own_constraint_is_an_error_under_v129_and_skipped_by_the_compared_v128() -> None:
    """v1.29 cannot read the pod's constraint (Error); v1.28 skips any pod with constraints, as a v1.28 index
    alone would report it."""
    bad = {"maxSkew": 1, "topologyKey": GA_ZONE, "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["x"]}]}}  # fmt: skip
    spec = {"topologySpreadConstraints": [bad]}
    objects = [
        node("n1", "a", key=GA_ZONE, labels={"kubernetes.io/hostname": "n1"}),
        controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}, {"app": "db"}, template_spec=spec),
    ]
    index = SpreadIndex(get_profile("v1.29"), ReportOptions(), get_profile("v1.28"))
    for obj in objects:
        record = parse_object(obj)
        assert record is not None
        index.apply(record)
    (report,) = index.reports()
    alone = SpreadIndex(get_profile("v1.28"))
    alone.load(Snapshot.from_objects(objects))
    (v128,) = alone.reports()
    assert report.health.value == "Error" and v128.skipped
    assert report.comparison is not None
    assert (report.comparison.best_score, report.comparison.best_node_count) == (v128.best_score, v128.best_node_count)
    assert report.comparison.best_nodes == v128.best_nodes and not report.comparison.best_nodes_overlap
