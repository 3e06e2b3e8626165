"""Work-arounds that let accelerator-minded torch code run on a CPU-only machine.

Everything here is a no-op where it is not needed (on a machine with an accelerator, or when
the feature it mends is off), so callers apply it unconditionally.

Compiler collectives (``torch._dynamo.config.enable_compiler_collectives``) on a CPU-only build
of torch 2.13 fail three ways: with a plain ``gloo`` group Dynamo sees two device types and
raises a ``TypeError``; with ``cpu:gloo`` it takes the rank modulo
``torch.accelerator.device_count()`` (0: ``ZeroDivisionError``); and the CPU device interface
has no ``device(idx)`` context manager (``NotImplementedError``). For the duration of
:func:`compiler_collectives_on_cpu` the default group must use the backend string from
:func:`process_group_backend` (``cpu:gloo``), ``torch.accelerator.device_count`` reports 1 and
``CpuInterface.device`` is a no-op context manager.

FullyShardedDataParallel refuses CPU-only modules ("FSDP needs a non-CPU accelerator device")
unless it is given ``device_id=torch.device("cpu")``; :func:`fsdp_device_id` is the value to
pass: ``cpu`` on a CPU-only machine, None (FSDP's own default) where an accelerator exists.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock

import torch

from . import devices
from ._engine._torch_private import cpu_device_switch_disabled, dynamo_config_value

__all__ = [
    "compiler_collectives_need_help",
    "compiler_collectives_on_cpu",
    "process_group_backend",
    "fsdp_device_id",
]


def compiler_collectives_need_help() -> bool:
    """True on a CPU-only machine while compiler collectives are switched on."""
    return devices.accelerator_type() is None and bool(dynamo_config_value("enable_compiler_collectives"))


def process_group_backend(backend: str) -> str:
    """The backend string to initialise the default group with (``cpu:gloo`` when needed)."""
    if compiler_collectives_need_help() and backend == "gloo":
        return "cpu:gloo"
    return backend


@contextlib.contextmanager
def compiler_collectives_on_cpu() -> Iterator[None]:
    """Make compiler collectives work on a CPU-only machine for the block (else a no-op)."""
    if not compiler_collectives_need_help():
        yield
        return
    with mock.patch.object(torch.accelerator, "device_count", lambda: 1), \
            cpu_device_switch_disabled():
        yield


def fsdp_device_id() -> torch.device | None:
    """The ``device_id`` for ``FullyShardedDataParallel``: ``cpu`` on a CPU-only machine, else None.

    None leaves FSDP's upstream behaviour untouched (it uses the current accelerator device).
    """
    return torch.device("cpu") if devices.accelerator_type() is None else None
