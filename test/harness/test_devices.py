"""Self-tests of the device facts and the upstream-named flags computed from them."""

import dataclasses
import json
import os
from unittest import mock

import torch

from torch_testing_ext import common_cuda, common_utils, devices, inductor_utils
from torch_testing_ext.common_utils import TestCase

from fixtures.fake_devices import pretend_accelerator


class TestDeviceFacts(TestCase):
    def test_facts_match_torch(self):
        accelerator = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
        self.assertEqual(devices.accelerator_type(), accelerator.type if accelerator else None)
        self.assertEqual(devices.device_type(), accelerator.type if accelerator else "cpu")
        self.assertEqual(devices.device_count(), torch.accelerator.device_count() if accelerator else 0)
        self.assertEqual(devices.backend_available("gloo"), torch.distributed.is_gloo_available())

    def test_default_backends(self):
        self.assertEqual(devices.default_backend("cpu"), "gloo")
        self.assertEqual(devices.default_backend("cuda:1"), "nccl")
        self.assertEqual(devices.default_backend("xpu"), "xccl")
        self.assertEqual(devices.default_backend("mps"), "gloo")

    def test_rank_device(self):
        expected = f"{devices.accelerator_type()}:1" if devices.accelerator_type() else "cpu"
        self.assertEqual(devices.rank_device(1), expected)

    def test_a_cuda_machines_capability_is_exported_answered(self):
        # The fork server must not ask CUDA itself (its forked ranks could not use CUDA).
        unasked = dataclasses.replace(devices.facts(), accelerator="cuda", device_count=2,
                                      cuda_capability=devices.UNPROBED)
        environ = {}
        # cuda_capability() keeps its first answer: a test before this one (loading op_db reads
        # the SM*OrLater flags) may have asked this CPU machine already.
        devices.cuda_capability.cache_clear()
        try:
            with mock.patch.object(devices, "facts", lambda: unasked), \
                    mock.patch("torch.cuda.get_device_capability", lambda device=0: (9, 0)):
                devices.export_facts(environ)
        finally:
            devices.cuda_capability.cache_clear()  # forget the pretended machine's answer
        self.assertEqual(json.loads(environ[devices.FACTS_ENV])["cuda_capability"], [9, 0])

    def test_exported_facts_are_read_back_without_probing(self):
        environ = {}
        devices.export_facts(environ)
        data = json.loads(environ[devices.FACTS_ENV])
        data.update(accelerator="cuda", device_count=8)
        fake = json.dumps(data)
        with mock.patch.dict(os.environ, {devices.FACTS_ENV: fake}), \
                mock.patch.object(devices, "_probe", side_effect=AssertionError("probed")):
            devices.facts.cache_clear()
            try:
                self.assertEqual(devices.accelerator_type(), "cuda")
                self.assertEqual(devices.device_count(), 8)
                self.assertEqual(devices.rank_device(3), "cuda:3")
            finally:
                devices.facts.cache_clear()
        self.assertEqual(devices.facts(), devices._probe())

    def test_flags_agree_with_facts(self):
        self.assertEqual(common_utils.TEST_CUDA, devices.accelerator_type() == "cuda")
        self.assertEqual(common_cuda.TEST_CUDA, common_utils.TEST_CUDA)
        self.assertEqual(common_cuda.TEST_MULTIGPU, common_cuda.TEST_CUDA and devices.device_count() >= 2)
        self.assertEqual(inductor_utils.HAS_GPU, devices.has_gpu_inductor())
        if not common_cuda.TEST_CUDA:
            self.assertFalse(common_cuda.PLATFORM_SUPPORTS_FLASH_ATTENTION)
            self.assertFalse(common_cuda.PLATFORM_SUPPORTS_MEM_EFF_ATTENTION)
        self.assertFalse(common_utils.TEST_WITH_DEV_DBG_ASAN and "PYTORCH_TEST_WITH_DEV_DBG_ASAN" not in os.environ)


class TestSelectRankDevice(TestCase):
    """``select_rank_device`` selects a device index only when there is an accelerator."""

    def test_cpu_only_machine_selects_nothing(self):
        with pretend_accelerator(None), \
                mock.patch.object(torch.accelerator, "set_device_index",
                                  side_effect=AssertionError("no device to select on CPU")):
            self.assertEqual(devices.select_rank_device(0), torch.device("cpu"))
            self.assertEqual(devices.select_rank_device(3), torch.device("cpu"))

    def test_accelerator_selects_the_rank_index(self):
        with pretend_accelerator("cuda", 2), \
                mock.patch.object(torch.accelerator, "set_device_index") as select:
            device = devices.select_rank_device(1)
            self.assertEqual(str(device), devices.rank_device(1))
        select.assert_called_once_with(1)
        self.assertEqual(device, torch.device("cuda", 1))

    def test_this_machine_agrees_with_rank_device(self):
        self.assertEqual(devices.select_rank_device(0), torch.device(devices.rank_device(0)))
