"""Self-tests of ``requires_inductor_backend``: GPU+triton, or the C++ backend on a CPU-only machine."""

import unittest

from torch_testing_ext import devices, inductor_utils
from torch_testing_ext.common_utils import TestCase, run_tests
from torch_testing_ext.inductor_utils import (
    CPU_INDUCTOR_SKIP_REASON,
    GPU_INDUCTOR_SKIP_REASON,
    inductor_backend_skip_reason,
)
from torch_testing_ext.ranks.skip_checks import pending_skip

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


if __name__ == "__main__":
    run_tests()
