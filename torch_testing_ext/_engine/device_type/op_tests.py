"""``ops``: run a device-type test once per OpInfo and per dtype the op supports there.

Example::

    class TestAdd(TestCase):
        @ops([op for op in op_db if op.name == "add"], allowed_dtypes=(torch.float32,))
        def test_x(self, device, dtype, op): ...

    instantiate_device_type_tests(TestAdd, globals(), only_for="cpu")

defines ``TestAddCPU.test_x_add_cpu_float32``. The OpInfos come from
``common_methods_invocations.op_db`` (the installed torch's, loaded on this harness); any
object with the OpInfo methods used here works.

As upstream (ids and decorators are upstream's, ``test/harness/testcase/test_upstream_ids.py``
compares them):

- the test is named ``<test>_<op.formatted_name>_<device type>_<dtype>`` (``formatted_name``:
  the op's name and variant with ``.`` as ``_``); a ``@parametrize`` above or below ``ops`` puts
  its name part above or below the op's part; the test gets ``op`` and ``dtype`` (no ``dtype``
  for ``OpDTypes.none``);
- the dtypes: those the op supports on the device type (``dtypes=OpDTypes.supported``, the
  default), the other choices of ``OpDTypes``, or a given list; kept to ``allowed_dtypes``;
- each test is decorated by the op's decorators and skips (``DecorateInfo``) that are active for
  the generic class's name, the test's name, the device type and the dtype;
- a failure names the sample input the test was on when ``TrackedInputIter`` tracked one.
"""

from __future__ import annotations

import enum
import functools
import unittest
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

import torch

from ..testcase.parametrize import parametrize_layers
from ..testcase.tracked_inputs import clear_tracked_input, get_tracked_input

__all__ = ["ops", "OpDTypes", "OpCase", "op_cases", "ops_position", "ANY_DTYPE_ORDER", "ALL_DTYPES"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])
OPS_ATTR = "__tte_ops__"

# The order in which ``OpDTypes.any_one`` picks a dtype.
ANY_DTYPE_ORDER: tuple[torch.dtype, ...] = (
    torch.float32, torch.float64, torch.complex64, torch.complex128, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
    torch.float8_e4m3fn, torch.float8_e5m2,
)

# The dtypes ``OpDTypes.unsupported`` and ``unsupported_backward`` choose among.
ALL_DTYPES: frozenset[torch.dtype] = frozenset({
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32, torch.float64,
    torch.float16, torch.bfloat16, torch.bool, torch.complex64, torch.complex128,
})


class OpDTypes(enum.Enum):
    """Which dtypes ``ops`` makes tests for, from each OpInfo's dtypes on the device type."""

    supported = 0  # every dtype the op supports (the default)
    unsupported = 1  # every dtype it does not
    supported_backward = 2  # every dtype its backward supports
    unsupported_backward = 3  # every dtype its backward does not
    any_one = 4  # one supported dtype, forward and backward if there is one (ANY_DTYPE_ORDER)
    none = 5  # one test, without a dtype argument
    any_common_cpu_cuda_one = 6  # one dtype supported on both the CPU and CUDA


class ops:
    """Run the decorated device-type test once per OpInfo of ``op_list`` and per dtype.

    ``dtypes``: an ``OpDTypes`` choice (default: ``supported``) or a sequence of dtypes;
    ``allowed_dtypes``: keep only these. ``skip_if_dynamo`` is kept as given (this package
    runs no test under Dynamo)."""

    def __init__(self, op_list: Iterable[Any], *, dtypes: OpDTypes | Sequence[torch.dtype] = OpDTypes.supported,
                 allowed_dtypes: Iterable[torch.dtype] | None = None, skip_if_dynamo: bool = True) -> None:
        self.op_list = list(op_list)
        self.opinfo_dtypes = dtypes
        self.allowed_dtypes = None if allowed_dtypes is None else set(allowed_dtypes)
        self.skip_if_dynamo = skip_if_dynamo

    def __call__(self, fn: _F) -> _F:
        if hasattr(fn, OPS_ATTR):
            raise TypeError(f"{fn.__name__}: @ops is given twice")
        # The @parametrize layers already on fn are below this decorator: their name parts
        # follow the op's.
        setattr(fn, OPS_ATTR, (self, len(parametrize_layers(fn))))
        return fn

    def dtypes_for(self, op: Any, device_type: str) -> set[Any]:
        """The dtypes of ``op``'s tests on ``device_type`` (``{None}``: one test, no dtype)."""
        choice = OpDTypes.supported if self.opinfo_dtypes is None else self.opinfo_dtypes
        chosen: set[Any]
        if isinstance(choice, Sequence):
            chosen = set(choice)
        else:
            kind = choice.name if isinstance(choice, OpDTypes) else None
            if kind == "supported":
                chosen = set(op.supported_dtypes(device_type))
            elif kind == "unsupported":
                chosen = set(ALL_DTYPES) - set(op.supported_dtypes(device_type))
            elif kind == "supported_backward":
                chosen = set(op.supported_backward_dtypes(device_type))
            elif kind == "unsupported_backward":
                chosen = set(ALL_DTYPES) - set(op.supported_backward_dtypes(device_type))
            elif kind == "any_one":
                supported = set(op.supported_dtypes(device_type))
                both = supported & set(op.supported_backward_dtypes(device_type))
                chosen = _first_in_order(both or supported)
            elif kind == "any_common_cpu_cuda_one":
                chosen = _first_in_order(set(op.dtypes) & set(op.dtypesIfCUDA))
            elif kind == "none":
                chosen = {None}
            else:
                raise RuntimeError(f"ops: unknown OpDTypes choice {choice!r}")
        if self.allowed_dtypes is not None:
            chosen &= self.allowed_dtypes
        return chosen


def _first_in_order(dtypes: set[torch.dtype]) -> set[Any]:
    """The first of ``dtypes`` in :data:`ANY_DTYPE_ORDER`, as a set (empty if none is)."""
    return next(({dtype} for dtype in ANY_DTYPE_ORDER if dtype in dtypes), set())


class OpCase(NamedTuple):
    """One test ``ops`` makes: its name part, its arguments, its decorators, the body."""

    name: str
    kwargs: dict[str, Any]
    decorators: tuple[Callable[[Callable[..., Any]], Callable[..., Any]], ...]
    body: Callable[..., Any]


def _reporting_tracked_input(test: Callable[..., Any]) -> Callable[..., Any]:
    """``test``, whose failure also names the sample input it was on (when one was tracked)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return test(*args, **kwargs)
        except unittest.SkipTest:
            raise
        except Exception as error:
            tracked = get_tracked_input()
            if tracked is not None and hasattr(error, "add_note"):
                error.add_note(f"Caused by {tracked.type_desc} at index {tracked.index}: {tracked.val!r}")
            raise
        finally:
            clear_tracked_input()

    return run


def op_cases(fn: Callable[..., Any], generic_name: str, device_type: str,
             device_kwargs: dict[str, Any]) -> Iterator[OpCase]:
    """The tests ``@ops`` makes of ``fn`` in the class made from ``generic_name`` for
    ``device_type`` (``device_kwargs``: the ``device`` the tests get, if any), in ``op_list``
    order."""
    decorator: ops = getattr(fn, OPS_ATTR)[0]
    if not decorator.op_list:
        raise ValueError(f"{fn.__name__}: @ops was given an empty op list (a generator used twice?)")
    fn.tracked_input = None  # type: ignore[attr-defined]  # TrackedInputIter records the sample here
    for op in decorator.op_list:
        for dtype in decorator.dtypes_for(op, device_type):
            kwargs: dict[str, Any] = {"op": op} if dtype is None else {"op": op, "dtype": dtype}
            decorators = tuple(op.get_decorators(generic_name, fn.__name__, device_type, dtype,
                                                 {**kwargs, **device_kwargs}))
            yield OpCase(op.formatted_name, kwargs, decorators, _reporting_tracked_input(fn))


def ops_position(fn: Callable[..., Any]) -> int | None:
    """How many ``@parametrize`` layers of ``fn`` are below its ``@ops`` (None: no ``@ops``)."""
    marker = getattr(fn, OPS_ATTR, None)
    return None if marker is None else int(marker[1])
