"""Self-tests of ``common_quantization``'s skips (``_engine/skips/quantization_skips.py``): each
skips a test with upstream's reason when its condition holds, on a method (asked when the test
runs) and on a class (asked when decorated), and runs the test otherwise."""

import unittest
from unittest import mock

import torch

from torch_testing_ext import common_quantization
from torch_testing_ext._engine.skips import quantization_skips
from torch_testing_ext.common_utils import TestCase

ENGINE_SKIPS = [
    ("skipIfNoFBGEMM", "fbgemm", "Quantized operations require FBGEMM."),
    ("skipIfNoQNNPACK", "qnnpack", "Quantized operations require QNNPACK."),
    ("skipIfNoONEDNN", "onednn", "Quantized operations require ONEDNN."),
    ("skipIfNoX86", "x86", "Quantized operations require X86."),
]
SUPPORT_SKIPS = [
    ("skipIfNoONEDNNBF16", "mkldnn_bf16_supported", "Quantized operations require BF16 support."),
    ("skipIfNoDynamoSupport", "dynamo_supported", "dynamo doesn't support."),
    ("skipIfNoInductorSupport", "inductor_supported", "inductor doesn't support."),
]


def _outcome(decorator, on_class=False):
    """Run one decorated test; ``("skipped", reason)`` or ``("ran", None)``."""
    ran = []

    def test_x(self):
        ran.append(True)

    if on_class:
        case = decorator(type("Case", (unittest.TestCase,), {"test_x": test_x}))
    else:
        case = type("Case", (unittest.TestCase,), {"test_x": decorator(test_x)})
    result = unittest.TestResult()
    case("test_x").run(result)
    if result.skipped:
        return ("skipped", result.skipped[0][1])
    assert not (result.errors or result.failures), result.errors + result.failures
    return ("ran", None) if ran else ("nothing", None)


class TestQuantizationSkips(TestCase):
    def test_engine_skips(self):
        for name, engine, reason in ENGINE_SKIPS:
            decorator = getattr(common_quantization, name)
            others = [e for e in ("fbgemm", "qnnpack", "onednn", "x86", "none") if e != engine]
            for on_class in (False, True):
                with self.subTest(name, on_class=on_class):
                    with mock.patch.object(quantization_skips, "supported_quantized_engines", return_value=others):
                        self.assertEqual(_outcome(decorator, on_class)[0], "skipped")
                        self.assertTrue(_outcome(decorator, on_class)[1].startswith(reason))
                    with mock.patch.object(quantization_skips, "supported_quantized_engines", return_value=[engine]):
                        self.assertEqual(_outcome(decorator, on_class), ("ran", None))

    def test_support_skips(self):
        for name, check, reason in SUPPORT_SKIPS:
            decorator = getattr(common_quantization, name)
            for on_class in (False, True):
                with self.subTest(name, on_class=on_class):
                    with mock.patch.object(quantization_skips, check, return_value=False):
                        self.assertEqual(_outcome(decorator, on_class), ("skipped", reason))
                    with mock.patch.object(quantization_skips, check, return_value=True):
                        self.assertEqual(_outcome(decorator, on_class), ("ran", None))

    def test_a_method_asks_when_it_runs(self):
        with mock.patch.object(quantization_skips, "dynamo_supported", return_value=True):
            test = type("Case", (unittest.TestCase,), {
                "test_x": common_quantization.skipIfNoDynamoSupport(lambda self: None)})("test_x")
        result = unittest.TestResult()
        with mock.patch.object(quantization_skips, "dynamo_supported", return_value=False):
            test.run(result)
        self.assertEqual([reason for _, reason in result.skipped], ["dynamo doesn't support."])

    def test_skip_if_no_torchvision(self):
        with mock.patch.object(quantization_skips, "HAS_TORCHVISION", False):
            self.assertEqual(_outcome(common_quantization.skip_if_no_torchvision), ("skipped", "no torchvision"))
        with mock.patch.object(quantization_skips, "HAS_TORCHVISION", True):
            self.assertEqual(_outcome(common_quantization.skip_if_no_torchvision), ("ran", None))

    def test_engines_are_torchs(self):
        self.assertEqual(quantization_skips.supported_quantized_engines(),
                         list(torch.backends.quantized.supported_engines))
