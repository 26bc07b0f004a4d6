"""The Dockerfile agrees with pyproject.toml and the chart (there is no Docker engine here to build it):
ENTRYPOINT is the console script of [project.scripts] with `run`, USER is the chart's numeric runAsUser and
runAsGroup, the Python of the pinned base image satisfies requires-python, the runtime stage installs only
the builder's wheels, and .dockerignore lets exactly what the builder copies into the build context."""

from __future__ import annotations

import fnmatch
import io
import json
import re
import tomllib
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import yaml
from chart_helpers import CHART, ROOT, Helm, one
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from spreadwatch.cli import main

DOCKERFILE = ROOT / "Dockerfile"
BASE = re.compile(r"^python:(?P<version>\d+\.\d+\.\d+)-slim-bookworm$")


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order; continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for ins in instructions():
        if ins[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result


def pyproject() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def last(stage: list[tuple[str, str]], word: str) -> str:
    found = [rest for w, rest in stage if w == word]
    assert found, f"no {word} in the final stage"
    return found[-1]


def test_entrypoint_is_the_console_script_run() -> None:
    final = stages()[-1]
    entrypoint = json.loads(last(final, "ENTRYPOINT"))  # exec form only (signals reach the operator)
    scripts = pyproject()["project"]["scripts"]
    assert entrypoint[0] in scripts
    assert scripts[entrypoint[0]] == "spreadwatch.cli:main"
    assert entrypoint[1:] == ["run"]
    with redirect_stdout(io.StringIO()) as out:
        assert main(["run", "--help"]) == 0
    assert "--leader-elect" in out.getvalue()


def test_user_is_numeric_and_matches_the_chart(helm: Helm, tmp_path: Path) -> None:
    user = last(stages()[-1], "USER")
    assert re.fullmatch(r"\d+:\d+", user), f"USER {user!r} must be numeric UID:GID"
    uid, gid = map(int, user.split(":"))
    assert uid != 0 and gid != 0
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert (values["runAsUser"], values["runAsGroup"]) == (uid, gid)
    pod = one(helm.template(tmp_path), "Deployment")["spec"]["template"]["spec"]
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (uid, gid)
    assert pod["containers"][0]["securityContext"]["runAsUser"] == uid


def test_base_images_are_pinned_and_satisfy_requires_python() -> None:
    bases = [rest.split()[0] for w, rest in instructions() if w == "FROM"]
    assert len(bases) >= 2, "multi-stage: a builder and the runtime"
    matches = [BASE.match(b) for b in bases]
    assert all(matches), f"every stage must be python:X.Y.Z-slim-bookworm, got {bases}"
    versions = {m.group("version") for m in matches if m}
    assert len(versions) == 1, f"builder and runtime must use the same Python, got {versions}"
    [version] = versions
    project = pyproject()
    assert Version(version) in SpecifierSet(project["project"]["requires-python"])
    major_minor = ".".join(version.split(".")[:2])
    assert project["tool"]["mypy"]["python_version"] == major_minor
    assert project["tool"]["ruff"]["target-version"] == "py" + major_minor.replace(".", "")


def test_builder_makes_wheels_and_the_runtime_installs_only_them() -> None:
    builder, *_, final = stages()
    assert " AS " in builder[0][1].upper()
    assert any(w == "RUN" and "pip wheel" in rest for w, rest in builder)
    runs = " ".join(rest for w, rest in final if w == "RUN")
    assert "pip install --no-index --find-links=/wheels spreadwatch" in runs  # no index: nothing but the wheels
    assert not re.search(r"apt-get|apk |gcc|build-essential|pip install (?!--no-index)", runs), runs
    assert not [rest for w, rest in final if w in ("COPY", "ADD") and "--from=builder" not in rest], \
        "the runtime stage copies nothing from the build context"


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's .dockerignore semantics for the patterns used here: last match wins, `!` re-includes."""
    ignored = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw[1:] if negate else raw
        pattern = pattern.rstrip("/")
        if pattern == "**" or fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_exactly_what_the_builder_copies() -> None:
    patterns = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]  # fmt: skip
    builder = stages()[0]
    sources = [src for w, rest in builder if w == "COPY" for src in rest.split()[:-1] if not src.startswith("--")]
    assert sources, "the builder copies the sources"
    for src in sources:
        path = src.rstrip("/")
        assert (ROOT / path).exists(), f"COPY {src}: no such file"
        assert not _ignored(path, patterns), f"COPY {src} is excluded by .dockerignore"
    for unwanted in (".venv", ".git", "tests", ".dev-cluster", "bench-results", "charts"):
        assert _ignored(unwanted, patterns), f"{unwanted} would be sent to the Docker daemon"
    readme = pyproject()["project"]["readme"]
    assert readme in sources, "pyproject's readme must be in the build context"
