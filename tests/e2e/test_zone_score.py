"""``zones[].zoneScore`` above 100 on the real API server: under profile v1.29 it is the zone's matching-pod
count (docs/report.md), so a zone holding more than 100 pods of a workload must still be written.

The operator (``spreadwatch run --profile v1.29``) reports on a Deployment of 120 replicas, 115 bound to the
two nodes of one zone and 5 to another zone's node; its SpreadReport must reach the API server with
``zoneScore`` 115 (the CRD once capped it at 100: every status write failed with HTTP 422).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kube_helpers import (
    ControlPlane,
    bind_pod,
    create_deployment,
    create_node,
    delete_node,
    pod_spec,
    unique_name,
    wait_for,
    wait_for_pods,
)
from kubernetes import client

from ports import free_port
from processes import stop_process

pytestmark = pytest.mark.e2e


@pytest.fixture
def big_zone_nodes(kube_api: client.ApiClient) -> Iterator[dict[str, list[str]]]:
    prefix = unique_name("zs")
    zones = {f"{prefix}-big": ["1", "2"], f"{prefix}-small": ["1"]}
    names = {zone: [create_node(kube_api, f"{zone}-{i}", zone=zone, region="r1",
                                labels={"spreadwatch.io/test": prefix}).metadata.name for i in ids]
             for zone, ids in zones.items()}  # fmt: skip
    yield names
    for group in names.values():
        for name in group:
            delete_node(kube_api, name)


def test_zone_score_above_100_is_written(control_plane: ControlPlane, kube_api: client.ApiClient, crd: None,
                                         namespace: str, big_zone_nodes: dict[str, list[str]],
                                         tmp_path: Path) -> None:  # fmt: skip
    (big_zone, big), (small_zone, small) = big_zone_nodes.items()
    selector = {"spreadwatch.io/test": big_zone.rsplit("-", 1)[0]}
    create_deployment(kube_api, namespace, "many", replicas=120, spec=pod_spec(node_selector=selector))
    pods = sorted(p.metadata.name for p in wait_for_pods(kube_api, namespace, {"app": "many"}, 120))
    for names, nodes in ((pods[:115], big), (pods[115:], small)):
        for i, pod in enumerate(names):
            bind_pod(kube_api, namespace, pod, nodes[i % len(nodes)])
    log = tmp_path / "operator.log"
    cmd = [sys.executable, "-m", "spreadwatch.cli", "run", "--kubeconfig", control_plane.kubeconfig,
           "--namespace", namespace, "--profile", "v1.29", "--lease-namespace", namespace, "--debounce", "0.3",
           "--bind-address", "127.0.0.1", "--port", str(free_port()), "--metrics-port", str(free_port()),
           "--log-format", "json"]  # fmt: skip
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        def written() -> dict[str, Any] | None:
            assert proc.poll() is None, f"operator exited {proc.returncode}:\n{log.read_text()[-3000:]}"
            got = control_plane.kubectl("get", "spr", "deployment-many", "-n", namespace, "-o", "json",
                                        check=False)  # fmt: skip
            status = json.loads(got.stdout).get("status") if got.returncode == 0 else None
            return status if status and status.get("pods") == 120 else None

        status = wait_for(written, timeout=180, message="the v1.29 SpreadReport of 120 pods")
    finally:
        stopped = stop_process(proc, grace=60)
    assert stopped.returncode == 0, log.read_text()[-3000:]
    zones = {z["zone"]: z for z in status["zones"]}
    assert zones[big_zone]["zoneScore"] == 115  # the zone's matching-pod count, > 100
    assert zones[small_zone]["zoneScore"] == 5
    assert status["profile"] == "v1.29" and status["bestNodes"] == small
    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert not [r for r in records if "HTTP 422" in r["message"] or r["level"] in ("WARNING", "ERROR")]
