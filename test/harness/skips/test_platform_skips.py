"""Names of torch_testing_ext._engine.skips.platform_skips that OpInfo modules read: the
platform flags, the kernel-DSL skips and ``markDynamoStrictTest``."""

import importlib.util
import platform
from unittest import mock

import torch

from torch_testing_ext import common_cuda, common_utils, devices
from torch_testing_ext._engine.skips import platform_skips
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_utils import TestCase


def _body(self):
    return "ran"


def reason(decorated):
    return pending_skip(type("Case", (TestCase,), {"test_x": decorated})("test_x"))


class TestPlatformNames(TestCase):
    def test_flags(self):
        self.assertEqual(common_utils.IS_ARM64, platform.machine() in ("arm64", "aarch64", "ARM64"))
        self.assertEqual(common_utils.IS_PPC, platform.machine() == "ppc64le")
        self.assertEqual(common_utils.TEST_SCIPY, importlib.util.find_spec("scipy") is not None)
        self.assertIs(common_utils.USE_PYTEST, False)
        if not platform.mac_ver()[0]:
            self.assertEqual(common_utils.MACOS_VERSION, -1.0)
        self.assertLess(common_utils.MACOS_VERSION, 100.0)

    def test_dsl_skips(self):
        with mock.patch.object(platform_skips, "dsl_available", return_value=False):
            self.assertEqual(reason(common_utils.skipIfNoTritonDSL(_body)), "Triton DSL not available")
            self.assertEqual(reason(common_utils.skipIfNoCuteDSL(_body)), "CuTeDSL not available")
            self.assertEqual(reason(common_utils.skipIfNoFlyDSL(_body)), "FlyDSL not available")
        with mock.patch.object(platform_skips, "dsl_available", return_value=True):
            self.assertIsNone(reason(common_utils.skipIfNoTritonDSL(_body)))
            self.assertIsNone(reason(common_utils.skipIfNoFlyDSL(_body)))

    def test_names_torch_2_15s_op_db_reads(self):
        self.assertIs(common_utils.IS_APPLE_M1, False)  # no MPS device here
        self.assertIs(common_utils.TEST_NVMATH, False)  # a CPU build of torch, no nvmath-python
        self.assertEqual(reason(common_utils.skipIfNoNvmath(_body)), "nvmath-python not available")
        with mock.patch.object(platform_skips, "TEST_NVMATH", True):
            self.assertIsNone(reason(common_utils.skipIfNoNvmath(_body)))
        self.assertIs(platform_skips._module_found("no_such_package.bindings"), False)
        self.assertEqual(common_cuda.ROCM_VERSION, (0, 0))  # not a ROCm build
        with mock.patch.object(torch.version, "hip", "7.1.25424-4179531dcd"):
            self.assertEqual(devices.torch_rocm_version()[:2], (7, 1))

    def test_mark_dynamo_strict_test(self):
        class Marked:
            pass

        self.assertIs(common_utils.markDynamoStrictTest(Marked), Marked)
        self.assertEqual((Marked.dynamo_strict, Marked.dynamo_strict_nopython), (True, False))

        class Called:
            pass

        common_utils.markDynamoStrictTest(nopython=True)(Called)
        self.assertEqual((Called.dynamo_strict, Called.dynamo_strict_nopython), (True, True))
        self.assertIs(common_utils.markDynamoStrictTest(_body), _body)
