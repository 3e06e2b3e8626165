"""The LibCST transformer that moves a file onto this package.

Every occurrence in code of an upstream path as a dotted name (in ``import`` and ``from ...
import`` statements at any depth, and in dotted uses such as
``torch._dynamo.test_case.run_tests()``) is rewritten by :mod:`upstream_paths`' rule. Strings,
comments and the layout of the file are kept; rewriting a rewritten file changes nothing.
"""

from __future__ import annotations

from typing import Any

from .cst_nodes import Transformer, cst, dotted_name, require_libcst
from .upstream_paths import UPSTREAM_TO_OURS

__all__ = ["ImportRewriter", "rewrite"]


class ImportRewriter(Transformer):
    """Replace each upstream path (``torch.testing._internal``, ``torch._dynamo.test_case``)
    where it stands as a dotted name, keeping whatever follows it (``.common_utils.TestCase``)."""

    def leave_Attribute(self, original_node: Any, updated_node: Any) -> Any:
        ours = UPSTREAM_TO_OURS.get(dotted_name(original_node) or "")
        if ours is None:
            return updated_node
        # The whole upstream path is one node here, so its parentheses, if any, carry over.
        return cst.parse_expression(ours).with_changes(lpar=updated_node.lpar,
                                                       rpar=updated_node.rpar)


def rewrite(module: Any) -> Any:
    """The parsed ``module`` (a ``libcst.Module``) with its upstream paths rewritten."""
    require_libcst()
    return module.visit(ImportRewriter())
