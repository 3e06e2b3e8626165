"""Class- and module-level setup and teardown errors (setUpClass, tearDownClass, setUpModule,
tearDownModule) are reported as unittest reports them: ``ERROR: setUpClass (module.Class)`` in
the summary, exit status 1, and a ``<testcase>`` with its ``<error>`` in the JUnit XML; the
driver reads that report as a failure of the file and reruns what reproduces it.

``run_tests()`` runs on ``fixtures/class_level_errors.py`` in this process (one run per place an
error can be), once as ``python FILE`` in a subprocess, and the driver on a torch-free tree.
"""

import contextlib
import io
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures import class_level_errors
from fixtures.paths import HARNESS, REPO
from fixtures.runs import checkout_env, run_file

PLACES = ("setUpClass", "tearDownClass", "setUpModule", "tearDownModule")


def run_here(error, *args):
    """``run_tests`` on the fixture with ``CLASS_LEVEL_ERROR=error``: (status, stderr, {id: case}).
    The SIGTERM handler run_tests installs is put back afterwards."""
    err = io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)
    with tempfile.TemporaryDirectory(prefix="class-level-") as reports, \
            mock.patch.dict(os.environ, {"CLASS_LEVEL_ERROR": error}), \
            contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            run_tests(["--save-xml", reports, *args], module=class_level_errors)
            status = None
        except SystemExit as exit_:
            status = exit_.code
        finally:
            signal.signal(signal.SIGTERM, sigterm)
        cases = {f"{c.get('classname')}.{c.get('name')}": c
                 for xml in Path(reports).glob("*.xml") for c in ET.parse(xml).getroot().iter("testcase")}
    return status, err.getvalue(), cases


class TestRunTestsReportsThem(TestCase):
    def test_each_place_is_an_error_in_the_summary_the_status_and_the_xml(self):
        owner = {"setUpClass": "TestBroken", "tearDownClass": "TestBroken",
                 "setUpModule": class_level_errors.__name__, "tearDownModule": class_level_errors.__name__}
        for place in PLACES:
            with self.subTest(place=place):
                status, err, cases = run_here(place)
                self.assertEqual(status, 1, err)
                self.assertNotIn("TypeError", err)
                self.assertIn(f"ERROR: {place} ({class_level_errors.__name__}", err)
                self.assertIn("FAILED (errors=1)", err)
                case = cases[f"{owner[place]}.{place}"]
                error = case.find("error")
                self.assertEqual(error.get("message"), f"boom in {place}")
                self.assertIn(f"RuntimeError: boom in {place}", error.text)
                self.assertIn("class_level_errors.py", error.text)  # the traceback, from the user's frame
                self.assertNotIn("recording_result", error.text)
                failed = [name for name, c in cases.items() if c.find("error") is not None]
                self.assertEqual(failed, [f"{owner[place]}.{place}"])

    def test_a_failed_setupclass_runs_none_of_its_tests_and_the_others_pass(self):
        _, _, cases = run_here("setUpClass")
        self.assertEqual(sorted(cases), ["TestBroken.setUpClass", "TestOther.test_b"])
        self.assertEqual(list(cases["TestOther.test_b"]), [])  # passed

    def test_a_skipping_setupclass_is_a_skip(self):
        status, err, cases = run_here("skipClass")
        self.assertEqual(status, 0, err)
        skipped = cases["TestBroken.setUpClass"].find("skipped")
        self.assertEqual(skipped.get("message"), "the whole class skips")

    def test_as_a_script(self):
        run = run_file(class_level_errors.__file__, env={"CLASS_LEVEL_ERROR": "setUpClass"})
        self.assertEqual(run.returncode, 1, run.output)
        self.assertIn("ERROR: setUpClass (__main__.TestBroken)", run.output)
        self.assertIn("FAILED (errors=1)", run.output)
        self.assertNotIn("TypeError", run.output)
        self.assertEqual(run.statuses, {"TestBroken.setUpClass": "error", "TestOther.test_b": "passed"})


CLASS_ERROR = """
import unittest
from fixtures.unittest_protocol import run_tests

class TestBroken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("boom in setUpClass")

    def test_a(self):
        pass

class TestOther(unittest.TestCase):
    def test_b(self):
        pass

if __name__ == "__main__":
    run_tests()
"""

MODULE_ERROR = """
import unittest
from fixtures.unittest_protocol import run_tests

def tearDownModule():
    raise RuntimeError("boom in tearDownModule")

class TestFine(unittest.TestCase):
    def test_c(self):
        pass

if __name__ == "__main__":
    run_tests()
"""


class TestTheDriverReadsThem(TestCase):
    def test_a_class_or_module_error_fails_its_file_and_is_rerun_by_what_reproduces_it(self):
        with tempfile.TemporaryDirectory(prefix="class-level-driver-") as root:
            tests = Path(root, "test")
            tests.mkdir()
            (tests / "test_class_error.py").write_text(textwrap.dedent(CLASS_ERROR))
            (tests / "test_module_error.py").write_text(textwrap.dedent(MODULE_ERROR))
            result = subprocess.run([sys.executable, str(REPO / "run_test.py"), "--test-dir", str(tests),
                                     "--keep-going"], cwd=root, env=checkout_env(HARNESS),
                                    capture_output=True, text=True, timeout=120)
            out = result.stdout
            self.assertEqual(result.returncode, 1, out + result.stderr)
            self.assertIn("FAILED      test_class_error  1 passed, 1 failed, 0 skipped", out)
            self.assertIn("FAILED      test_module_error  1 passed, 1 failed, 0 skipped", out)
            self.assertIn("rerun 2 of TestBroken: failed", out)  # the class, alone
            self.assertIn("rerun 2 of test_module_error: failed", out)  # the whole file
            failures = out.split("Failures (each line reproduces one):")[1].split("\n\n")[0].strip().splitlines()
            self.assertEqual(sorted(line.strip() for line in failures),
                             [f"python {os.path.join('test', 'test_class_error.py')} TestBroken",
                              f"python {os.path.join('test', 'test_module_error.py')}"])
            self.assertIn("summary: 2 passed, 2 failed, 0 skipped\n", out)
            report = ET.parse(Path(root, "test-reports", "test_class_error.xml")).getroot()
            [case] = [c for c in report.iter("testcase") if c.get("name") == "setUpClass"]
            self.assertEqual((case.get("classname"), case.find("error").get("message")),
                             ("TestBroken", "boom in setUpClass"))
            self.assertEqual(len(case.findall("rerunError")), 2)
