"""Self-tests of ``benchmarks/ledger_side_by_side.py`` that run no upstream file: it reads each
test's outcome and the first line of its failure from JUnit XML, lists the tests whose outcome
differs between the ledger's modes, reads back a kept directory, and rejects bad arguments."""

import contextlib
import importlib.util
import io
import pathlib
import subprocess
import sys
import tempfile
import unittest

from fixtures.paths import REPO

SCRIPT = REPO / "benchmarks" / "ledger_side_by_side.py"
spec = importlib.util.spec_from_file_location("ledger_side_by_side", SCRIPT)
ledger_side_by_side = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = ledger_side_by_side
spec.loader.exec_module(ledger_side_by_side)

# A report as a test file writes it with --save-xml: a pass, a skip, a test whose message only
# sums up the ranks (the rank's own exception is in the details), and a plain error.
REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="test_x" tests="4">
<testcase classname="test_x.TestX" name="test_pass" time="0.1"/>
<testcase classname="test_x.TestX" name="test_skip" time="0.0">
<skipped message="Need at least 2 CUDA devices"/></testcase>
<testcase classname="test_x.TestX" name="test_counts" time="1.0">
<failure message="2 of 2 ranks did not pass (rank 0, 1)" type="failed">
RankFailure: 2 of 2 ranks did not pass (rank 0, 1)
rank 0 failed:
[rank 0] Traceback (most recent call last):
[rank 0]   File "test_x.py", line 9, in test_counts
[rank 0] AssertionError: 0 != 1
</failure></testcase>
<testcase classname="test_x.TestX" name="test_error" time="0.2"><error message="">Traceback (most recent call last):
  File "test_x.py", line 12, in test_error
RuntimeError: boom
</error></testcase>
</testsuite></testsuites>
"""


class TestLedgerSideBySide(unittest.TestCase):
    def test_reads_outcomes_and_the_first_line_of_each_failure(self):
        with tempfile.TemporaryDirectory() as tmp:
            pathlib.Path(tmp, "TEST-test_x.xml").write_text(REPORT)
            found = ledger_side_by_side.read_report(pathlib.Path(tmp))
        self.assertEqual({test: outcome.kind for test, outcome in found.items()}, {
            "TestX.test_pass": "passed", "TestX.test_skip": "skipped",
            "TestX.test_counts": "failed", "TestX.test_error": "failed"})
        self.assertEqual(found["TestX.test_skip"].why, "Need at least 2 CUDA devices")
        self.assertEqual(found["TestX.test_counts"].why,
                         "2 of 2 ranks did not pass (rank 0, 1); rank 0: AssertionError: 0 != 1")
        self.assertEqual(found["TestX.test_error"].why, "RuntimeError: boom")

    def test_a_missing_or_broken_report_gives_no_tests(self):
        with tempfile.TemporaryDirectory() as tmp:
            pathlib.Path(tmp, "TEST-broken.xml").write_text("<testsuites><testcase")
            self.assertEqual(ledger_side_by_side.read_report(pathlib.Path(tmp)), {})
            self.assertEqual(ledger_side_by_side.read_report(pathlib.Path(tmp, "absent")), {})

    def test_lists_only_the_tests_that_ended_differently(self):
        Outcome, ModeRun = ledger_side_by_side.Outcome, ledger_side_by_side.ModeRun
        runs = {
            "record": ModeRun(1, 2.0, {"T.a": Outcome("passed"), "T.b": Outcome("failed", "0 != 1"),
                                       "T.c": Outcome("skipped", "why")}),
            "off": ModeRun(0, 1.5, {"T.a": Outcome("passed"), "T.b": Outcome("passed"),
                                    "T.c": Outcome("skipped", "another why")}),
        }
        self.assertEqual(ledger_side_by_side.differences(runs), ["T.b: record failed (0 != 1); off passed"])
        lines, same = ledger_side_by_side.table([("test_x.py", runs)], ["record", "off"])
        self.assertFalse(same)
        self.assertIn("| test_x.py | 3 | 1 / 1 / 1 | 2.0 s | 2 / 1 / 0 | 1.5 s | no (1) |", lines)
        self.assertIn("test_x.py T.b: record failed (0 != 1); off passed", lines)

    def test_a_crash_without_a_failing_test_counts_one_failure(self):
        run = ledger_side_by_side.ModeRun(-1, 900.0, {})
        self.assertEqual(run.cells(), ["0 / 0 / 1 (exit -1)", "900.0 s"])

    def test_compare_reads_a_kept_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            for mode, status in (("record", "1 3.5"), ("off", "0 3.0")):
                reports = pathlib.Path(tmp, mode, "test_x")
                reports.mkdir(parents=True)
                text = REPORT if mode == "record" else REPORT.replace('message="2 of 2', 'message="x').replace(
                    "<failure", "<skipped").replace("</failure>", "</skipped>")
                (reports / "TEST-test_x.xml").write_text(text)
                pathlib.Path(tmp, mode, "test_x.status").write_text(status + "\n")
            output = io.StringIO()
            with contextlib.redirect_stdout(output):
                status = ledger_side_by_side.main(["--compare", tmp])
        self.assertEqual(status, 1)
        self.assertIn("| test_x.py | 4 | 1 / 1 / 2 | 3.5 s | 1 / 2 / 1 | 3.0 s | no (1) |", output.getvalue())
        self.assertIn("TestX.test_counts: record failed", output.getvalue())

    def test_bad_arguments_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            text_file = pathlib.Path(tmp, "notes.txt")
            text_file.write_text("x")
            python_file = pathlib.Path(tmp, "test_x.py")
            python_file.write_text("")
            for argv in ([str(text_file)], [], [str(python_file), "--modes", "record"],
                         [str(python_file), "--modes", "record,on"], ["--compare", tmp, str(python_file)],
                         ["--compare", str(pathlib.Path(tmp, "absent"))]):
                with self.subTest(argv=argv):
                    stderr = io.StringIO()
                    with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
                        ledger_side_by_side.parse_args(argv)
                    self.assertEqual(exit_.exception.code, 2)
                    self.assertIn("error:", stderr.getvalue())

    def test_runs_from_a_checkout(self):
        done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Migrated upstream test files on our harness", done.stdout)
