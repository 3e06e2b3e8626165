"""LibCST, imported only if it is installed, and the dotted name of a node.

Every module of the package must import without LibCST (it is an optional dependency), so the
classes built on LibCST use the bases defined here, which fall back to ``object``.
"""

from __future__ import annotations

import warnings
from typing import Any

try:
    with warnings.catch_warnings():  # LibCST's own use of a deprecated mypy_extensions name
        warnings.simplefilter("ignore", DeprecationWarning)
        import libcst as cst
        import libcst.metadata  # noqa: F401  # loads cst.metadata, which name_references uses
except ImportError:  # the command line says so in one line; see require_libcst
    cst = None  # type: ignore[assignment]  # LibCST is optional

__all__ = ["cst", "LibCSTMissing", "require_libcst", "dotted_name", "Transformer", "Visitor"]

Transformer: Any = cst.CSTTransformer if cst is not None else object
Visitor: Any = cst.CSTVisitor if cst is not None else object


class LibCSTMissing(Exception):
    """LibCST is not installed."""


def require_libcst() -> None:
    """Raise :class:`LibCSTMissing` with the install hint unless LibCST imports."""
    if cst is None:
        raise LibCSTMissing("libcst is not installed (pip install 'torch_testing_ext[migrate]')")


def dotted_name(node: Any) -> str | None:
    """``a.b.c`` for a chain of names and attributes, None for anything else (calls, subscripts)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))
