"""What Inductor tests check on generated code and hand to compiled functions.

``_check_has_dynamic_shape`` reads the C++ code Inductor generated for a CPU kernel and asserts
that it loops, with a bound that is a symbolic size (Inductor names those ``ks0``, ``ks1``...);
``clone_preserve_strides_offset`` copies a tensor as it lies in its storage (strides, offset,
the storage's other elements), so a compiled function sees the same layout as the eager one.
"""

from __future__ import annotations

import re
import unittest
from typing import Any

import torch

__all__ = ["_check_has_dynamic_shape", "clone_preserve_strides_offset"]

# A C++ for-loop header whose condition (between its two semicolons) names a symbolic size.
_SYMBOLIC_BOUND = re.compile(r";.*ks.*;")


def _check_has_dynamic_shape(test: unittest.TestCase, code: str) -> None:
    """Assert that ``code`` has a ``for(`` loop and that one such loop, up to the first whose
    header mentions a symbolic size (``ks…``), is bounded by it; ``test``'s asserts report."""
    loops = [line for line in code.split("\n") if "for(" in line]
    symbolic = any(_SYMBOLIC_BOUND.search(line) for line in loops)
    test.assertTrue(symbolic, msg=f"Failed to find dynamic for loop variable\n{code}")
    test.assertTrue(bool(loops), f"Failed to find for loop\n{code}")


def clone_preserve_strides_offset(x: Any, device: torch.device | str | None = None) -> Any:
    """A copy of tensor ``x`` with its whole storage, strides and storage offset (on ``device``
    if given); anything that is not a tensor is returned as it is."""
    if not isinstance(x, torch.Tensor):
        return x
    whole = torch.as_strided(x, (x.untyped_storage().size() // x.element_size(),), (1,), 0)
    copied = whole.clone() if not device else whole.to(device, copy=True)
    return torch.as_strided(copied, x.size(), x.stride(), x.storage_offset())
