"""Whether two recorded values agree, and by how much they differ.

:func:`difference` compares two values as ``compare`` recorded them (after DTensors were put
together): the same structure, then leaf by leaf: tensors with
``torch.testing.assert_close`` (its defaults for the dtype unless ``rtol``/``atol`` are given;
NaN agrees with NaN), numbers likewise (``bool`` and ``int`` exactly), strings and ``None`` by
equality. It returns whether they agree, the largest absolute difference (None when the two
cannot be set against each other: another shape, dtype or structure) and, when they do not
agree, what ``assert_close`` said, prefixed by where in the value. :func:`show` prints a value
briefly.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch

from .values import leaves, path_text

__all__ = ["Difference", "difference", "show", "DEFAULT_TOLERANCES"]


@dataclasses.dataclass(frozen=True)
class Difference:
    """How two values compare: ``agree``; ``largest``, the largest absolute difference of
    their numbers (None: they cannot be set against each other); ``message``, why they do not
    agree (empty when they do)."""

    agree: bool
    largest: float | None
    message: str = ""


_NUMBERS = (bool, int, float, complex)


# ``torch.testing.assert_close``'s default tolerances (rtol, atol) by dtype, as its documentation
# gives them; a value within them agrees without the cost of a call to it (``test_worlds_verdict``
# checks the table against it).
DEFAULT_TOLERANCES = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
                      torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
                      torch.complex128: (1e-7, 1e-7)}


def _close(actual: torch.Tensor, expected: torch.Tensor, rtol: float | None, atol: float | None) -> bool:
    """Whether ``actual`` is plainly within the tolerances of ``expected`` (False: ask assert_close)."""
    tolerances = DEFAULT_TOLERANCES.get(actual.dtype) if rtol is None or atol is None else (rtol, atol)
    try:
        if torch.equal(actual, expected):
            return True
        if tolerances is None or not (actual.is_floating_point() or actual.is_complex()):
            return False
        return bool(torch.isclose(actual, expected, *tolerances, equal_nan=True).all())
    except (NotImplementedError, RuntimeError):  # a dtype the CPU cannot compare so (complex32)
        return False


def _tensor_difference(actual: torch.Tensor, expected: torch.Tensor, rtol: float | None,
                       atol: float | None, measure: bool) -> Difference:
    if actual.shape != expected.shape:
        return Difference(False, None, f"shape {tuple(actual.shape)} is not the reference's {tuple(expected.shape)}")
    if actual.dtype != expected.dtype:
        return Difference(False, None, f"dtype {actual.dtype} is not the reference's {expected.dtype}")
    if _close(actual, expected, rtol, atol):
        return Difference(True, _largest(actual, expected) if measure else 0.0)
    largest = _largest(actual, expected)
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True, check_device=False,
                                   check_layout=False, check_stride=False)
    except AssertionError as error:
        return Difference(False, largest, str(error).strip())
    return Difference(True, largest)


def _largest(actual: torch.Tensor, expected: torch.Tensor) -> float:
    if actual.numel() == 0:
        return 0.0
    if actual.dtype == torch.bool:
        return float((actual != expected).any())
    if actual.is_complex():
        gap = (actual.to(torch.complex128) - expected.to(torch.complex128)).abs()
    else:
        gap = (actual.to(torch.float64) - expected.to(torch.float64)).abs()
    both_nan = actual.isnan() & expected.isnan() if actual.is_floating_point() or actual.is_complex() else None
    if both_nan is not None:
        gap = torch.where(both_nan, torch.zeros_like(gap), gap)
    gap = torch.where(gap.isnan(), torch.full_like(gap, math.inf), gap)
    return float(gap.max())


def _number_difference(actual: Any, expected: Any, rtol: float | None, atol: float | None) -> Difference:
    if isinstance(actual, (bool, int)) and isinstance(expected, (bool, int)):
        gap = abs(int(actual) - int(expected))
        return Difference(gap == 0, float(gap), "" if gap == 0 else f"{actual!r} != {expected!r} (exactly)")
    kind = complex if isinstance(actual, complex) or isinstance(expected, complex) else float
    both_nan = kind is float and math.isnan(actual) and math.isnan(expected)
    largest = 0.0 if both_nan else abs(kind(actual) - kind(expected))
    # A Python number has float64's (complex128's) default tolerances.
    limit_rtol, limit_atol = DEFAULT_TOLERANCES[torch.float64] if rtol is None or atol is None else (rtol, atol)
    if both_nan or largest <= limit_atol + limit_rtol * abs(kind(expected)):
        return Difference(True, largest)
    try:
        torch.testing.assert_close(kind(actual), kind(expected), rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as error:
        return Difference(False, largest, str(error).strip())
    return Difference(True, largest)


def _leaf_difference(actual: Any, expected: Any, rtol: float | None, atol: float | None,
                     measure: bool) -> Difference:
    if isinstance(actual, torch.Tensor) and isinstance(expected, torch.Tensor):
        return _tensor_difference(actual, expected, rtol, atol, measure)
    if isinstance(actual, _NUMBERS) and isinstance(expected, _NUMBERS):
        return _number_difference(actual, expected, rtol, atol)
    if type(actual) is not type(expected):
        return Difference(False, None, f"a {type(actual).__name__} where the reference has a {type(expected).__name__}")
    return Difference(actual == expected, 0.0 if actual == expected else None,
                      "" if actual == expected else f"{actual!r} != {expected!r}")


def difference(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
               measure: bool = True) -> Difference:
    """How ``actual`` compares with ``expected`` (see the module docstring). Without
    ``measure``, values that agree are not measured (their ``largest`` is 0)."""
    actual_leaves = list(leaves(actual))
    expected_leaves = list(leaves(expected))
    if [path for path, _ in actual_leaves] != [path for path, _ in expected_leaves]:
        return Difference(False, None, f"its structure {_structure(actual)} is not the reference's "
                                       f"{_structure(expected)}")
    agree, message = True, ""
    largest: float | None = 0.0
    for (path, one), (_, other) in zip(actual_leaves, expected_leaves, strict=True):
        leaf = _leaf_difference(one, other, rtol, atol, measure)
        if not leaf.agree and agree:
            agree = False
            message = f"at value{path_text(path)}: {leaf.message}" if path else leaf.message
        largest = None if leaf.largest is None or largest is None else max(largest, leaf.largest)
    return Difference(agree, largest, message)


def _structure(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_structure(item) for item in value[:4]) + (", ..." if len(value) > 4 else "")
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_structure(item)}" for key, item in list(value.items())[:4]) + "}"
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)}"
    return type(value).__name__


def _number(item: Any) -> str:
    """A number as Python writes it, but a float's digits beyond the tenth."""
    text = repr(item)
    return f"{item:.10g}" if isinstance(item, float) and len(text) > 12 else text


def show(value: Any, width: int = 90) -> str:
    """``value`` in one line of about ``width`` characters: a small tensor in full, a large one
    by its shape, dtype and first values."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        if value.numel() <= 8:
            items = ", ".join(_number(item) for item in value.flatten().tolist())
            text = f"tensor({items}, {dtype})" if value.dim() == 0 else f"tensor([{items}], {dtype})" \
                if value.dim() == 1 else \
                f"tensor of shape {tuple(value.shape)}, {dtype}: [{items}]"
        else:
            first = ", ".join(_number(item) for item in value.flatten()[:4].tolist())
            text = f"tensor of shape {tuple(value.shape)}, {dtype}: [{first}, ...]"
    elif isinstance(value, (list, tuple, dict)):
        plain = not any(isinstance(leaf, torch.Tensor) for _, leaf in leaves(value))
        text = repr(value) if plain and len(repr(value)) <= width else _structure(value)
    else:
        text = _number(value) if isinstance(value, float) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
