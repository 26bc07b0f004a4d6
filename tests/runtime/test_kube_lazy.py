"""The kubernetes client package loaded name by name (spreadwatch/kube/lazy.py): the same objects as the eager
import, a few dozen modules instead of ~800, and left alone when its ``__init__`` is not what it reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spreadwatch.kube.lazy import _names

#: Every public name of the four packages → "module.qualname" of what it is (a class, a module, a constant).
_NAMES = """
import json, sys, types
{setup}
import kubernetes, kubernetes.client, kubernetes.client.api, kubernetes.client.models
loaded = sorted(m for m in sys.modules if m.startswith("kubernetes"))
def what(value):
    if isinstance(value, types.ModuleType):
        return "module " + value.__name__
    return getattr(value, "__module__", "") + "." + getattr(value, "__qualname__", repr(value))
names = {{}}
for package in (kubernetes, kubernetes.client, kubernetes.client.api, kubernetes.client.models):
    for name in dir(package):
        if not name.startswith("_") or name == "__version__":
            names[package.__name__ + ":" + name] = what(getattr(package, name))
print(json.dumps({{"loaded": loaded, "names": names}}))
"""


def _run(setup: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _NAMES.format(setup=setup)], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    result: dict[str, object] = json.loads(out)
    return result


def test_the_client_loads_name_by_name_and_gives_the_eager_imports_objects() -> None:
    lazy = _run("import spreadwatch.kube, kopf")  # (kopf imports kubernetes.client's model classes itself)
    eager = _run("")
    loaded, everything = lazy["loaded"], eager["loaded"]
    assert isinstance(loaded, list) and isinstance(everything, list)
    assert len(loaded) < 40 and len(everything) > 700
    lazy_names, eager_names = lazy["names"], eager["names"]
    assert isinstance(lazy_names, dict) and isinstance(eager_names, dict)
    assert {k: v for k, v in eager_names.items() if k in lazy_names} == lazy_names  # the same objects
    # every class and API the packages' __init__ files import is there (submodules only once used)
    assert {k for k, v in eager_names.items() if not v.startswith("module ")} <= set(lazy_names)


def test_an_init_that_does_more_than_import_is_left_alone(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text('"""doc"""\nfrom __future__ import annotations\n__version__ = "1"\nfrom . import sub\n'
                     "from pkg.models.v1 import V1 as Alias\n")  # fmt: skip
    assert _names("pkg", plain) == ({"annotations": ("__future__", "annotations"), "sub": ("pkg.sub", None),
                                     "Alias": ("pkg.models.v1", "V1")}, {"__version__": "1"})  # fmt: skip
    bodies = ("def helper():\n    pass\n", "import os\n", "VERSION = compute()\n", "if True:\n    from x import y\n")
    for body in bodies:
        other = tmp_path / "other.py"
        other.write_text(f"from pkg.a import A\n{body}")
        assert _names("pkg", other) is None


@pytest.mark.parametrize("first", ["kubernetes", "kubernetes.client"])
def test_nothing_changes_when_the_client_was_imported_first(first: str) -> None:
    code = f"import {first}, sys; from spreadwatch.kube.lazy import load_lazily; print(load_lazily(), " \
           "type(sys.modules['kubernetes']).__name__, len([m for m in sys.modules if m.startswith('kubernetes')]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[:2] == ["False", "module"] and int(out[2]) > 700
