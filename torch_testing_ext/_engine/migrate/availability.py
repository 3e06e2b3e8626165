"""Which referenced names this package provides, found by importing it: a name is provided if
its module imports and has it as an attribute or a submodule. A module that does not import
provides nothing, so every name used from it is missing.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable
from types import ModuleType

from .name_references import Reference
from .upstream_paths import OURS

__all__ = ["missing_name", "missing_names"]


@functools.cache
def _load(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _is_package(module: str) -> bool:
    loaded = _load(module)
    return loaded is not None and hasattr(loaded, "__path__")


def _provides(module: str, name: str) -> bool:
    loaded = _load(module)
    if loaded is None:
        return False
    if name == "*" or hasattr(loaded, name):
        return True
    return _is_package(module) and _load(f"{module}.{name}") is not None


def _deepest_module(name: str) -> str:
    """The longest prefix of ``name`` that imports as a module (``torch_testing_ext`` at least)."""
    module, *rest = name.split(".")
    for part in rest:
        if not _is_package(module) or _load(f"{module}.{part}") is None:
            break
        module = f"{module}.{part}"
    return module


def missing_name(reference: Reference) -> str | None:
    """What to report for ``reference`` (``module.name``), or None if it is provided."""
    module = reference.module or _deepest_module(reference.name)
    first = reference.name[len(module) + 1:].split(".")[0]
    if not first or _provides(module, first):
        return None
    if reference.via_from_import and _load(module) is None:
        # ``X`` of ``from P import X``: used as a module only if P is a package without X;
        # anything else (a class of P, a name P lacks) is checked, and reported, at the import.
        parent, _, child = module.rpartition(".")
        if not _is_package(parent) or _provides(parent, child):
            return None
    return f"{module}.{first}"


def missing_names(references: Iterable[Reference]) -> list[tuple[int, str]]:
    """``(line, module.name)`` for every reference not provided, sorted, one per name and line."""
    return sorted({(ref.line, name) for ref in references
                   if ref.name != OURS and (name := missing_name(ref)) is not None})
