"""CUDA library facts and TF32 (torch_testing_ext._engine.device_type.cuda_settings), as
``common_cuda`` gives them: the MAGMA version from torch's build description, TF32 off inside
``tf32_off`` and back after, ``TEST_CUDNN`` false without CUDA."""

from unittest import mock

import torch

from torch_testing_ext import common_cuda, devices
from torch_testing_ext._engine.device_type import cuda_settings
from torch_testing_ext.common_utils import TestCase

_WITH_MAGMA = "PyTorch built with:\n  - CUDA Runtime 12.8\n  - Magma 2.6.1\n  - Build settings: BLAS_INFO=mkl\n"


class TestCudaSettings(TestCase):
    def test_magma_version(self):
        with mock.patch.object(torch.__config__, "show", return_value=_WITH_MAGMA):
            self.assertEqual(common_cuda._get_magma_version(), (2, 6, 1))
        with mock.patch.object(torch.__config__, "show", return_value="PyTorch built with:\n  - MKL\n"):
            self.assertEqual(common_cuda._get_magma_version(), (0, 0))
        if not torch.cuda.has_magma:
            self.assertEqual(common_cuda._get_magma_version(), (0, 0))

    def test_tf32_off_turns_tf32_off_and_restores(self):
        before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            seen = []

            @common_cuda.with_tf32_off
            def body(x):
                seen.append((torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32))
                return x + 1

            self.assertEqual(body(1), 2)
            self.assertEqual(seen, [(False, False)])
            self.assertTrue(torch.backends.cuda.matmul.allow_tf32)
            with self.assertRaises(ValueError), common_cuda.tf32_off():
                raise ValueError
            self.assertTrue(torch.backends.cuda.matmul.allow_tf32)
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before

    def test_cudnn_flag(self):
        self.assertIs(common_cuda.TEST_CUDNN, cuda_settings.TEST_CUDNN)
        if devices.accelerator_type() != "cuda":
            self.assertFalse(common_cuda.TEST_CUDNN)
