"""SpreadReport names: ``<kind>-<name>``, shortened with a stable hash past 253 characters."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from spreadwatch.model import WORKLOAD_KINDS
from spreadwatch.naming import MAX_NAME_LENGTH, report_name, workload_of_report_name

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
label = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
subdomain = st.lists(label, min_size=1, max_size=20).map(".".join).filter(lambda s: len(s) <= 253)


def test_short_names() -> None:
    assert report_name("Deployment", "web") == "deployment-web"
    assert report_name("StatefulSet", "db") == "statefulset-db"
    assert report_name("ReplicationController", "a.b") == "replicationcontroller-a.b"


def test_exactly_253_characters_is_kept() -> None:
    name = "x" * (253 - len("replicaset-"))
    assert report_name("ReplicaSet", name) == f"replicaset-{name}"


def test_long_names_get_243_characters_and_a_hash() -> None:
    name = "a" * 253
    short = report_name("Deployment", name)
    assert len(short) == 252
    assert short.startswith("deployment-aaaa")
    assert re.fullmatch(r"[0-9a-f]{8}", short.rsplit("-", 1)[1])
    assert short == report_name("Deployment", name)  # stable
    assert short != report_name("Deployment", "a" * 252 + "b")  # same prefix, different workload
    assert short != report_name("StatefulSet", name)


def test_a_cut_never_leaves_a_dot_or_dash_before_the_hash() -> None:
    name = "a" * 231 + ".-" + "b" * 40  # the 243-character cut ends right after ".-"
    short = report_name("Deployment", name)
    assert DNS_SUBDOMAIN.match(short), short
    assert len(short) <= MAX_NAME_LENGTH


@given(kind=st.sampled_from(WORKLOAD_KINDS), name=subdomain)
def test_always_a_valid_object_name(kind: str, name: str) -> None:
    result = report_name(kind, name)
    assert len(result) <= MAX_NAME_LENGTH
    assert DNS_SUBDOMAIN.match(result), result
    parsed = workload_of_report_name(result, WORKLOAD_KINDS)
    if len(f"{kind.lower()}-{name}") <= MAX_NAME_LENGTH:
        assert parsed is not None
        assert report_name(*parsed) == result
    else:
        assert parsed is None  # shortened names are resolved through spec.workloadRef


def test_reverse_lookup_rejects_foreign_names() -> None:
    assert workload_of_report_name("configmap-x", WORKLOAD_KINDS) is None
    assert workload_of_report_name("deployment-", WORKLOAD_KINDS) is None
    assert workload_of_report_name("deployment-web", WORKLOAD_KINDS) == ("Deployment", "web")
