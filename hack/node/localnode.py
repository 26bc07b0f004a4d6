#!/usr/bin/env python3
"""A real node for the local control plane: containerd, kubelet and kube-proxy in a network namespace of its own.

Used by `hack/devcluster.py up --node` and by the e2e fixture `real_node` (tests/e2e/conftest.py). Stdlib only.

    node = up(cluster, node_dir)    # cluster: a devcluster.Cluster (server port, pki/, bin/, kubeconfig)
    node.import_image(Path("build/spreadwatch.oci.tar"))
    down(node_dir)                  # no mounts, cgroups, interfaces, netns, iptables rules or processes left

What runs where (N is a per-machine index, so that several clusters can each have a node at once):

    netns spreadwatch-nodeN    eth0 10.213.N.2/30 (the node IP), bridge cni0 10.214.N.1/24 (pods), its own
                               iptables (kube-proxy's rules, the bridge plugin's masquerade) and ports
      containerd               NODE_DIR/containerd/{root,state}; cgroupfs, runc, overlayfs,
                               restrict_oom_score_adj (root here lacks CAP_SYS_RESOURCE), sandbox image
                               spreadwatch.local/pause (hack/node/pause.c, imported at start: nothing is pulled)
      kubelet                  NODE_DIR/kubelet; cgroupRoot /spreadwatch-nodeN (under every cgroup v1 hierarchy),
                               cgroupsPerQOS, enforceNodeAllocatable [pods], registers Node "localnode" with
                               the taint spreadwatch.io/local-node=true:NoSchedule
      kube-proxy               iptables mode: Service IPs (the `kubernetes` Service 10.0.0.1:443) for the pods
    host netns                 veth swnodeN 10.213.N.1/30 and a route to 10.214.N.0/24 (Prometheus and tests reach
                               pod IPs); socat 10.213.N.1:6443 -> 127.0.0.1:<apiserver port> (the API server
                               listens on loopback only); the `kubernetes` EndpointSlice points at it

Only addresses of these own interfaces are used. The API server reaches the kubelet (logs, exec) at the node's
InternalIP (devcluster passes --kubelet-preferred-address-types=InternalIP,...). The kubelet's API accepts
anonymous requests (AlwaysAllow): it listens only on the node IP, inside this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["NAME", "PAUSE_IMAGE", "TAINT", "Node", "NodeError", "bind_pending", "check_host", "check_prerequisites",
           "down", "ensure_tools", "iptables_changes", "leftovers", "load", "normalize_image_ref", "up"]

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build.sh"
NAME = "localnode"
TAINT = {"key": "spreadwatch.io/local-node", "value": "true", "effect": "NoSchedule"}
PAUSE_IMAGE = "spreadwatch.local/pause:latest"
NODE_TOOLS = ("kubelet", "kube-proxy", "crictl", "pause.oci.tar")
HOST_TOOLS = {"containerd": "containerd", "ctr": "containerd", "runc": "runc", "socat": "socat",
              "iptables": "iptables", "iptables-save": "iptables", "ip": "iproute2", "nsenter": "util-linux",
              "mount": "mount", "umount": "mount", "openssl": "openssl"}
CNI_PLUGINS = ("bridge", "host-local", "loopback")
CNI_BIN_DIR = Path("/usr/lib/cni")
REGISTRY = Path("/run/spreadwatch-localnode")  # N.json per node on this machine: what a stale node left
SERVICE_CIDR = "10.0.0.0/24"
APISERVER_PORT = 6443  # the forwarder on the host end of the veth
CGROUP_ROOT = Path("/sys/fs/cgroup")
_COMPONENTS = ("containerd", "kubelet", "kube-proxy")


class NodeError(Exception):
    """An expected failure (a missing prerequisite, a component that did not start): one clear line first."""


class ClusterLike(Protocol):
    """What up() needs of a devcluster.Cluster."""

    @property
    def bin_dir(self) -> Path: ...
    @property
    def pki_dir(self) -> Path: ...
    @property
    def kubeconfig(self) -> Path: ...
    @property
    def server(self) -> str: ...


@dataclass
class Node:
    """A running node: where its files are, its addresses, its processes."""

    dir: Path
    index: int
    bin_dir: Path
    admin_kubeconfig: Path
    api_target: str  # 127.0.0.1:PORT of the API server
    ca_file: Path  # the cluster CA: the kubelet's client CA, the kubeconfigs' server CA
    pids: dict[str, int] = field(default_factory=dict)
    host_iptables: str = ""  # `iptables-save` of the host's network namespace before up(): leftovers() compares

    @property
    def netns(self) -> str:
        return f"spreadwatch-node{self.index}"

    @property
    def host_veth(self) -> str:
        return f"swnode{self.index}"

    @property
    def host_ip(self) -> str:
        return f"10.213.{self.index}.1"

    @property
    def node_ip(self) -> str:
        return f"10.213.{self.index}.2"

    @property
    def pod_cidr(self) -> str:
        return f"10.214.{self.index}.0/24"

    @property
    def cgroup_name(self) -> str:
        return f"spreadwatch-node{self.index}"

    @property
    def name(self) -> str:
        return NAME

    @property
    def socket(self) -> Path:
        return self.dir / "containerd" / "containerd.sock"

    @property
    def log_dir(self) -> Path:
        return self.dir / "logs"

    def crictl(self, *args: str, timeout: float = 120) -> str:
        """`crictl` against this node's containerd; its stdout (raises NodeError on failure)."""
        return _run([str(self.bin_dir / "crictl"), "--runtime-endpoint", f"unix://{self.socket}",
                     "--image-endpoint", f"unix://{self.socket}", "--timeout", "60s", *args], timeout=timeout)

    def ctr(self, *args: str, timeout: float = 600) -> str:
        """`ctr` (containerd's own client) in the CRI namespace k8s.io; its stdout."""
        return _run(["ctr", "--address", str(self.socket), "--namespace", "k8s.io", *args], timeout=timeout)

    def import_image(self, archive: Path, ref: str | None = None) -> str:
        """Import an OCI archive into containerd under `ref` (default: the archive's own name, normalized as a
        kubelet looks it up: `spreadwatch:0.1.0` → `docker.io/library/spreadwatch:0.1.0`). Returns the ref.

        O(image size): the layers are unpacked into the overlayfs snapshotter.
        """
        if not archive.is_file():
            raise NodeError(f"{archive} is missing (make image builds it)")
        name = ref or normalize_image_ref(_archive_ref(archive))
        before = set(self._image_names())
        self.ctr("images", "import", str(archive))
        imported = [n for n in self._image_names() if n not in before] or [_archive_ref(archive)]
        source = next((n for n in imported if not n.startswith("sha256:")), imported[0])
        if source != name:
            self.ctr("images", "tag", "--force", source, name)
            self.ctr("images", "remove", source)
        self.crictl("inspecti", name)  # the CRI sees it under the name a pod asks for
        return name

    def _image_names(self) -> list[str]:
        return [line.split()[0] for line in self.ctr("images", "list", "--quiet").splitlines() if line.strip()]

    def run_in_netns(self, *cmd: str, timeout: float = 120) -> str:
        """Run a command in the node's network namespace (where Service IPs work: kube-proxy's rules); stdout."""
        return _run(["nsenter", f"--net=/run/netns/{self.netns}", "--", *cmd], timeout=timeout)

    def kubectl(self, *args: str, input_text: str | None = None, check: bool = True) -> str:
        """`kubectl` as the cluster's admin; its stdout."""
        return _run([str(self.bin_dir / "kubectl"), "--kubeconfig", str(self.admin_kubeconfig), *args],
                    input_text=input_text, check=check)

    def cgroup_dirs(self) -> list[Path]:
        """This node's cgroup root in every mounted hierarchy (cgroup v1 controllers, name=systemd, unified)."""
        return [mount / self.cgroup_name for mount in _cgroup_mounts()]


# --------------------------------------------------------------------------- small helpers


def _log(msg: str) -> None:
    print(f"localnode: {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], *, input_text: str | None = None, check: bool = True, timeout: float = 120) -> str:
    try:
        done = subprocess.run(cmd, input=input_text, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise NodeError(f"{cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise NodeError(f"{' '.join(cmd)} did not finish in {timeout:.0f}s") from None
    if check and done.returncode != 0:
        raise NodeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-1500:]}")
    return done.stdout


def _archive_ref(archive: Path) -> str:
    """The image name an OCI archive's index.json annotates (org.opencontainers.image.ref.name)."""
    listing = _run(["tar", "-xOf", str(archive), "./index.json"], check=False) or _run(
        ["tar", "-xOf", str(archive), "index.json"])
    manifests = json.loads(listing).get("manifests", [])
    names = [m.get("annotations", {}).get("org.opencontainers.image.ref.name", "") for m in manifests]
    if not names or not names[0]:
        raise NodeError(f"{archive} names no image (org.opencontainers.image.ref.name)")
    return str(names[0])


def normalize_image_ref(ref: str) -> str:
    """A reference as the kubelet/containerd look it up: `name:tag` → `docker.io/library/name:tag`,
    `user/name` → `docker.io/user/name:latest`; a reference with a registry host stays (plus `:latest`)."""
    name, _, digest = ref.partition("@")
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if not digest and ":" not in name.rsplit("/", 1)[1]:
        name += ":latest"
    return f"{name}@{digest}" if digest else name


def _pdeathsig() -> Callable[[], None]:
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def preexec() -> None:
        prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the parent (pytest)

    return preexec


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cgroup_mounts() -> list[Path]:
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        if post.split()[0] in {"cgroup", "cgroup2"}:
            mounts.append(Path(pre.split()[4]))
    return mounts


# --------------------------------------------------------------------------- prerequisites


def check_host() -> None:
    """Raise NodeError naming the first missing thing of the machine's: a tool, a CNI plugin, root, overlayfs, the
    memory cgroup. Quick, so it runs before the build (ensure_tools) as well as in up()."""
    for tool, package in HOST_TOOLS.items():
        if shutil.which(tool) is None:
            raise NodeError(f"{tool} not found: install the Debian package {package} (make node-tools)")
    for plugin in CNI_PLUGINS:
        if not (CNI_BIN_DIR / plugin).exists():
            raise NodeError(f"CNI plugin {CNI_BIN_DIR / plugin} missing: install containernetworking-plugins "
                            "(make node-tools)")
    if os.geteuid() != 0:
        raise NodeError("a node needs root (network namespaces, mounts, cgroups)")
    if "overlay" not in _filesystems():
        with contextlib.suppress(NodeError):  # no modprobe, or it hung: /proc/filesystems tells
            _run(["modprobe", "overlay"], check=False)
        if "overlay" not in _filesystems():
            if shutil.which("modprobe") is None:
                raise NodeError("overlayfs is not loaded (containerd's overlayfs snapshotter needs it) and modprobe "
                                "is not found to load it: install the Debian package kmod (make node-tools)")
            raise NodeError("the kernel has no overlayfs (containerd's overlayfs snapshotter needs it)")
    if not (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists() and "memory" not in _cgroup2_controllers():
        raise NodeError("no cgroup memory controller mounted (neither /sys/fs/cgroup/memory nor cgroup v2 memory)")


def check_prerequisites(bin_dir: Path) -> None:
    """check_host(), then the built tools in bin_dir (kubelet, kube-proxy, crictl, the pause image)."""
    check_host()
    missing = [t for t in NODE_TOOLS if not (bin_dir / t).exists()]
    if missing:
        raise NodeError(f"{', '.join(missing)} missing in {bin_dir}: run hack/node/build.sh {bin_dir}")


def _filesystems() -> list[str]:
    return Path("/proc/filesystems").read_text().split()


def _cgroup2_controllers() -> list[str]:
    try:
        return (CGROUP_ROOT / "cgroup.controllers").read_text().split()
    except OSError:
        return []


def ensure_tools(bin_dir: Path) -> None:
    """Build or reuse kubelet, kube-proxy, crictl and the pause image (hack/node/build.sh), linked into bin_dir.

    check_host() first: a machine that cannot run a node says so at once, not after a cold build (~9 min).
    """
    check_host()
    done = subprocess.run(["bash", str(BUILD_SCRIPT), str(bin_dir)], check=False)
    if done.returncode != 0:
        raise NodeError(f"{BUILD_SCRIPT} failed with exit code {done.returncode}")


# --------------------------------------------------------------------------- state


def _state_file(node_dir: Path) -> Path:
    return node_dir / "node.json"


def _save(node: Node) -> None:
    data = json.dumps({**asdict(node), "dir": str(node.dir), "bin_dir": str(node.bin_dir),
                       "admin_kubeconfig": str(node.admin_kubeconfig), "ca_file": str(node.ca_file)}, indent=1)
    _state_file(node.dir).write_text(data)
    (REGISTRY / f"{node.index}.json").write_text(data)


def _from_json(text: str) -> Node:
    data = json.loads(text)
    return Node(Path(data["dir"]), int(data["index"]), Path(data["bin_dir"]), Path(data["admin_kubeconfig"]),
                str(data["api_target"]), Path(data["ca_file"]), {k: int(v) for k, v in data["pids"].items()},
                str(data.get("host_iptables", "")))  # a stale node.json of an older version has none


def load(node_dir: Path) -> Node | None:
    """The node recorded in node_dir, or None."""
    try:
        return _from_json(_state_file(node_dir.resolve()).read_text())
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def _registry_lock() -> Iterator[None]:
    REGISTRY.mkdir(parents=True, exist_ok=True)
    with open(REGISTRY / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _claim_index(node_dir: Path) -> int:
    """A free index N (no netns, no 10.213.N/10.214.N address or route on this machine); stale nodes whose
    processes are all gone (a killed test run) are cleaned up first. Holds the registry lock."""
    for entry in REGISTRY.glob("*.json"):
        stale = _from_json(entry.read_text())
        if not any(_alive(pid) for pid in stale.pids.values()):
            _log(f"cleaning up stale node {stale.index} ({stale.dir})")
            _teardown(stale)
    used = _run(["ip", "-o", "addr"]) + _run(["ip", "route"]) + _run(["ip", "netns", "list"])
    start = sum(str(node_dir).encode()) % 250
    for offset in range(250):
        index = (start + offset) % 250 + 1
        taken = (f"spreadwatch-node{index} " in used + " " or f"10.213.{index}." in used
                 or f"10.214.{index}." in used or (REGISTRY / f"{index}.json").exists())
        if not taken:
            return index
    raise NodeError("no free node index (10.213.1-250.0/30): too many nodes on this machine")


# --------------------------------------------------------------------------- up


def up(cluster: ClusterLike, node_dir: Path, *, timeout: float = 240.0, die_with_parent: bool = False) -> Node:
    """Start a node for `cluster` in node_dir (or reuse the one running there); returns once the Node is Ready.

    Cost: ~10-30 s (containerd, the pause image import, kubelet registration), plus the first build.
    """
    node_dir = node_dir.resolve()
    check_prerequisites(cluster.bin_dir)
    existing = load(node_dir)
    if existing is not None:
        if all(_alive(existing.pids.get(c, -1)) for c in _COMPONENTS):
            _log(f"reusing node {existing.name} in {node_dir}")
            return existing
        down(node_dir)
    node_dir.mkdir(parents=True, exist_ok=True)
    port = cluster.server.rsplit(":", 1)[1]
    with _registry_lock():
        index = _claim_index(node_dir)
        node = Node(node_dir, index, cluster.bin_dir, cluster.kubeconfig, f"127.0.0.1:{port}",
                    cluster.pki_dir / "ca.crt", host_iptables=_run(["iptables-save"]))
        node.log_dir.mkdir(exist_ok=True)
        _save(node)
        try:
            _network(node)
        except BaseException:
            _teardown(node)
            raise
    try:
        _bring_up(node, cluster, timeout, die_with_parent)
    except BaseException:
        _teardown(node)
        raise
    return node


def _ip(*args: str) -> None:
    _run(["ip", *args])


def _in_netns(node: Node, *cmd: str) -> list[str]:
    return ["nsenter", f"--net=/run/netns/{node.netns}", "--", *cmd]


def _network(node: Node) -> None:
    """netns + veth pair + addresses + the host's route to the pods + the API server forwarder."""
    _ip("netns", "add", node.netns)
    _ip("link", "add", node.host_veth, "type", "veth", "peer", "name", "eth0", "netns", node.netns)
    _ip("addr", "add", f"{node.host_ip}/30", "dev", node.host_veth)
    _ip("link", "set", node.host_veth, "up")
    _ip("-n", node.netns, "addr", "add", f"{node.node_ip}/30", "dev", "eth0")
    _ip("-n", node.netns, "link", "set", "eth0", "up")
    _ip("-n", node.netns, "link", "set", "lo", "up")
    # Service IPs leave through eth0 until kube-proxy's DNAT rewrites them (no default route in the netns).
    _ip("-n", node.netns, "route", "add", SERVICE_CIDR, "via", node.host_ip)
    _ip("route", "add", node.pod_cidr, "via", node.node_ip, "dev", node.host_veth)
    _run(_in_netns(node, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"))


def _start(node: Node, name: str, cmd: list[str], die_with_parent: bool) -> None:
    with open(node.log_dir / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=node.dir, start_new_session=True,
                                preexec_fn=_pdeathsig() if die_with_parent else None)  # noqa: PLW1509
    node.pids[name] = proc.pid
    _save(node)
    _log(f"started {name} (pid {proc.pid}, log {node.log_dir / (name + '.log')})")


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait(node: Node, name: str, what: str, probe: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        pid = node.pids.get(name, -1)
        log = node.log_dir / f"{name}.log"
        if not _alive(pid):
            raise NodeError(f"{name} exited while waiting for {what}; last lines of {log}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            raise NodeError(f"timed out after {timeout:.0f}s waiting for {what}; last lines of {log}:\n{_tail(log)}")
        time.sleep(0.5)


def _bring_up(node: Node, cluster: ClusterLike, timeout: float, die_with_parent: bool) -> None:
    started = time.monotonic()
    _start(node, "apiserver-forwarder", ["socat", f"TCP-LISTEN:{APISERVER_PORT},bind={node.host_ip},reuseaddr,fork",
                                         f"TCP:{node.api_target}"], die_with_parent)
    _pki(node, cluster)
    _cgroups(node)
    _write_configs(node)
    _start(node, "containerd", _in_netns(node, "containerd", "--config", str(node.dir / "containerd.toml")),
           die_with_parent)
    _wait(node, "containerd", "containerd's socket", lambda: _crictl_ok(node), timeout)
    _run(["ctr", "--address", str(node.socket), "--namespace", "k8s.io", "images", "import",
          "--base-name", PAUSE_IMAGE.rsplit(":", 1)[0], str(node.bin_dir / "pause.oci.tar")], timeout=timeout)
    _kubernetes_endpoints(node)
    _start(node, "kubelet", _in_netns(node, str(node.bin_dir / "kubelet"), f"--config={node.dir / 'kubelet.yaml'}",
                                      f"--kubeconfig={node.dir / 'kubelet.kubeconfig'}",
                                      f"--root-dir={node.dir / 'kubelet'}", f"--hostname-override={NAME}",
                                      f"--node-ip={node.node_ip}", "--node-labels=spreadwatch.io/local-node=true",
                                      "--v=1"), die_with_parent)
    _start(node, "kube-proxy", _in_netns(node, str(node.bin_dir / "kube-proxy"),
                                         f"--config={node.dir / 'kube-proxy.yaml'}", "--v=1"), die_with_parent)
    _wait(node, "kubelet", f"Node {NAME} Ready", lambda: _node_ready(node), timeout)
    _wait(node, "kube-proxy", "kube-proxy's rules for the kubernetes Service", lambda: _proxy_synced(node), timeout)
    _log(f"node {NAME} Ready in {time.monotonic() - started:.1f}s (node IP {node.node_ip}, pods {node.pod_cidr}, "
         f"netns {node.netns})")


def _crictl_ok(node: Node) -> bool:
    try:
        node.crictl("info", timeout=30)
    except NodeError:
        return False
    return True


def _node_ready(node: Node) -> bool:
    out = node.kubectl("get", "node", NAME, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
                       check=False)
    return out.strip() == "True"


def _proxy_synced(node: Node) -> bool:
    rules = _run(_in_netns(node, "iptables-save", "-t", "nat"), check=False)
    return "default/kubernetes:https" in rules and node.host_ip in rules


# --------------------------------------------------------------------------- configuration


def _openssl(*args: str) -> None:
    _run(["openssl", *args])


def _client_cert(node: Node, cluster: ClusterLike, name: str, subject: str) -> None:
    pki, ca = node.dir / "pki", cluster.pki_dir
    key, csr, crt, ext = (pki / f"{name}.{s}" for s in ("key", "csr", "crt", "ext"))
    ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                   "extendedKeyUsage=clientAuth\n")
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key))
    _openssl("req", "-new", "-key", str(key), "-subj", subject, "-out", str(csr))
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca / "ca.crt"), "-CAkey", str(ca / "ca.key"),
             "-CAcreateserial", "-CAserial", str(pki / "ca.srl"), "-days", "3650", "-sha256", "-out", str(crt),
             "-extfile", str(ext))
    key.chmod(0o600)
    # Through the forwarder: the serving certificate names localhost, not the forwarder's address.
    (node.dir / f"{name}.kubeconfig").write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "node",
        "clusters": [{"name": "local", "cluster": {"server": f"https://{node.host_ip}:{APISERVER_PORT}",
                                                   "certificate-authority": str(ca / "ca.crt"),
                                                   "tls-server-name": "localhost"}}],
        "users": [{"name": name, "user": {"client-certificate": str(crt), "client-key": str(key)}}],
        "contexts": [{"name": "node", "context": {"cluster": "local", "user": name}}]}, indent=1))


def _pki(node: Node, cluster: ClusterLike) -> None:
    (node.dir / "pki").mkdir(exist_ok=True)
    _client_cert(node, cluster, "kubelet", f"/O=system:nodes/CN=system:node:{NAME}")
    _client_cert(node, cluster, "kube-proxy", "/CN=system:kube-proxy")


def _cgroups(node: Node) -> None:
    """The kubelet's cgroupRoot must exist in every hierarchy; a new cpuset needs its parent's cpus and mems."""
    for path in node.cgroup_dirs():
        path.mkdir(exist_ok=True)
        if path.parent.name == "cpuset":
            for knob in ("cpuset.cpus", "cpuset.mems"):
                (path / knob).write_text((path.parent / knob).read_text())


def _write_configs(node: Node) -> None:
    d = node.dir
    cni = d / "cni" / "net.d"
    cni.mkdir(parents=True, exist_ok=True)
    (cni / "10-bridge.conflist").write_text(json.dumps({
        "cniVersion": "1.0.0", "name": "localnode",
        "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": True, "ipMasq": True, "hairpinMode": True,
                     "ipam": {"type": "host-local", "dataDir": str(d / "cni" / "ipam"),
                              "ranges": [[{"subnet": node.pod_cidr}]], "routes": [{"dst": "0.0.0.0/0"}]}}]},
        indent=1))
    c = d / "containerd"
    (d / "containerd.toml").write_text(f"""version = 2
root = "{c / 'root'}"
state = "{c / 'state'}"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{node.socket}"
[ttrpc]
  address = "{node.socket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{c / 'opt'}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{c / 'runc'}"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN_DIR}"
    conf_dir = "{cni}"
""")
    ca = node.ca_file
    kubelet: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "address": node.node_ip, "port": 10250, "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
        "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False},
                           "x509": {"clientCAFile": str(ca)}},
        "authorization": {"mode": "AlwaysAllow"},
        "containerRuntimeEndpoint": f"unix://{node.socket}",
        "cgroupDriver": "cgroupfs", "cgroupRoot": f"/{node.cgroup_name}", "cgroupsPerQOS": True,
        "enforceNodeAllocatable": ["pods"], "failCgroupV1": False, "failSwapOn": False,
        "podLogsDir": str(d / "pod-logs"), "resolvConf": "",
        "registerWithTaints": [TAINT], "maxPods": 20, "podCIDR": node.pod_cidr,
        "serializeImagePulls": False, "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%",
                         "nodefs.inodesFree": "1%"},
        "shutdownGracePeriod": "0s", "protectKernelDefaults": False, "rotateCertificates": False,
        "nodeStatusUpdateFrequency": "5s", "syncFrequency": "10s",
    }
    (d / "kubelet.yaml").write_text(json.dumps(kubelet, indent=1))
    proxy = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration", "mode": "iptables",
        "clientConnection": {"kubeconfig": str(d / "kube-proxy.kubeconfig")}, "hostnameOverride": NAME,
        "bindAddress": node.node_ip, "clusterCIDR": node.pod_cidr, "nodePortAddresses": [f"{node.node_ip}/32"],
        "healthzBindAddress": "127.0.0.1:10256", "metricsBindAddress": "127.0.0.1:10249",
        # Leave the machine's conntrack sysctls alone (global, and root here cannot raise limits).
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s",
                      "udpTimeout": "0s", "udpStreamTimeout": "0s"},
        "iptables": {"localhostNodePorts": False, "minSyncPeriod": "1s", "syncPeriod": "30s"},
    }
    (d / "kube-proxy.yaml").write_text(json.dumps(proxy, indent=1))


def _kubernetes_endpoints(node: Node) -> None:
    """The `kubernetes` Service's EndpointSlice (and Endpoints) → the forwarder, so kube-proxy can route it.

    The control plane runs with --endpoint-reconciler-type=none (its address is loopback), so nothing else
    writes them; they are removed again by down().
    """
    port = {"name": "https", "port": APISERVER_PORT, "protocol": "TCP"}
    labels = {"kubernetes.io/service-name": "kubernetes", "endpointslice.kubernetes.io/managed-by": "localnode"}
    objects = [
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
         "addressType": "IPv4", "endpoints": [{"addresses": [node.host_ip], "conditions": {"ready": True}}],
         "ports": [port]},
        {"apiVersion": "v1", "kind": "Endpoints",
         "metadata": {"name": "kubernetes", "namespace": "default",
                      "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
         "subsets": [{"addresses": [{"ip": node.host_ip}], "ports": [port]}]},
    ]
    node.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=localnode", "-f", "-",
                 input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))


# --------------------------------------------------------------------------- down


def down(node_dir: Path) -> None:
    """Stop the node in node_dir and remove everything it made (safe when nothing runs). O(pods + mounts)."""
    node = load(node_dir)
    if node is None:
        return
    _teardown(node)


def leftovers(node: Node) -> list[str]:
    """What of the node is still on this machine (empty after down()): processes, mounts, cgroups, the network
    namespace (and with it its iptables rules and interfaces), the host's veth and route, kubelet log links, and
    any change to the host's own iptables rules since up()."""
    left = [f"process {name} ({pid})" for name, pid in node.pids.items() if _alive(pid)]
    left += [f"mount {point}" for point in _mounts_under(node.dir)]
    left += [f"cgroup {path}" for path in node.cgroup_dirs() if path.exists()]
    if node.netns in _run(["ip", "netns", "list"]).split():
        left.append(f"netns {node.netns}")
    if _run(["ip", "-o", "link", "show", node.host_veth], check=False).strip():
        left.append(f"interface {node.host_veth}")
    if _run(["ip", "route", "show", node.pod_cidr], check=False).strip():
        left.append(f"route {node.pod_cidr}")
    left += [f"host iptables {change}" for change in iptables_changes(node.host_iptables, _run(["iptables-save"]))]
    logs = Path("/var/log/containers")
    left += [f"log link {link}" for link in (logs.glob("*.log") if logs.exists() else [])
             if link.is_symlink() and str(node.dir) in os.readlink(link)]
    return left


def iptables_changes(before: str, after: str) -> list[str]:
    """The difference of two `iptables-save` outputs, as `+ TABLE LINE` (added) and `- TABLE LINE` (gone), sorted.

    Rules and chains count; counters, comments, and built-in chains with the default policy ACCEPT do not (a
    table the kernel lists once something touched it, with nothing in it, is no rule). O(lines).
    """
    old, new = _iptables_entries(before), _iptables_entries(after)
    added = [f"+ {table} {line}" for table, line in new - old]
    return sorted(added + [f"- {table} {line}" for table, line in old - new])


def _iptables_entries(text: str) -> set[tuple[str, str]]:
    """{(table, chain declaration or rule)} of an `iptables-save` output, without counters."""
    entries: set[tuple[str, str]] = set()
    table = ""
    for raw in text.splitlines():
        line = re.sub(r"^\[\d+:\d+\]\s*", "", raw.strip())  # `iptables-save -c` puts a rule's counters first
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith(":"):  # `:CHAIN POLICY [packets:bytes]`; a user chain's policy is `-`
            chain, policy = line[1:].split()[:2]
            if policy != "ACCEPT":
                entries.add((table, f":{chain} {policy}"))
        elif line.startswith("-"):
            entries.add((table, line))
    return entries


def _stop(node: Node, name: str, grace: float = 15.0) -> None:
    """SIGTERM to the component's process group (socat's per-connection children too), SIGKILL after `grace` s."""
    pid = node.pids.get(name)
    if pid is None or not _alive(pid):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _alive(pid):
            break
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _teardown(node: Node) -> None:
    """Everything in reverse; each step tolerates what an earlier failure left half done."""
    _log(f"stopping node {NAME} ({node.dir})")
    with contextlib.suppress(NodeError):  # the API server may be gone already
        node.kubectl("delete", "node", NAME, "--ignore-not-found", "--wait=false", "--request-timeout=20s",
                     check=False)
        node.kubectl("delete", "-n", "default", "endpointslice/kubernetes", "endpoints/kubernetes",
                     "--ignore-not-found", "--wait=false", "--request-timeout=20s", check=False)
    for name in ("kube-proxy", "kubelet"):
        _stop(node, name)
    if _alive(node.pids.get("containerd", -1)):
        with contextlib.suppress(NodeError):  # stop and remove every pod: shims exit, rootfs/shm/netns unmounted
            node.crictl("rmp", "--all", "--force", timeout=180)
    _stop(node, "containerd")
    _kill_cgroup_processes(node)
    _stop(node, "apiserver-forwarder")
    _unmount_under(node.dir)
    _remove_cgroups(node)
    _run(["ip", "route", "del", node.pod_cidr], check=False)
    _run(["ip", "link", "del", node.host_veth], check=False)
    _run(["ip", "netns", "del", node.netns], check=False)
    _remove_log_symlinks(node)
    shutil.rmtree(node.dir / "containerd", ignore_errors=True)
    shutil.rmtree(node.dir / "kubelet", ignore_errors=True)
    _state_file(node.dir).unlink(missing_ok=True)
    (REGISTRY / f"{node.index}.json").unlink(missing_ok=True)
    _log(f"node {NAME} removed")


def _kill_cgroup_processes(node: Node) -> None:
    """SIGKILL what is left of the node once containerd is stopped: its shims (they outlive containerd) and
    whatever still runs in the node's cgroups (containers of a crashed containerd). O(processes)."""
    _kill_shims(node)
    for _ in range(100):
        pids = {int(p) for d in node.cgroup_dirs() if d.exists()
                for procs in d.rglob("cgroup.procs") for p in procs.read_text().split()}
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def _kill_shims(node: Node) -> None:
    """containerd-shim-runc-v2 processes of this node (their command line names its containerd socket)."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                argv = proc.joinpath("cmdline").read_bytes().decode(errors="replace").split("\0")
                if "containerd-shim" in argv[0] and str(node.socket) in argv:
                    os.kill(int(proc.name), signal.SIGKILL)


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root) + "/"
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(prefix) or point == str(root):
            found.append(point)
    return found


def _unmount_under(root: Path) -> None:
    for _ in range(20):
        points = _mounts_under(root)
        if not points:
            return
        for point in sorted(set(points), key=len, reverse=True):
            _run(["umount", "--lazy", point], check=False)
    raise NodeError(f"mounts left under {root}: {', '.join(_mounts_under(root)[:5])}")


def _remove_cgroups(node: Node) -> None:
    for root in node.cgroup_dirs():
        if not root.exists():
            continue
        for path in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                path.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()


def _remove_log_symlinks(node: Node) -> None:
    """The kubelet links each container's log into /var/log/containers (a fixed place); drop ours."""
    for link in Path("/var/log/containers").glob("*.log"):
        with contextlib.suppress(OSError):
            if link.is_symlink() and str(node.dir) in os.readlink(link):
                link.unlink()



# --------------------------------------------------------------------------- CLI (by hand; `up` is devcluster's)


def bind_pending(node: Node, namespace: str) -> list[str]:
    """Bind every unscheduled pod of `namespace` to this node (pods/binding, as kube-scheduler would); their
    names. For a cluster without a scheduler. O(pods)."""
    listing = json.loads(node.kubectl("get", "pods", "-n", namespace, "-o", "json"))
    bound = []
    for pod in listing["items"]:
        if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        name = pod["metadata"]["name"]
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": namespace},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": NAME}}
        node.kubectl("create", "-f", "-", input_text=json.dumps(binding))
        bound.append(name)
    return bound


def main(argv: list[str] | None = None) -> int:


    parser = argparse.ArgumentParser(description="The local cluster's real node (started by devcluster up --node).")
    parser.add_argument("--dir", default=str(HERE.parent.parent / ".dev-cluster" / "node"), help="node dir")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="where the node runs and how to reach it")
    image = sub.add_parser("import-image", help="import an OCI archive under the name a pod asks for")
    image.add_argument("archive", type=Path)
    image.add_argument("--ref", help="the name (default: the archive's, normalized)")
    bind = sub.add_parser("bind", help="bind a namespace's unscheduled pods to the node (no kube-scheduler)")
    bind.add_argument("namespace")
    args = parser.parse_args(argv)
    try:
        node = load(Path(args.dir))
        if node is None:
            raise NodeError(f"no node in {args.dir} (hack/devcluster.py up --node)")
        if args.command == "import-image":
            print(node.import_image(args.archive, args.ref))
        elif args.command == "bind":
            print("\n".join(bind_pending(node, args.namespace)) or "no unscheduled pods")
        else:
            running = {c: _alive(node.pids.get(c, -1)) for c in (*_COMPONENTS, "apiserver-forwarder")}
            print(f"node {NAME}: IP {node.node_ip}, pods {node.pod_cidr}, netns {node.netns}, "
                  f"cgroups /{node.cgroup_name}\n" + "\n".join(f"{c:20} {'running' if r else 'NOT running'}"
                                                             for c, r in running.items()))
            print(f"crictl: {node.bin_dir / 'crictl'} --runtime-endpoint unix://{node.socket}\nlogs: {node.log_dir}")
    except NodeError as err:
        print(f"localnode: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
