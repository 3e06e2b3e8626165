"""Gradient checks as upstream's tests call them, named as in ``common_utils``: torch's
``gradcheck``/``gradgradcheck`` with batched-gradient checking and fast mode on by default
(``PYTORCH_TEST_WITH_SLOW_GRADCHECK=1`` turns fast mode off), and the old per-dtype
tolerances some tests still use.

Example::

    _assertGradAndGradgradChecks(self, torch.sin, (torch.randn(3, dtype=torch.double,
                                                                requires_grad=True),))
"""

from __future__ import annotations

import os
import unittest
from collections.abc import Callable, Sequence
from typing import Any

import torch

__all__ = [
    "TEST_WITH_SLOW_GRADCHECK",
    "GRADCHECK_NONDET_TOL",
    "skipIfSlowGradcheckEnv",
    "gradcheck",
    "gradgradcheck",
    "_assertGradAndGradgradChecks",
    "dtype2prec_DONTUSE",
]

# Upstream's flag: exactly "1" turns it on.
TEST_WITH_SLOW_GRADCHECK: bool = os.environ.get("PYTORCH_TEST_WITH_SLOW_GRADCHECK", "") == "1"

# The tolerance gradcheck's ``nondet_tol`` gets for ops whose backward is not deterministic.
GRADCHECK_NONDET_TOL: float = 1e-12

# Skips a test that runs no gradcheck when the whole run is the slow-gradcheck one (it would
# only repeat a run without it).
skipIfSlowGradcheckEnv = unittest.skipIf(
    TEST_WITH_SLOW_GRADCHECK, "Tests that don't use gradcheck don't need to run on slow_gradcheck CI")

# Absolute tolerances by dtype that older tests pass as ``prec``; new tests should use
# assertEqual's own tolerances.
dtype2prec_DONTUSE: dict[torch.dtype, float] = {
    torch.float: 1e-5,
    torch.double: 1e-5,
    torch.half: 1e-2,
    torch.bfloat16: 1e-1,
}


def _with_test_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with check_batched_grad and fast_mode on where not given (or given None)."""
    chosen = dict(kwargs)
    defaults = {"check_batched_grad": True, "fast_mode": not TEST_WITH_SLOW_GRADCHECK}
    for key, value in defaults.items():
        if chosen.get(key) is None:
            chosen[key] = value
    return chosen


def gradcheck(fn: Callable[..., Any], inputs: Any, **kwargs: Any) -> bool:
    """``torch.autograd.gradcheck`` with the test defaults (batched gradients, fast mode)."""
    return torch.autograd.gradcheck(fn, inputs, **_with_test_defaults(kwargs))


def gradgradcheck(fn: Callable[..., Any], inputs: Any,
                  grad_outputs: Sequence[torch.Tensor] | torch.Tensor | None = None,
                  **kwargs: Any) -> bool:
    """``torch.autograd.gradgradcheck`` with the test defaults (batched gradients, fast mode)."""
    return torch.autograd.gradgradcheck(fn, inputs, grad_outputs, **_with_test_defaults(kwargs))


def _assertGradAndGradgradChecks(test_case: Any, apply_fn: Callable[..., Any], inputs: Any,
                                 **kwargs: Any) -> None:
    """Assert, on ``test_case``, that ``apply_fn`` passes :func:`gradcheck` and then
    :func:`gradgradcheck` at ``inputs`` (two asserts, so a failure says which)."""
    test_case.assertTrue(gradcheck(apply_fn, inputs, **kwargs))
    test_case.assertTrue(gradgradcheck(apply_fn, inputs, **kwargs))
