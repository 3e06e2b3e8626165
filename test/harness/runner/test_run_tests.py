"""Self-tests of run_tests(): the command-line flags of every test file.

The flags are run in this process (``run_tests(argv, module=...)`` on the fixture module, its
output captured); one subprocess run per whole-file contract shows the same from the command
line: a failing file exits 1 with its JUnit report, ``--use-pytest`` hands the file to
pytest, and a top-level ``run_tests()`` without a main guard runs the tests once. (A bad
argument's exit status 2 as a process: worlds/test_settings.py.)
"""

import contextlib
import io
import os
import sys
import tempfile
import types
import xml.etree.ElementTree as ET
from unittest import mock

from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.runner import main as file_runner_main
from torch_testing_ext._engine.testcase.tensor_testcase import current_seed, set_default_seed
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures import simple_cases
from fixtures.runs import assert_outcomes, run_file

FIXTURE = simple_cases.__file__
ALL_IDS = ["Alpha.test_one", "Alpha.test_prints_seed", "Alpha.test_skipped", "Alpha.test_two",
           "Beta.test_param_n_1", "Beta.test_param_n_2", "Failing.test_fails"]


def run_here(*args, **env):
    """``run_tests(args)`` on the fixture module in this process: (exit status, stdout, stderr).
    The environment, the default seed and the argv it reads are restored afterwards."""
    out, err, seed = io.StringIO(), io.StringIO(), current_seed()
    code = None
    with mock.patch.dict(os.environ, env), mock.patch.object(sys, "argv", [FIXTURE]), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run_tests(list(args), module=simple_cases)
        except SystemExit as exit_:
            code = exit_.code
        finally:
            set_default_seed(seed)
    return code, out.getvalue(), err.getvalue()


class TestModuleLevelFunctions(TestCase):
    def test_a_file_with_test_functions_runs_them_too(self):
        # run_tests() alone would run the passing class and never the failing function.
        source = ("from torch_testing_ext.common_utils import TestCase, run_tests\n"
                  "class TestA(TestCase):\n    def test_a(self):\n        pass\n"
                  "def test_b():\n    assert 1 == 2, 'the function ran'\n"
                  "if __name__ == '__main__':\n    run_tests()\n")
        with tempfile.TemporaryDirectory(prefix="selftest-functions-") as directory:
            path = os.path.join(directory, "test_mixed.py")
            with open(path, "w") as file:
                file.write(source)
            run = run_file(path, cwd=directory)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("module-level test functions test_b", run.stderr)
        self.assertIn("the function ran", run.stdout)
        self.assertNotIn("PytestAssertRewriteWarning", run.stdout + run.stderr)  # about this package
        self.assertEqual(sorted(run.statuses.values(), key=str), sorted(
            [Status.PASSED, Status.FAILED], key=str), run.statuses)


class TestRunTestsFlags(TestCase):
    def test_list_prints_ids_and_runs_nothing(self):
        code, out, err = run_here("--list")
        self.assertEqual((code, out.split()), (0, ALL_IDS), err)
        self.assertNotIn("Ran", err)

    def test_k_selects_by_substring(self):
        self.assertEqual(run_here("--list", "-k", "param")[1].split(), ["Beta.test_param_n_1", "Beta.test_param_n_2"])
        self.assertEqual(run_here("--list", "-k", "one", "-k", "two")[1].split(), ["Alpha.test_one", "Alpha.test_two"])

    def test_test_ids_select(self):
        code, out, _ = run_here("--list", "Beta", "Alpha.test_one")
        self.assertEqual(out.split(), ["Beta.test_param_n_1", "Beta.test_param_n_2", "Alpha.test_one"])
        code, _, err = run_here("Alpha.test_one", "-v")
        self.assertEqual(code, 0, err)
        self.assertIn("Ran 1 test", err)

    def test_exit_status_reflects_failure(self):
        self.assertEqual(run_here()[0], 0)
        code, _, err = run_here(SIMPLE_CASES_FAIL="1")
        self.assertEqual(code, 1)
        self.assertIn("forced failure", err)

    def test_save_xml_writes_junit(self):
        with tempfile.TemporaryDirectory() as reports:
            code, _, err = run_here("--save-xml", reports, SIMPLE_CASES_FAIL="1")
            self.assertEqual(code, 1, err)
            self.assertEqual(os.listdir(reports), ["TEST-simple_cases.xml"])
            root = ET.parse(os.path.join(reports, "TEST-simple_cases.xml")).getroot()
        self.assertEqual(root.tag, "testsuites")
        suite = root.find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")),
                         ("7", "1", "0", "1"))
        cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
        self.assertEqual(len(cases), 7)
        self.assertIn("forced failure", cases[("Failing", "test_fails")].find("failure").text)
        self.assertEqual(cases[("Alpha", "test_skipped")].find("skipped").get("message"), "skipped on purpose")
        self.assertIsNone(cases[("Alpha", "test_one")].find("failure"))
        self.assertGreaterEqual(float(cases[("Alpha", "test_one")].get("time")), 0.0)

    def test_bad_arguments_exit_2_with_one_line(self):
        for args in (["--no-such-flag"], ["--repeat", "0"], ["--seed", "x"], ["NoSuchClass"],
                     ["Alpha.test_missing"]):
            with self.subTest(args=args):
                code, out, err = run_here(*args)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn("simple_cases.py: error:", err)
                self.assertNotIn("Traceback", err)

    def test_repeat_runs_again(self):
        code, _, err = run_here("Alpha.test_one", "--repeat", "3")
        self.assertEqual(code, 0)
        self.assertEqual(err.count("Ran 1 test"), 3)

    def test_seed_changes_setup_seed(self):
        _, default_out, _ = run_here("Alpha.test_prints_seed")
        _, again_out, _ = run_here("Alpha.test_prints_seed")
        _, seeded_out, _ = run_here("Alpha.test_prints_seed", "--seed", "7")
        self.assertEqual(default_out, again_out)
        self.assertNotEqual(default_out, seeded_out)
        self.assertIn("first random:", seeded_out)

    def test_accept_sets_expecttest_accept_for_the_run(self):
        seen = []

        def record(test):
            seen.append(os.environ.get("EXPECTTEST_ACCEPT"))

        with mock.patch.dict(os.environ), mock.patch.object(simple_cases.Alpha, "test_one", record):
            os.environ.pop("EXPECTTEST_ACCEPT", None)
            code, _, err = run_here("Alpha.test_one", "--accept")
        self.assertEqual((code, seen), (0, ["1"]), err)


class TestImportedForAChild(TestCase):
    """When a top-level ``run_tests()`` does nothing: only while multiprocessing runs the script
    as ``__mp_main__`` in another process."""

    def importing(self, mp_main_name):
        child_main = types.ModuleType(mp_main_name)
        with mock.patch.dict(sys.modules, {"__mp_main__": child_main}):
            return file_runner_main._importing_script_for_a_child()

    def test_the_script_run_as_mp_main_in_a_child(self):
        self.assertTrue(self.importing("__mp_main__"))

    def test_a_stale_name_for_an_earlier_main_is_not_a_child(self):
        # multiprocessing imported before runpy replaced __main__ (python -m pkg.test_x with a
        # .pth or sitecustomize that imports it): the tests must still run.
        self.assertFalse(self.importing("__main__"))

    def test_the_parent_itself(self):
        with mock.patch.dict(sys.modules, {"__mp_main__": sys.modules["__main__"]}):
            self.assertFalse(file_runner_main._importing_script_for_a_child())


class TestAsAScript(TestCase):
    """The same command line, once each, as the file's own process."""

    def test_a_failing_file_exits_1_with_its_report(self):
        run = run_file(FIXTURE, env={"SIMPLE_CASES_FAIL": "1"})
        self.assertEqual(run.returncode, 1, run.output)
        assert_outcomes(self, run, passed=5, failed=1, skipped=1)
        self.assertIn("FAILED (failures=1, skipped=1)", run.stderr)

    def test_use_pytest(self):
        run = run_file(FIXTURE, "--use-pytest", "-k", "param")
        self.assertEqual(run.returncode, 0, run.output)
        self.assertIn("2 passed", run.stdout)
        assert_outcomes(self, run, passed=2)

    def test_run_tests_at_top_level_without_a_main_guard(self):
        # Each rank imports the script; its top-level run_tests() must not run the tests there.
        run = run_file(os.path.join(os.path.dirname(FIXTURE), "unguarded_script.py"))
        self.assertEqual(run.returncode, 0, run.output)
        assert_outcomes(self, run, passed=1)
        self.assertEqual(run.stderr.count("Ran "), 1, run.stderr)
