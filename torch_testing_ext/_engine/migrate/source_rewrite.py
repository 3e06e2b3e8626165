"""The migration's rewrite rule applied to source text with the standard library only.

:mod:`import_rewrite` rewrites files on disk with LibCST (an optional dependency), keeping
their layout for a human to read. Loading a suite that torch ships (see :mod:`shipped_suites`)
needs the same rule at import time, in every process, without LibCST and without moving a
line: a traceback then names the installed torch's file and the line that is really there.
So this rewrite replaces each upstream path where it stands as a dotted name (in ``import``
and ``from ... import`` statements and in dotted uses in code) inside its own line, and leaves
strings, comments and every line break alone.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from .upstream_paths import UPSTREAM_TO_OURS, to_ours

__all__ = ["rewrite_source"]

_FROM_MODULE = re.compile(rb"from\s+(\.*)([\w.]+)")


class _Edit(NamedTuple):
    """Replace bytes ``start:end`` of line ``line`` (1-based) with ``text``."""

    line: int
    start: int
    end: int
    text: str


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _ours(name: str) -> str | None:
    """``name`` rewritten, or None where it is not an upstream path."""
    mapped = to_ours(name)
    return mapped if mapped is not None and mapped != name else None


def _edits(tree: ast.Module, lines: list[bytes]) -> list[_Edit]:
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            # Only the whole upstream path, so ``torch.testing._internal.x.y`` becomes
            # ``torch_testing_ext.x.y`` once, at its innermost matching node.
            name = _dotted(node)
            if name in UPSTREAM_TO_OURS:
                if node.end_lineno != node.lineno:  # left as it is, it would reach upstream's harness
                    raise SyntaxError(f"line {node.lineno}: {name} spans lines {node.lineno}-{node.end_lineno}; "
                                      "it can only be rewritten on one line")
                edits.append(_Edit(node.lineno, node.col_offset, node.end_col_offset or 0,
                                   UPSTREAM_TO_OURS[name]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                ours = _ours(alias.name)
                if ours is not None:
                    start = alias.col_offset
                    edits.append(_Edit(alias.lineno, start, start + len(alias.name), ours))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            ours = _ours(node.module)
            if ours is not None:
                match = _FROM_MODULE.match(lines[node.lineno - 1], node.col_offset)
                if match is None or match.group(2).decode() != node.module:
                    raise SyntaxError(f"line {node.lineno}: cannot find the module of "
                                      f"'from {node.module} import ...' on its first line")
                edits.append(_Edit(node.lineno, match.start(2), match.end(2), ours))
    return edits


def rewrite_source(source: str, filename: str = "<source>") -> str:
    """``source`` with every upstream path (``torch.testing._internal``,
    ``torch._dynamo.test_case``) that stands as a dotted name rewritten to this package's, each
    line kept where it was. Raises ``SyntaxError`` for source that does not parse."""
    tree = ast.parse(source, filename)
    lines = source.encode("utf-8").splitlines(keepends=True)
    # ast's columns count UTF-8 bytes; apply each line's edits from its right end leftwards.
    for edit in sorted(_edits(tree, lines), key=lambda e: (e.line, e.start), reverse=True):
        line = lines[edit.line - 1]
        lines[edit.line - 1] = line[:edit.start] + edit.text.encode("utf-8") + line[edit.end:]
    return b"".join(lines).decode("utf-8")
