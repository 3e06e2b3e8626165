"""Small aids upstream's distributed tests call, named as in ``common_distributed``: whether DDP
logged an error, which devices a multi-GPU style test's ranks use, upstream's per-test timeouts
(tests that start their own processes read them; this harness's ranks use the class's
``timeout``), the result of a process a test started itself, core dumps off for one block (a
device-side assert then raises instead of aborting on ROCm), and NCCL's blocking-wait mode for
one test.

Example::

    get_timeout(self.id())   # 300, or the override for the test's method name

    @with_nccl_blocking_wait
    def test_timeout(self): ...   # TORCH_NCCL_BLOCKING_WAIT=1 inside, restored after
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ... import devices
from .._torch_private import ddp_logging_data
from ..skips.platform_skips import TEST_WITH_ROCM, TEST_WITH_TSAN

__all__ = ["verify_ddp_error_logged", "requires_ddp_rank", "init_multigpu_helper", "DDP_RANK_DEVICES",
           "TIMEOUT_DEFAULT", "TIMEOUT_OVERRIDE", "get_timeout", "with_nccl_blocking_wait",
           "retrieve_result_from_completion_queue", "core_dumps_disabled"]

__unittest = True


# -- DDP's logged error --

_CPP_STACK = "\nException raised from "


def verify_ddp_error_logged(model_DDP: Any, err_substr: str) -> None:
    """Raise AssertionError unless ``model_DDP``'s logging data holds an error containing
    ``err_substr`` (without a C++ stack trace that follows it)."""
    logged = ddp_logging_data(model_DDP)
    missing = [key for key in ("iteration", "has_error", "error") if key not in logged]
    if missing:
        raise AssertionError(f"DDP logged no error: its logging data lacks {', '.join(missing)}")
    expected = err_substr.split(_CPP_STACK)[0]
    if expected not in logged["error"]:
        raise AssertionError(f"DDP logged a different error: {expected!r} is not in {logged['error']!r}")


# -- the devices of a multi-GPU style test's ranks --

# Device types on which DDP is given its rank's device (device_ids=[rank]); the machine's
# accelerator, whatever it is, counts as well.
DDP_RANK_DEVICES = ["cuda", "xpu"]


def requires_ddp_rank(device: str) -> bool:
    """Whether DDP on ``device`` (a type such as ``"cuda"``, or ``"cuda:1"``) needs
    ``device_ids=[rank]``: true on accelerators, false on CPU."""
    kind = device.split(":")[0]
    return kind in DDP_RANK_DEVICES or kind == devices.accelerator_type()


def init_multigpu_helper(world_size: int, backend: str) -> dict[int, list[int]]:
    """The accelerator indices each rank owns: one each while there are enough, else
    ``count // world_size`` each (none at all on a CPU-only machine). ``backend`` is unused."""
    count = devices.device_count()
    per_rank = 1 if world_size <= count else count // world_size
    return {rank: list(range(rank * per_rank, (rank + 1) * per_rank)) for rank in range(world_size)}


# -- upstream's per-test timeouts --

# Seconds: longer under ThreadSanitizer, else DISTRIBUTED_TESTS_DEFAULT_TIMEOUT (default 300).
TIMEOUT_DEFAULT: int = 500 if TEST_WITH_TSAN else int(os.environ.get("DISTRIBUTED_TESTS_DEFAULT_TIMEOUT", "300"))
# The tests upstream gives more (or, on ROCm, less) time, by method name.
TIMEOUT_OVERRIDE: dict[str, int] = {
    "test_ddp_uneven_inputs": 400,
    "test_DistributedDataParallel": 500,
    **({"test_join_kwargs": 200} if TEST_WITH_ROCM else {}),
}


def get_timeout(test_id: str) -> int:
    """The timeout in seconds for the test ``test_id`` (``module.Class.test_x``): its method
    name's override, else :data:`TIMEOUT_DEFAULT`."""
    return TIMEOUT_OVERRIDE.get(test_id.split(".")[-1], TIMEOUT_DEFAULT)


# -- a process the test started itself --


def retrieve_result_from_completion_queue(process: Any, completion_queue: Any,
                                          timeout: float | None = None) -> Any:
    """What ``process`` (a ``torch.multiprocessing`` process the test started) put on
    ``completion_queue``; an exception instance (returned, not raised) when the process ended
    without putting anything, or when ``timeout`` seconds passed. The process is looked at
    between waits of 10 to 120 seconds, so a dead one is noticed."""
    wait = 120.0 if timeout is None else max(10.0, min(120.0, timeout / 4))
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            return completion_queue.get(timeout=wait)
        except queue.Empty:
            # Dead and nothing queued: nothing will come (one last look, as the result may have
            # arrived just as the wait ended).
            if not process.is_alive() and completion_queue.empty():
                return RuntimeError(f"the process exited with {process.exitcode} and put no result")
        if deadline is not None and time.monotonic() > deadline:
            return RuntimeError(f"no result from the process within {timeout} s")


# -- core dumps off for one block --


@contextlib.contextmanager
def core_dumps_disabled() -> Iterator[None]:
    """Set the soft core-file size limit to 0 inside the block, and put it back after. With core
    dumps off, ROCm turns a device-side assert into an error raised at the next synchronisation
    (as CUDA does) instead of aborting the process to write a GPU core file. Nothing on
    Windows."""
    if sys.platform == "win32":
        yield
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


# -- NCCL's blocking-wait mode --

_F = TypeVar("_F", bound=Callable[..., Any])
_BLOCKING_WAIT = "TORCH_NCCL_BLOCKING_WAIT"
_ASYNC_ERROR_HANDLING = "TORCH_NCCL_ASYNC_ERROR_HANDLING"


def with_nccl_blocking_wait(fn: _F) -> _F:
    """Run ``fn`` with ``TORCH_NCCL_BLOCKING_WAIT=1`` and ``TORCH_NCCL_ASYNC_ERROR_HANDLING``
    unset (the two modes exclude each other); both variables are as before afterwards, also
    when ``fn`` raises. Process groups made inside read them; on gloo they change nothing."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        saved = {name: os.environ.get(name) for name in (_BLOCKING_WAIT, _ASYNC_ERROR_HANDLING)}
        os.environ.pop(_ASYNC_ERROR_HANDLING, None)
        os.environ[_BLOCKING_WAIT] = "1"
        try:
            return fn(*args, **kwargs)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    return wrapper  # type: ignore[return-value]  # a wrapper with fn's signature
