"""`make image` (hack/image/build.sh) is reproducible and builds what the chart runs.

Marked e2e (it runs the real builder, ~1-3 min): `make test` builds build/spreadwatch.oci.tar first (the `image`
prerequisite); this test builds the same tree again into a temporary file and compares manifest digests, then
reads the archive: name, entrypoint, user, hash-based .pyc, no trace of the build's mounts. Without the archive
or buildah it fails (run `make image`), it does not skip.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from image_tools import OCI_ARCHIVE, REPO_ROOT, OciArchive

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def archive() -> OciArchive:
    assert OCI_ARCHIVE.is_file(), f"{OCI_ARCHIVE} is missing: run `make image` (a prerequisite of `make test`)"
    return OciArchive(OCI_ARCHIVE)


def _version() -> str:
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        version: str = tomllib.load(f)["project"]["version"]
    return version


def test_a_second_build_gives_the_same_manifest_digest(archive: OciArchive, tmp_path: Path) -> None:
    assert shutil.which("buildah"), "buildah is missing: run `make image-tools`"
    out = tmp_path / "again.oci.tar"
    done = subprocess.run(["bash", str(REPO_ROOT / "hack" / "image" / "build.sh"), str(out)],
                          capture_output=True, text=True, timeout=1800, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    name, digest = done.stdout.split()
    assert name == f"spreadwatch:{_version()}"
    assert OciArchive(out).digest == digest
    assert digest == archive.digest, (
        f"rebuild gave {digest}, build/ holds {archive.digest}: not reproducible, or build/ is stale "
        "(run `make image` and compare again)"
    )


def test_name_entrypoint_and_user_match_pyproject_and_chart(archive: OciArchive) -> None:
    assert archive.ref_name == f"spreadwatch:{_version()}"
    config = archive.config["config"]
    assert config["Entrypoint"] == ["spreadwatch", "run"]
    values = yaml.safe_load((REPO_ROOT / "charts" / "spreadwatch" / "values.yaml").read_text())
    assert config["User"] == f"{values['runAsUser']}:{values['runAsGroup']}"
    assert archive.config["os"] == "linux"


def test_the_application_layer_holds_hash_based_pyc_and_no_build_mounts(archive: OciArchive) -> None:
    files = archive.layer_files(archive.layer_count - 1)
    assert "usr/local/bin/spreadwatch" in files
    leftovers = [p for p in files if p.startswith(("etc/xdg/pip/", "etc/pip.conf", "run/", "etc/hosts",
                                                   "etc/resolv.conf", "wheels"))]  # fmt: skip
    assert leftovers == [], "bind mounts of the build left files in the image"
    pycs = sorted(p for p in files if p.endswith(".pyc") and "/spreadwatch/" in p)
    assert pycs, "pip compiled no spreadwatch modules"
    headers = archive.read_layer_files(archive.layer_count - 1, pycs, size=16)
    # PEP 552: bit 0 of the second header word set = hash-based (SOURCE_DATE_EPOCH was passed to pip)
    not_hashed = [p for p, head in headers.items() if not int.from_bytes(head[4:8], "little") & 1]
    assert not_hashed == []
    created = datetime.fromisoformat(archive.config["created"].replace("Z", "+00:00"))
    assert {m.mtime for m in files.values()} == {int(created.timestamp())}, "file times are not the build's epoch"
