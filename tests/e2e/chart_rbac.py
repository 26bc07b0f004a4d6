"""Run the operator under the Helm chart's RBAC: install the chart (or only its ServiceAccount and RBAC) into
the test control plane and get a kubeconfig that authenticates as the chart's ServiceAccount.

    from chart_rbac import install_chart_rbac

    chart = install_chart_rbac(control_plane, kube_api, tmp_path)     # SA + (Cluster)Roles + bindings
    cmd = [..., "spreadwatch.cli", "run", *chart.args, "--kubeconfig", str(chart.kubeconfig), ...]
    ...
    chart.uninstall()

`chart.args` are the Deployment's container args rendered from the same values (so the Lease name and
namespace match the leader-election Role, which is scoped to that one Lease). Pass flags after them to
override (argparse: the last one wins), but keep `--lease-name`/`--lease-namespace`, or the Lease calls
get 403. `chart.env` holds POD_NAMESPACE/POD_NAME as the downward API would set them.
The `chart_rbac` fixture does the same and uninstalls afterwards: `chart = chart_rbac(values={...})`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_helpers import ControlPlane, create_namespace, delete_namespace, service_account_token, unique_name
from kubernetes import client

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "spreadwatch"
RBAC_TEMPLATES = ("templates/serviceaccount.yaml", "templates/rbac.yaml", "templates/metrics-rbac.yaml")

__all__ = ["CHART", "ChartInstall", "chart_rbac", "install_chart", "install_chart_rbac", "render_chart"]


@dataclass
class ChartInstall:
    """A chart installed into the test control plane, and the credentials of its ServiceAccount."""

    cp: ControlPlane
    api: client.ApiClient
    release: str
    namespace: str
    service_account: str
    kubeconfig: Path
    token: str
    args: list[str]
    objects: list[dict[str, Any]]
    helm_release: bool  # installed with `helm install` (else: kubectl apply of the RBAC templates)
    delete_namespace: bool
    env: dict[str, str] = field(default_factory=dict)
    notes: str = ""  # NOTES.txt as `helm install` rendered it (install_chart only)

    @property
    def lease_name(self) -> str:
        return _flag(self.args, "--lease-name")

    def uninstall(self) -> None:
        if self.helm_release:
            self.cp.helm("uninstall", self.release, "--namespace", self.namespace, "--wait", check=False)
        else:
            manifest = yaml.safe_dump_all(self.objects)
            self.cp.kubectl("delete", "--ignore-not-found", "--wait=false", "-f", "-", input=manifest, check=False)
        if self.delete_namespace:
            delete_namespace(self.api, self.namespace)


def _flag(args: list[str], name: str) -> str:
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"{name}=")]
    if not values:
        raise KeyError(f"{name} not in the chart's args")
    return values[-1]


def _values_args(values: Mapping[str, Any] | None, tmp: Path) -> list[str]:
    if not values:
        return []
    path = tmp / f"values-{unique_name('v')}.yaml"
    path.write_text(yaml.safe_dump(dict(values)))
    return ["--values", str(path)]


def render_chart(cp: ControlPlane, release: str, namespace: str, tmp: Path, values: Mapping[str, Any] | None = None,
                 show_only: tuple[str, ...] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """`helm template` of the chart (objects, empty documents dropped)."""
    args = ["template", release, str(CHART), "--namespace", namespace, *_values_args(values, tmp)]
    for template in show_only:
        args += ["--show-only", template]
    return [doc for doc in yaml.safe_load_all(cp.helm(*args).stdout) if doc]


def _deployment_args(objects: list[dict[str, Any]]) -> list[str]:
    [deploy] = [o for o in objects if o["kind"] == "Deployment"]
    args: list[str] = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def _finish(cp: ControlPlane, api: client.ApiClient, release: str, namespace: str, tmp: Path,
            objects: list[dict[str, Any]], args: list[str], helm_release: bool,
            owns_ns: bool) -> ChartInstall:  # fmt: skip
    [sa] = [o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount"]
    token = service_account_token(api, namespace, sa, create=False)
    kubeconfig = cp.token_kubeconfig(token, tmp / f"{release}.kubeconfig", namespace)
    env = {"POD_NAMESPACE": namespace, "POD_NAME": f"{release}-{unique_name('pod')}"}
    return ChartInstall(cp, api, release, namespace, sa, kubeconfig, token, args, objects, helm_release, owns_ns, env)


def install_chart(cp: ControlPlane, api: client.ApiClient, tmp: Path, values: Mapping[str, Any] | None = None,
                  release: str | None = None, namespace: str | None = None) -> ChartInstall:  # fmt: skip
    """`helm install` the whole chart (after `helm install --dry-run=server`) into a new namespace."""
    release = release or unique_name("sw")
    owns_ns = namespace is None
    namespace = namespace or create_namespace(api)
    install = ["install", release, str(CHART), "--namespace", namespace, "--wait=false", *_values_args(values, tmp)]
    dry = cp.helm(*install, "--dry-run=server", "-o", "json")
    rendered = json.loads(dry.stdout)
    cp.helm(*install)
    objects = [doc for doc in yaml.safe_load_all(rendered["manifest"]) if doc]
    chart = _finish(cp, api, release, namespace, tmp, objects, _deployment_args(objects), True, owns_ns)
    chart.notes = rendered.get("info", {}).get("notes", "")
    return chart


def install_chart_rbac(cp: ControlPlane, api: client.ApiClient, tmp: Path, values: Mapping[str, Any] | None = None,
                       release: str | None = None, namespace: str | None = None) -> ChartInstall:  # fmt: skip
    """Only the chart's ServiceAccount and RBAC (kubectl apply of the rendered templates), no Deployment.

    The SpreadReport CRD is not installed here (the e2e suites apply crds/ themselves).
    """
    release = release or unique_name("sw")
    owns_ns = namespace is None
    namespace = namespace or create_namespace(api)
    objects = render_chart(cp, release, namespace, tmp, values, RBAC_TEMPLATES)
    cp.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(objects))
    args = _deployment_args(render_chart(cp, release, namespace, tmp, values, ("templates/deployment.yaml",)))
    return _finish(cp, api, release, namespace, tmp, objects, args, False, owns_ns)


@pytest.fixture
def chart_rbac(control_plane: ControlPlane, kube_api: client.ApiClient,
               tmp_path: Path) -> Iterator[Callable[..., ChartInstall]]:  # fmt: skip
    """chart_rbac(values=None, release="spreadwatch", namespace=None, full=False) -> ChartInstall; uninstalled
    after the test. full=True runs `helm install` of the whole chart instead of applying only its RBAC."""
    installed: list[ChartInstall] = []

    def make(values: Mapping[str, Any] | None = None, release: str | None = None, namespace: str | None = None,
             full: bool = False) -> ChartInstall:  # fmt: skip
        if full:
            chart = install_chart(control_plane, kube_api, tmp_path, values, release, namespace)
        else:
            chart = install_chart_rbac(control_plane, kube_api, tmp_path, values, release, namespace)
        installed.append(chart)
        return chart

    yield make
    for chart in reversed(installed):
        chart.uninstall()
