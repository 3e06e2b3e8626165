"""Recorded times, JUnit reports and rerun verdicts of the shard driver (no processes started)."""

import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from torch_testing_ext._engine.driver.file_reports import (
    JUnitError,
    read_file_runs,
    read_outcomes,
    write_file_report,
)
from torch_testing_ext._engine.driver.measure import measure_runs
from torch_testing_ext._engine.driver.plan import PlanEntry
from torch_testing_ext._engine.driver.results import Attempt, CaseOutcome, EntryResult, FileRun
from torch_testing_ext._engine.driver.times import (
    RecordedTimes,
    TimesFileError,
    load_times,
    merge_times,
    save_times,
)
from torch_testing_ext._engine.reporting.status import Status


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        super().setUp()
        self._temp = tempfile.TemporaryDirectory(prefix="driver-times-")
        self.dir = Path(self._temp.name)

    def tearDown(self):
        self._temp.cleanup()
        super().tearDown()


class TestTimesFile(TempDirTestCase):
    def test_missing_file_is_none(self):
        self.assertIsNone(load_times(self.dir / "absent.json"))

    def test_round_trip_sorted_and_rounded(self):
        times = RecordedTimes({"b": 2.0, "a": 1.23456}, {"a": {"Z": 1.0, "Y": 0.111}},
                              {"a": {"Z.test_b": 0.5, "Z.test_a": 0.504, "Y.test_c": 0.111}})
        path = self.dir / "sub" / ".test-times.json"
        save_times(path, times)
        self.assertEqual(load_times(path),
                         RecordedTimes({"a": 1.23, "b": 2.0}, {"a": {"Y": 0.11, "Z": 1.0}},
                                       {"a": {"Y.test_c": 0.11, "Z.test_a": 0.5, "Z.test_b": 0.5}}))
        text = path.read_text()
        self.assertLess(text.index('"a"'), text.index('"b"'))
        self.assertEqual(json.loads(text)["version"], 1)
        self.assertEqual([p.name for p in path.parent.iterdir()], [".test-times.json"])

    def test_corrupt_files_raise_one_error(self):
        bad = {
            "garbage.json": "{not json",
            "list.json": "[1, 2]",
            "negative.json": '{"files": {"a": -1}}',
            "string.json": '{"files": {"a": "12"}}',
            "bool.json": '{"files": {"a": true}}',
            "classes.json": '{"classes": {"a": [1]}}',
            "tests.json": '{"tests": {"a": {"A.test_x": null}}}',
            "tests_list.json": '{"tests": [1]}',
            "version.json": '{"version": 99, "files": {}}',
        }
        for name, text in bad.items():
            with self.subTest(name=name):
                path = self.dir / name
                path.write_text(text)
                with self.assertRaises(TimesFileError) as caught:
                    load_times(path)
                self.assertNotIn("\n", str(caught.exception))
        binary = self.dir / "binary.json"
        binary.write_bytes(b"\xff\xfe\x00garbage")
        with self.assertRaises(TimesFileError):
            load_times(binary)

    def test_unreadable_file(self):
        with self.assertRaises(TimesFileError):
            load_times(self.dir)  # a directory cannot be read as a file

    def test_merge_replaces_measured_files_keeps_others(self):
        old = RecordedTimes({"a": 10.0, "b": 20.0}, {"a": {"A1": 4.0, "A2": 5.0}, "b": {"B": 19.0}},
                            {"a": {"A1.test_x": 4.0, "A2.test_gone": 5.0}, "b": {"B.test_b": 19.0}})
        new = RecordedTimes({"a": 30.0, "c": 1.0}, {"a": {"A1": 25.0}, "c": {"C": 0.5}},
                            {"a": {"A1.test_x": 25.0}})
        merged = merge_times(old, new)
        self.assertEqual(merged.files, {"a": 30.0, "b": 20.0, "c": 1.0})
        # "a" was measured: its class A2 and test A2.test_gone (removed since) do not linger.
        self.assertEqual(merged.classes, {"a": {"A1": 25.0}, "b": {"B": 19.0}, "c": {"C": 0.5}})
        self.assertEqual(merged.tests, {"a": {"A1.test_x": 25.0}, "b": {"B.test_b": 19.0}})
        self.assertEqual(old.classes["a"], {"A1": 4.0, "A2": 5.0})  # inputs untouched
        self.assertEqual(merge_times(None, new), new)

    def test_measure_runs(self):
        def outcome(cls, seconds):
            return CaseOutcome(f"mod.{cls}", "test_x", Status.PASSED, seconds)

        runs = [
            # file "f" split in two processes: 3 s and 1 s of overhead -> 2 s per process.
            FileRun("f", 13.0, [outcome("A", 4.0), outcome("A", 6.0)]),
            FileRun("f", 6.0, [outcome("B", 5.0)]),
            FileRun("g", 2.0, []),
            FileRun("h", 99.0, [outcome("H", 50.0)], status=Status.INTERRUPTED),
        ]
        times = measure_runs(runs)
        self.assertEqual(times.files, {"f": 17.0, "g": 2.0})
        self.assertEqual(times.classes, {"f": {"A": 10.0, "B": 5.0}})
        self.assertEqual(times.tests, {"f": {"A.test_x": 10.0, "B.test_x": 5.0}})

    def test_measure_counts_a_flaky_test_at_its_passing_rerun(self):
        runs = [FileRun("f", 320.0, [CaseOutcome("A", "test_hang", Status.PASSED, 300.0),
                                     CaseOutcome("A", "test_ok", Status.PASSED, 10.0)],
                        rerun_seconds={"A.test_hang": 20.0})]
        times = measure_runs(runs)
        self.assertEqual(times.tests, {"f": {"A.test_hang": 20.0, "A.test_ok": 10.0}})
        self.assertEqual(times.classes, {"f": {"A": 30.0}})
        # The process overhead (320 - 310 = 10 s) is still measured against the first attempt.
        self.assertEqual(times.files, {"f": 40.0})


def attempt(status, outcomes=(), exit_code=None, output=""):
    if exit_code is None:
        exit_code = {Status.PASSED: 0, Status.FAILED: 1}.get(status, -9)
    return Attempt(status, exit_code, 1.5, list(outcomes), output)


PASS_A = CaseOutcome("TestA", "test_a", Status.PASSED, 0.5)
FAIL_B = CaseOutcome("TestA", "test_b", Status.FAILED, 0.25, "boom", "Traceback: boom")
ERR_C = CaseOutcome("TestC", "test_c", Status.ERROR, 0.1, "oops", "Traceback: oops")
SKIP_D = CaseOutcome("TestA", "test_d", Status.SKIPPED, 0.0, "no GPU")
PASS_B = CaseOutcome("TestA", "test_b", Status.PASSED)  # FAIL_B on a rerun that passed


class TestVerdicts(unittest.TestCase):
    def test_selectors(self):
        self.assertEqual(FAIL_B.selector, "TestA.test_b")
        self.assertEqual(CaseOutcome("__main__.TestA", "test_b", Status.FAILED).selector,
                         "TestA.test_b")
        self.assertEqual(CaseOutcome("__main__.TestA", "setUpClass", Status.ERROR).selector,
                         "TestA")
        self.assertEqual(CaseOutcome("__main__", "setUpModule", Status.ERROR).selector, "")

    def test_flaky_and_consistent(self):
        first = attempt(Status.FAILED, [PASS_A, FAIL_B, ERR_C, SKIP_D])
        result = EntryResult(PlanEntry("x"), first, {
            "TestA.test_b": [attempt(Status.FAILED, [FAIL_B]), attempt(Status.PASSED, [PASS_B])],
            "TestC.test_c": [attempt(Status.FAILED, [ERR_C]), attempt(Status.FAILED, [ERR_C])],
        })
        self.assertEqual(result.flaky, ["TestA.test_b"])
        self.assertEqual(result.consistent, ["TestC.test_c"])
        self.assertEqual(result.status, Status.FAILED)
        counts = (result.count(Status.PASSED), result.count(Status.FAILED, Status.ERROR),
                  result.count(Status.SKIPPED))
        self.assertEqual(counts, (1, 2, 1))

    def test_only_flaky_passes(self):
        result = EntryResult(PlanEntry("x"), attempt(Status.FAILED, [FAIL_B]),
                             {"TestA.test_b": [attempt(Status.PASSED, [PASS_B])]})
        self.assertEqual(result.status, Status.PASSED)
        self.assertEqual(result.consistent, [])

    def test_a_rerun_that_does_not_run_the_test_is_no_pass(self):
        # exit 0 but the test is missing (e.g. renamed): not evidence that it passes.
        result = EntryResult(PlanEntry("x"), attempt(Status.FAILED, [FAIL_B]),
                             {"TestA.test_b": [attempt(Status.PASSED, [])]})
        self.assertEqual(result.flaky, [])
        self.assertEqual(result.status, Status.FAILED)

    def test_class_level_rerun(self):
        setup_error = CaseOutcome("__main__.TestA", "setUpClass", Status.ERROR, 0, "x")
        rerun = attempt(Status.PASSED, [PASS_A, PASS_B])
        result = EntryResult(PlanEntry("x"), attempt(Status.FAILED, [setup_error]),
                             {"TestA": [rerun]})
        self.assertEqual(result.flaky, ["TestA"])

    def test_not_rerun_is_consistent(self):
        result = EntryResult(PlanEntry("x"), attempt(Status.FAILED, [FAIL_B]))
        self.assertEqual(result.consistent, ["TestA.test_b"])

    def test_timeout_and_crash(self):
        for status in (Status.TIMED_OUT, Status.DIED, Status.INTERRUPTED):
            result = EntryResult(PlanEntry("x"), attempt(status, [PASS_A]))
            self.assertEqual(result.status, status)
            self.assertEqual(result.consistent, [])


class TestJUnit(TempDirTestCase):
    def write_source(self, text):
        path = self.dir / "TEST-x.xml"
        path.write_text(text)
        return path

    def test_read_outcomes(self):
        path = self.write_source(
            '<testsuites><testsuite name="x">'
            '<testcase classname="TestA" name="test_a" time="0.5"/>'
            '<testcase classname="TestA" name="test_b" time="bad">'
            '<failure message="boom">tb</failure></testcase>'
            '<testcase classname="TestC" name="test_c"><error message="oops">tb2</error></testcase>'
            '<testcase classname="TestA" name="test_d"><skipped message="no GPU"/></testcase>'
            '</testsuite></testsuites>')
        outcomes = read_outcomes(path)
        self.assertEqual([o.status for o in outcomes],
                         [Status.PASSED, Status.FAILED, Status.ERROR, Status.SKIPPED])
        self.assertEqual(outcomes[1], CaseOutcome("TestA", "test_b", Status.FAILED, 0.0, "boom", "tb"))
        self.assertEqual(outcomes[0].seconds, 0.5)
        with self.assertRaises(JUnitError):
            read_outcomes(self.write_source("<testsuites><testcase"))

    def test_file_report_round_trip(self):
        flaky_pass = CaseOutcome("TestA", "test_b", Status.PASSED, 0.2)
        first = EntryResult(PlanEntry("distributed/test_x", selection=("TestA", "TestC")),
                            attempt(Status.FAILED, [PASS_A, FAIL_B, ERR_C, SKIP_D],
                                    output="log <&> text"),
                            {"TestA.test_b": [attempt(Status.PASSED, [flaky_pass])],
                             "TestC.test_c": [attempt(Status.FAILED, [ERR_C]),
                                              attempt(Status.DIED, [], exit_code=-11)]})
        second = EntryResult(PlanEntry("distributed/test_x", selection=("TestE",)),
                             attempt(Status.TIMED_OUT, [], output="hung"))
        path = self.dir / "reports" / "distributed" / "test_x.xml"
        write_file_report(path, [first, second], "test/distributed/test_x.py")
        root = ET.parse(path).getroot()
        self.assertEqual(root.tag, "testsuites")
        self.assertEqual({k: root.get(k) for k in ("tests", "failures", "errors", "skipped")},
                         {"tests": "5", "failures": "0", "errors": "2", "skipped": "1"})
        suites = root.findall("testsuite")
        self.assertEqual([s.get("name") for s in suites],
                         ["distributed/test_x [TestA, TestC]", "distributed/test_x [TestE]"])
        cases = {c.get("name"): c for c in root.iter("testcase")}
        self.assertIsNone(cases["test_b"].find("failure"))
        self.assertEqual(cases["test_b"].find("flakyFailure").get("message"), "boom")
        self.assertEqual(cases["test_b"].get("rerun_time"), "0.200")
        self.assertIsNone(cases["test_c"].get("rerun_time"))
        self.assertEqual(cases["test_c"].find("error").get("message"), "oops")
        self.assertEqual(len(cases["test_c"].findall("rerunError")), 1)
        self.assertEqual(len(cases["test_c"].findall("rerunFailure")), 1)  # the crashed rerun
        self.assertEqual(cases["timeout"].get("synthetic"), "true")
        statuses = [s.find("properties/property[@name='status']").get("value") for s in suites]
        self.assertEqual(statuses, ["failed", "timed out"])  # Status values
        self.assertEqual(cases["test_a"].get("file"), "test/distributed/test_x.py")
        self.assertIn("log <&> text", suites[0].find("system-out").text)

        runs, ignored = read_file_runs(self.dir / "reports")
        self.assertEqual(ignored, [])
        self.assertEqual([(r.name, r.wall_seconds, r.status, len(r.outcomes)) for r in runs],
                         [("distributed/test_x", 1.5, Status.FAILED, 4),
                          ("distributed/test_x", 1.5, Status.TIMED_OUT, 0)])
        self.assertEqual(runs[0].rerun_seconds, {"TestA.test_b": 0.2})

    def test_read_file_runs_of_older_reports(self):
        # Reports written before Status named a process's status "ok", "timeout" or "crash".
        reports = self.dir / "reports"
        reports.mkdir()
        words = {"ok": Status.PASSED, "timeout": Status.TIMED_OUT, "crash": Status.DIED,
                 "failed": Status.FAILED, "interrupted": Status.INTERRUPTED, "": Status.PASSED}
        for i, word in enumerate([*words, "exploded"]):
            (reports / f"test_{i}.xml").write_text(
                f'<testsuites><testsuite name="test_{i}" time="2.0"><properties>'
                f'<property name="test_file" value="test_{i}"/>'
                f'<property name="status" value="{word}"/></properties></testsuite></testsuites>')
        runs, ignored = read_file_runs(reports)
        self.assertEqual([r.status for r in runs], list(words.values()))
        self.assertEqual([p.name for p in ignored], [f"test_{len(words)}.xml"])  # unknown word

    def test_read_file_runs_ignores_foreign_xml(self):
        reports = self.dir / "reports"
        reports.mkdir()
        (reports / "TEST-other.xml").write_text('<testsuites><testsuite name="x"/></testsuites>')
        (reports / "broken.xml").write_text("<oops")
        runs, ignored = read_file_runs(reports)
        self.assertEqual(runs, [])
        self.assertEqual(sorted(p.name for p in ignored), ["TEST-other.xml", "broken.xml"])
