"""Helpers for the Helm chart tests: the real helm binary (built from Go modules, never downloaded).

`helm` comes from hack/devcluster.py's tool lookup (`ensure_tools`: hack/controlplane/build.sh reuses the
cached binaries in ~/.cache/spreadwatch/controlplane/*/bin in 0.1 s, or builds them, like
`make dev-cluster-tools`). SPREADWATCH_CONTROLPLANE_BIN names another directory with the binaries. A missing
helm fails the tests; it never skips them.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hack import devcluster

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "spreadwatch"
RELEASE = "sw"
NAMESPACE = "spreadwatch-system"


class HelmError(AssertionError):
    pass


@dataclass(frozen=True)
class Helm:
    """The helm binary with its config/cache/data dirs in a temporary directory (never ~/.config/helm)."""

    binary: Path
    env: Mapping[str, str]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.binary), *args], capture_output=True, text=True, env=dict(self.env),
                              timeout=120, check=False)  # fmt: skip
        if check and proc.returncode != 0:
            raise HelmError(f"helm {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}{proc.stdout}")
        return proc

    def template_args(self, values: Mapping[str, Any] | None, api_versions: Sequence[str], tmp: Path,
                      namespace: str, release: str) -> list[str]:  # fmt: skip
        args = ["template", release, str(CHART), "--namespace", namespace]
        if values:
            path = tmp / f"values-{len(list(tmp.glob('values-*.yaml')))}.yaml"
            path.write_text(yaml.safe_dump(dict(values)))
            args += ["--values", str(path)]
        for api in api_versions:
            args += ["--api-versions", api]
        return args

    def template(self, tmp: Path, values: Mapping[str, Any] | None = None, api_versions: Sequence[str] = (),
                 namespace: str = NAMESPACE, release: str = RELEASE) -> list[dict[str, Any]]:  # fmt: skip
        """Render the chart; the objects (empty documents dropped)."""
        out = self.run(*self.template_args(values, api_versions, tmp, namespace, release)).stdout
        return [doc for doc in yaml.safe_load_all(out) if doc]


def find_helm(tools_dir: Path) -> Path:
    """The helm binary: $SPREADWATCH_CONTROLPLANE_BIN/helm, or linked into tools_dir by devcluster.ensure_tools
    (reuses the cache, or builds like `make dev-cluster-tools`). pytest.fail (never skip) when missing."""
    env_bin = os.environ.get("SPREADWATCH_CONTROLPLANE_BIN")
    if env_bin:
        bin_dir = Path(env_bin)
    else:
        bin_dir = tools_dir
        try:
            devcluster.ensure_tools(bin_dir)
        except devcluster.ClusterError as err:
            pytest.fail(f"helm is missing and could not be built (make dev-cluster-tools): {err}", pytrace=False)
    binary = bin_dir / "helm"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no helm binary in {bin_dir} (run `make dev-cluster-tools`)", pytrace=False)
    return binary


def helm_env(home: Path) -> dict[str, str]:
    """helm's config/cache/data under home; no kubeconfig (template and lint need no cluster)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
        "KUBECONFIG": str(home / "no-cluster"),
    }


def by_kind(objects: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, got {[o['metadata']['name'] for o in found]}"
    return found[0]
