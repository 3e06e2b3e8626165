"""Tensor-aware equality used by ``TestCase.assertEqual``.

Tensors are compared with :func:`torch.testing.assert_close` semantics; numbers with a
tolerance; sequences and mappings element by element, so a mismatch deep inside a nested
structure is reported with its path (``[1]['bias']``). A tensor may be compared with a number
(if it has one element) or with a (nested) list; then only values are compared, not dtypes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = ["assert_equal"]

__unittest = True

# Tolerances for plain Python floats: those assert_close uses for float64.
_FLOAT_RTOL = 1e-7
_FLOAT_ATOL = 1e-7

# assert_close's documented default (rtol, atol) by dtype (0, 0 for the others): the base a
# floor raises.
_DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, torch.Tensor)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, torch.Size))


def _as_tensor(value: Any, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    try:
        import numpy

        if isinstance(value, numpy.ndarray):
            return torch.from_numpy(value)
    except ImportError:
        pass
    return torch.as_tensor(value, dtype=None, device=like.device)


def _fail(path: str, detail: str) -> None:
    where = f"Mismatch at {path}: " if path else ""
    raise AssertionError(f"{where}{detail}")


def _compare_tensors(
    actual: Any, expected: Any, path: str, rtol: float | None, atol: float | None,
    exact_dtype: bool, exact_device: bool, floors: tuple[float, float] = (0.0, 0.0),
) -> None:
    anchor = actual if isinstance(actual, torch.Tensor) else expected
    both_tensors = isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor)
    actual_t = _as_tensor(actual, anchor)
    expected_t = _as_tensor(expected, anchor)
    if not both_tensors:
        # A tensor against a plain value compares values only.
        exact_dtype = False
        if actual_t.numel() == 1 and expected_t.numel() == 1:
            actual_t, expected_t = actual_t.reshape(()), expected_t.reshape(())
    if not exact_device and actual_t.device != expected_t.device:
        expected_t = expected_t.to(actual_t.device)
    if not exact_dtype and actual_t.dtype != expected_t.dtype:
        common = torch.promote_types(actual_t.dtype, expected_t.dtype)
        actual_t, expected_t = actual_t.to(common), expected_t.to(common)
    if floors != (0.0, 0.0):
        default_rtol, default_atol = _DEFAULT_TOLERANCES.get(actual_t.dtype, (0.0, 0.0))
        rtol = max(default_rtol if rtol is None else rtol, floors[1])
        atol = max(default_atol if atol is None else atol, floors[0])
    try:
        torch.testing.assert_close(
            actual_t, expected_t, rtol=rtol, atol=atol, equal_nan=True,
            check_dtype=exact_dtype, check_device=exact_device, check_layout=True,
        )
    except AssertionError as error:
        _fail(path, str(error))


def _compare_numbers(
    actual: Any, expected: Any, path: str, rtol: float | None, atol: float | None,
    floors: tuple[float, float] = (0.0, 0.0),
) -> None:
    if isinstance(actual, bool) or isinstance(expected, bool) or (
        isinstance(actual, int) and isinstance(expected, int)
    ):
        if actual != expected:
            _fail(path, f"{actual!r} != {expected!r}")
        return
    rtol = max(_FLOAT_RTOL if rtol is None else rtol, floors[1])
    atol = max(_FLOAT_ATOL if atol is None else atol, floors[0])
    for a, e in ((complex(actual).real, complex(expected).real),
                 (complex(actual).imag, complex(expected).imag)):
        if math.isnan(a) and math.isnan(e):
            continue
        if not (a == e or abs(a - e) <= atol + rtol * abs(e)):
            _fail(path, f"{actual!r} != {expected!r} (difference {abs(a - e)!r}, "
                        f"allowed atol={atol}, rtol={rtol})")


def assert_equal(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    exact_dtype: bool = True,
    exact_device: bool = False,
    path: str = "",
    floors: tuple[float, float] = (0.0, 0.0),
) -> None:
    """Raise AssertionError, naming where, unless ``actual`` equals ``expected``. ``floors``:
    the least ``(atol, rtol)`` any comparison of floating values uses (a test's
    ``precisionOverride``/``toleranceOverride``), above the given or default tolerances."""
    if (rtol is None) != (atol is None):
        raise ValueError("rtol and atol must both be given or both be omitted")
    if actual is None or expected is None:
        if actual is not expected:
            _fail(path, f"{actual!r} is not {expected!r}")
    elif isinstance(actual, torch.Tensor) or isinstance(expected, torch.Tensor):
        _compare_tensors(actual, expected, path, rtol, atol, exact_dtype, exact_device, floors)
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, path, rtol, atol, floors)
    elif isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(path, f"keys differ: {sorted(map(repr, actual))} != {sorted(map(repr, expected))}")
        for key in expected:
            assert_equal(actual[key], expected[key], rtol=rtol, atol=atol, exact_dtype=exact_dtype,
                         exact_device=exact_device, floors=floors, path=f"{path}[{key!r}]")
    elif isinstance(actual, torch.Size) or isinstance(expected, torch.Size):
        # A shape equals any sequence of the same sizes (a list too), as upstream's assertEqual
        # has it; a mismatch shows both shapes whole.
        if not (isinstance(actual, Sequence) and isinstance(expected, Sequence)
                and not isinstance(actual, (str, bytes)) and not isinstance(expected, (str, bytes))
                and tuple(actual) == tuple(expected)):
            _fail(path, f"{actual!r} != {expected!r}")
    elif _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            shown = f": {actual!r} != {expected!r}" if len(repr(actual)) + len(repr(expected)) < 2000 else ""
            _fail(path, f"lengths differ: {len(actual)} != {len(expected)}{shown}")
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_equal(a, e, rtol=rtol, atol=atol, exact_dtype=exact_dtype,
                         exact_device=exact_device, floors=floors, path=f"{path}[{index}]")
    elif type(actual).__module__ == "numpy" or type(expected).__module__ == "numpy":
        anchor = torch.empty(0)
        assert_equal(_as_tensor(actual, anchor), _as_tensor(expected, anchor), rtol=rtol,
                     atol=atol, exact_dtype=exact_dtype, exact_device=exact_device, floors=floors, path=path)
    elif actual != expected:
        _fail(path, f"{actual!r} != {expected!r}")
