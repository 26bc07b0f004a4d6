#!/usr/bin/env python3
"""Copies of the prometheus-operator CRDs (ServiceMonitor, PrometheusRule) that the e2e tests install into the test
control plane to validate the chart's monitoring objects server-side: fetch them, or check that they match.

    python3 hack/prometheus_operator_crds.py check            # the copies match the recorded release (exit 1 if not)
    python3 hack/prometheus_operator_crds.py update [VERSION] # copy them from VERSION (default: the recorded one)

The files come from the Go module `github.com/prometheus-operator/prometheus-operator` (its
`example/prometheus-operator-crd/` directory) through `go mod download -json`, i.e. the Go module proxy and the
checksum database, so the module's `h1:` hash is verified by Go and recorded in `versions.json` next to the
copies, with each file's sha256. `check` downloads the recorded version (a no-op when it is in the module cache),
compares the module hash and every file byte for byte. Stdlib only; needs `go` on PATH.

Cost: one `go mod download` (about 4.7 MB the first time), then O(size of the two files).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

__all__ = ["DATA_DIR", "FILES", "MODULE", "CrdError", "check", "download", "update"]

MODULE = "github.com/prometheus-operator/prometheus-operator"
SOURCE_DIR = "example/prometheus-operator-crd"
FILES = ("monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml")
DATA_DIR = Path(__file__).resolve().parents[1] / "tests" / "e2e" / "data" / "prometheus-operator"
RECORD = DATA_DIR / "versions.json"


class CrdError(Exception):
    """The module cannot be downloaded, or the copies differ from it."""


def download(version: str) -> tuple[Path, str]:
    """`go mod download -json MODULE@version`: the module's directory in the module cache and its h1: hash."""
    try:
        proc = subprocess.run(["go", "mod", "download", "-json", f"{MODULE}@{version}"], capture_output=True,
                              text=True, check=False, timeout=600)  # fmt: skip
    except FileNotFoundError:
        raise CrdError("go is not on PATH (the CRDs come from the Go module proxy)") from None
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise CrdError(f"go mod download {MODULE}@{version} failed: {proc.stderr.strip()}") from None
    if proc.returncode != 0 or "Error" in info:
        raise CrdError(f"go mod download {MODULE}@{version}: {info.get('Error') or proc.stderr.strip()}")
    return Path(info["Dir"]), str(info["Sum"])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_record() -> dict[str, object]:
    record: dict[str, object] = json.loads(RECORD.read_text())
    return record


def check() -> list[str]:
    """Differences between the copies, the record and the recorded module version; empty when all match."""
    record = load_record()
    files = record["files"]
    assert isinstance(files, dict)
    problems = [f"{name}: not a file the record lists" for name in sorted(p.name for p in DATA_DIR.glob("*.yaml"))
                if name not in files]  # fmt: skip
    for name, digest in files.items():
        if _sha256(DATA_DIR / name) != digest:
            problems.append(f"{name}: sha256 differs from versions.json (edited by hand?)")
    module_dir, module_sum = download(str(record["version"]))
    if module_sum != record["moduleSum"]:
        problems.append(f"module {MODULE}@{record['version']} hash {module_sum}, recorded {record['moduleSum']}")
    for name in files:
        if (module_dir / SOURCE_DIR / name).read_bytes() != (DATA_DIR / name).read_bytes():
            problems.append(f"{name}: differs from {SOURCE_DIR}/{name} of {MODULE}@{record['version']}")
    return problems


def update(version: str) -> None:
    """Copy the CRDs of `version` and rewrite versions.json."""
    module_dir, module_sum = download(version)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    digests = {}
    for name in FILES:
        data = (module_dir / SOURCE_DIR / name).read_bytes()
        (DATA_DIR / name).write_bytes(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    record = {"module": MODULE, "version": version, "moduleSum": module_sum, "directory": SOURCE_DIR,
              "files": digests}  # fmt: skip
    RECORD.write_text(json.dumps(record, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="the copies match the recorded release")
    up = sub.add_parser("update", help="copy the CRDs of a release")
    up.add_argument("version", nargs="?", help="module version, e.g. v0.94.1 (default: the recorded one)")
    args = parser.parse_args(argv)
    try:
        if args.command == "update":
            version = args.version or str(load_record()["version"])
            update(version)
            print(f"prometheus-operator CRDs: copied from {MODULE}@{version} into {DATA_DIR}")
            return 0
        problems = check()
    except CrdError as err:
        print(f"prometheus-operator CRDs: {err}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"prometheus-operator CRDs: {problem}", file=sys.stderr)
    if not problems:
        print(f"prometheus-operator CRDs: the copies match {MODULE}@{load_record()['version']}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
