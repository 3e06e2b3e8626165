"""Self-tests of ``torch_testing_ext.dynamo_test_case``, the face of ``torch._dynamo.test_case``:
``TestCase`` gives every test a clean Dynamo, and ``run_tests(needs=...)`` runs a file only
when what it needs is there.

A file calling ``run_tests(needs=...)`` is run in this process as ``python FILE NEEDS`` runs it
(``fixtures/scripts_in_turn.run_as_main``: a fresh ``__main__``, that ``sys.argv``): its exit
status and output are the whole-file contract, and none of it needs a fresh interpreter.
"""

import contextlib
import io
import os
import tempfile
import textwrap
import unittest

import torch

from torch_testing_ext import devices
from torch_testing_ext.common_utils import TestCase as PlainTestCase
from torch_testing_ext.dynamo_test_case import TestCase

from fixtures import inprocess_cases
from fixtures.scripts_in_turn import run_as_main

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
        """``python test_needs.py NEEDS`` in this process: (exit status, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "test_needs.py")
            with open(path, "w") as script:
                script.write(SCRIPT)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                    self.assertRaises(SystemExit) as exited:
                run_as_main(path, [needs])
        return exited.exception.code, out.getvalue(), err.getvalue()

    def test_a_missing_module_runs_nothing_and_says_so(self):
        code, out, err = self.run_script("json,no_such_module_here")
        self.assertEqual((code, out, err), (0, "", "test_needs.py: skipped: needs no_such_module_here\n"))

    def test_a_dotted_need_whose_package_is_missing_says_so(self):
        code, out, err = self.run_script("no_such_package_here.submodule")
        self.assertEqual((code, out, err), (0, "", "test_needs.py: skipped: needs no_such_package_here.submodule\n"))

    def test_cuda_is_needed_only_where_it_is_missing(self):
        code, out, err = self.run_script("cuda")
        self.assertEqual(code, 0, err)
        has_cuda = devices.accelerator_type() == "cuda"
        self.assertEqual(out, "RAN\n" if has_cuda else "", err)
        if not has_cuda:
            self.assertEqual(err, "test_needs.py: skipped: needs cuda\n")

    def test_present_needs_run_the_file(self):
        code, out, err = self.run_script("json")
        self.assertEqual((code, out), (0, "RAN\n"), err)
        self.assertRegex(err, r"\nRan 1 test in [\d.]+s\n\nOK\n$")
