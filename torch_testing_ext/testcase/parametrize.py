"""Parametrized tests for unittest: ``@parametrize`` plus ``instantiate_parametrized_tests``.

Example::

    @instantiate_parametrized_tests
    class TestOps(TestCase):
        @parametrize("n", [1, 2])
        @parametrize("dtype", [torch.float32, torch.float64], name_fn=str)
        def test_sum(self, n, dtype): ...

        @parametrize("x", [subtest(0, name="zero", decorators=[unittest.expectedFailure]), 1])
        @decorateIf(unittest.skip("not for 1"), lambda params: params["x"] == 1)
        def test_div(self, x): ...

gives one method per combination, named like ``test_sum_n_1_float32`` (made identifier-safe);
a ``subtest`` value names its case and decorates it; ``decorateIf`` decorates the cases whose
parameters satisfy its predicate. ``instantiate_device_type_tests`` expands the same
decorators with :func:`variants` and :func:`add_test`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["parametrize", "instantiate_parametrized_tests", "subtest", "decorateIf", "Variant",
           "variants", "add_test"]

__unittest = True

_T = TypeVar("_T", bound=type)
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
_PARAMS_ATTR = "__tte_parametrize__"
_DECORATE_IF_ATTR = "__tte_decorate_if__"


class subtest:
    """One value of ``@parametrize`` with its own test name and decorators."""

    __slots__ = ("arg_values", "name", "decorators")

    def __init__(self, arg_values: Any, name: str | None = None,
                 decorators: Sequence[Decorator] | None = None) -> None:
        self.arg_values = arg_values
        self.name = name
        self.decorators = list(decorators or [])


@dataclasses.dataclass(frozen=True)
class Variant:
    """One generated test: its name suffix, its keyword arguments and its decorators."""

    suffix: str
    kwargs: dict[str, Any]
    decorators: tuple[Decorator, ...] = ()


def _safe_name(value: Any) -> str:
    text = value.__name__ if hasattr(value, "__name__") else str(value)
    text = text.removeprefix("torch.")  # torch.float32 -> float32, as upstream names dtypes
    return re.sub(r"\W+", "_", text).strip("_") or "value"


def parametrize(
    arg_str: str, arg_values: Iterable[Any], name_fn: Callable[..., str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Run the decorated test once per value of ``arg_values`` (``"a,b"`` takes tuples).

    A value wrapped in :class:`subtest` may name its case and bring decorators for it.
    """
    names = [name.strip() for name in arg_str.split(",") if name.strip()]
    if not names:
        raise ValueError("parametrize needs at least one argument name")
    values = list(arg_values)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        cases = []
        for value in values:
            explicit = value if isinstance(value, subtest) else None
            value = explicit.arg_values if explicit else value
            args = tuple(value) if len(names) > 1 else (value,)
            if len(args) != len(names):
                raise ValueError(f"parametrize({arg_str!r}): {value!r} does not give {len(names)} values")
            if explicit and explicit.name:
                suffix = _safe_name(explicit.name)
            elif name_fn is not None:
                suffix = _safe_name(name_fn(*args))
            else:
                suffix = "_".join(f"{n}_{_safe_name(a)}" for n, a in zip(names, args, strict=True))
            cases.append(Variant(suffix, dict(zip(names, args, strict=True)),
                                 tuple(explicit.decorators) if explicit else ()))
        layers = getattr(fn, _PARAMS_ATTR, [])
        setattr(fn, _PARAMS_ATTR, [cases, *layers])
        return fn

    return decorate


def decorateIf(
    decorator: Decorator, predicate_fn: Callable[[dict[str, Any]], bool]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Apply ``decorator`` to each generated test whose parameters satisfy ``predicate_fn``.

    ``predicate_fn`` receives the test's keyword arguments (with ``device`` and ``dtype``
    under ``instantiate_device_type_tests``).
    """

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, _DECORATE_IF_ATTR, [*getattr(fn, _DECORATE_IF_ATTR, []), (decorator, predicate_fn)])
        return fn

    return mark


def variants(fn: Callable[..., Any]) -> list[Variant]:
    """Every combination of ``fn``'s ``@parametrize`` values (one empty variant if none)."""
    combos = []
    for combo in itertools.product(*getattr(fn, _PARAMS_ATTR, [])):
        kwargs: dict[str, Any] = {}
        for part in combo:
            kwargs.update(part.kwargs)
        combos.append(Variant("_".join(part.suffix for part in combo), kwargs,
                              tuple(d for part in combo for d in part.decorators)))
    return combos


def _conditional_decorators(fn: Callable[..., Any], params: dict[str, Any]) -> list[Decorator]:
    """The ``decorateIf`` decorators of ``fn`` whose predicate holds for ``params``."""
    return [decorator for decorator, holds in getattr(fn, _DECORATE_IF_ATTR, []) if holds(params)]


def _strip_markers(fn: Callable[..., Any]) -> None:
    """Forget the markers of this module on ``fn`` (once its tests are generated)."""
    for attr in (_PARAMS_ATTR, _DECORATE_IF_ATTR):
        fn.__dict__.pop(attr, None)


def add_test(cls: type, name: str, body: Callable[..., Any], kwargs: dict[str, Any],
             decorators: Iterable[Decorator] = ()) -> None:
    """Add test method ``name`` to ``cls``: ``body`` called with ``kwargs``, decorated by
    ``decorators`` and by those of its ``decorateIf``s whose predicate holds for ``kwargs``."""
    if hasattr(cls, name):
        raise RuntimeError(f"parametrized test {cls.__name__}.{name} already exists")
    decorators = [*decorators, *_conditional_decorators(body, kwargs)]
    if decorators:
        body = _fresh_copy(body)  # decorators that mark their function must mark this test only
    for decorator in decorators:
        body = decorator(body)

    @functools.wraps(body)
    def test(self: Any) -> Any:
        return body(self, **kwargs)

    # Hide the parametrized signature from tools that unwrap (pytest would ask for fixtures
    # named after the parameters).
    del test.__wrapped__
    _strip_markers(test)
    test.__name__ = name
    test.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, test)


def _fresh_copy(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def copy(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return copy


def _is_marked(fn: Any) -> bool:
    return bool(getattr(fn, _PARAMS_ATTR, None) or getattr(fn, _DECORATE_IF_ATTR, None))


def instantiate_parametrized_tests(cls: _T) -> _T:
    """Replace each ``@parametrize``d (or ``decorateIf``) method of ``cls`` by one method per
    combination."""
    for name, fn in list(vars(cls).items()):
        if not _is_marked(fn):
            continue
        delattr(cls, name)
        for variant in variants(fn):
            test_name = f"{name}_{variant.suffix}" if variant.suffix else name
            add_test(cls, test_name, fn, variant.kwargs, variant.decorators)
    return cls
