"""A LocalTensor variant of a DTensor test class, and per-rank helpers that work in both.

::

    class TestOps(DTensorTestBase):
        @with_comms
        def test_shard(self):
            local = map_local_for_rank(self.rank, lambda r: torch.full((2,), float(r)))
            ...

    TestOpsWithLocalTensor = create_local_tensor_test_class(TestOps, skipped_tests=["test_big"])

``self.rank`` is an int on a real rank and a symbolic int (one value per simulated rank) under
LocalTensor; ``map_local_for_rank(rank, f)`` gives ``f(rank)`` on a real rank and a LocalTensor
of every rank's ``f(r)`` under LocalTensor.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import torch

from .._torch_private import local_int_values, local_tensor_api
from .local_tensor_cases import LocalDTensorTestBase

__all__ = ["create_local_tensor_test_class", "make_wrapped", "map_local_for_rank",
           "map_local_tensor_for_rank", "reduce_local_int"]

__unittest = True

_R = TypeVar("_R")


def _per_rank(func: Callable[..., _R]) -> Callable[..., _R]:
    """``func`` run once per simulated rank under LocalTensor, else as it is."""
    api = local_tensor_api()
    return api.maybe_run_for_local_tensor(func) if api else func


def map_local_tensor_for_rank(tensor: Any, rank: Any, func: Callable[[Any, int], Any]) -> Any:
    """``func(tensor, rank)``, for each simulated rank under LocalTensor."""
    return _per_rank(func)(tensor, rank)


def map_local_for_rank(rank: Any, func: Callable[[int], Any]) -> Any:
    """``func(rank)``, for each simulated rank under LocalTensor."""
    return _per_rank(func)(rank)


def reduce_local_int(val: Any, func: Callable[[dict[int, int]], _R]) -> _R:
    """``func`` of a LocalTensor symbolic int's per-rank values (``{rank: value}``)."""
    return func(local_int_values(val))


def make_wrapped(fn: Callable[[Any], _R], ctxs: Iterable[Any]) -> Callable[[Any], _R]:
    """``fn`` run inside ``ctxs`` (context managers, or callables making one from the test),
    with Dynamo reset first."""
    ctxs = list(ctxs)

    @functools.wraps(fn)
    def wrapped(self: Any) -> _R:
        torch.compiler.reset()
        with contextlib.ExitStack() as stack:
            for ctx in ctxs:
                stack.enter_context(ctx(self) if callable(ctx) else ctx)
            return fn(self)

    return wrapped


def _skipped(name: str) -> Callable[[Any], None]:
    def skipped(self: Any) -> None:
        self.skipTest(f"{name} is not run with LocalTensor (skipped_tests of "
                      "create_local_tensor_test_class)")

    skipped.__name__ = name
    return skipped


def create_local_tensor_test_class(orig_cls: type, skipped_tests: Sequence[str] | None = None,
                                   base_class: type = LocalDTensorTestBase) -> type:
    """A class named ``<orig_cls>WithLocalTensor`` running ``orig_cls``'s tests with every rank
    simulated by LocalTensor in one process (``base_class`` first in its bases); the tests named
    in ``skipped_tests`` skip (a name the class lacks is warned about)."""
    skipped = set(skipped_tests or ())
    unknown = sorted(name for name in skipped if name not in vars(orig_cls))
    if unknown:  # upstream ignores them; a name that skips nothing is worth a word
        warnings.warn(f"create_local_tensor_test_class: {orig_cls.__name__} has no "
                      f"{', '.join(unknown)} to skip", stacklevel=2)
    namespace = dict(vars(orig_cls))
    for name, member in vars(orig_cls).items():
        if not callable(member):
            continue
        if name in skipped:
            namespace[name] = _skipped(name)
        elif name.startswith("test_"):
            namespace[name] = make_wrapped(member, [lambda test: test._get_local_tensor_mode()])
    return type(f"{orig_cls.__name__}WithLocalTensor", (base_class, *orig_cls.__bases__), namespace)
