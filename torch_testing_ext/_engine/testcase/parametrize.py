"""Parametrized tests for unittest: ``@parametrize`` plus ``instantiate_parametrized_tests``.

Example::

    @instantiate_parametrized_tests
    class TestOps(TestCase):
        @parametrize("n", [1, 2])
        @parametrize("dtype", [torch.float32, torch.float64])
        def test_sum(self, n, dtype): ...

        @parametrize("x", [subtest(0, name="zero", decorators=[unittest.expectedFailure]), 1])
        @decorateIf(unittest.skip("not for 1"), lambda params: params["x"] == 1)
        def test_div(self, x): ...

gives one method per combination; a ``subtest`` value names its case and decorates it;
``decorateIf`` decorates the cases whose parameters satisfy its predicate.
``instantiate_device_type_tests`` expands the same decorators with :func:`variants` and
:func:`add_test`.

Test ids are upstream's, character for character (disabled-test lists, ``-k`` selections and
times files carry them over; ``test/harness/testcase/test_upstream_ids.py`` compares them):

- a case is named by its ``subtest`` name if it has a non-empty one, else by ``name_fn(*values)``,
  else by its values, each named by :func:`value_name`, joined by ``_``; nothing is made
  identifier-safe (``test_x_cuda:1`` and ``test_x_s_a b`` are upstream's ids too);
- stacked ``@parametrize``s name a combination top decorator first, leaving out empty names:
  ``test_sum_n_1_float32`` above;
- ``instantiate_parametrized_tests`` names a test ``<function name>_<case name>``, also when the
  case name is empty (``decorateIf`` alone: ``test_x_``).

Refusals are upstream's too: where the installed torch's own harness refuses a generated name
that contains ``"."`` (from a ``name_fn`` or a ``subtest`` name such as ``2.5`` or
``torch.float32``; torch 2.14.1 and 2.15.0 do, ``unittest`` cannot load such a test by name), it
is a ``RuntimeError`` naming the test here too; where torch keeps it (2.13.0), it is kept.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import torch

from .._torch_private import harness_refuses_dotted_test_names

__all__ = ["parametrize", "instantiate_parametrized_tests", "subtest", "decorateIf", "Variant",
           "variants", "variants_of", "parametrize_layers", "add_test", "GENERIC_QUALNAME_ATTR", "value_name",
           "dtype_name", "validate_test_name", "REFUSES_DOTTED_NAMES"]

__unittest = True

_T = TypeVar("_T", bound=type)
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
_PARAMS_ATTR = "__tte_parametrize__"
_DECORATE_IF_ATTR = "__tte_decorate_if__"
GENERIC_QUALNAME_ATTR = "__tte_generic_qualname__"


#: Whether generated test names containing ``"."`` are refused: as the installed torch's own
#: harness does (read from its source, not from its version number).
REFUSES_DOTTED_NAMES: bool = harness_refuses_dotted_test_names()


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


def dtype_name(dtype: Any) -> str:
    """A dtype as test names show it: ``torch.float32`` -> ``float32``."""
    return str(dtype).partition(".")[2]


# Records of ops and modules (torch's OpInfo/ModuleInfo, or ones like them) name themselves.
_SELF_NAMING_TYPES = frozenset({"OpInfo", "ModuleInfo"})


def value_name(position: int, arg_name: str, value: Any) -> str:
    """How upstream names ``value`` of parameter ``arg_name`` in the case at ``position``.

    A dtype by its short name (``float32``), a device by ``str`` (``cuda:1``), an op or module
    record by its ``formatted_name``, an ``int``/``float``/``str`` (bools, int and str enums,
    subclasses) as ``<arg_name>_<str(value) with "." as "_">`` (``x_0_5``), and anything else
    (``None``, tuples, functions, classes, plain enums) by position: ``<arg_name><position>``.
    """
    if isinstance(value, torch.dtype):
        return dtype_name(value)
    if isinstance(value, torch.device):
        return str(value)
    if type(value).__name__ in _SELF_NAMING_TYPES:
        return str(value.formatted_name)
    if isinstance(value, (int, float, str)):
        return f"{arg_name}_{str(value).replace('.', '_')}"
    return f"{arg_name}{position}"


def _join_names(parts: Iterable[str]) -> str:
    return "_".join(part for part in parts if part != "")


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
        for position, value in enumerate(values):
            explicit = value if isinstance(value, subtest) else None
            value = explicit.arg_values if explicit else value
            args = tuple(value) if len(names) > 1 else (value,)
            if len(args) != len(names):
                raise ValueError(f"parametrize({arg_str!r}): {value!r} does not give {len(names)} values")
            if explicit and explicit.name:
                suffix = str(explicit.name)
            elif name_fn is not None:
                suffix = str(name_fn(*args))
            else:
                suffix = "_".join(value_name(position, n, a) for n, a in zip(names, args, strict=True))
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


def parametrize_layers(fn: Callable[..., Any]) -> list[list[Variant]]:
    """The cases of each ``@parametrize`` on ``fn``, top decorator first."""
    return list(getattr(fn, _PARAMS_ATTR, []))


def variants(fn: Callable[..., Any]) -> list[Variant]:
    """Every combination of ``fn``'s ``@parametrize`` values (one empty variant if none), named
    top decorator first."""
    return variants_of(getattr(fn, _PARAMS_ATTR, []), fn.__name__)


def variants_of(layers: Sequence[Sequence[Variant]], test_name: str) -> list[Variant]:
    """:func:`variants` of the ``@parametrize`` layers ``layers`` (top first) of test
    ``test_name``."""
    combos = []
    for combo in itertools.product(*layers):
        kwargs: dict[str, Any] = {}
        for part in combo:
            twice = kwargs.keys() & part.kwargs.keys()
            if twice:
                raise RuntimeError(f"{test_name}: parameters {sorted(twice)} are parametrized by more than "
                                   "one @parametrize")
            kwargs.update(part.kwargs)
        combos.append(Variant(_join_names(part.suffix for part in combo), kwargs,
                              tuple(d for part in combo for d in part.decorators)))
    return combos


def _conditional_decorators(fn: Callable[..., Any], params: dict[str, Any]) -> list[Decorator]:
    """The ``decorateIf`` decorators of ``fn`` whose predicate holds for ``params``."""
    return [decorator for decorator, holds in getattr(fn, _DECORATE_IF_ATTR, []) if holds(params)]


def _strip_markers(fn: Callable[..., Any]) -> None:
    """Forget the markers of this module on ``fn`` (once its tests are generated)."""
    for attr in (_PARAMS_ATTR, _DECORATE_IF_ATTR):
        fn.__dict__.pop(attr, None)


def validate_test_name(name: str) -> None:
    """Raise ``RuntimeError`` if the generated test name ``name`` contains ``"."``, which
    ``unittest`` would split when the test is named on the command line (``-k`` and the
    driver's reruns would not find it)."""
    if "." in name:
        raise RuntimeError(
            f'generated test name "{name}" contains ".", so unittest cannot load it by name '
            '(it splits names on "."); give the case a name without one: dtype_name(dtype) '
            'for a dtype, str(value).replace(".", "_") for a number')


def add_test(cls: type, name: str, body: Callable[..., Any], kwargs: dict[str, Any],
             decorators: Iterable[Decorator] = (),
             around: Callable[[Any, Callable[..., Any], dict[str, Any]], Any] | None = None) -> None:
    """Add test method ``name`` to ``cls``: ``body`` called with ``kwargs``, decorated by
    ``decorators`` and by those of its ``decorateIf``s whose predicate holds for ``kwargs``;
    ``around(test, decorated body, kwargs)``, if given, makes the call.
    A name with ``"."`` is refused where the installed torch refuses it
    (:data:`REFUSES_DOTTED_NAMES`)."""
    if REFUSES_DOTTED_NAMES:
        validate_test_name(name)
    if hasattr(cls, name):
        raise RuntimeError(f"parametrized test {cls.__name__}.{name} already exists")
    decorators = [*decorators, *_conditional_decorators(body, kwargs)]
    if decorators:
        body = _fresh_copy(body)  # decorators that mark their function must mark this test only
    for decorator in decorators:
        body = decorator(body)

    @functools.wraps(body)
    def test(self: Any) -> Any:
        if around is not None:
            return around(self, body, kwargs)
        return body(self, **kwargs)

    # Hide the parametrized signature from tools that unwrap (pytest would ask for fixtures
    # named after the parameters).
    del test.__wrapped__
    _strip_markers(test)
    # The generic test's name, as upstream's instantiated tests keep it (they are its wraps):
    # a sample input iterator seeds from it (see tracked_inputs.TrackedInputIter).
    test.__dict__.setdefault(GENERIC_QUALNAME_ATTR, body.__qualname__)
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
    combination, named ``<function name>_<combination name>``."""
    for name, fn in list(vars(cls).items()):
        if not _is_marked(fn):
            continue
        delattr(cls, name)
        for variant in variants(fn):
            add_test(cls, f"{fn.__name__}_{variant.suffix}", fn, variant.kwargs, variant.decorators)
    return cls
