"""hack/image/constraints.txt (the image's pinned Python dependencies) is in step with pyproject.toml.

`make image` runs the same check (``lock.py --check``); `make image-lock` regenerates the file.
"""

from __future__ import annotations

import pytest
from image_tools import load_lock

lock = load_lock()


def test_the_committed_constraints_are_in_step_with_pyproject() -> None:
    assert lock.check(lock.inputs(), lock.CONSTRAINTS.read_text()) == []


def test_every_pin_is_exact_and_includes_the_build_requirements() -> None:
    _, pinned = lock.pins(lock.CONSTRAINTS.read_text())
    for name in ("setuptools", "wheel", "kopf", "kubernetes", "aiohttp"):  # build isolation and transitive deps
        assert name in pinned, f"{name} is not pinned"


REQUIREMENTS = ["kopf>=1.37,<2", "setuptools>=68"]
GOOD = f"# x\n# inputs: sha256:{lock.input_digest(REQUIREMENTS)}\nkopf==1.45.2\nsetuptools==80.0\naiohttp==3.9.0\n"


@pytest.mark.parametrize(
    ("requirements", "text", "problem"),
    [
        pytest.param(REQUIREMENTS, GOOD, None, id="in-step"),
        pytest.param([*REQUIREMENTS, "orjson>=3.9"], GOOD, "dependencies changed", id="pyproject-changed"),
        pytest.param(REQUIREMENTS, GOOD.replace("kopf==1.45.2\n", ""), "kopf is not pinned", id="missing-pin"),
        pytest.param(REQUIREMENTS, GOOD.replace("kopf==1.45.2", "kopf==2.0"), "kopf==2.0 does not satisfy",
                     id="pin-outside-range-2.0-not-<2"),
        pytest.param(REQUIREMENTS, GOOD.replace("Kopf", "kopf").replace("kopf==", "Kopf=="), None,
                     id="names-compared-canonically"),
    ],
)  # fmt: skip
def test_check(requirements: list[str], text: str, problem: str | None) -> None:
    problems = lock.check(requirements, text)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_a_line_that_is_not_an_exact_pin_is_rejected() -> None:
    with pytest.raises(ValueError, match="not NAME==VERSION"):
        lock.pins("kopf>=1\n")
