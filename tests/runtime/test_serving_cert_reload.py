"""A mounted metrics certificate is reloaded when its files change: new TLS connections get the new pair.

The directory is laid out as the kubelet's atomic writer lays out a Secret volume (``tls.crt`` →
``..data/tls.crt``, ``..data`` → a timestamped directory swapped by one rename), and each check is a real TLS
handshake against the context the metrics server uses.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from auth_fakes import FakeAccessReviews
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from handler_fakes import NAMED_CONFIG, FakeReportApi

from spreadwatch.errors import InputError
from spreadwatch.runtime.process import Runtime
from spreadwatch.runtime.serving.servingcert import CERT_FILE, KEY_FILE, keep_reloading, serving_cert, write_self_signed


def _publish(volume: Path, version: str, hosts: list[str] | None = None, broken: bool = False) -> bytes:
    """Write a new pair as the kubelet does (new timestamped dir, ``..data`` swapped atomically); its DER."""
    target = volume / f"..{version}"
    target.mkdir()
    if broken:
        (target / CERT_FILE).write_text("half-written")
        (target / KEY_FILE).write_text("half-written")
        der = b""
    else:
        write_self_signed(target, hosts or [version])
        der = x509.load_pem_x509_certificate((target / CERT_FILE).read_bytes()).public_bytes(Encoding.DER)
    tmp_link = volume / "..data_tmp"
    os.symlink(target.name, tmp_link)
    os.replace(tmp_link, volume / "..data")
    for name in (CERT_FILE, KEY_FILE):
        if not (volume / name).is_symlink():
            os.symlink(f"..data/{name}", volume / name)
    return der


def _served_der(context: ssl.SSLContext) -> bytes:
    """The certificate a fresh TLS handshake against ``context`` presents (DER)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def serve() -> None:
            conn, _ = server.accept()
            with context.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        client_ctx = ssl.create_default_context()
        client_ctx.check_hostname = False
        client_ctx.verify_mode = ssl.CERT_NONE
        with socket.create_connection(("127.0.0.1", port)) as raw, client_ctx.wrap_socket(raw) as tls:
            der = tls.getpeercert(binary_form=True)
            tls.sendall(b"x")
        thread.join()
    assert der is not None
    return der


def test_a_rotated_pair_serves_new_connections_and_an_unchanged_one_is_not_reloaded(tmp_path: Path) -> None:
    first = _publish(tmp_path, "2026_11_23_a")
    cert = serving_cert(str(tmp_path))
    assert _served_der(cert.context) == first
    assert cert.reload() is False  # nothing changed
    second = _publish(tmp_path, "2026_11_23_b")
    assert second != first
    assert cert.reload() is True
    assert _served_der(cert.context) == second
    assert cert.reload() is False


def test_a_half_written_pair_keeps_the_old_one_serving_until_a_good_one_arrives(tmp_path: Path) -> None:
    first = _publish(tmp_path, "2026_11_23_a")
    cert = serving_cert(str(tmp_path))
    _publish(tmp_path, "2026_11_23_b", broken=True)
    with pytest.raises(InputError, match="cannot load it with its key") as err:
        cert.reload()
    assert "\n" not in str(err.value)
    assert _served_der(cert.context) == first
    third = _publish(tmp_path, "2026_11_23_c")
    assert cert.reload() is True
    assert _served_der(cert.context) == third


def test_keep_reloading_picks_up_a_rotation_and_stops_when_told(tmp_path: Path) -> None:
    _publish(tmp_path, "2026_11_23_a")
    cert = serving_cert(str(tmp_path))

    async def main() -> bytes:
        stop = asyncio.Event()
        task = asyncio.create_task(keep_reloading(cert, stop, interval=0.01))
        second = _publish(tmp_path, "2026_11_23_b")

        async def rotated() -> None:
            while _served_der(cert.context) != second:  # a condition: the loop reloads on its own
                await asyncio.sleep(0.01)

        await asyncio.wait_for(rotated(), timeout=120)  # a bound against a hang, not a timing margin
        stop.set()
        await task  # returns once stop is set
        return second

    second = asyncio.run(main())
    assert _served_der(cert.context) == second


async def _until_served(context: ssl.SSLContext, der: bytes) -> None:
    while _served_der(context) != der:  # a condition, polled; the caller bounds it against a hang
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("mounted", [True, False], ids=["mounted: reloaded", "self-signed: nothing to watch"])
def test_the_operator_watches_a_mounted_certificate_only(tmp_path: Path, mounted: bool) -> None:
    volume = tmp_path / "cert"
    volume.mkdir()
    _publish(volume, "2026_11_23_a")
    cfg = replace(NAMED_CONFIG, host="127.0.0.1", port=0, metrics_port=0,
                  metrics_cert_dir=str(volume) if mounted else None)  # fmt: skip
    rt = Runtime(cfg, report_api=FakeReportApi(), reviews=FakeAccessReviews({}, frozenset()))

    async def main() -> list[str]:
        await rt.start()
        try:
            assert rt.serving_cert is not None
            names = [t.get_name() for t in rt._tasks]
            if mounted:
                second = _publish(volume, "2026_11_23_b")
                await asyncio.wait_for(_until_served(rt.serving_cert.context, second), timeout=180)
            return names
        finally:
            await rt.stop()

    names = asyncio.run(main())
    assert ("spreadwatch metrics certificate reload" in names) is mounted
