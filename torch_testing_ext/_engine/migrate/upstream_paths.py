r"""The rewrite rule as data: which upstream module paths map to which of ours.

The rule is a plain prefix rewrite of dotted names, so on imports and code it gives what
``sed -e 's/torch\.testing\._internal/torch_testing_ext/g'
-e 's/torch\._dynamo\.test_case/torch_testing_ext.dynamo_test_case/g'`` gives (only whole
components match, and strings and comments are left alone, where sed would rewrite them).
"""

from __future__ import annotations

__all__ = ["OURS", "UPSTREAM_TO_OURS", "to_ours"]

OURS = "torch_testing_ext"

UPSTREAM_TO_OURS: dict[str, str] = {
    "torch.testing._internal": OURS,
    "torch._dynamo.test_case": f"{OURS}.dynamo_test_case",
}


def _under(dotted: str, prefix: str) -> bool:
    return dotted == prefix or dotted.startswith(prefix + ".")


def to_ours(dotted: str) -> str | None:
    """``dotted`` as a name of this package (rewritten if it is upstream's), or None if it is
    neither ours nor one of the upstream paths."""
    for upstream, ours in UPSTREAM_TO_OURS.items():
        if _under(dotted, upstream):
            return ours + dotted[len(upstream):]
    return dotted if _under(dotted, OURS) else None
