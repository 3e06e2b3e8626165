"""``C10dTorchCommsTestBase``: kept ranks whose process groups run on torchcomms communicators.

Each rank turns on ``torch.distributed.config.use_torchcomms`` and tells torchcomms its place
(``TORCHCOMM_RANK``, ``TORCHCOMM_SIZE``, ``TORCHCOMM_STORE_PATH``) before the class's group is
made. The backend follows the device type: nccl on CUDA, xccl on XPU, hccl on HPU, gloo on the
CPU. Where torchcomms is not installed the whole class skips, saying so, before any rank
starts; where it lacks the backend a test needs, each test skips naming it.

Example::

    class TestTorchcommsAllReduce(C10dTorchCommsTestBase):
        world_size = 2

        def test_sum(self):
            t = torch.ones(2) * self.rank
            dist.all_reduce(t)
"""

from __future__ import annotations

import importlib.util
import os
import unittest

import torch
import torch.distributed.config

from ... import devices
from ..process_groups import torchcomms_group
from ..skips.platform_skips import TEST_WITH_ROCM
from ..worlds.settings import DEFAULT_WORLD_SIZE
from .continuous_test_case import MultiProcContinuousTest

__all__ = ["C10dTorchCommsTestBase", "TORCHCOMMS_NOT_INSTALLED"]

TORCHCOMMS_NOT_INSTALLED = ("C10dTorchCommsTestBase needs torchcomms, which is not installed "
                            "(pip install torchcomms)")
_BACKEND_OF_DEVICE = {"cuda": "nccl", "hpu": "hccl", "xpu": "xccl"}


class C10dTorchCommsTestBase(MultiProcContinuousTest):
    """Kept ranks (``world_size`` 4 unless the class says) on a torchcomms-backed group."""

    world_size: int = DEFAULT_WORLD_SIZE

    @staticmethod
    def backend(device: str) -> str:
        """The backend for ``device`` (a type or ``"cuda:1"``): nccl, hccl, xccl, else gloo."""
        return next((name for kind, name in _BACKEND_OF_DEVICE.items() if kind in device), "gloo")

    @classmethod
    def backend_str(cls) -> str:
        return cls.backend(str(cls.device_type()))

    def _skip_if_backend_unavailable(self, device: str) -> None:
        """Skip this test unless torchcomms has the backend ``device`` needs (rccl on ROCm)."""
        name = self.backend(device)
        if TEST_WITH_ROCM and name == "nccl":
            name = "rccl"
        known = {"gloo", "xccl", "nccl", "rccl", "ncclx", "rcclx"}
        if name in known and name not in torchcomms_group.torchcomms_backends_built():
            self.skipTest(f"torchcomms {name} backend is not available")

    @classmethod
    def setUpClass(cls) -> None:
        if importlib.util.find_spec("torchcomms") is None:
            raise unittest.SkipTest(TORCHCOMMS_NOT_INSTALLED)
        super().setUpClass()

    def setUp(self) -> None:
        self._skip_if_backend_unavailable(str(type(self).device_type()))
        super().setUp()

    @classmethod
    def _init_pg(cls, rank: int, world_size: int, rdvz_file: str) -> None:
        torch.distributed.config.use_torchcomms = True
        os.environ.update(TORCHCOMM_RANK=str(rank), TORCHCOMM_SIZE=str(world_size),
                          TORCHCOMM_STORE_PATH=rdvz_file)
        super()._init_pg(rank, world_size, rdvz_file)
        if cls.backend_str() in ("nccl", "xccl"):
            if devices.accelerator_type() is None:
                raise RuntimeError(f"the {cls.backend_str()} backend needs an accelerator, and this "
                                   "machine has none")
            device = torch.device(devices.accelerator_type() or "cpu", rank)
            torch.set_default_device(device)
            devices.select_rank_device(rank)

    def rank_to_device(self, device: str) -> dict[int, list[int]]:
        """Rank ``i`` uses device ``i`` modulo the devices of ``device``'s type."""
        count = torch.get_device_module(device).device_count()
        return {i: [i % count] for i in range(self.world_size)}
