"""The ``kubernetes`` client package, loaded name by name: :func:`load_lazily`.

``import kubernetes`` runs the package's ``__init__``, which imports ``kubernetes.client``, whose ``__init__``
imports every API class and every model — ~800 modules, ~28 MiB of the operator's resident memory and 1.3–2.3 s
of its start on a loaded 2-core machine (measured: importing ``spreadwatch.runtime.process`` took 4.0–4.6 s and
95 MiB eagerly, 2.4–2.7 s and 67 MiB with this), though the operator uses a dozen of them. kopf imports
``kubernetes.client`` too (for two model classes it recognises), so not importing it is not an option.

:func:`load_lazily` puts stand-ins for the packages ``kubernetes``, ``kubernetes.client``,
``kubernetes.client.api`` and ``kubernetes.client.models`` into ``sys.modules`` before anything imports them.
Each is a real module object with the package's own ``__path__`` and spec (its submodules import as ever),
and a module ``__getattr__`` (PEP 562) that resolves each name its ``__init__`` would have imported — read from
that ``__init__`` with :mod:`ast`, not guessed — by importing only the module that defines it, on first use.
So ``kubernetes.client.CoreV1Api``, ``kubernetes.client.models.V1Lease`` (what ``ApiClient`` deserialises
into) and ``from kubernetes.client import V1ObjectMeta`` (kopf's) are the same objects as with the eager
import. A package whose ``__init__`` holds anything but imports, constant assignments and its docstring (a
client release that changes that) is left alone: imported eagerly, as before. Cost: parsing four
``__init__`` files once (~30 ms); O(1) per name after its first use.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Final

__all__ = ["load_lazily"]

#: The packages loaded name by name, parents first.
_PACKAGES: Final = ("kubernetes", "kubernetes.client", "kubernetes.client.api", "kubernetes.client.models")


def _names(package: str, init: Path) -> tuple[dict[str, tuple[str, str | None]], dict[str, Any]] | None:
    """What ``init`` (the ``__init__`` of ``package``) defines: each imported name → (module, attribute; None:
    the module itself), and its constant assignments. None when it does anything else. O(lines)."""
    imported: dict[str, tuple[str, str | None]] = {}
    constants: dict[str, Any] = {}
    for node in ast.parse(init.read_bytes()).body:
        if isinstance(node, ast.ImportFrom):  # (``from __future__ import x`` binds ``x`` too)
            base = node.module or ""
            if node.level:  # (relative: ``from . import client``)
                base = importlib.util.resolve_name("." * node.level + base, package)
            for alias in node.names:
                target = alias.asname or alias.name
                if node.module is None:  # a submodule of the package
                    imported[target] = (f"{base}.{alias.name}", None)
                else:
                    imported[target] = (base, alias.name)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            constants.update((t.id, value) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        else:
            return None
    return imported, constants


def load_lazily() -> bool:
    """Load the ``kubernetes`` client package name by name from now on (see the module docstring). Nothing
    happens when it is imported already or not installed, or when one of its ``__init__`` files is not
    what this reads; returns whether the stand-ins are in place. Finds the packages without importing them."""
    if any(name in sys.modules for name in _PACKAGES):
        return isinstance(sys.modules.get(_PACKAGES[0]), _LazyPackage)
    stand_ins: dict[str, _LazyPackage] = {}
    for package in _PACKAGES:
        parent = stand_ins.get(package.rpartition(".")[0])
        spec = importlib.machinery.PathFinder.find_spec(package, parent.__path__ if parent is not None else None)
        if spec is None or spec.origin is None or not spec.submodule_search_locations:
            return False
        read = _names(package, Path(spec.origin))
        if read is None:
            return False
        stand_ins[package] = _LazyPackage(spec, *read)
    for package, module in stand_ins.items():
        sys.modules[package] = module
        parent_name, _, leaf = package.rpartition(".")
        if parent_name:
            setattr(stand_ins[parent_name], leaf, module)
    return True


class _LazyPackage(types.ModuleType):
    """A stand-in for one package: its spec, path and constants; each name its ``__init__`` imports is
    resolved on first use (then an attribute like any other), as is a submodule."""

    def __init__(
        self,
        spec: importlib.machinery.ModuleSpec,
        imported: dict[str, tuple[str, str | None]],
        constants: dict[str, Any],
    ) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__file__ = spec.origin
        self.__path__ = list(spec.submodule_search_locations or ())
        self.__package__ = spec.name
        self.__loader__ = spec.loader
        self.__dict__.update(constants)
        self.__lazy_names__ = imported

    def __getattr__(self, attr: str) -> Any:
        found = self.__lazy_names__.get(attr) if not attr.startswith("__") else None
        if found is not None:
            source, member = found
            value = importlib.import_module(source)
            if member is not None:
                value = getattr(value, member)
        elif attr.startswith("__"):
            raise AttributeError(attr)
        else:  # a submodule its ``__init__`` does not name (``kubernetes.client.rest``)
            try:
                value = importlib.import_module(f"{self.__name__}.{attr}")
            except ModuleNotFoundError as err:
                if err.name != f"{self.__name__}.{attr}":
                    raise
                raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}") from None
        setattr(self, attr, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__lazy_names__})
