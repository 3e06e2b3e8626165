"""``FSDPTestContinuous``: FSDP tests on ranks kept for the class, with one default group.

As ``FSDPTest`` (one rank per accelerator, 2 CPU ranks with gloo without one; Dynamo reset
around each test; ``process_group`` and ``run_subtests``), but on ``MultiProcContinuousTest``:
the ranks and their group are made once, and the subgroups a test's device meshes make are
destroyed after it.

Example::

    class TestSteps(FSDPTestContinuous):
        def test_step(self):
            model = MLP(8)
            fully_shard(model)
            model(torch.randn(2, 8, device=self.device)).sum().backward()
"""

from __future__ import annotations

import os

import torch.distributed as dist

from ... import devices
from ..dynamo_bases.dynamo_case import DynamoResetInRanks
from ..kept.continuous_test_case import MultiProcContinuousTest
from ..kept.subgroup_cleanup import GroupsPerTest
from ..worlds.world import RunSettings
from .fsdp1_parity import FSDPTestMixin
from .fsdp_test_case import fsdp_world_size, skip_without_a_device_per_rank

__all__ = ["FSDPTestContinuous"]

__unittest = True


class FSDPTestContinuous(FSDPTestMixin, GroupsPerTest, DynamoResetInRanks, MultiProcContinuousTest):
    """FSDP tests sharing ``world_size`` kept ranks (see :func:`fsdp_world_size`)."""

    @property
    def world_size(self) -> int:  # type: ignore[override]  # a property over the base's attribute
        return fsdp_world_size()

    @classmethod
    def backend_str(cls) -> str:
        """The default backend of the machine's device type (gloo on CPU)."""
        return devices.default_backend()

    @property
    def process_group(self) -> dist.ProcessGroup:
        """The class's default process group."""
        return type(self).pg

    @classmethod
    def _init_pg(cls, rank: int, world_size: int, rdvz_file: str) -> None:
        # NCCL's desync-debug cleanup loop makes FSDP tests flaky (pytorch/pytorch#90848).
        os.environ["TORCH_NCCL_DESYNC_DEBUG"] = "0"
        super()._init_pg(rank, world_size, rdvz_file)

    def _checked_settings(self) -> RunSettings:
        checked = super()._checked_settings()
        skip_without_a_device_per_rank(checked.world_size)
        return checked
