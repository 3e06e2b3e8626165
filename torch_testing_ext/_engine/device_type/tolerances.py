"""Per-dtype tolerances a device-type test declares: ``precisionOverride`` and
``toleranceOverride`` (with ``tol``), as OpInfos' ``DecorateInfo``s give them to tests.

Each decorator records its table on the test function (``precision_overrides``,
``tolerance_overrides``); :func:`tolerances_for` reads the pair ``(atol, rtol)`` a test runs with
for a dtype, a ``toleranceOverride`` winning over a ``precisionOverride``.

Example::

    @toleranceOverride({torch.float16: tol(atol=1e-2, rtol=1e-3)})
    @dtypes(torch.float16, torch.float32)
    def test_x(self, device, dtype): ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import torch

__all__ = ["tol", "precisionOverride", "toleranceOverride", "tolerances_for"]

_F = TypeVar("_F", bound=Callable[..., Any])


class tol(NamedTuple):
    """An absolute and a relative tolerance."""

    atol: float
    rtol: float


class precisionOverride:
    """Give the decorated test an absolute tolerance per dtype: ``{torch.half: 1e-2}``."""

    def __init__(self, d: dict[torch.dtype, float]) -> None:
        if not isinstance(d, dict):
            raise AssertionError("precisionOverride takes a dict of dtype: precision")
        unknown = [key for key in d if not isinstance(key, torch.dtype)]
        if unknown:
            raise AssertionError(f"precisionOverride given keys that are not dtypes: {unknown!r}")
        self.d = d

    def __call__(self, fn: _F) -> _F:
        fn.precision_overrides = self.d  # type: ignore[attr-defined]
        return fn


class toleranceOverride:
    """Give the decorated test a :class:`tol` per dtype: ``{torch.half: tol(1e-2, 1e-3)}``."""

    def __init__(self, d: dict[torch.dtype, tol]) -> None:
        if not isinstance(d, dict):
            raise AssertionError("toleranceOverride takes a dict of dtype: tol")
        for key, value in d.items():
            if not isinstance(key, torch.dtype):
                raise AssertionError(f"toleranceOverride given a key that is not a dtype: {key!r}")
            if not isinstance(value, tol):
                raise AssertionError(f"toleranceOverride given {value!r} for {key}; it takes tol(atol, rtol)")
        self.d = d

    def __call__(self, fn: _F) -> _F:
        fn.tolerance_overrides = self.d  # type: ignore[attr-defined]
        return fn


def tolerances_for(test: Callable[..., Any], dtype: Any, atol: float, rtol: float) -> tol:
    """The ``(atol, rtol)`` ``test`` runs with for ``dtype`` (a dtype, or a tuple of them: then
    no override applies, as upstream), starting from ``atol`` and ``rtol``."""
    precisions = getattr(test, "precision_overrides", {})
    atol = precisions.get(dtype, atol) if isinstance(dtype, torch.dtype) else atol
    tolerances = getattr(test, "tolerance_overrides", {})
    found = tolerances.get(dtype) if isinstance(dtype, torch.dtype) else None
    return found if found is not None else tol(atol, rtol)
