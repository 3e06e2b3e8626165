"""``dynamo_dist_per_rank_init``: set up one rank for a Dynamo distributed test body."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch.distributed as dist

from ... import cpu_compat, devices
from .._torch_private import register_fake_backend
from ..process_groups.rendezvous import rendezvous_init_method
from ..process_groups.teardown import destroy_process_groups
from ..worlds.rank_facts import rank_device_index
from .dynamo_case import reset_dynamo

__all__ = ["dynamo_dist_per_rank_init"]

__unittest = True


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
    with compiler collectives switched on it applies :mod:`torch_testing_ext.cpu_compat`.
    """
    if not fake_pg:
        devices.select_rank_device(rank_device_index(rank))
    backend = backend or devices.default_backend(devices.rank_device(rank_device_index(rank)))
    with contextlib.ExitStack() as stack:
        if init_pg:
            if fake_pg:
                register_fake_backend()
                dist.init_process_group("fake", store=dist.HashStore(), rank=rank, world_size=world_size)
            else:
                dist.init_process_group(cpu_compat.process_group_backend(backend),
                                        init_method=rendezvous_init_method(), rank=rank,
                                        world_size=world_size)
            stack.callback(destroy_process_groups)
        stack.enter_context(cpu_compat.compiler_collectives_on_cpu())
        reset_dynamo()
        stack.callback(reset_dynamo)
        yield
