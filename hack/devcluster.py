#!/usr/bin/env python3
"""Local Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager).

Used by `make dev-cluster` / `make dev-cluster-down` and by the pytest fixtures in
tests/e2e, so both start the cluster through the same code.  Stdlib only.

    python3 hack/devcluster.py up     [--dir DIR] [--ports auto|fixed] [--bin-dir DIR] [--build] [--node]
                                      [--scheduler v1.36|v1.28|none] [--scheduler-config FILE]
    python3 hack/devcluster.py down   [--dir DIR] [--keep-logs]
    python3 hack/devcluster.py status [--dir DIR]
    python3 hack/devcluster.py env    [--dir DIR]      # eval "$(python3 hack/devcluster.py env)"

DIR defaults to .dev-cluster in the repository root.  Layout of DIR:

    bin/          tool symlinks (hack/controlplane/build.sh)
    pki/          CA, serving and client certificates, service-account keys (openssl CLI)
    etcd/         etcd data
    logs/         etcd.log, kube-apiserver.log, kube-controller-manager.log, kube-scheduler.log
    kubeconfig    admin kubeconfig (CN=admin, O=system:masters)
    state.json    pids and ports of the running processes

There is no kubelet or kube-proxy: Node objects are created through the API. Without
a scheduler (the default) pods stay Pending until something binds them; with
`--scheduler v1.36|v1.28` a real kube-scheduler (hack/scheduler/build.sh) binds them, logging
every plugin's score per node (--vmodule=schedule_one=10) to logs/kube-scheduler.log.
`up --node` adds one real node (containerd, kubelet, kube-proxy: hack/node/localnode.py) in
DIR/node; `down` removes it too.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

REPO_ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # (run as a script: hack/devcluster.py; hack/ is a namespace package of the root)
    sys.path.insert(0, str(REPO_ROOT))

from hack.node import localnode  # noqa: E402

DEFAULT_DIR = REPO_ROOT / ".dev-cluster"
BUILD_SCRIPT = REPO_ROOT / "hack" / "controlplane" / "build.sh"
TOOLS = ("etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "helm")
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager")
LOOPBACK = "127.0.0.1"
SERVICE_CIDR = "10.0.0.0/24"
SERVICE_IP = "10.0.0.1"
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
# Fixed ports (--ports fixed) are away from the well-known ones so that they do not
# collide with a real cluster on the same machine.
FIXED_PORTS = {"etcd_client": 12379, "etcd_peer": 12380, "apiserver": 16443, "controller_manager": 16257}
# Controllers that need a kubelet, a cloud or real nodes; everything else runs.
DISABLED_CONTROLLERS = (
    "node-lifecycle-controller",
    "node-ipam-controller",
    "taint-eviction-controller",
    "device-taint-eviction-controller",
    "persistentvolume-attach-detach-controller",
    "ttl-controller",
)
#: What ``up(workload_controllers=False)`` also turns off: a load harness creates every workload, ReplicaSet and
#: bound pod itself, so nothing may add, scale, delete or mirror them (benchmarks at the envelope).
WORKLOAD_CONTROLLERS = (
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "replicationcontroller-controller",
    "garbage-collector-controller",
    "endpoints-controller",
    "endpointslice-controller",
    "endpointslice-mirroring-controller",
    "disruption-controller",
    "pod-garbage-collector-controller",
    "resourceclaim-controller",
)
# TaintNodesByCondition would taint every new Node not-ready (no kubelet ever clears it).
DISABLED_ADMISSION = ("TaintNodesByCondition",)
PortMode = Literal["auto", "fixed"]


class ClusterError(Exception):
    """An expected failure: printed without a traceback by the CLI."""


@dataclass
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int


@dataclass
class Cluster:
    """A control plane recorded in a state dir; returned by up() and load()."""

    dir: Path
    bin_dir: Path
    ports: Ports
    pids: dict[str, int]

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.ports.apiserver}"

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    @property
    def log_dir(self) -> Path:
        return self.dir / "logs"

    @property
    def pki_dir(self) -> Path:
        return self.dir / "pki"


# --------------------------------------------------------------------------- helpers


def _log(msg: str) -> None:
    print(f"devcluster: {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, check=False)
    except FileNotFoundError as err:
        raise ClusterError(f"{cmd[0]} not found: {err}") from None
    if proc.returncode != 0:
        raise ClusterError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return True
    return False


def choose_ports(mode: PortMode) -> Ports:
    if mode == "fixed":
        busy = [f"{name}={port}" for name, port in FIXED_PORTS.items() if _port_in_use(port)]
        if busy:
            raise ClusterError(f"fixed ports already in use: {', '.join(busy)} (try --ports auto)")
        return Ports(**FIXED_PORTS)
    chosen: set[int] = set()
    while len(chosen) < len(FIXED_PORTS):
        chosen.add(_free_port())
    return Ports(*sorted(chosen))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _pid_is_ours(pid: int, state_dir: Path) -> bool:
    """The pid still runs one of our binaries with this state dir (not a recycled pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return _pid_alive(pid)
    return str(state_dir) in cmdline


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# --------------------------------------------------------------------------- tools


def missing_tools(bin_dir: Path) -> list[str]:
    return [t for t in TOOLS if not os.access(bin_dir / t, os.X_OK)]


def ensure_tools(bin_dir: Path) -> None:
    """Build or reuse the binaries (hack/controlplane/build.sh) and link them into bin_dir."""
    _log(f"ensuring control-plane tools in {bin_dir}")
    proc = subprocess.run(["bash", str(BUILD_SCRIPT), str(bin_dir)], cwd=REPO_ROOT, check=False)
    if proc.returncode != 0:
        raise ClusterError(f"{BUILD_SCRIPT} failed with exit code {proc.returncode}")


# --------------------------------------------------------------------------- pki


def _openssl(*args: str) -> None:
    _run(["openssl", *args])


def _ext_file(pki: Path, name: str, lines: list[str]) -> Path:
    path = pki / f"{name}.ext"
    path.write_text("\n".join(lines) + "\n")
    return path


def _ec_key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path))


def _create_ca(pki: Path, name: str, common_name: str) -> None:
    _ec_key(pki / f"{name}.key")
    _openssl(
        "req", "-x509", "-new", "-key", str(pki / f"{name}.key"), "-subj", f"/CN={common_name}",
        "-days", "3650", "-sha256", "-out", str(pki / f"{name}.crt"),
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    )


def _issue_cert(pki: Path, name: str, subject: str, ext: list[str], ca: str = "ca") -> None:
    key, csr, crt = pki / f"{name}.key", pki / f"{name}.csr", pki / f"{name}.crt"
    _ec_key(key)
    _openssl("req", "-new", "-key", str(key), "-subj", subject, "-out", str(csr))
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(pki / f"{ca}.crt"), "-CAkey", str(pki / f"{ca}.key"),
        "-CAcreateserial", "-days", "3650", "-sha256", "-out", str(crt),
        "-extfile", str(_ext_file(pki, name, ext)),
    )
    csr.unlink()


def create_pki(pki: Path) -> None:
    """CAs, apiserver serving cert, client certs (admin, controller-manager, front proxy), SA keys."""
    pki.mkdir(parents=True, exist_ok=True)
    _create_ca(pki, "ca", "spreadwatch-dev-ca")
    _create_ca(pki, "front-proxy-ca", "spreadwatch-dev-front-proxy-ca")
    sans = [
        f"IP:{LOOPBACK}", "IP:::1", f"IP:{SERVICE_IP}", "DNS:localhost", "DNS:kubernetes",
        "DNS:kubernetes.default", "DNS:kubernetes.default.svc", "DNS:kubernetes.default.svc.cluster.local",
    ]
    server_ext = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                  "extendedKeyUsage=serverAuth", "subjectAltName=" + ",".join(sans)]
    client_ext = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                  "extendedKeyUsage=clientAuth"]
    _issue_cert(pki, "apiserver", "/CN=kube-apiserver", server_ext)
    _issue_cert(pki, "admin", "/O=system:masters/CN=admin", client_ext)
    _issue_cert(pki, "controller-manager", "/CN=system:kube-controller-manager", client_ext)
    _issue_cert(pki, "front-proxy-client", "/CN=front-proxy-client", client_ext, ca="front-proxy-ca")
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(pki / "sa.key"))
    _openssl("pkey", "-in", str(pki / "sa.key"), "-pubout", "-out", str(pki / "sa.pub"))
    for key in pki.glob("*.key"):
        key.chmod(0o600)


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, server: str, pki: Path, user: str) -> None:
    """A kubeconfig with the certificates embedded (JSON-compatible YAML, no pyyaml needed)."""
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters:\n- name: spreadwatch-dev\n  cluster:\n"
        f"    server: {server}\n    certificate-authority-data: {_b64(pki / 'ca.crt')}\n"
        f"users:\n- name: {user}\n  user:\n"
        f"    client-certificate-data: {_b64(pki / (user + '.crt'))}\n"
        f"    client-key-data: {_b64(pki / (user + '.key'))}\n"
        f"contexts:\n- name: spreadwatch-dev\n  context:\n    cluster: spreadwatch-dev\n    user: {user}\n"
        "current-context: spreadwatch-dev\n"
    )
    path.chmod(0o600)


# --------------------------------------------------------------------------- processes


def _etcd_args(cluster: Cluster) -> list[str]:
    p = cluster.ports
    client, peer = f"http://{LOOPBACK}:{p.etcd_client}", f"http://{LOOPBACK}:{p.etcd_peer}"
    return [
        str(cluster.bin_dir / "etcd"), "--name=dev", f"--data-dir={cluster.dir / 'etcd'}",
        f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=dev={peer}", "--initial-cluster-state=new",
        # Throwaway data: skipping fsync keeps etcd fast on a busy disk.
        "--unsafe-no-fsync=true", "--log-level=warn",
    ]


def _apiserver_args(cluster: Cluster) -> list[str]:
    pki = cluster.pki_dir
    return [
        str(cluster.bin_dir / "kube-apiserver"),
        f"--etcd-servers=http://{LOOPBACK}:{cluster.ports.etcd_client}",
        f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}",
        f"--secure-port={cluster.ports.apiserver}",
        f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=Node,RBAC",
        f"--service-account-issuer={SA_ISSUER}",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        # The advertise address is loopback, which an Endpoints object may not contain.
        "--endpoint-reconciler-type=none",
        # A real node (hack/node) is reached at its InternalIP: its name resolves nowhere.
        "--kubelet-preferred-address-types=InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP",
        f"--disable-admission-plugins={','.join(DISABLED_ADMISSION)}",
        "--allow-privileged=true", "--profiling=false", f"--cert-dir={pki}",
        # Aggregation-layer front proxy: components that delegate authentication (the
        # controller-manager) read this CA from kube-system/extension-apiserver-authentication.
        f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
        f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
    ]


def _controller_manager_args(cluster: Cluster, workload_controllers: bool = True) -> list[str]:
    pki, kcfg = cluster.pki_dir, str(cluster.dir / "controller-manager.kubeconfig")
    return [
        str(cluster.bin_dir / "kube-controller-manager"),
        f"--kubeconfig={kcfg}", f"--authentication-kubeconfig={kcfg}", f"--authorization-kubeconfig={kcfg}",
        f"--bind-address={LOOPBACK}", f"--secure-port={cluster.ports.controller_manager}",
        f"--cert-dir={cluster.dir / 'controller-manager-certs'}",
        "--leader-elect=false",
        # Each controller acts as its own kube-system ServiceAccount with its bootstrap RBAC role
        # (as in kubeadm clusters); the shared system:kube-controller-manager identity lacks them.
        "--use-service-account-credentials=true",
        "--controllers=*," + ",".join(
            f"-{c}" for c in (*DISABLED_CONTROLLERS, *(() if workload_controllers else WORKLOAD_CONTROLLERS))
        ),
        f"--service-account-private-key-file={pki / 'sa.key'}",
        f"--root-ca-file={pki / 'ca.crt'}",
        f"--cluster-signing-cert-file={pki / 'ca.crt'}", f"--cluster-signing-key-file={pki / 'ca.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--profiling=false",
    ]


def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A preexec_fn that makes the child get SIGKILL when its parent dies (Linux), else None.

    This is the emergency path (pytest killed): SIGTERM could leave kube-apiserver hanging in
    its graceful shutdown once etcd is gone.  The normal path is down(), which stops the
    components in order.  libc's prctl is looked up here, in the parent, so the forked
    child only calls into C.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)

    return preexec


def _start(cluster: Cluster, name: str, args: list[str], die_with_parent: bool) -> None:
    cluster.log_dir.mkdir(parents=True, exist_ok=True)
    log_path = cluster.log_dir / f"{name}.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            cwd=cluster.dir, start_new_session=True,  # not hit by Ctrl-C of make
            # pytest is single-threaded while it starts the cluster; the hook only calls prctl.
            preexec_fn=_pdeathsig_preexec() if die_with_parent else None,  # noqa: PLW1509
        )
    cluster.pids[name] = proc.pid
    _save_state(cluster)
    _log(f"started {name} (pid {proc.pid}, log {log_path})")


def _check_alive(cluster: Cluster, name: str) -> None:
    pid = cluster.pids.get(name)
    if pid is None or not _pid_alive(pid):
        log_path = cluster.log_dir / f"{name}.log"
        raise ClusterError(f"{name} exited during startup; last lines of {log_path}:\n{_tail(log_path)}")


def _ssl_context(cluster: Cluster, verify: bool = True) -> ssl.SSLContext:
    if not verify:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    ctx = ssl.create_default_context(cafile=str(cluster.pki_dir / "ca.crt"))
    ctx.load_cert_chain(str(cluster.pki_dir / "admin.crt"), str(cluster.pki_dir / "admin.key"))
    return ctx


def _http_get(url: str, ctx: ssl.SSLContext | None = None, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as err:
        return 0, str(err)


Probe = Callable[[], tuple[bool, str]]


def _wait(cluster: Cluster, name: str, what: str, probe: Probe, timeout: float) -> None:
    deadline, last = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        _check_alive(cluster, name)
        ok, last = probe()
        if ok:
            return
        time.sleep(0.5)
    log_path = cluster.log_dir / f"{name}.log"
    raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last[:300]}); "
                       f"last lines of {log_path}:\n{_tail(log_path)}")


def _probe(url: str, ctx: ssl.SSLContext | None, expect: str | None = None) -> Probe:
    def probe() -> tuple[bool, str]:
        code, body = _http_get(url, ctx)
        return code == 200 and (expect is None or expect in body), f"HTTP {code}: {body}"
    return probe


# --------------------------------------------------------------------------- state


def _state_path(state_dir: Path) -> Path:
    return state_dir / "state.json"


def _save_state(cluster: Cluster) -> None:
    data = {"bin_dir": str(cluster.bin_dir), "ports": asdict(cluster.ports), "pids": cluster.pids}
    tmp = _state_path(cluster.dir).with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(_state_path(cluster.dir))


def load(state_dir: Path) -> Cluster | None:
    """The cluster recorded in state_dir, or None when there is none."""
    state_dir = state_dir.resolve()
    try:
        data = json.loads(_state_path(state_dir).read_text())
        return Cluster(state_dir, Path(data["bin_dir"]), Ports(**data["ports"]),
                       {k: int(v) for k, v in data["pids"].items()})
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as err:
        raise ClusterError(f"corrupt {_state_path(state_dir)}: {err}; run `down` to reset") from None


def running_components(cluster: Cluster) -> dict[str, bool]:
    return {name: (pid := cluster.pids.get(name)) is not None and _pid_alive(pid)
            and _pid_is_ours(pid, cluster.dir) for name in COMPONENTS}


def is_ready(cluster: Cluster) -> bool:
    if not all(running_components(cluster).values()) or not cluster.kubeconfig.exists():
        return False
    code, body = _http_get(f"{cluster.server}/readyz", _ssl_context(cluster), timeout=3)
    return code == 200 and body.strip() == "ok"


# --------------------------------------------------------------------------- up / down


def up(state_dir: Path = DEFAULT_DIR, bin_dir: Path | None = None, ports: PortMode = "fixed",
       timeout: float = 180.0, build: bool = False, die_with_parent: bool = False,
       workload_controllers: bool = True) -> Cluster:
    """Start the control plane in state_dir, or reuse the one already running there.

    workload_controllers=False: kube-controller-manager runs without the controllers that act on workloads,
    pods and Services (WORKLOAD_CONTROLLERS), for load harnesses that create all of them themselves.

    die_with_parent: the processes are stopped when the calling process dies (pytest);
    the CLI leaves them running in the background.
    """
    state_dir = state_dir.resolve()
    bin_dir = (bin_dir or state_dir / "bin").resolve()
    existing = load(state_dir)
    if existing is not None:
        if is_ready(existing):
            _log(f"reusing running cluster at {existing.server} ({state_dir})")
            return existing
        _log("found a stale or partial cluster; cleaning it up")
        down(state_dir, keep_logs=False, keep_bin=True)

    if build or missing_tools(bin_dir):
        if not build:
            _log(f"missing in {bin_dir}: {', '.join(missing_tools(bin_dir))}; building")
        ensure_tools(bin_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(state_dir, bin_dir, choose_ports(ports), {})
    try:
        _bring_up(cluster, timeout, die_with_parent, workload_controllers)
    except BaseException:
        _stop_processes(cluster)
        raise
    _log(f"ready: {cluster.server}  KUBECONFIG={cluster.kubeconfig}")
    return cluster


def _bring_up(cluster: Cluster, timeout: float, die_with_parent: bool, workload_controllers: bool = True) -> None:
    start = time.monotonic()
    create_pki(cluster.pki_dir)
    write_kubeconfig(cluster.dir / "controller-manager.kubeconfig", cluster.server, cluster.pki_dir,
                     "controller-manager")
    _save_state(cluster)

    _start(cluster, "etcd", _etcd_args(cluster), die_with_parent)
    etcd_health = f"http://{LOOPBACK}:{cluster.ports.etcd_client}/health"
    _wait(cluster, "etcd", "etcd /health", _probe(etcd_health, None, '"health":"true"'), timeout)

    _start_apiserver(cluster, timeout, die_with_parent)
    _start_controller_manager(cluster, timeout, die_with_parent, workload_controllers)
    ctx = _ssl_context(cluster)
    # The serviceaccount controller creates default/default: pods can be created from then on.
    sa_url = f"{cluster.server}/api/v1/namespaces/default/serviceaccounts/default"
    _wait(cluster, "kube-controller-manager", "the default ServiceAccount", _probe(sa_url, ctx), timeout)

    # Written last: its presence means "ready" to make and to humans.
    write_kubeconfig(cluster.kubeconfig, cluster.server, cluster.pki_dir, "admin")
    _log(f"control plane up in {time.monotonic() - start:.1f}s")


def _start_apiserver(cluster: Cluster, timeout: float, die_with_parent: bool) -> None:
    _start(cluster, "kube-apiserver", _apiserver_args(cluster), die_with_parent)
    _wait(cluster, "kube-apiserver", "kube-apiserver /readyz",
          _probe(f"{cluster.server}/readyz", _ssl_context(cluster), "ok"), timeout)


def _start_controller_manager(cluster: Cluster, timeout: float, die_with_parent: bool,
                              workload_controllers: bool = True) -> None:
    _start(cluster, "kube-controller-manager", _controller_manager_args(cluster, workload_controllers),
           die_with_parent)
    kcm_health = f"https://{LOOPBACK}:{cluster.ports.controller_manager}/healthz"
    _wait(cluster, "kube-controller-manager", "kube-controller-manager /healthz",
          _probe(kcm_health, _ssl_context(cluster, verify=False), "ok"), timeout)


def restart_apiserver(state_dir: Path, *, while_down: Callable[[], None] | None = None, grace: float = 10.0,
                      timeout: float = 300.0, die_with_parent: bool = True) -> None:
    """Stop kube-controller-manager and kube-apiserver, call while_down(), start both again, wait until ready.

    Each stop is SIGTERM, then SIGKILL after `grace` seconds: with any watch open kube-apiserver's graceful
    shutdown runs into its own 60 s deadline, and a crashed apiserver is what clients must survive anyway.
    kube-controller-manager is restarted too: after an apiserver restart with an etcd compaction its
    informers can stall for minutes, and tests after a restart need its controllers (ReplicaSets, GC).
    Blocks until /readyz and the controller-manager's /healthz answer (at most `timeout` s for each).
    """
    cluster = load(state_dir.resolve())
    if cluster is None:
        raise ClusterError(f"no cluster in {state_dir}")
    for name in ("kube-controller-manager", "kube-apiserver"):
        _stop_component(cluster, name, grace)
    if while_down is not None:
        while_down()
    _start_apiserver(cluster, timeout, die_with_parent)
    _start_controller_manager(cluster, timeout, die_with_parent)


def _stop_component(cluster: Cluster, name: str, grace: float) -> None:
    """SIGTERM, then SIGKILL after `grace` s; returns once the process is gone (O(grace))."""
    pid = cluster.pids.get(name)
    if pid is None or not _pid_alive(pid) or not _pid_is_ours(pid, cluster.dir):
        return
    _log(f"stopping {name} (pid {pid})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _pid_alive(pid):
        _log(f"{name} did not exit after {grace:.0f}s; killing")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while _pid_alive(pid):  # SIGKILL cannot be ignored: wait for the kernel, however busy the machine
            time.sleep(0.1)
    with contextlib.suppress(ChildProcessError):  # reap it if it is our child (pytest)
        os.waitpid(pid, os.WNOHANG)


def _stop_processes(cluster: Cluster, grace: float = 15.0) -> None:
    # Optional components (the scheduler) first, then reverse start order: controller-manager, apiserver, etcd.
    for name in [n for n in cluster.pids if n not in COMPONENTS] + list(reversed(COMPONENTS)):
        _stop_component(cluster, name, grace)


def down(state_dir: Path = DEFAULT_DIR, keep_logs: bool = False, keep_bin: bool = True) -> None:
    """Stop the processes recorded in state_dir and delete its state (bin/ symlinks stay)."""
    state_dir = state_dir.resolve()
    try:
        cluster = load(state_dir)
    except ClusterError as err:
        _log(f"{err}; removing state without stopping processes")
        cluster = None
    if (state_dir / "node" / "node.json").exists():
        localnode.down(state_dir / "node")
    if cluster is not None:
        _stop_processes(cluster)
    if not state_dir.exists():
        return
    keep = ({"bin"} if keep_bin else set()) | ({"logs"} if keep_logs else set())
    for entry in state_dir.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    _log(f"removed state in {state_dir}" + (f" (logs kept in {state_dir / 'logs'})" if keep_logs else ""))


# --------------------------------------------------------------------------- a real node


def up_node(cluster: Cluster, die_with_parent: bool = False) -> Path:
    """Check the machine, build (or reuse) the node's tools and start the node in DIR/node; returns that dir."""
    try:
        localnode.ensure_tools(cluster.bin_dir)
        localnode.up(cluster, cluster.dir / "node", die_with_parent=die_with_parent)
    except localnode.NodeError as err:
        raise ClusterError(f"node: {err}") from None
    return cluster.dir / "node"


# --------------------------------------------------------------------------- kube-scheduler (optional)

SCHEDULER_DIR = REPO_ROOT / "hack" / "scheduler"
SCHEDULER_VERSIONS = ("v1.36", "v1.28")
SCHEDULER = "kube-scheduler"
FIXED_SCHEDULER_PORT = 16259
# Each plugin's score per node, weighted ("Plugin scored node for pod"), and the node's total.
SCHEDULER_VMODULE = "schedule_one=10"


def scheduler_config(version: str, name: str = "spread-only") -> Path:
    """A configuration shipped in hack/scheduler/config: `default`, `spread-only` or (v1.36) `spread-only-list`."""
    path = SCHEDULER_DIR / "config" / f"{version}-{name}.yaml"
    if not path.is_file():
        raise ClusterError(f"no scheduler configuration {path}")
    return path


def ensure_scheduler(bin_dir: Path, version: str) -> Path:
    """Build or reuse kube-scheduler VERSION (hack/scheduler/build.sh); returns bin_dir/kube-scheduler-VERSION."""
    if version not in SCHEDULER_VERSIONS:
        raise ClusterError(f"unknown scheduler {version!r} (expected one of {', '.join(SCHEDULER_VERSIONS)})")
    proc = subprocess.run(["bash", str(SCHEDULER_DIR / "build.sh"), version, str(bin_dir)], cwd=REPO_ROOT,
                          check=False)
    if proc.returncode != 0:
        raise ClusterError(f"hack/scheduler/build.sh {version} failed with exit code {proc.returncode}")
    return bin_dir / f"{SCHEDULER}-{version}"


def _scheduler_files(cluster: Cluster, config: Path) -> Path:
    """Client certificate + kubeconfig (system:kube-scheduler, its bootstrap RBAC role) and the configuration
    with clientConnection.kubeconfig appended; returns the configuration's path in the state dir."""
    pki = cluster.pki_dir
    if not (pki / "scheduler.crt").exists():
        _issue_cert(pki, "scheduler", "/CN=system:kube-scheduler", [
            "basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
            "extendedKeyUsage=clientAuth"])
        (pki / "scheduler.key").chmod(0o600)
    kubeconfig = cluster.dir / "scheduler.kubeconfig"
    write_kubeconfig(kubeconfig, cluster.server, pki, "scheduler")
    text = config.read_text()
    if any(line.startswith("clientConnection:") for line in text.splitlines()):
        raise ClusterError(f"{config}: leave clientConnection out, devcluster sets the kubeconfig")
    generated = cluster.dir / "scheduler-config.yaml"
    generated.write_text(f"{text.rstrip()}\nclientConnection:\n  kubeconfig: {json.dumps(str(kubeconfig))}\n")
    return generated


def start_scheduler(state_dir: Path, version: str, config: Path | None = None, *, ports: PortMode = "auto",
                    timeout: float = 180.0, die_with_parent: bool = False) -> Path:
    """Start kube-scheduler VERSION against the running cluster in state_dir (stopping one already running)
    and wait for its /healthz; returns its log (logs/kube-scheduler.log, appended to).

    config defaults to hack/scheduler/config/VERSION-spread-only.yaml. No leader election: one scheduler.
    """
    cluster = load(state_dir.resolve())
    if cluster is None or not is_ready(cluster):
        raise ClusterError(f"no running cluster in {state_dir}")
    stop_scheduler(state_dir)
    binary = cluster.bin_dir / f"{SCHEDULER}-{version}"
    if not os.access(binary, os.X_OK):
        ensure_scheduler(cluster.bin_dir, version)
    generated = _scheduler_files(cluster, config or scheduler_config(version))
    port = FIXED_SCHEDULER_PORT if ports == "fixed" else _free_port()
    if ports == "fixed" and _port_in_use(port):
        raise ClusterError(f"fixed port {port} of kube-scheduler already in use (try --ports auto)")
    kubeconfig = str(cluster.dir / "scheduler.kubeconfig")
    _start(cluster, SCHEDULER, [
        str(binary), f"--config={generated}", "--leader-elect=false",
        f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}", f"--secure-port={port}", f"--cert-dir={cluster.dir / 'scheduler-certs'}",
        f"--vmodule={SCHEDULER_VMODULE}",
    ], die_with_parent)
    _wait(cluster, SCHEDULER, "kube-scheduler /healthz",
          _probe(f"https://{LOOPBACK}:{port}/healthz", _ssl_context(cluster, verify=False), "ok"), timeout)
    return cluster.log_dir / f"{SCHEDULER}.log"


def stop_scheduler(state_dir: Path, grace: float = 15.0) -> None:
    """Stop the cluster's kube-scheduler, if one runs (SIGTERM, SIGKILL after `grace` s)."""
    cluster = load(state_dir.resolve())
    if cluster is None or SCHEDULER not in cluster.pids:
        return
    _stop_component(cluster, SCHEDULER, grace)
    del cluster.pids[SCHEDULER]
    _save_state(cluster)


# --------------------------------------------------------------------------- CLI


def _cmd_up(args: argparse.Namespace) -> int:
    bin_dir = Path(args.bin_dir) if args.bin_dir else None
    if args.scheduler_config and args.scheduler in (None, "none"):
        raise ClusterError("--scheduler-config needs --scheduler v1.36 or v1.28")
    if args.scheduler_config and not Path(args.scheduler_config).is_file():
        raise ClusterError(f"--scheduler-config {args.scheduler_config}: no such file")
    cluster = up(Path(args.dir), bin_dir, args.ports, args.timeout, args.build)
    print(f"server:     {cluster.server}\nkubeconfig: {cluster.kubeconfig}\nlogs:       {cluster.log_dir}")
    if args.node:
        node_dir = up_node(cluster)
        print(f"node:       {localnode.NAME} ({node_dir}; crictl: "
              f"{cluster.bin_dir / 'crictl'} --runtime-endpoint unix://{node_dir / 'containerd' / 'containerd.sock'})")
    if args.scheduler is None:  # leave a running scheduler alone
        return 0
    if args.scheduler == "none":
        stop_scheduler(cluster.dir)
        return 0
    config = Path(args.scheduler_config).resolve() if args.scheduler_config else None
    log = start_scheduler(cluster.dir, args.scheduler, config, ports=args.ports, timeout=args.timeout)
    print(f"scheduler:  kube-scheduler {args.scheduler} "
          f"({config or scheduler_config(args.scheduler)}), log {log}")
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    down(Path(args.dir), keep_logs=args.keep_logs)
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    """Exit 0 when running and ready, 3 when not running, 1 when degraded."""
    cluster = load(Path(args.dir))
    if cluster is None:
        print(f"stopped (no cluster in {Path(args.dir).resolve()})")
        return 3
    running = running_components(cluster)
    for name, alive in running.items():
        print(f"{name:24} {'running pid ' + str(cluster.pids[name]) if alive else 'not running'}")
    if SCHEDULER in cluster.pids:
        alive = _pid_alive(cluster.pids[SCHEDULER])
        print(f"{SCHEDULER:24} {'running pid ' + str(cluster.pids[SCHEDULER]) if alive else 'not running'}")
    ready = is_ready(cluster)
    print(f"{'server':24} {cluster.server} ({'ready' if ready else 'NOT ready'})")
    print(f"{'kubeconfig':24} {cluster.kubeconfig}")
    print(f"{'logs':24} {cluster.log_dir}")
    if ready:
        return 0
    return 3 if not any(running.values()) else 1


def _cmd_env(args: argparse.Namespace) -> int:
    state_dir = Path(args.dir).resolve()
    cluster = load(state_dir)
    bin_dir = cluster.bin_dir if cluster else state_dir / "bin"
    print(f"export KUBECONFIG={state_dir / 'kubeconfig'}")
    print(f'export PATH="{bin_dir}:$PATH"')
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--dir", default=str(DEFAULT_DIR), help="state directory (default: %(default)s)")
        return p

    p_up = add("up", "start (or reuse) the control plane")
    p_up.add_argument("--ports", choices=("auto", "fixed"), default="fixed",
                      help="fixed: apiserver 16443, etcd 12379/12380, controller-manager 16257; auto: free ports")
    p_up.add_argument("--bin-dir", help="directory with the binaries (default: DIR/bin)")
    p_up.add_argument("--build", action="store_true", help="run hack/controlplane/build.sh first")
    p_up.add_argument("--timeout", type=float, default=180.0, help="seconds to wait per component")
    p_up.add_argument("--node", action="store_true",
                      help="also start a real node (containerd, kubelet, kube-proxy; hack/node/localnode.py)")
    p_up.add_argument("--scheduler", choices=(*SCHEDULER_VERSIONS, "none"),
                      help="(re)start a real kube-scheduler (v1.36.4 or v1.28.15, built and cached by "
                           "hack/scheduler/build.sh), or stop it (none); without the flag a running one stays")
    p_up.add_argument("--scheduler-config",
                      help="its KubeSchedulerConfiguration without clientConnection (default: "
                           "hack/scheduler/config/VERSION-spread-only.yaml)")
    p_up.set_defaults(func=_cmd_up)
    p_down = add("down", "stop the control plane and delete its state")
    p_down.add_argument("--keep-logs", action="store_true", help="keep DIR/logs")
    p_down.set_defaults(func=_cmd_down)
    add("status", "show the state (exit 0 ready, 1 degraded, 3 stopped)").set_defaults(func=_cmd_status)
    add("env", "print shell exports for KUBECONFIG and PATH").set_defaults(func=_cmd_env)

    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ClusterError as err:
        print(f"devcluster: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("devcluster: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
