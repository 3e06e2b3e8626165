"""Test cases for Dynamo with a real process group: one process of world size 1, or N ranks."""

from __future__ import annotations

from typing import ClassVar

from ... import devices
from ..fresh.multiprocess_test_case import MultiProcessTestCase
from ..process_groups.rendezvous import init_single_process_group
from ..process_groups.teardown import destroy_process_groups
from ..worlds.rank_facts import rank_device_index
from .dynamo_case import DynamoResetInRanks, DynamoTestCase

__all__ = ["DynamoDistributedSingleProcTestCase", "DynamoDistributedMultiProcTestCase",
           "multiproc_world_size"]

__unittest = True


def multiproc_world_size() -> int:
    """The accelerator count when there are at least 2, else 2 (CPU ranks with gloo)."""
    count = devices.device_count()
    return count if count >= 2 else 2


class DynamoDistributedSingleProcTestCase(DynamoTestCase):
    """Dynamo tests in one process with a real default process group of world size 1.

    ``setUpClass`` creates the group (rank 0) on the device's default backend, gloo on CPU,
    with an in-memory store (no port); ``tearDownClass`` destroys it. Class attributes:
    ``rank`` (0), ``world_size`` (1), ``device`` (``"cpu"`` or ``"<type>:0"``) and
    ``device_ids`` (None on CPU, ``[0]`` on an accelerator).
    """

    rank: ClassVar[int] = 0
    world_size: ClassVar[int] = 1
    device: ClassVar[str]
    device_ids: ClassVar[list[int] | None]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        import torch.distributed as dist

        cls.device = devices.rank_device(0)
        cls.device_ids = [0] if devices.accelerator_type() else None
        if dist.is_initialized():
            raise RuntimeError(f"{cls.__name__}: a default process group already exists")
        try:
            init_single_process_group(devices.default_backend(cls.device))
        except BaseException:
            super().tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        destroy_process_groups()
        super().tearDownClass()


class DynamoDistributedMultiProcTestCase(DynamoResetInRanks, MultiProcessTestCase):
    """Multi-process Dynamo tests: world size = accelerator count (>= 2), else 2 CPU ranks.

    Each rank starts and ends its test with a fresh Dynamo (reset, counters cleared). Test
    bodies usually run inside ``dynamo_dist_per_rank_init(self.rank, self.world_size)``.
    Besides ``device`` a rank has ``device_ids`` (``[rank]`` on an accelerator, None on CPU).
    Inductor's compiler is loaded once in the process the ranks are forked from.
    """

    warm_inductor_in_server = True

    @property
    def world_size(self) -> int:  # type: ignore[override]  # a property over the base's attribute
        return multiproc_world_size()

    @property
    def device_ids(self) -> list[int] | None:
        """``device_ids`` for DDP in this rank: ``[rank]`` on an accelerator, None on CPU."""
        return [rank_device_index(self.rank)] if devices.accelerator_type() else None

