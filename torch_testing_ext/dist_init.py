"""Process-group set-up for tests: rendezvous without fixed ports, and Dynamo's per-rank init.

Rendezvous never uses a hard-coded port. Inside a rank of a multi-process test it goes
through a file in the test's private directory; a world-size-1 group uses an in-memory store.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator

import torch.distributed as dist

from . import cpu_compat, devices
from .dynamo_test_case import reset_dynamo
from .multiprocess.context import current_rank_context
from .multiprocess.rank import retire_process_groups

__all__ = [
    "rendezvous_init_method",
    "init_single_process_group",
    "ensure_fake_backend",
    "dynamo_dist_per_rank_init",
]

_rendezvous_count = itertools.count()


def rendezvous_init_method() -> str:
    """An ``init_method`` for ``init_process_group`` that every rank of this test agrees on.

    In a rank of a multi-process test: a fresh ``file://`` rendezvous in the test's directory
    (the n-th call on each rank gives the same path). Elsewhere ``env://``, which needs
    ``MASTER_ADDR`` and ``MASTER_PORT`` to be set by the caller.
    """
    context = current_rank_context()
    if context is not None:
        return f"file://{os.path.join(context.test_dir, f'rendezvous-{next(_rendezvous_count)}')}"
    if os.environ.get("MASTER_ADDR") and os.environ.get("MASTER_PORT"):
        return "env://"
    raise RuntimeError(
        "no rendezvous: run inside a MultiProcessTestCase rank, or set MASTER_ADDR and MASTER_PORT"
    )


def init_single_process_group(backend: str | None = None) -> None:
    """Create a real default process group of world size 1 (rank 0), with no port or file."""
    backend = backend or devices.default_backend()
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)


def ensure_fake_backend() -> None:
    """Register the ``fake`` backend (no communication) unless torch already did."""
    if "fake" in dist.Backend.backend_list:
        return
    from torch._C._distributed_c10d import FakeProcessGroup

    def create(common_opts, backend_opts):  # type: ignore[no-untyped-def]
        return FakeProcessGroup._create_internal(common_opts.group_rank, common_opts.group_size,
                                                 backend_opts)

    dist.Backend.register_backend("fake", create, extended_api=True,
                                  devices=["cpu", "cuda", "hpu", "xpu"])


def _destroy_process_groups() -> None:
    if dist.is_initialized():
        # In a rank the test's DDP modules may outlive the groups; the rank drops them last.
        retire_process_groups()
        dist.destroy_process_group()


@contextlib.contextmanager
def dynamo_dist_per_rank_init(
    rank: int,
    world_size: int,
    backend: str | None = None,
    init_pg: bool = True,
    fake_pg: bool = False,
) -> Iterator[None]:
    """Set up one rank for a Dynamo distributed test body, and undo it afterwards.

    Selects the rank's accelerator (if any), initialises the default group on the device's
    backend without a fixed port (or on the ``fake`` backend with ``fake_pg``), resets Dynamo
    and its counters on entry and exit, and destroys the group on exit. On a CPU-only machine
    with compiler collectives switched on it applies :mod:`cpu_compat`.
    """
    if not fake_pg:
        devices.select_rank_device(rank)
    backend = backend or devices.default_backend(devices.rank_device(rank))
    with contextlib.ExitStack() as stack:
        if init_pg:
            if fake_pg:
                ensure_fake_backend()
                dist.init_process_group("fake", store=dist.HashStore(), rank=rank, world_size=world_size)
            else:
                dist.init_process_group(cpu_compat.process_group_backend(backend),
                                        init_method=rendezvous_init_method(), rank=rank,
                                        world_size=world_size)
            stack.callback(_destroy_process_groups)
        stack.enter_context(cpu_compat.compiler_collectives_on_cpu())
        reset_dynamo()
        stack.callback(reset_dynamo)
        yield
