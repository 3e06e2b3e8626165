"""Parametrized tests for unittest: ``@parametrize`` plus ``instantiate_parametrized_tests``.

Example::

    @instantiate_parametrized_tests
    class TestOps(TestCase):
        @parametrize("n", [1, 2])
        @parametrize("dtype", [torch.float32, torch.float64], name_fn=str)
        def test_sum(self, n, dtype): ...

gives one method per combination, named like ``test_sum_n_1_float32`` (made identifier-safe).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["parametrize", "instantiate_parametrized_tests"]

_T = TypeVar("_T", bound=type)
_PARAMS_ATTR = "__tte_parametrize__"


def _safe_name(value: Any) -> str:
    text = value.__name__ if hasattr(value, "__name__") else str(value)
    text = text.removeprefix("torch.")  # torch.float32 -> float32, as upstream names dtypes
    return re.sub(r"\W+", "_", text).strip("_") or "value"


def parametrize(
    arg_str: str, arg_values: Iterable[Any], name_fn: Callable[..., str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Run the decorated test once per value of ``arg_values`` (``"a,b"`` takes tuples)."""
    names = [name.strip() for name in arg_str.split(",") if name.strip()]
    if not names:
        raise ValueError("parametrize needs at least one argument name")
    values = list(arg_values)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        cases = []
        for value in values:
            args = tuple(value) if len(names) > 1 else (value,)
            if len(args) != len(names):
                raise ValueError(f"parametrize({arg_str!r}): {value!r} does not give {len(names)} values")
            if name_fn is not None:
                suffix = _safe_name(name_fn(*args))
            else:
                suffix = "_".join(f"{n}_{_safe_name(a)}" for n, a in zip(names, args))
            cases.append((suffix, dict(zip(names, args))))
        layers = getattr(fn, _PARAMS_ATTR, [])
        setattr(fn, _PARAMS_ATTR, [cases, *layers])
        return fn

    return decorate


def _bind(body: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
    """A test method that calls ``body`` with ``kwargs``."""

    @functools.wraps(body)
    def test(self: Any) -> Any:
        return body(self, **kwargs)

    # Hide the parametrized signature from tools that unwrap (pytest would ask for fixtures
    # named after the parameters).
    del test.__wrapped__
    return test


def instantiate_parametrized_tests(cls: _T) -> _T:
    """Replace each ``@parametrize``d method of ``cls`` by one method per combination."""
    for name, fn in list(vars(cls).items()):
        layers = getattr(fn, _PARAMS_ATTR, None)
        if not layers:
            continue
        delattr(cls, name)
        for combo in itertools.product(*layers):
            suffix = "_".join(part for part, _ in combo)
            kwargs: dict[str, Any] = {}
            for _, params in combo:
                kwargs.update(params)
            test_name = f"{name}_{suffix}"
            if hasattr(cls, test_name):
                raise RuntimeError(f"parametrized test {cls.__name__}.{test_name} already exists")
            method = _bind(fn, kwargs)
            method.__dict__.pop(_PARAMS_ATTR, None)
            method.__name__ = test_name
            method.__qualname__ = f"{cls.__qualname__}.{test_name}"
            setattr(cls, test_name, method)
    return cls
