"""hack/node/localnode.py without a node: image names as the kubelet looks them up, the prerequisites' one-line
errors, and the configuration it writes (no root, no network, no processes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from hack.node import localnode as localnode_module


@pytest.fixture(scope="module")
def localnode() -> ModuleType:
    return localnode_module


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


@pytest.fixture
def host_ok(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A machine that can run a node (every tool and CNI plugin, root, overlayfs, the v1 memory cgroup); each
    test takes one thing away. Returns the bin dir, with the built tools in it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in localnode.NODE_TOOLS:
        (bin_dir / tool).write_text("")
    monkeypatch.setattr(localnode.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(localnode, "CNI_BIN_DIR", tmp_path / "cni")
    (tmp_path / "cni").mkdir()
    for plugin in localnode.CNI_PLUGINS:
        (tmp_path / "cni" / plugin).write_text("")
    monkeypatch.setattr(localnode.os, "geteuid", lambda: 0)
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["ext4", "overlay"])
    monkeypatch.setattr(localnode, "CGROUP_ROOT", tmp_path / "cgroup")
    (tmp_path / "cgroup" / "memory").mkdir(parents=True)
    (tmp_path / "cgroup" / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    return bin_dir


def test_missing_overlayfs_and_memory_cgroup_are_named(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                       host_ok: Path, tmp_path: Path) -> None:  # fmt: skip
    localnode.check_prerequisites(host_ok)
    monkeypatch.setattr(localnode, "_run", lambda *a, **k: "")  # modprobe does nothing
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["ext4", "tmpfs"])
    with pytest.raises(localnode.NodeError, match=r"^the kernel has no overlayfs \(containerd's overlayfs"):
        localnode.check_prerequisites(host_ok)
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["overlay"])
    monkeypatch.setattr(localnode, "CGROUP_ROOT", tmp_path / "no-cgroups")
    with pytest.raises(localnode.NodeError, match=r"^no cgroup memory controller mounted"):
        localnode.check_prerequisites(host_ok)


def test_missing_overlayfs_without_modprobe_names_kmod(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                       host_ok: Path) -> None:  # fmt: skip
    def no_such_command(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(cmd[0])

    monkeypatch.setattr(localnode.shutil, "which", lambda tool: None if tool == "modprobe" else f"/usr/bin/{tool}")
    monkeypatch.setattr(localnode.subprocess, "run", no_such_command)
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["ext4"])
    with pytest.raises(localnode.NodeError) as err:
        localnode.check_prerequisites(host_ok)
    assert str(err.value) == ("overlayfs is not loaded (containerd's overlayfs snapshotter needs it) and modprobe is "
                              "not found to load it: install the Debian package kmod (make node-tools)")


def test_the_host_is_checked_before_the_build(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                              host_ok: Path) -> None:  # fmt: skip
    """ensure_tools (a cold build takes ~9 min) says at once what the machine lacks, before building anything."""
    commands: list[list[str]] = []

    def record(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        commands.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout="", stderr="")

    monkeypatch.setattr(localnode.subprocess, "run", record)
    localnode.ensure_tools(host_ok)
    assert commands == [["bash", str(localnode.BUILD_SCRIPT), str(host_ok)]]
    commands.clear()
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["ext4"])
    with pytest.raises(localnode.NodeError, match=r"^the kernel has no overlayfs"):
        localnode.ensure_tools(host_ok)
    assert commands == [["modprobe", "overlay"]], "no build on a machine without overlayfs"
    monkeypatch.setattr(localnode, "_filesystems", lambda: ["overlay"])
    monkeypatch.setattr(localnode.os, "geteuid", lambda: 1000)
    with pytest.raises(localnode.NodeError, match=r"^a node needs root"):
        localnode.ensure_tools(host_ok)
    assert commands == [["modprobe", "overlay"]]


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


HOST_RULES_BEFORE = """# Generated by iptables-nft-save v1.8.9 (nf_tables) on Mon Nov 23 10:00:00 2026
*filter
:INPUT ACCEPT [1200:80000]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [900:70000]
:DOCKER - [0:0]
-A FORWARD -o docker0 -j DOCKER
-A INPUT -i lo -j ACCEPT
COMMIT
# Completed on Mon Nov 23 10:00:00 2026
"""


def test_iptables_changes_ignore_counters_comments_and_empty_tables(localnode: ModuleType) -> None:
    """Counters move and the kernel may list a table once a netns touched it: no change. A rule or a chain
    added, a rule gone or a policy changed is one line each."""
    same = (HOST_RULES_BEFORE.replace("[1200:80000]", "[5100:391000]").replace("10:00:00", "10:04:41")
            + "*nat\n:PREROUTING ACCEPT [7:420]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [3:180]\n"
              ":POSTROUTING ACCEPT [3:180]\nCOMMIT\n")  # fmt: skip
    assert localnode.iptables_changes(HOST_RULES_BEFORE, same) == []
    changed = (HOST_RULES_BEFORE.replace(":FORWARD DROP", ":FORWARD ACCEPT").replace("-A INPUT -i lo -j ACCEPT\n", "")
               + "*nat\n:POSTROUTING ACCEPT [0:0]\n:CNI-1 - [0:0]\n"
                 "[4:240] -A POSTROUTING -s 10.214.7.0/24 -j CNI-1\nCOMMIT\n")  # fmt: skip
    assert localnode.iptables_changes(HOST_RULES_BEFORE, changed) == [
        "+ nat -A POSTROUTING -s 10.214.7.0/24 -j CNI-1",
        "+ nat :CNI-1 -",
        "- filter -A INPUT -i lo -j ACCEPT",
        "- filter :FORWARD DROP",
    ]


def test_leftovers_name_a_host_rule_added_since_up(localnode: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:  # fmt: skip
    """The snapshot taken at up() is kept in node.json (a node reused or cleaned up later compares with it)."""
    monkeypatch.setattr(localnode, "REGISTRY", tmp_path / "registry")
    (tmp_path / "registry").mkdir()
    node = localnode.Node(tmp_path, 7, tmp_path / "bin", tmp_path / "kubeconfig", "127.0.0.1:16443",
                          tmp_path / "ca.crt", host_iptables=HOST_RULES_BEFORE)  # fmt: skip
    localnode._save(node)
    node = localnode.load(tmp_path)
    host_rules = HOST_RULES_BEFORE

    def run(cmd: list[str], **_: object) -> str:  # nothing else of the node is left
        return host_rules if cmd == ["iptables-save"] else ""

    monkeypatch.setattr(localnode, "_run", run)
    monkeypatch.setattr(localnode, "_cgroup_mounts", list)  # not this machine's: a node of index 7 may run here
    assert localnode.leftovers(node) == []
    host_rules = HOST_RULES_BEFORE.replace("COMMIT", "-A INPUT -s 10.213.7.2/32 -j ACCEPT\nCOMMIT")
    assert localnode.leftovers(node) == ["host iptables + filter -A INPUT -s 10.213.7.2/32 -j ACCEPT"]
