"""The TLS serving certificate of the secure ``/metrics`` endpoint.

Either mounted (``--metrics-cert-dir DIR`` holding ``tls.crt`` and ``tls.key``, the layout of a
``kubernetes.io/tls`` Secret or a cert-manager Certificate), or, by default, a self-signed one made at start
(ECDSA P-256, valid for one year, names ``localhost``, the host name, ``127.0.0.1`` and ``::1`` plus any
given) and written to a fresh private directory under ``$TMPDIR`` (``/tmp``; the chart mounts an emptyDir
there, the root filesystem stays read-only). Prometheus scrapes a self-signed endpoint with
``insecure_skip_verify``: the bearer token still travels encrypted, and only the API server decides who
may read.

A mounted certificate is watched: :meth:`ServingCert.reload` (called by the operator every
:data:`RELOAD_SECONDS`) loads the files again when they changed (a Secret's atomic update, a cert-manager
renewal), so new connections get the new pair without a restart; a changed pair that cannot be loaded (e.g.
a half-written update) keeps the old one serving until the next check.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import ipaddress
import logging
import os
import socket
import ssl
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from spreadwatch.errors import InputError

__all__ = [
    "CERT_FILE",
    "KEY_FILE",
    "RELOAD_SECONDS",
    "ServingCert",
    "keep_reloading",
    "serving_cert",
    "write_self_signed",
]

CERT_FILE: Final = "tls.crt"
KEY_FILE: Final = "tls.key"
#: Seconds between two checks of a mounted pair (controller-runtime's certwatcher also polls every 10 s).
RELOAD_SECONDS: Final = 10.0
_VALIDITY: Final = dt.timedelta(days=365)

log = logging.getLogger("spreadwatch.operator")

_Stamp = tuple[tuple[int, int, int], ...]


def _stamp(directory: Path) -> _Stamp:
    """(inode, size, mtime ns) of both files, following symlinks (a Secret volume swaps ``..data``); O(1)."""
    stamps = []
    for name in (CERT_FILE, KEY_FILE):
        try:
            st = (directory / name).stat()
        except OSError:
            stamps.append((0, -1, 0))
        else:
            stamps.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def _load(context: ssl.SSLContext, directory: Path) -> None:
    try:
        context.load_cert_chain(directory / CERT_FILE, directory / KEY_FILE)
    except (OSError, ssl.SSLError) as err:
        raise InputError(f"metrics certificate {directory / CERT_FILE}: cannot load it with its key: {err}") from None


class ServingCert:
    """A server-side :class:`ssl.SSLContext` (TLS 1.2+) and where its files are."""

    def __init__(self, context: ssl.SSLContext, cert_dir: Path, self_signed: bool, stamp: _Stamp) -> None:
        self.context = context
        self.cert_dir = cert_dir
        self.self_signed = self_signed
        self._stamp = stamp  # of the files as they were just before the pair in use was loaded

    def reload(self) -> bool:
        """Load the pair again if either file changed since the last load; True when the new pair now serves
        new connections. Raises :class:`InputError` (one line) when a changed pair cannot be loaded: the old
        one keeps serving and the next call tries again. Two ``stat`` calls when nothing changed."""
        stamp = _stamp(self.cert_dir)
        if stamp == self._stamp:
            return False
        _load(self.context, self.cert_dir)
        self._stamp = stamp
        return True


def _names(extra: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    seen: set[str] = set()
    for name in ("localhost", socket.gethostname(), "127.0.0.1", "::1", *extra):
        if not name or name in seen:
            continue
        seen.add(name)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            names.append(x509.DNSName(name))
    return names


def write_self_signed(directory: Path, hosts: Iterable[str] = (), now: dt.datetime | None = None) -> None:
    """Write a new self-signed ``tls.crt``/``tls.key`` (key mode 0600) into ``directory``. ~1 ms (P-256)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "spreadwatch-metrics")])
    start = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(hours=1)  # tolerate clock skew
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_path = directory / KEY_FILE
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    (directory / CERT_FILE).write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def serving_cert(cert_dir: str | None, hosts: Iterable[str] = ()) -> ServingCert:
    """The serving context: from ``cert_dir`` (``tls.crt`` + ``tls.key``), or a self-signed certificate in a
    new ``$TMPDIR/spreadwatch-metrics-*`` directory. :class:`InputError` (one line) when the files are
    missing or unusable."""
    self_signed = cert_dir is None
    if cert_dir is None:
        directory = Path(tempfile.mkdtemp(prefix="spreadwatch-metrics-"))
        try:
            write_self_signed(directory, hosts)
        except OSError as err:
            raise InputError(f"cannot write the self-signed metrics certificate to {directory}: {err}") from None
    else:
        directory = Path(cert_dir)
        missing = [name for name in (CERT_FILE, KEY_FILE) if not (directory / name).is_file()]
        if missing:
            raise InputError(f"metrics certificate directory {cert_dir}: no {' or '.join(missing)}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    stamp = _stamp(directory)
    _load(context, directory)
    return ServingCert(context, directory, self_signed, stamp)


async def keep_reloading(cert: ServingCert, stop: asyncio.Event, interval: float = RELOAD_SECONDS) -> None:
    """Until ``stop`` is set: every ``interval`` seconds, :meth:`ServingCert.reload`, logging one line when
    a new pair serves and one warning per failed attempt (the old pair keeps serving)."""
    while not stop.is_set():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
        if stop.is_set():
            return
        try:
            if cert.reload():
                log.info("metrics certificate %s changed: new connections use the new pair", cert.cert_dir)
        except InputError as err:
            log.warning("%s (the previous pair keeps serving)", err)
