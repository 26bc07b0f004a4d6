"""hack/node/localnode.py without a node: image names as the kubelet looks them up, the prerequisites' one-line
errors, and the configuration it writes (no root, no network, no processes)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from repo_tools import load_script


@pytest.fixture(scope="module")
def localnode() -> ModuleType:
    return load_script("localnode", "hack/node/localnode.py")


@pytest.mark.parametrize(
    ("ref", "normalized"),
    [
        pytest.param("spreadwatch:0.1.0", "docker.io/library/spreadwatch:0.1.0", id="name:tag→docker.io/library/"),
        pytest.param("spreadwatch", "docker.io/library/spreadwatch:latest", id="name→+:latest"),
        pytest.param("team/app:1", "docker.io/team/app:1", id="user/name:tag→docker.io/"),
        pytest.param("registry.example.com/app:2", "registry.example.com/app:2", id="host.with.dot/name:tag=same"),
        pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="host:port/name→+:latest"),
        pytest.param("app@sha256:" + "a" * 64, "docker.io/library/app@sha256:" + "a" * 64, id="name@digest→no tag"),
    ],
)
def test_image_refs_are_normalized_as_the_kubelet_looks_them_up(localnode: ModuleType, ref: str,
                                                                 normalized: str) -> None:  # fmt: skip
    assert localnode.normalize_image_ref(ref) == normalized


def test_a_missing_tool_is_one_line_naming_its_package(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:  # fmt: skip
    monkeypatch.setattr(localnode.shutil, "which", lambda tool: None if tool == "socat" else f"/usr/bin/{tool}")
    with pytest.raises(localnode.NodeError) as err:
        localnode.check_prerequisites(tmp_path)
    assert str(err.value) == "socat not found: install the Debian package socat (make node-tools)"


def test_missing_overlayfs_and_memory_cgroup_are_named(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:  # fmt: skip
    for tool in localnode.NODE_TOOLS:
        (tmp_path / tool).write_text("")
    monkeypatch.setattr(localnode.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(localnode, "CNI_BIN_DIR", tmp_path)
    for plugin in localnode.CNI_PLUGINS:
        (tmp_path / plugin).write_text("")
    monkeypatch.setattr(localnode.os, "geteuid", lambda: 0)
    monkeypatch.setattr(localnode, "_run", lambda *a, **k: "")  # modprobe does nothing
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["ext4", "tmpfs"])
    with pytest.raises(localnode.NodeError, match=r"^the kernel has no overlayfs \(containerd's overlayfs"):
        localnode.check_prerequisites(tmp_path)
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["overlay"])
    monkeypatch.setattr(localnode, "CGROUP_ROOT", tmp_path / "no-cgroups")
    with pytest.raises(localnode.NodeError, match=r"^no cgroup memory controller mounted"):
        localnode.check_prerequisites(tmp_path)


def test_the_kubelet_and_containerd_configuration(localnode: ModuleType, tmp_path: Path) -> None:
    node = localnode.Node(tmp_path, 7, tmp_path / "bin", tmp_path / "kubeconfig", "127.0.0.1:16443",
                          tmp_path / "ca.crt")  # fmt: skip
    localnode._write_configs(node)
    kubelet = json.loads((tmp_path / "kubelet.yaml").read_text())
    assert {k: kubelet[k] for k in ("cgroupDriver", "failCgroupV1", "failSwapOn", "cgroupsPerQOS",
                                    "enforceNodeAllocatable", "cgroupRoot", "address", "registerWithTaints")} == {
        "cgroupDriver": "cgroupfs", "failCgroupV1": False, "failSwapOn": False, "cgroupsPerQOS": True,
        "enforceNodeAllocatable": ["pods"], "cgroupRoot": "/spreadwatch-node7", "address": "10.213.7.2",
        "registerWithTaints": [{"key": "spreadwatch.io/local-node", "value": "true", "effect": "NoSchedule"}],
    }  # fmt: skip
    containerd = (tmp_path / "containerd.toml").read_text()
    for line in ("restrict_oom_score_adj = true", 'snapshotter = "overlayfs"', "SystemdCgroup = false",
                 'sandbox_image = "spreadwatch.local/pause:latest"', f'conf_dir = "{tmp_path}/cni/net.d"'):
        assert line in containerd
    cni = json.loads((tmp_path / "cni" / "net.d" / "10-bridge.conflist").read_text())
    assert cni["plugins"][0]["ipam"]["ranges"] == [[{"subnet": "10.214.7.0/24"}]]
    proxy = json.loads((tmp_path / "kube-proxy.yaml").read_text())
    assert (proxy["mode"], proxy["clusterCIDR"], proxy["hostnameOverride"]) == ("iptables", "10.214.7.0/24",
                                                                               "localnode")
