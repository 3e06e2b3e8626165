"""Every private torch and CPython access of the package, each behind one named function.

A torch or Python release may rename or change any of these; when it does, the contract test
in ``test/harness/test_torch_private.py`` fails with the access's name and the torch version,
and only this module needs mending. Each function says which releases it was checked on.
Code elsewhere in the package uses the public API, or one of these functions, never a private
name of torch or CPython.

:data:`ACCESSES` lists them, so the contract test can check that none goes untested.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import unittest
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = [
    "ACCESSES",
    "PrivateAccess",
    "PRELOADED_PRIVATE_MODULES",
    "stop_forkserver",
    "forkserver_pid",
    "stop_resource_tracker",
    "run_multiprocessing_finalizers",
    "call_after_multiprocessing_exit",
    "set_multiprocessing_tempdir",
    "triton_has_backend",
    "register_fake_backend",
    "active_ddp_module",
    "get_active_ddp_module",
    "patch_dynamo_config",
    "dynamo_config_value",
    "clear_dynamo_counters",
    "cpu_device_switch_disabled",
    "live_process_groups",
    "test_method_name",
    "privateuse1_backend_name",
    "ddp_logging_data",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class PrivateAccess:
    """What one function of this module touches, and the releases it was checked on."""

    def __init__(self, function: str, touches: str, checked_on: tuple[str, ...]) -> None:
        self.function = function
        self.touches = touches
        self.checked_on = checked_on

    def __repr__(self) -> str:
        return f"{self.function}: {self.touches} (checked on torch {', '.join(self.checked_on)})"


ACCESSES: dict[str, PrivateAccess] = {}


# The releases whose suite run (tools/torch_matrix.py) passed every contract test below.
CHECKED_RELEASES = ("2.13.0", "2.14.1", "2.15.0")


def _private(touches: str, checked_on: tuple[str, ...] = CHECKED_RELEASES) -> Callable[[_F], _F]:
    def register(function: _F) -> _F:
        ACCESSES[function.__name__] = PrivateAccess(function.__name__, touches, checked_on)
        return function

    return register


# -- CPython --------------------------------------------------------------------------------

@_private("multiprocessing.forkserver._forkserver._stop()")
def stop_forkserver() -> None:
    """Stop the running fork server, so the next one starts with a new preload list.

    CPython 3.10-3.13 offer no public way to change what a running server preloaded.
    """
    multiprocessing.forkserver._forkserver._stop()  # type: ignore[attr-defined]


@_private("multiprocessing.resource_tracker._resource_tracker._stop()")
def stop_resource_tracker() -> None:
    """Stop multiprocessing's resource tracker process and wait for it (if it runs).

    It is started for the fork server and would otherwise outlive its owner for a moment.
    Call it only when no process that uses it (server, ranks) is left.
    """
    import multiprocessing.resource_tracker

    multiprocessing.resource_tracker._resource_tracker._stop()  # type: ignore[attr-defined]


@_private("multiprocessing.forkserver._forkserver._forkserver_pid")
def forkserver_pid() -> int | None:
    """The pid of the running fork server, or None when none runs."""
    return multiprocessing.forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]


@_private("multiprocessing.current_process()._config['tempdir']")
def set_multiprocessing_tempdir(path: str) -> str:
    """Make ``path`` multiprocessing's temp directory (its sockets) unless one is set already.

    Returns the directory in use.
    """
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    return config.setdefault("tempdir", path)


@_private("multiprocessing.util._run_finalizers(0)")
def run_multiprocessing_finalizers() -> None:
    """Run this process's multiprocessing finalizers that would run at a normal exit, such as
    unlinking the semaphores it created (a rank leaves with ``os._exit``; without this the
    resource tracker later warns about "leaked semaphore objects", e.g. tqdm's lock)."""
    import multiprocessing.util

    multiprocessing.util._run_finalizers(0)  # type: ignore[attr-defined]


@_private("multiprocessing.util.Finalize(None, callback, exitpriority=-100)")
def call_after_multiprocessing_exit(callback: Callable[[], None]) -> None:
    """Call ``callback`` at interpreter exit after multiprocessing's own exit work (its
    finalizers unlink this process's semaphores, which the resource tracker must still see)."""
    import multiprocessing.util

    multiprocessing.util.Finalize(None, callback, exitpriority=-100)


@_private("unittest.TestCase._testMethodName")
def test_method_name(test: unittest.TestCase) -> str:
    """The name of the test method a TestCase instance runs (unittest keeps it private)."""
    return test._testMethodName


# -- torch ----------------------------------------------------------------------------------

# Modules the rank fork server imports so that ranks need not: torch._dynamo is imported lazily
# by DDP, replicate, FSDP and assert_close, and costs about 2 s per rank otherwise.
PRELOADED_PRIVATE_MODULES = ("torch._dynamo",)


@_private("torch.utils._triton.has_triton()")
def triton_has_backend() -> bool:
    """Whether triton imports and has a backend for this machine's device."""
    from torch.utils._triton import has_triton

    return bool(has_triton())


@_private("torch._C._distributed_c10d.FakeProcessGroup._create_internal, "
          "torch.distributed.Backend._plugins")
def register_fake_backend() -> None:
    """Register the ``fake`` process-group backend (no communication) unless it is registered.

    torch 2.13 lists ``fake`` in ``Backend.backend_list`` from the start, but can create it
    only once ``torch.testing._internal.distributed.fake_pg`` was imported (``torch._dynamo``
    imports it); until then ``init_process_group("fake")`` fails with "Unknown c10d backend
    type FAKE". Only the plugin table tells the two apart.
    """
    import torch.distributed as dist

    if "FAKE" in dist.Backend._plugins:  # type: ignore[attr-defined]
        return
    from torch._C._distributed_c10d import FakeProcessGroup

    def create(common_opts: Any, backend_opts: Any) -> Any:
        return FakeProcessGroup._create_internal(common_opts.group_rank, common_opts.group_size,
                                                 backend_opts)

    dist.Backend.register_backend("fake", create, extended_api=True,
                                  devices=["cpu", "cuda", "hpu", "xpu"])


@_private("DistributedDataParallel._active_ddp_module")
@contextlib.contextmanager
def active_ddp_module(module: Any) -> Iterator[None]:
    """Register ``module`` as DDP's active module for the block: what Dynamo's DDPOptimizer
    looks for to split a graph into one subgraph per gradient bucket."""
    from torch.nn.parallel import DistributedDataParallel

    previous = DistributedDataParallel._active_ddp_module
    DistributedDataParallel._active_ddp_module = module
    try:
        yield
    finally:
        DistributedDataParallel._active_ddp_module = previous


@_private("DistributedDataParallel._get_active_ddp_module()")
def get_active_ddp_module() -> Any:
    """The module registered as DDP's active module, or None."""
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel._get_active_ddp_module()


@_private("torch._dynamo.config.patch(...)")
def patch_dynamo_config(**changes: Any) -> contextlib.AbstractContextManager[Any]:
    """A context manager that sets Dynamo config values for its block."""
    import torch._dynamo.config

    return torch._dynamo.config.patch(**changes)


@_private("torch._dynamo.config.<name>")
def dynamo_config_value(name: str) -> Any:
    """The current value of one Dynamo config entry."""
    import torch._dynamo.config

    return getattr(torch._dynamo.config, name)


@_private("torch._dynamo.utils.counters.clear()")
def clear_dynamo_counters() -> None:
    """Clear Dynamo's counters (graph breaks, frames, DDPOptimizer splits...)."""
    import torch._dynamo.utils

    torch._dynamo.utils.counters.clear()


@_private("torch._dynamo.device_interface.CpuInterface.device")
@contextlib.contextmanager
def cpu_device_switch_disabled() -> Iterator[None]:
    """For the block, make the CPU device interface's ``device(index)`` a no-op context.

    Compiler collectives enter ``device(index)`` of the interface for the group's device;
    the CPU interface raises ``NotImplementedError`` there in torch 2.13.
    """
    from unittest import mock

    from torch._dynamo.device_interface import CpuInterface

    @contextlib.contextmanager
    def no_switch(index: int) -> Iterator[None]:
        yield

    with mock.patch.object(CpuInterface, "device", staticmethod(no_switch)):
        yield


@_private("torch.distributed.distributed_c10d._world.pg_map")
def live_process_groups() -> list[Any]:
    """Every process group torch currently keeps (the default group and its subgroups)."""
    import torch.distributed as dist

    return list(dist.distributed_c10d._world.pg_map)


@_private("torch._C._get_privateuse1_backend_name()")
def privateuse1_backend_name() -> str:
    """The name the PrivateUse1 device type goes by (``"privateuseone"`` until an out-of-tree
    backend renames it with ``torch.utils.rename_privateuse1_backend``)."""
    import torch

    return torch._C._get_privateuse1_backend_name()


@_private("DistributedDataParallel._get_ddp_logging_data()")
def ddp_logging_data(model: Any) -> dict[str, Any]:
    """What a DDP module's logger recorded: ``iteration``, and ``has_error``/``error`` once
    DDP raised an error it logs (an unused parameter, a reducer mismatch...)."""
    return dict(model._get_ddp_logging_data())
