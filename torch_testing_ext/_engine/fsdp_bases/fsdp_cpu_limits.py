"""What ``fully_shard`` cannot do on a CPU-only machine (torch 2.13 to 2.15), as skips that name why.

Measured with 2 CPU ranks and gloo: training (uneven shards, ``Shard(1)`` placements,
``reshard_after_forward`` as int), mixed precision with fp32/bf16/fp16 reduction, HSDP
meshes, ``unshard(async_op=True)``, gradient-sync switches and
``CPUOffloadPolicy(pin_memory=False)`` all work. ``CPUOffloadPolicy()`` (``pin_memory=True``,
its default) does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ... import devices
from ..skips.skip_checks import skip_if

__all__ = ["requires_pinned_memory", "PINNED_MEMORY_SKIP_REASON", "PIN_MEMORY_ERRORS"]

__unittest = True

_F = TypeVar("_F", bound=Callable[..., Any])

PINNED_MEMORY_SKIP_REASON = (
    "needs an accelerator for pinned memory: fully_shard with CPUOffloadPolicy(pin_memory=True) "
    "pins each CPU shard (Tensor.pin_memory() in FSDPParam._init_sharded_param), which raises a "
    "RuntimeError on a machine without one (torch's CPU build: 'Cannot access accelerator device "
    "when none is available.'; its CUDA build: 'Found no NVIDIA driver on your system.'); "
    "CPUOffloadPolicy(pin_memory=False) works there"
)
# What Tensor.pin_memory() raises without an accelerator, by torch build (CPU, CUDA).
PIN_MEMORY_ERRORS = r"Cannot access accelerator device when none is available|Found no NVIDIA driver"


def requires_pinned_memory(fn: _F) -> _F:
    """Skip a test (before any rank starts) on a CPU-only machine, where ``Tensor.pin_memory()``
    and so ``fully_shard``'s default ``CPUOffloadPolicy()`` fail."""
    return skip_if(lambda: devices.accelerator_type() is None, PINNED_MEMORY_SKIP_REASON)(fn)
