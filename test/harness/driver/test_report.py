"""What the driver tells at the end and on the way: a summary table and closing line that say the
same numbers (tests apart from files that timed out or crashed), the first failure's message
kept whole when a failing file's output is cut, a line when failed tests are rerun, and the
files a fail-fast stop did not run.

The table and the output are checked on results built here (no process); the rerun and stop
lines once through a real run on a tiny torch-free tree (``fixtures/unittest_protocol.py``).
"""

import re
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from torch_testing_ext._engine.driver.plan import PlanEntry
from torch_testing_ext._engine.driver.report import shown_output, summary_text
from torch_testing_ext._engine.driver.results import Attempt, CaseOutcome, EntryResult
from torch_testing_ext._engine.reporting.status import Status

from fixtures.paths import HARNESS, REPO
from fixtures.runs import checkout_env


def outcome(test, status, details=""):
    cls, _, name = test.partition(".")
    return CaseOutcome(cls, name, status, 0.1, details.splitlines()[-1] if details else "", details)


def attempt(status, *outcomes, exit_code=None, output=""):
    code = exit_code if exit_code is not None else int(status != Status.PASSED)
    return Attempt(status, code, 1.0, list(outcomes), output)


def summary(results, not_started=()):
    return summary_text(results, list(not_started), 2.0, lambda name, selection: " ".join(["python", name, *selection]),
                        " (stopped after the first failure; --keep-going runs them)" if not_started else "")


def table(text):
    """{label: value} of the summary table's rows."""
    rows = re.findall(r"^  (\S[\w /]*?)\s{2,}(\S.*)$", text.split("run_test summary")[1], re.MULTILINE)
    return dict(rows)


def closing(text):
    """(passed, failed, skipped, the rest) of the closing line."""
    match = re.search(r"^summary: (\d+) passed, (\d+) failed, (\d+) skipped(.*)$", text, re.MULTILINE)
    assert match, text
    return int(match[1]), int(match[2]), int(match[3]), match[4]


class TestTableAndClosingLineAgree(unittest.TestCase):
    """Each case: the table's tests passed/failed/skipped are the closing line's, and a file that
    timed out or crashed is named as a file in both, never as a failed test."""

    def assert_agree(self, text, passed, failed, skipped, files=""):
        rows = table(text)
        self.assertEqual((int(rows["tests passed"]), int(rows["tests failed"]), int(rows["tests skipped"])),
                         (passed, failed, skipped), text)
        self.assertEqual(closing(text), (passed, failed, skipped, files), text)

    def test_a_file_that_crashes_before_reporting_a_test(self):
        crash = EntryResult(PlanEntry("test_crash"), attempt(Status.DIED, exit_code=-11))
        text = summary([crash])
        self.assertEqual(table(text)["timed out / crashed"], "1 file")
        self.assert_agree(text, 0, 0, 0, ", 1 file timed out or crashed")
        self.assertIn("python test_crash    # killed by SIGSEGV without a failed test", text)

    def test_a_file_that_times_out_after_some_tests(self):
        hung = EntryResult(PlanEntry("test_hang"), attempt(Status.TIMED_OUT, outcome("TestH.test_ok", Status.PASSED),
                                                           exit_code=-9))
        self.assert_agree(summary([hung]), 1, 0, 0, ", 1 file timed out or crashed")

    def test_a_flaky_test_counts_as_passed_in_both(self):
        first = attempt(Status.FAILED, outcome("TestF.test_ok", Status.PASSED),
                        outcome("TestF.test_flaky", Status.FAILED, "AssertionError: once"))
        result = EntryResult(PlanEntry("test_flaky"), first,
                             {"TestF.test_flaky": [attempt(Status.PASSED, outcome("TestF.test_flaky", Status.PASSED))]})
        text = summary([result])
        self.assert_agree(text, 2, 0, 0)
        self.assertEqual(table(text)["flaky"], "1")

    def test_a_consistent_failure_with_two_failed_subtests_is_one_failed_test(self):
        failing = [outcome("TestS.test_sub", Status.FAILED, "AssertionError: a"),
                   outcome("TestS.test_sub", Status.FAILED, "AssertionError: b")]
        rerun = attempt(Status.FAILED, *failing)
        result = EntryResult(PlanEntry("test_sub"), attempt(Status.FAILED, outcome("TestS.test_ok", Status.SKIPPED),
                                                            *failing),
                             {"TestS.test_sub": [rerun, rerun]})
        text = summary([result])
        self.assert_agree(text, 0, 1, 1)
        self.assertIn("  python test_sub TestS.test_sub\n", text)

    def test_a_failing_setupclass_is_a_failed_test_reproduced_by_its_class(self):
        first = attempt(Status.FAILED, outcome("TestC.setUpClass", Status.ERROR, "RuntimeError: boom"))
        result = EntryResult(PlanEntry("test_cls"), first, {"TestC": [first, first]})
        text = summary([result])
        self.assert_agree(text, 0, 1, 0)
        self.assertIn("  python test_cls TestC\n", text)

    def test_files_not_run_after_a_stop_are_named_with_the_way_to_run_them(self):
        failed = EntryResult(PlanEntry("test_a"), attempt(Status.FAILED, outcome("TestA.test_x", Status.FAILED, "E")))
        text = summary([failed], [PlanEntry("test_b"), PlanEntry("distributed/test_c")])
        self.assertEqual(table(text)["not run"], "2 files (stopped after the first failure; --keep-going runs them): "
                                                 "test_b, distributed/test_c")
        self.assert_agree(text, 0, 1, 0, ", 2 files not run")


class TestFirstFailureKept(unittest.TestCase):
    FIRST = "Traceback (most recent call last):\n  File \"t.py\", line 3, in test_a\nKeyError: 'THE FIRST FAILURE'"

    def test_the_first_failure_is_shown_whole_when_the_tail_lacks_it(self):
        later = "\n".join(f"ValueError: later failure {i}" for i in range(200))
        run = attempt(Status.FAILED, outcome("TestA.test_a", Status.ERROR, self.FIRST),
                      outcome("TestA.test_b", Status.ERROR, "ValueError: later failure 0"),
                      output=f"noise\n{self.FIRST}\n{later}\n")
        shown = shown_output(run, lines=60)
        self.assertIn(self.FIRST, shown)
        self.assertIn("the first failure, TestA.test_a", shown)
        self.assertTrue(shown.endswith("ValueError: later failure 199"), shown[-200:])
        self.assertLess(len(shown.splitlines()), 70)

    def test_a_first_failure_in_the_tail_is_not_repeated(self):
        run = attempt(Status.FAILED, outcome("TestA.test_a", Status.ERROR, self.FIRST),
                      output="noise\n" * 500 + self.FIRST + "\n")
        shown = shown_output(run, lines=60)
        self.assertEqual(shown.count("THE FIRST FAILURE"), 1, shown)
        self.assertTrue(shown.startswith("[... 443 earlier lines ...]\n"), shown[:100])

    def test_short_output_is_shown_as_it_is(self):
        run = attempt(Status.FAILED, outcome("TestA.test_a", Status.ERROR, self.FIRST), output="a\nb\n")
        self.assertEqual(shown_output(run), "a\nb")


FAILING = """
import unittest
from fixtures.unittest_protocol import run_tests

class TestD(unittest.TestCase):
    def test_bad(self):
        self.assertEqual(1, 2)

if __name__ == "__main__":
    run_tests()
"""

PASSING = FAILING.replace("self.assertEqual(1, 2)", "pass")


class TestWhatTheDriverSays(unittest.TestCase):
    """A real run: the rerun line comes before the reruns, and a stop names what did not run."""

    def run_driver(self, *args):
        with tempfile.TemporaryDirectory(prefix="driver-summary-") as root:
            for name, body in {"test_a_fail": FAILING, "test_b_pass": PASSING, "test_c_pass": PASSING}.items():
                Path(root, "test").mkdir(exist_ok=True)
                Path(root, "test", f"{name}.py").write_text(textwrap.dedent(body))
            return subprocess.run([sys.executable, str(REPO / "run_test.py"), "--test-dir", str(Path(root, "test")),
                                   *args], cwd=root, env=checkout_env(HARNESS),
                                  capture_output=True, text=True, timeout=120)

    def test_reruns_are_announced_and_a_stop_names_the_files_not_run(self):
        result = self.run_driver()
        out = result.stdout
        self.assertEqual(result.returncode, 1, out + result.stderr)
        announced = "    test_a_fail: 1 test failed; rerunning it alone in a fresh process, up to 2 times"
        self.assertIn(announced, out)
        self.assertLess(out.index(announced), out.index("rerun 1 of TestD.test_bad: failed"))
        self.assertIn("--no-rerun skips this", out)
        self.assertRegex(out, r"not run\s+2 files \(stopped after the first failure; --keep-going runs them\): "
                              r"test_b_pass, test_c_pass\n")
        self.assertIn("summary: 0 passed, 1 failed, 0 skipped, 2 files not run", out)

    def test_no_rerun_line_without_reruns(self):
        result = self.run_driver("--no-rerun", "--keep-going")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertNotIn("rerun", result.stdout)
        self.assertNotIn("not run", result.stdout)
        self.assertIn("summary: 2 passed, 1 failed, 0 skipped\n", result.stdout)
