"""Run a rendered Deployment's pod the way a kubelet would: the built image, unpacked by umoci, under runc.

    image = unpack_image(Path("build/spreadwatch.oci.tar"), tmp / "image")          # skopeo + umoci, once
    pod = PodRun.from_deployment(deployment, image, tmp / "pod-a", sa_files=..., api_server=cp.server)
    pod.start()                                   # `runc run` (foreground child; its output in pod.log)
    pod.wait_probe("readinessProbe")              # the rendered probe: httpGet path and (named) port
    code, seconds = pod.stop()                    # SIGTERM, SIGKILL after terminationGracePeriodSeconds

Everything the container gets is taken from the rendered Deployment (``spec.template``), never from a copy:
``command``/``args`` over the image's Entrypoint/Cmd, the image's Env then the container's ``env`` with its
downward-API ``fieldRef``s filled in, ``runAsUser``/``runAsGroup`` (container over pod securityContext; no
passwd entry exists for them), ``fsGroup`` and ``supplementalGroups`` as extra groups,
``readOnlyRootFilesystem``, the capabilities (containerd's default set, minus ``drop``, plus ``add``),
``allowPrivilegeEscalation`` (no_new_privs), each ``emptyDir`` volume mount as a tmpfs (``sizeLimit``), and,
unless ``automountServiceAccountToken`` is false, a read-only ``/var/run/secrets/kubernetes.io/serviceaccount``
with a TokenRequest token of the ServiceAccount, ``ca.crt`` and ``namespace``, plus
``KUBERNETES_SERVICE_HOST``/``PORT`` of the API server. A volume kind or ``valueFrom`` this module does not
know fails the test (AssertionError) rather than being left out.

Differences from a kubelet, on purpose: the container shares the host's network namespace (the test API server
listens on loopback; a pod IP is 127.0.0.1), so two pods at once need different ports; cgroups use runc's
cgroupfs manager (this machine's cgroups are hybrid and root lacks CAP_SYS_RESOURCE, so rlimits are the
current ones, never higher); no seccomp profile (runc has no RuntimeDefault of its own) and no resource
limits. Cost: unpacking the image ~5-15 s once; starting a container ~0.1 s plus the operator's start-up.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SA_DIR", "Image", "PodRun", "fetch", "http_endpoint", "metrics_endpoint", "require_runtime_tools",
           "unpack_image"]  # fmt: skip

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TOOLS = ("runc", "umoci", "skopeo")
# containerd's default capability set for a container (what a kubelet's pod gets before add/drop)
DEFAULT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID",
                        "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE")  # fmt: skip
_RLIM_MAX = 2**64 - 1  # RLIM_INFINITY in the runtime spec's uint64
_CGROUP_PARENT = "spreadwatch-e2e"  # under every mounted hierarchy; `runc delete` removes only the leaf


def require_runtime_tools() -> None:
    """Fail (never skip) when runc, umoci or skopeo is missing: `make test` installs them (image-tools)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} not on PATH: run `make image-tools` (Debian packages)"


# --------------------------------------------------------------------------- the image


@dataclass(frozen=True)
class Image:
    """An unpacked image: its root filesystem (shared read-only by every container) and its OCI config."""

    rootfs: Path
    config: dict[str, Any]  # the image config's "config" object: Env, Entrypoint, Cmd, WorkingDir, User


def unpack_image(archive: Path, dest: Path) -> Image:
    """oci-archive → OCI layout (skopeo) → root filesystem (umoci unpack). O(image size)."""
    require_runtime_tools()
    assert archive.is_file(), f"{archive} is missing: run `make image` (a prerequisite of `make test`)"
    layout = dest / "layout"
    dest.mkdir(parents=True, exist_ok=True)
    _run(["skopeo", "copy", "--quiet", f"oci-archive:{archive}", f"oci:{layout}:image"])
    _run(["umoci", "unpack", "--image", f"{layout}:image", str(dest / "bundle")])
    index = json.loads((layout / "index.json").read_text())
    [entry] = index["manifests"]
    manifest = json.loads(_blob(layout, entry["digest"]).read_text())
    config = json.loads(_blob(layout, manifest["config"]["digest"]).read_text())
    return Image(rootfs=dest / "bundle" / "rootfs", config=config.get("config", {}))


def _blob(layout: Path, digest: str) -> Path:
    algorithm, _, hexdigest = digest.partition(":")
    return layout / "blobs" / algorithm / hexdigest


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}"


# --------------------------------------------------------------------------- endpoints (probes, /metrics)


def _container_port(container: Mapping[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    named = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
    assert named, f"probe port {port!r} is not a named port of container {container['name']}"
    return int(named[0])


def http_endpoint(container: Mapping[str, Any], probe: str) -> str:
    """URL of a rendered ``httpGet`` probe (``livenessProbe``/``readinessProbe``): scheme, port (named or
    numeric), path; the pod IP is 127.0.0.1 here (host network namespace)."""
    get = container[probe]["httpGet"]
    scheme = str(get.get("scheme", "HTTP")).lower()
    return f"{scheme}://127.0.0.1:{_container_port(container, get['port'])}{get.get('path', '/')}"


def metrics_endpoint(container: Mapping[str, Any]) -> str:
    """Where Prometheus scrapes /metrics: the container port named ``metrics``, over HTTPS unless the rendered
    args say ``--metrics-secure=false`` (then plain HTTP). Over HTTPS, :func:`fetch` it with a bearer token of a
    ServiceAccount allowed ``get`` on the nonResourceURL /metrics (the chart's metrics-reader ClusterRole)."""
    scheme = "http" if "--metrics-secure=false" in container.get("args", []) else "https"
    return f"{scheme}://127.0.0.1:{_container_port(container, 'metrics')}/metrics"


def fetch(url: str, bearer: str | None = None, timeout: float = 30.0) -> tuple[int, str]:
    """GET → (status, body); status 0 when nothing answers. HTTPS is not verified (a self-signed serving cert)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {bearer}"} if bearer else {})
    context = ssl._create_unverified_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError as err:
        return 0, str(err)


# --------------------------------------------------------------------------- one pod


def _field_value(path: str, pod: Mapping[str, str]) -> str:
    assert path in pod, f"downward-API fieldRef {path!r} is not supported by the test kubelet"
    return pod[path]


def _container_env(container: Mapping[str, Any], pod: Mapping[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in container.get("env", []):
        if "valueFrom" in item:
            ref = item["valueFrom"].get("fieldRef")
            assert ref, f"env {item['name']}: only fieldRef is supported, got {item['valueFrom']}"
            env[item["name"]] = _field_value(ref["fieldPath"], pod)
        else:
            env[item["name"]] = str(item.get("value", ""))
    assert not container.get("envFrom"), "envFrom is not supported by the test kubelet"
    return env


def _size_bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return int(float(quantity.removesuffix(suffix)) * factor)
    return int(quantity)


@dataclass
class PodRun:
    """One pod of a rendered Deployment as a runc container (only the first container of the template)."""

    name: str
    namespace: str
    pod_spec: dict[str, Any]
    container: dict[str, Any]
    image: Image
    bundle: Path
    sa_files: Mapping[str, str]  # token, ca.crt, namespace → content
    api_server: str  # https://HOST:PORT
    state_dir: Path
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.bundle / "container.log"
        self.id = f"sw-e2e-{self.name}"[:60]

    @classmethod
    def from_deployment(cls, deployment: Mapping[str, Any], image: Image, bundle: Path, *,
                        sa_files: Mapping[str, str], api_server: str, state_dir: Path) -> PodRun:  # fmt: skip
        """A pod of ``deployment`` (as rendered) with a ReplicaSet-style name, not started yet."""
        template = deployment["spec"]["template"]
        pod_spec = template["spec"]
        name = f"{deployment['metadata']['name']}-{uuid.uuid4().hex[:10]}-{uuid.uuid4().hex[:5]}"
        namespace = deployment["metadata"].get("namespace", "default")
        bundle.mkdir(parents=True)
        return cls(name, namespace, pod_spec, pod_spec["containers"][0], image, bundle, sa_files, api_server,
                   state_dir)  # fmt: skip

    # --- what a kubelet derives from the pod ---------------------------------------------------------------

    @property
    def termination_grace(self) -> float:
        return float(self.pod_spec.get("terminationGracePeriodSeconds", 30))

    def downward(self) -> dict[str, str]:
        return {"metadata.name": self.name, "metadata.namespace": self.namespace,
                "metadata.uid": str(uuid.uuid5(uuid.NAMESPACE_URL, self.name)),
                "spec.serviceAccountName": self.pod_spec.get("serviceAccountName", "default"),
                "spec.nodeName": "e2e-node", "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1"}  # fmt: skip

    def _security(self, key: str) -> Any:
        """Container securityContext over the pod's (as the kubelet resolves runAsUser etc.)."""
        own = self.container.get("securityContext", {})
        return own[key] if key in own else self.pod_spec.get("securityContext", {}).get(key)

    def process(self) -> dict[str, Any]:
        cfg = self.image.config
        command = self.container.get("command") or cfg.get("Entrypoint") or []
        args = self.container.get("args") if "command" in self.container or "args" in self.container else None
        argv = [*command, *(args if args is not None else cfg.get("Cmd") or [])]
        assert argv, "neither the container nor the image says what to run"
        image_user = str(cfg.get("User", "0:0")).split(":")
        uid = self._security("runAsUser")
        gid = self._security("runAsGroup")
        uid = int(uid if uid is not None else image_user[0])
        gid = int(gid if gid is not None else (image_user[1] if len(image_user) > 1 else 0))
        if self._security("runAsNonRoot"):
            assert uid != 0, "runAsNonRoot with UID 0: a kubelet refuses to start this container"
        pod_sc = self.pod_spec.get("securityContext", {})
        groups = sorted({*pod_sc.get("supplementalGroups", []), *([pod_sc["fsGroup"]] if "fsGroup" in pod_sc else [])})
        url = urllib.parse.urlsplit(self.api_server)
        env = {k: v for k, _, v in (item.partition("=") for item in cfg.get("Env", []))}
        env |= {"HOSTNAME": self.name, "KUBERNETES_SERVICE_HOST": url.hostname or "",
                "KUBERNETES_SERVICE_PORT": str(url.port or 443)}  # fmt: skip
        env |= _container_env(self.container, self.downward())
        caps = self.container.get("securityContext", {}).get("capabilities", {})
        drop = {c.upper() for c in caps.get("drop", [])}
        kept = [] if "ALL" in drop else [c for c in DEFAULT_CAPABILITIES if c not in drop]
        kept += [c.upper() for c in caps.get("add", []) if c.upper() not in kept]
        capabilities = ["CAP_" + c for c in kept]
        soft, hard = (_RLIM_MAX if v < 0 else v for v in resource.getrlimit(resource.RLIMIT_NOFILE))
        return {
            "terminal": False,
            "user": {"uid": uid, "gid": gid, "additionalGids": groups},
            "args": argv,
            "env": [f"{k}={v}" for k, v in env.items()],
            "cwd": self.container.get("workingDir") or cfg.get("WorkingDir") or "/",
            "capabilities": {"bounding": capabilities, "effective": capabilities, "permitted": capabilities},
            "rlimits": [{"type": "RLIMIT_NOFILE", "soft": soft, "hard": hard}],  # never above the current ones
            "noNewPrivileges": self._security("allowPrivilegeEscalation") is False,
        }

    def mounts(self) -> list[dict[str, Any]]:
        volumes = {v["name"]: v for v in self.pod_spec.get("volumes", [])}
        mounts: list[dict[str, Any]] = []
        for vm in self.container.get("volumeMounts", []):
            volume = volumes[vm["name"]]
            assert set(volume) <= {"name", "emptyDir"}, f"volume {volume} is not supported by the test kubelet"
            empty = volume["emptyDir"] or {}
            options = ["nosuid", "nodev", "mode=1777"]
            if "sizeLimit" in empty:
                options.append(f"size={_size_bytes(str(empty['sizeLimit']))}")
            if vm.get("readOnly"):
                options.append("ro")
            mounts.append({"destination": vm["mountPath"], "type": "tmpfs", "source": "tmpfs", "options": options})
        if self.pod_spec.get("automountServiceAccountToken", True):
            sa = self.bundle / "serviceaccount"
            sa.mkdir(mode=0o755)
            for name, content in self.sa_files.items():
                (sa / name).write_text(content)
                (sa / name).chmod(0o644)
            mounts.append({"destination": SA_DIR, "type": "bind", "source": str(sa), "options": ["rbind", "ro"]})
        for path in ("/etc/hosts", "/etc/resolv.conf"):  # a hostNetwork pod gets the node's
            mounts.append({"destination": path, "type": "bind", "source": path, "options": ["rbind", "ro"]})
        return mounts

    def runtime_spec(self) -> dict[str, Any]:
        """config.json: runc's defaults (mounts, masked paths, devices) with the pod's settings over them."""
        scratch = self.bundle / "default-spec"
        scratch.mkdir(exist_ok=True)
        _run(["runc", "spec", "--bundle", str(scratch)])
        spec: dict[str, Any] = json.loads((scratch / "config.json").read_text())
        spec["process"] = self.process()
        spec["hostname"] = self.name
        read_only = bool(self._security("readOnlyRootFilesystem"))
        spec["root"] = {"path": str(self.image.rootfs), "readonly": read_only}
        spec["mounts"] = [*spec["mounts"], *self.mounts()]
        linux = spec["linux"]
        linux["namespaces"] = [ns for ns in linux["namespaces"] if ns["type"] != "network"]  # host network
        linux["cgroupsPath"] = f"/{_CGROUP_PARENT}/{self.id}"
        return spec

    # --- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        """`runc run` in the foreground (this process's child); the container's output goes to ``log``."""
        (self.bundle / "config.json").write_text(json.dumps(self.runtime_spec(), indent=1))
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                ["runc", "--root", str(self.state_dir), "run", "--bundle", str(self.bundle), self.id],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int:
        """The container's init process (the operator) as the host sees it (`runc state`)."""
        done = subprocess.run(["runc", "--root", str(self.state_dir), "state", self.id],
                              capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
        pid: int = json.loads(done.stdout)["pid"]
        return pid

    def process_status(self) -> dict[str, str]:
        """/proc/PID/status of the container's init process: Uid, Gid, NoNewPrivs, CapEff, CapBnd, ..."""
        lines = Path(f"/proc/{self.pid()}/status").read_text().splitlines()
        return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}

    def root_writable(self) -> bool:
        """Whether the container's / is mounted read-write (from its mount table)."""
        roots = [line.split() for line in Path(f"/proc/{self.pid()}/mounts").read_text().splitlines()
                 if line.split()[1] == "/"]  # fmt: skip
        assert roots, "the container has no / mount"
        return "rw" in roots[-1][3].split(",")  # the last mount on / is the one in effect

    def tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def _kill(self, sig: str) -> None:
        subprocess.run(["runc", "--root", str(self.state_dir), "kill", self.id, sig],
                       capture_output=True, timeout=30, check=False)  # fmt: skip

    def stop(self, grace: float | None = None) -> tuple[int, float]:
        """SIGTERM, then SIGKILL after ``grace`` (default terminationGracePeriodSeconds), then `runc delete`.

        Returns (exit code, seconds from SIGTERM to exit); SIGKILL shows as exit code 137.
        """
        assert self.proc is not None, "not started"
        grace = self.termination_grace if grace is None else grace
        started = time.monotonic()
        if self.proc.poll() is None:
            self._kill("TERM")
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._kill("KILL")
                try:
                    self.proc.wait(30)
                except subprocess.TimeoutExpired:  # runc itself hangs: end it (its own process group)
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
        elapsed = time.monotonic() - started
        subprocess.run(["runc", "--root", str(self.state_dir), "delete", "--force", self.id],
                       capture_output=True, timeout=60, check=False)  # fmt: skip
        _remove_parent_cgroups()
        return self.proc.returncode, elapsed


def _remove_parent_cgroups() -> None:
    """Remove the now-empty ``spreadwatch-e2e`` parent cgroups; one still holding another pod stays (EBUSY)."""
    for parent in Path("/sys/fs/cgroup").glob(f"*/{_CGROUP_PARENT}"):
        with contextlib.suppress(OSError):
            parent.rmdir()
