"""``DistributedTestBase``: a ``MultiProcessTestCase`` whose ranks make a group for a device.

Made for test classes instantiated per device type::

    class TestCollectives(DistributedTestBase):
        world_size = 2

        def test_all_reduce(self, device):
            self.create_pg(device)           # gloo on cpu, nccl on cuda, xccl on xpu
            t = torch.ones(2)                # on an accelerator the rank's device is the default
            dist.all_reduce(t)

    instantiate_device_type_tests(TestCollectives, globals())   # TestCollectivesCPU, ...CUDA
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

from ... import devices
from ..fresh.multiprocess_test_case import MultiProcessTestCase
from ..process_groups.rendezvous import rendezvous_init_method
from ..worlds.rank_facts import rank_device_index

__all__ = ["DistributedTestBase"]

__unittest = True


class DistributedTestBase(MultiProcessTestCase):
    """Ranks that create the default group with :meth:`create_pg` for a given device.

    ``backend`` is a method here, as upstream: ``self.backend(device)`` is the default
    backend for that device. Groups are destroyed when the rank ends.
    """

    def setUpRank(self) -> None:
        super().setUpRank()
        # For upstream-style code that reads it (under a launcher, restored after the test).
        os.environ["WORLD_SIZE"] = str(self.world_size)

    def backend(self, device: str) -> str:  # type: ignore[override]  # upstream's method, not a property
        """The default process-group backend for ``device`` (cpu: gloo, cuda: nccl, xpu: xccl)."""
        return devices.default_backend(device)

    def create_pg(self, device: str, world_size: int | None = None) -> dist.ProcessGroup:
        """Create the default group for ``device`` on this rank and return it.

        It meets through a fresh file in the test's directory (no port). On an accelerator
        the rank then uses device ``<type>:<rank>``, also as torch's default device.
        """
        dist.init_process_group(self.backend(device), init_method=rendezvous_init_method(),
                                rank=self.rank, world_size=world_size or self.world_size)
        if torch.device(device).type != "cpu":
            torch.set_default_device(devices.select_rank_device(rank_device_index(self.rank)))
        group = dist.group.WORLD
        assert group is not None
        return group

    def rank_to_device(self, device: str) -> dict[int, list[int]]:
        """Which device index each rank uses for ``device``'s type (ranks share them round-robin)."""
        count = devices.devices_of_type(device)
        return {rank: [rank % count] for rank in range(self.world_size)}
