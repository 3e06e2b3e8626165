"""``FSDPTest``: a ``MultiProcessTestCase`` whose ranks meet in a default process group before
each test, as FSDP tests expect.

Example::

    class TestShardedStep(FSDPTest):          # 2 CPU ranks with gloo, or one rank per accelerator
        def test_step(self):
            model = MLP(8)
            fully_shard(model)                # on the default group, self.process_group
            model(torch.randn(2, 8, device=get_devtype())).sum().backward()
"""

from __future__ import annotations

import os
import unittest

import torch.distributed as dist

from ... import devices
from ..dynamo_bases.dynamo_case import DynamoResetInRanks
from ..fresh.multiprocess_test_case import MultiProcessTestCase
from ..launched.launcher_env import launched_rank
from ..process_groups.rendezvous import rendezvous_init_method
from ..skips.skip_codes import multi_gpu_skip
from ..worlds.rank_facts import current_rank_facts, rank_device_index
from ..worlds.world import RunSettings
from .fsdp1_parity import FSDPTestMixin

__all__ = ["FSDPTest", "fsdp_world_size", "skip_without_a_device_per_rank", "MAX_WORLD_SIZE",
           "CPU_WORLD_SIZE"]

__unittest = True

MAX_WORLD_SIZE = 8  # ranks on a machine with more accelerators than this
CPU_WORLD_SIZE = 2  # ranks on a CPU-only machine (gloo); cheap, and enough to shard anything


def fsdp_world_size() -> int:
    """One rank per accelerator (at most 8, at least 2); 2 CPU ranks without accelerators."""
    if devices.accelerator_type() is None:
        return CPU_WORLD_SIZE
    return max(2, min(devices.device_count(), MAX_WORLD_SIZE))


def skip_without_a_device_per_rank(world_size: int) -> None:
    """Skip (``unittest.SkipTest``) when the machine has accelerators, but fewer than
    ``world_size`` (on a CPU-only machine ranks are processes, so the test runs). Under a
    launcher each machine has devices for its own ranks only: the launcher knows."""
    if launched_rank() is not None:
        return
    if devices.accelerator_type() is not None and devices.device_count() < world_size:
        raise unittest.SkipTest(multi_gpu_skip(world_size).message)


class FSDPTest(FSDPTestMixin, DynamoResetInRanks, MultiProcessTestCase):
    """Each rank creates the default group on its device's backend (gloo on CPU) through
    ``init_method`` before the test, with Dynamo reset, and selects its accelerator (device
    ``rank``) where there is one.

    Inside a rank: ``rank``, ``world_size`` (see :func:`fsdp_world_size`; override as a
    property), ``process_group`` (the default group), ``init_method``, ``device``,
    ``backend``, ``file_name`` and ``run_subtests(config, fn, *args, **kwargs)``. A test that
    needs more ranks than the machine has accelerators is skipped before any rank starts
    (on a CPU-only machine ranks are processes, so it runs).
    """

    @property
    def world_size(self) -> int:  # type: ignore[override]  # a property over the base's attribute
        return fsdp_world_size()

    @property
    def process_group(self) -> dist.ProcessGroup:
        """The default process group of this rank."""
        group = dist.group.WORLD
        if group is None:
            raise RuntimeError("no default process group: FSDPTest creates it in each rank "
                               "before the test, and the test destroyed it")
        return group

    @property
    def init_method(self) -> str:
        """Where this test's ranks meet: the test's ``FileStore`` file."""
        return f"file://{self.file_name}"

    # -- in each rank ------------------------------------------------------------------------

    def setUpRank(self) -> None:
        super().setUpRank()
        # NCCL's desync-debug cleanup loop makes FSDP tests flaky (pytorch/pytorch#90848).
        os.environ["TORCH_NCCL_DESYNC_DEBUG"] = "0"
        devices.select_rank_device(rank_device_index(self.rank))
        facts = current_rank_facts()
        # Under a launcher the ranks may be on several machines: they meet in its store.
        init_method = rendezvous_init_method() if facts is not None and facts.launched else self.init_method
        dist.init_process_group(self.backend, init_method=init_method,
                                rank=self.rank, world_size=self.world_size)

    # -- in the test's own process -----------------------------------------------------------

    def _checked_settings(self) -> RunSettings:
        """The base class's settings, once the world size is known to be valid (and only for
        a test no decorator skips): a skip if the ranks need more accelerators than there are."""
        checked = super()._checked_settings()
        skip_without_a_device_per_rank(checked.world_size)
        return checked
