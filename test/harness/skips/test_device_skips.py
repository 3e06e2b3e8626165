"""The build-dependent device skips of torch_testing_ext._engine.skips.device_skips
(``skipCPUIfNoLapack``, ``skipCUDAIfNoMagma`` and friends, ``skipXPU``): which device type each
skips, and why, decided in the test process from what this torch was built with."""

from unittest import mock

import torch

from torch_testing_ext._engine.skips import device_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_device_type import (
    has_cusolver,
    has_hipsolver,
    skipCPUIfNoFFT,
    skipCPUIfNoLapack,
    skipCPUIfNoMklSparse,
    skipCUDAIfNoCusolver,
    skipCUDAIfNoMagma,
    skipCUDAIfNoMagmaAndNoCusolver,
    skipCUDAIfNoMagmaAndNoLinalgsolver,
    skipCUDAIfRocm,
    skipXPU,
)
from torch_testing_ext.common_utils import TestCase


def _body(self):
    return "ran"


def reason(decorated, device_type):
    case = type("Case", (TestCase,), {"test_x": decorated, "device_type": device_type})("test_x")
    return pending_skip(case)


class TestDeviceSkips(TestCase):
    def test_skip_xpu(self):
        self.assertEqual(reason(skipXPU(_body), "xpu"), "test doesn't work on XPU backend")
        self.assertIsNone(reason(skipXPU(_body), "cpu"))

    def test_cpu_build_skips(self):
        with mock.patch.object(device_skips, "built_with_lapack", return_value=False):
            decorated = skipCPUIfNoLapack(_body)
        self.assertEqual(reason(decorated, "cpu"), "PyTorch compiled without Lapack")
        self.assertIsNone(reason(decorated, "cuda"))
        with mock.patch.object(device_skips, "built_with_spectral", return_value=False):
            self.assertEqual(reason(skipCPUIfNoFFT(_body), "cpu"), "PyTorch is built without FFT support")
        with mock.patch.object(torch.backends.mkl, "is_available", return_value=False):
            self.assertEqual(reason(skipCPUIfNoMklSparse(_body), "cpu"), "PyTorch is built without MKL support")
        # This torch, as it was built (the wheels torch ships have LAPACK and FFT).
        self.assertIsNone(reason(skipCPUIfNoLapack(_body), "cpu"))
        self.assertIsNone(reason(skipCPUIfNoFFT(_body), "cpu"))

    def test_cuda_library_skips(self):
        self.assertEqual((has_cusolver(), has_hipsolver()), (torch.version.hip is None, torch.version.hip is not None))
        with mock.patch.object(torch.cuda, "has_magma", False):
            no_magma = skipCUDAIfNoMagma(_body)
            self.assertIs(skipCUDAIfNoMagmaAndNoCusolver(_body), _body)  # cuSOLVER is enough
            self.assertIs(skipCUDAIfNoMagmaAndNoLinalgsolver(_body), _body)
        self.assertEqual(reason(no_magma, "cuda"), "no MAGMA library detected")
        self.assertIsNone(reason(no_magma, "cpu"))
        self.assertIsNone(reason(skipCUDAIfNoCusolver(_body), "cuda"))
        with mock.patch.object(device_skips, "has_cusolver", return_value=False), \
                mock.patch.object(torch.cuda, "has_magma", False):
            self.assertEqual(reason(skipCUDAIfNoMagmaAndNoCusolver(_body), "cuda"), "no MAGMA library detected")

    def test_skip_cuda_if_rocm(self):
        with mock.patch.object(torch.version, "hip", "6.4"):
            bare, called = skipCUDAIfRocm(_body), skipCUDAIfRocm(msg="not on ROCm")(_body)
        self.assertEqual(reason(bare, "cuda"), "skipCUDAIfRocm: test doesn't currently work on the ROCm stack")
        self.assertEqual(reason(called, "cuda"), "skipCUDAIfRocm: not on ROCm")
        self.assertIsNone(reason(bare, "cpu"))
        with mock.patch.object(torch.version, "hip", None):
            self.assertIsNone(reason(skipCUDAIfRocm(_body), "cuda"))
