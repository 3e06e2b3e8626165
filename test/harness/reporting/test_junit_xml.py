"""Reports stay readable whatever a test prints: every JUnit XML text is legal XML.

A NUL byte or the ESC of a terminal colour code in a failure message or in captured output
once made the whole report unreadable, so the driver called the file crashed "without a
failed test", did not rerun it and lost its times. ``reporting.junit_xml.xml_text`` now
makes every text legal when a report is written, and the driver reads a report that another
writer left illegal with those characters escaped.

The issue's reproduction in two halves: a rank that prints and fails with those characters,
run by ``run_tests`` in this process, writes a legal report that says so
(``fixtures/garbled_rank.py``); and the driver, as a process, given a test file whose report is
illegal (``fixtures/illegal_junit_writer.py``, no torch), reruns its failed test, writes a
legal report of its own, and measures its times.
"""

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from torch_testing_ext._engine.driver.file_reports import read_outcomes
from torch_testing_ext._engine.reporting.junit_xml import xml_text
from torch_testing_ext._engine.reporting.status import Status
from torch_testing_ext._engine.testcase.tensor_testcase import current_seed, set_default_seed
from torch_testing_ext.common_utils import TestCase, run_tests

from fixtures import garbled_rank, illegal_junit_writer
from fixtures.runs import checkout_env, driver_main


class TestXmlText(TestCase):
    def test_terminal_escapes_are_dropped(self):
        self.assertEqual(xml_text("\x1b[31mred\x1b[0m"), "red")
        self.assertEqual(xml_text("\x1b[1;32;40mgreen\x1b[K"), "green")
        self.assertEqual(xml_text("\x1b]0;window title\x07after"), "after")
        self.assertEqual(xml_text("\x1b]8;;http://x\x1b\\link"), "link")

    def test_other_illegal_characters_are_escaped(self):
        self.assertEqual(xml_text("nul\x00 bell\x07 vt\x0b"), "nul\\x00 bell\\x07 vt\\x0b")
        self.assertEqual(xml_text("\ufffe\ud800"), "\\ufffe\\ud800")
        self.assertEqual(xml_text("\x1bc"), "\\x1bc")  # an escape we do not know is shown

    def test_legal_text_is_unchanged(self):
        for text in ("", "plain", "tab\tnew\nline\r", "café ☃ \U0001f600", "\x7f\x85"):
            with self.subTest(text=text):
                self.assertEqual(xml_text(text), text)

    def test_every_text_and_attribute_of_a_report_parses(self):
        with tempfile.TemporaryDirectory(prefix="legal-xml-") as directory:
            path = Path(directory, "x.xml")
            path.write_bytes(b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites><testsuite>"
                             b"<testcase classname=\"TestA\" name=\"test_\x1b[1mx\">"
                             b"<failure message=\"\x1b[31mbad\x00\">tb\x00</failure></testcase>"
                             b"</testsuite></testsuites>")
            with self.assertRaises(ET.ParseError):
                ET.parse(path)
            [outcome] = read_outcomes(path)  # the driver reads another writer's report anyway
        self.assertEqual((outcome.name, outcome.status, outcome.message, outcome.details),
                         ("test_x", Status.FAILED, "bad\\x00", "tb\\x00"))


class TestGarbledRank(TestCase):
    """The rank's side: ``run_tests --save-xml`` on ``fixtures/garbled_rank.py`` in this process
    (its ranks forked from this process's fork server)."""

    def test_a_garbled_failing_rank_is_a_failed_test_in_a_legal_report(self):
        with tempfile.TemporaryDirectory(prefix="legal-xml-") as reports:
            out, err, seed = io.StringIO(), io.StringIO(), current_seed()
            with mock.patch.object(sys, "argv", [garbled_rank.__file__]), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    run_tests(["--save-xml", reports], module=garbled_rank)
                except SystemExit as exit_:
                    status = exit_.code
                finally:
                    set_default_seed(seed)
            self.assertEqual(status, 1, out.getvalue() + err.getvalue())
            path = Path(reports, "TEST-garbled_rank.xml")
            report = ET.parse(path).getroot()  # legal XML
            [outcome] = read_outcomes(path)
        [case] = report.iter("testcase")
        failure = case.find("failure")
        self.assertIn("AssertionError: bad\\x00 message\\x07", failure.text)
        self.assertIn("[rank 1] red\\x00 output", failure.text)
        self.assertEqual((outcome.class_name, outcome.name, outcome.status),
                         ("TestGarbled", "test_garbled_rank", Status.FAILED))


class TestIllegalReportThroughTheDriver(TestCase):
    """The driver's side: ``python -m torch_testing_ext.run_test --test-dir tests`` on a file whose
    report is not legal XML; then ``--update-times`` (the driver's main, in this process)."""

    def test_a_failed_test_in_an_illegal_report_is_rerun_reported_and_timed(self):
        with tempfile.TemporaryDirectory(prefix="legal-xml-") as directory:
            tests = Path(directory, "tests")
            tests.mkdir()
            shutil.copy(illegal_junit_writer.__file__, tests / "test_garbled.py")
            env = checkout_env()
            result = subprocess.run(
                [sys.executable, "-m", "torch_testing_ext.run_test", "--test-dir", str(tests),
                 "--save-xml", "reports", "--times-file", "times.json"],
                cwd=directory, env=env, capture_output=True, text=True, timeout=300)
            out = result.stdout
            self.assertEqual(result.returncode, 1, out + result.stderr)
            self.assertIn("FAILED      test_garbled  0 passed, 1 failed, 0 skipped", out)
            self.assertIn("rerun 2 of TestGarbled.test_garbled_rank: failed", out)
            self.assertIn("  tests failed         1\n", out)
            self.assertIn("  timed out / crashed  0 files\n", out)
            report = ET.parse(Path(directory, "reports", "test_garbled.xml")).getroot()  # legal XML
            [case] = [c for c in report.iter("testcase") if c.get("name") == "test_garbled_rank"]
            failure = case.find("failure")
            self.assertIn("AssertionError: bad\\x00 message\\x07", failure.text)
            self.assertIn("[rank 1] red\\x00 output", failure.text)
            reruns = case.findall("rerunFailure")
            self.assertEqual(len(reruns), 2)
            for rerun in reruns:  # each rerun's output, as it printed it, made legal too
                self.assertEqual(rerun.find("system-out").text.strip(), "red\\x00 output")
            # The times of a run with a failure are measured all the same.
            status, _, _ = driver_main(["--test-dir", str(tests), "--update-times", "reports", "--times-file",
                                        "times.json"], directory)
            self.assertEqual(status, 0)
            self.assertIn("test_garbled", Path(directory, "times.json").read_text())
