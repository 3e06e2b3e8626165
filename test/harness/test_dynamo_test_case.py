"""Self-tests of ``torch_testing_ext.dynamo_test_case``, the face of ``torch._dynamo.test_case``:
``TestCase`` gives every test a clean Dynamo, and ``run_tests(needs=...)`` runs a file only
when what it needs is there."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import torch

from torch_testing_ext import devices
from torch_testing_ext.common_utils import TestCase as PlainTestCase
from torch_testing_ext.common_utils import run_tests
from torch_testing_ext.dynamo_test_case import TestCase

from fixtures import inprocess_cases

SCRIPT = textwrap.dedent("""
    import sys
    from torch_testing_ext.dynamo_test_case import TestCase, run_tests

    class TestRuns(TestCase):
        def test_runs(self):
            print("RAN")

    if __name__ == "__main__":
        run_tests(needs=tuple(sys.argv.pop(1).split(",")))
""")


class TestDynamoTestCase(PlainTestCase):
    def test_every_test_starts_with_clean_counters_and_grad_mode(self):
        Counting = inprocess_cases.Counting
        Counting.seen = []
        suite = unittest.TestSuite([Counting("test_a"), Counting("test_b")])
        result = unittest.TestResult()
        suite.run(result)
        self.assertEqual(result.errors + result.failures, [])
        self.assertEqual(Counting.seen, [0, 0])
        self.assertTrue(torch.is_grad_enabled())

    def test_errors_are_raised_not_suppressed(self):
        class Raises(TestCase):
            def test_config(self):
                import torch._dynamo.config

                self.assertFalse(torch._dynamo.config.suppress_errors)

        result = unittest.TestResult()
        Raises("test_config").run(result)
        self.assertTrue(result.wasSuccessful(), result.failures)


class TestRunTestsNeeds(PlainTestCase):
    def run_script(self, needs):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "test_needs.py")
            with open(path, "w") as script:
                script.write(SCRIPT)
            return subprocess.run([sys.executable, path, needs], capture_output=True, text=True,
                                  timeout=120)

    def test_a_missing_module_runs_nothing_and_says_so(self):
        completed = self.run_script("json,no_such_module_here")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNotIn("RAN", completed.stdout)
        self.assertIn("skipped: needs no_such_module_here", completed.stderr)

    def test_a_dotted_need_whose_package_is_missing_says_so(self):
        completed = self.run_script("no_such_package_here.submodule")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertNotIn("RAN", completed.stdout)
        self.assertIn("skipped: needs no_such_package_here.submodule", completed.stderr)

    def test_cuda_is_needed_only_where_it_is_missing(self):
        completed = self.run_script("cuda")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        has_cuda = devices.accelerator_type() == "cuda"
        self.assertEqual("RAN" in completed.stdout, has_cuda, completed.stderr)

    def test_present_needs_run_the_file(self):
        completed = self.run_script("json")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertIn("RAN", completed.stdout)


if __name__ == "__main__":
    run_tests()
