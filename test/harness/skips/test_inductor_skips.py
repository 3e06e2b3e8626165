"""Self-tests of ``requires_inductor_backend`` (GPU+triton, or the C++ backend on a CPU-only
machine), and of the other Inductor and triton names: ``requires_triton``, ``IS_A100``,
``skipCUDAIf``, ``triton_utils.requires_gpu``."""

import unittest
from unittest import mock

from torch_testing_ext import common_device_type, devices, inductor_utils, triton_utils
from torch_testing_ext._engine.skips.skip_checks import pending_skip
from torch_testing_ext.common_utils import TestCase
from torch_testing_ext.inductor_utils import (
    CPU_INDUCTOR_SKIP_REASON,
    GPU_INDUCTOR_SKIP_REASON,
    inductor_backend_skip_reason,
)

from fixtures import inprocess_cases
from fixtures.fake_devices import changed_facts, pretend_facts


class TestRequiresInductorBackend(TestCase):
    def test_reasons_by_machine(self):
        cases = [
            (dict(accelerator="cuda", gpu_inductor=True, cpu_inductor=True), None),
            (dict(accelerator="cuda", gpu_inductor=False, cpu_inductor=True), GPU_INDUCTOR_SKIP_REASON),
            (dict(accelerator="xpu", gpu_inductor=False, cpu_inductor=False), GPU_INDUCTOR_SKIP_REASON),
            (dict(accelerator=None, gpu_inductor=False, cpu_inductor=True), None),
            (dict(accelerator=None, gpu_inductor=False, cpu_inductor=False), CPU_INDUCTOR_SKIP_REASON),
        ]
        for changes, expected in cases:
            with self.subTest(**changes):
                self.assertEqual(inductor_backend_skip_reason(changed_facts(**changes)), expected)

    def test_matches_upstream_guard_where_an_accelerator_exists(self):
        accelerator = devices.accelerator_type()
        if accelerator is not None:
            self.assertEqual(inductor_backend_skip_reason() is None, inductor_utils.HAS_GPU)
        else:
            self.assertEqual(inductor_backend_skip_reason() is None, inductor_utils.HAS_CPU)

    def test_decision_is_made_when_the_test_runs(self):
        with pretend_facts(accelerator="cuda", device_count=1, gpu_inductor=False):
            self.assertEqual(pending_skip(inprocess_cases.Compiles("test_compiles")), GPU_INDUCTOR_SKIP_REASON)
            result = unittest.TestResult()
            inprocess_cases.Compiles("test_compiles").run(result)
            self.assertEqual([reason for _, reason in result.skipped], [GPU_INDUCTOR_SKIP_REASON])

    @unittest.skipUnless(inductor_backend_skip_reason() is None, "no Inductor backend here")
    def test_runs_and_compiles_where_a_backend_exists(self):
        result = unittest.TestResult()
        inprocess_cases.Compiles("test_compiles").run(result)
        self.assertEqual((result.testsRun, result.skipped, result.errors, result.failures), (1, [], [], []))


def _reason(decorator):
    cls = type("Case", (unittest.TestCase,), {"test_x": decorator(lambda self: None)})
    return pending_skip(cls("test_x"))


class TestTritonAndGpuNames(TestCase):
    def test_requires_triton(self):
        for triton, expected in [(False, "requires triton"), (True, None)]:
            with self.subTest(triton=triton), pretend_facts(triton=triton):
                decorator = inductor_utils.requires_triton()
            self.assertEqual(_reason(decorator), expected)

    def test_requires_gpu_is_upstreams_has_gpu(self):
        self.assertEqual(_reason(triton_utils.requires_gpu), None if inductor_utils.HAS_GPU else "requires gpu")

    def test_is_a100(self):
        # (accelerator, triton, shared memory a block may opt into, expected)
        rows = [(None, False, None, False), ("cuda", True, 166912, True), ("cuda", False, 166912, False),
                ("cuda", True, 232448, False), ("xpu", True, None, False)]
        for accelerator, triton, shared, expected in rows:
            with self.subTest(accelerator=accelerator, triton=triton, shared=shared), \
                    pretend_facts(accelerator=accelerator, device_count=1 if accelerator else 0, triton=triton), \
                    mock.patch.object(devices, "gpu_shared_memory_per_block", lambda s=shared: s):
                self.assertIs(inductor_utils._is_a100(), expected)
        if devices.accelerator_type() != "cuda":
            self.assertIs(bool(inductor_utils.IS_A100), False)

    def test_skip_cuda_if_skips_on_cuda_only(self):
        self.assertIs(inductor_utils.skipCUDAIf, common_device_type.skipCUDAIf)
        for device_type, expected in [("cuda", "not on cuda"), ("cpu", None)]:
            cls = type("Case", (unittest.TestCase,), {
                "device_type": device_type,
                "test_x": inductor_utils.skipCUDAIf(True, "not on cuda")(lambda self: None)})
            with self.subTest(device_type=device_type):
                self.assertEqual(pending_skip(cls("test_x")), expected)
