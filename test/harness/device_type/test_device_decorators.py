"""``onlyNativeDeviceTypes``, ``disablecuDNN`` and the e5m2 float8 names
(torch_testing_ext._engine.device_type.device_decorators, float8_types), on a test's device type."""

from unittest import mock

import torch

from torch_testing_ext import common_device_type
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_device_type import disablecuDNN, onlyNativeDeviceTypes
from torch_testing_ext.common_utils import TestCase


def _case(body, device_type):
    return type("Case", (TestCase,), {"test_x": body, "device_type": device_type})("test_x")


class TestDeviceDecorators(TestCase):
    def test_only_native_device_types(self):
        decorated = onlyNativeDeviceTypes(lambda self: "ran")
        for kind in ("cpu", "cuda", "xpu", "meta", "mps"):
            self.assertIsNone(pending_skip(_case(decorated, kind)), kind)
        self.assertEqual(pending_skip(_case(decorated, "xla")), "onlyNativeDeviceTypes: doesn't run on xla")

    def test_disable_cudnn_only_on_cuda(self):
        seen = []

        @disablecuDNN
        def body(self):
            seen.append(torch.backends.cudnn.enabled)

        body(_case(body, "cpu"))
        self.assertEqual(seen, [torch.backends.cudnn.enabled])
        with mock.patch.object(torch.backends.cudnn, "is_available", return_value=True):
            body(_case(body, "cuda"))
        self.assertEqual(seen[-1], False)

    def test_e5m2_names(self):
        from torch_testing_ext import devices
        from torch_testing_ext._engine.device_type import float8_types

        for hip, arch, dtype in ((None, None, torch.float8_e5m2), ("6.4.1", "gfx942:sramecc+", torch.float8_e5m2fnuz),
                                 ("6.4.1", "gfx950", torch.float8_e5m2)):
            float8_types.e5m2_type.cache_clear()
            try:
                with self.subTest(hip=hip, arch=arch), mock.patch.object(torch.version, "hip", hip), \
                        mock.patch.object(devices, "rocm_arch_name", lambda a=arch: a):
                    self.assertIs(common_device_type.e5m2_type, dtype)
                    self.assertEqual(common_device_type.E5M2_MAX_POS, 57344.0)
            finally:
                float8_types.e5m2_type.cache_clear()
