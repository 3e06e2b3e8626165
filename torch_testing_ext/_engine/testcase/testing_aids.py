"""Small aids test bodies use, named as in ``common_utils`` and ``common_distributed``: a base
pytest does not collect, warnings silenced, tensors kept alive by reference cycles, the
swap-tensors flag for one test, deterministic algorithms for one block, a device's busy-wait
and its rate, the output of a block, and the serial mark.

Example::

    with check_leaked_tensors() as garbage:
        run_step()
    self.assertEqual(len(garbage), 0)
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import torch

from .._torch_private import device_sleep_kernel

__all__ = [
    "NoTest",
    "suppress_warnings",
    "check_leaked_tensors",
    "wrapSwapTensorsTest",
    "DeterministicGuard",
    "get_cycles_per_ms",
    "cpu_busy_wait",
    "device_sleep",
    "captured_output",
    "serialTest",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class NoTest:
    """A mixin whose subclasses pytest does not collect by name alone (``__test__ = False``):
    for a base class of tests that must only run through its concrete subclasses."""

    __test__ = False


def suppress_warnings(fn: _F) -> _F:
    """Run ``fn`` with every warning ignored (the filters are restored afterwards)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]  # a wrapper with fn's signature


_SETTLING_COLLECTIONS = 10  # at most, before the block: each frees what the last one's finalizers let go


@contextmanager
def check_leaked_tensors(limit: int = 1, matched_type: type = torch.Tensor) -> Iterator[list[Any]]:
    """Find objects of ``matched_type`` (tensors) that only reference cycles kept alive in the
    block: collect first (until a collection finds nothing more: freeing one cycle's finalizers
    can leave another cycle unreachable, as dynamo's fake tensors are), run the block with the
    collector saving what it finds unreachable, collect again, and put the unreachable
    ``matched_type`` objects in the list this yields (readable after the block), with a warning
    naming how many there are.

    ``limit`` is upstream's number of object graphs to draw with ``objgraph``; no graphs are
    drawn here (the warning says how many were found). Other unreachable objects are freed as
    usual afterwards, and the collector's debug flags are restored.
    """
    del limit
    previous_flags = gc.get_debug()
    for _ in range(_SETTLING_COLLECTIONS):
        if not gc.collect():
            break
    already_saved = len(gc.garbage)
    found: list[Any] = []
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        found.extend(obj for obj in gc.garbage[already_saved:] if isinstance(obj, matched_type))
    finally:
        gc.set_debug(previous_flags)
        del gc.garbage[already_saved:]
    if found:
        warnings.warn(f"{len(found)} tensors were found in the garbage. Did you introduce a "
                      "reference cycle?", stacklevel=3)


def wrapSwapTensorsTest(swap: bool | None = None) -> Callable[[_F], _F]:
    """Run the test with ``torch.__future__.set_swap_module_params_on_conversion(swap)``
    (``None``: leave the flag as it is), restoring the flag afterwards."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before = torch.__future__.get_swap_module_params_on_conversion()
            if swap is not None:
                torch.__future__.set_swap_module_params_on_conversion(swap)
            try:
                return fn(*args, **kwargs)
            finally:
                torch.__future__.set_swap_module_params_on_conversion(before)

        return wrapper  # type: ignore[return-value]  # a wrapper with fn's signature

    return decorate


class DeterministicGuard:
    """``with DeterministicGuard(True, warn_only=False, fill_uninitialized_memory=True):`` runs
    the block with ``torch.use_deterministic_algorithms`` and
    ``torch.utils.deterministic.fill_uninitialized_memory`` so set, then puts back the settings
    it found on entering (the same guard may be entered again)."""

    def __init__(self, deterministic: bool, *, warn_only: bool = False,
                 fill_uninitialized_memory: bool = True) -> None:
        self.deterministic = deterministic
        self.warn_only = warn_only
        self.fill_uninitialized_memory = fill_uninitialized_memory
        self._found: list[tuple[bool, bool, bool]] = []

    @staticmethod
    def _apply(deterministic: bool, warn_only: bool, fill: bool) -> None:
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]

    def __enter__(self) -> DeterministicGuard:
        self._found.append((torch.are_deterministic_algorithms_enabled(),
                            torch.is_deterministic_algorithms_warn_only_enabled(),
                            torch.utils.deterministic.fill_uninitialized_memory))  # type: ignore[attr-defined]
        self._apply(self.deterministic, self.warn_only, self.fill_uninitialized_memory)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._apply(*self._found.pop())


def cpu_busy_wait(cycles: int) -> None:
    """Spin for ``cycles`` iterations of an empty Python loop (the CPU's ``_sleep``)."""
    for _ in range(cycles):
        pass


def device_sleep(device: str, cycles: int) -> None:
    """Keep ``device`` busy for about ``cycles`` cycles: on ``cpu`` this thread spins
    (:func:`cpu_busy_wait`); on an accelerator (``"cuda"``, ``"cuda:1"``...) a busy-wait kernel
    is queued on the current stream, and the call returns at once."""
    kind = device.split(":")[0]
    if kind == "cpu":
        cpu_busy_wait(cycles)
    else:
        device_sleep_kernel(kind)(cycles)


_SAMPLE_CYCLES = 1_000_000


def _cpu_cycles_per_ms() -> float:
    start = time.perf_counter()
    cpu_busy_wait(_SAMPLE_CYCLES)
    elapsed_ms = (time.perf_counter() - start) * 1000
    return _SAMPLE_CYCLES / elapsed_ms if elapsed_ms > 0 else float(_SAMPLE_CYCLES)


@functools.cache
def get_cycles_per_ms(device: str = "cuda") -> float:
    """About how many busy-wait cycles take a millisecond on ``device`` (measured once per
    process: ten samples, the two fastest and two slowest dropped, the rest averaged).

    On ``cpu`` the cycles are :func:`cpu_busy_wait`'s. An accelerator's busy-wait is a
    private kernel (``torch.cuda._sleep``), which this package does not reach for yet: any
    other device type raises ``NotImplementedError`` saying so.
    """
    kind = device.split(":")[0]
    if kind != "cpu":
        raise NotImplementedError(
            f"get_cycles_per_ms({device!r}): the {kind} busy-wait kernel is private to torch "
            f"(torch.{kind}._sleep) and torch_testing_ext does not provide it yet; only 'cpu' "
            "is measured")
    samples = sorted(_cpu_cycles_per_ms() for _ in range(10))
    return statistics.mean(samples[2:-2])


@contextlib.contextmanager
def captured_output() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Send ``sys.stdout`` and ``sys.stderr`` to two ``StringIO`` for the block; yield them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def serialTest(condition: bool = True) -> Callable[[_F], _F]:
    """Decorator: mark the test as serial when ``condition`` holds (call it: ``@serialTest()``).

    Every test file runs its tests one after another (``run_tests`` and the shard driver never
    run two tests of a file at once), so the mark changes nothing here. Under pytest it becomes
    ``pytest.mark.serial``, which pytest-xdist users can select on (``-m "not serial"``)."""
    if type(condition) is not bool:
        raise TypeError(f"serialTest takes a bool, got {condition!r}: write @serialTest()")

    def mark(fn: _F) -> _F:
        pytest = sys.modules.get("pytest")  # only a pytest run reads the mark
        if condition and pytest is not None:
            return pytest.mark.serial(fn)
        return fn

    return mark
