"""A unittest result that also records each test's outcome and time, and writes JUnit XML."""

from __future__ import annotations

import dataclasses
import os
import time
import unittest
import xml.etree.ElementTree as ET
from typing import Any

__all__ = ["TestRecord", "RecordingTestResult", "write_junit_xml"]


@dataclasses.dataclass
class TestRecord:
    """One test's outcome: status is passed, failure, error or skipped."""

    classname: str
    name: str
    status: str
    seconds: float
    message: str = ""
    details: str = ""


def _split_id(test: unittest.TestCase) -> tuple[str, str]:
    if isinstance(test, unittest.TestCase) and hasattr(test, "_testMethodName"):
        return type(test).__qualname__, test._testMethodName
    # unittest's _ErrorHolder (a failing setUpClass, an import error...).
    description = str(test)
    return description.split(" ")[-1].strip("()") or "unknown", description.split(" ")[0]


class RecordingTestResult(unittest.TextTestResult):
    """A TextTestResult that keeps a :class:`TestRecord` per finished test."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[TestRecord] = []
        self._started: dict[str, float] = {}

    def startTest(self, test: unittest.TestCase) -> None:
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def _record(self, test: unittest.TestCase, status: str, message: str = "", details: str = "") -> None:
        started = self._started.get(test.id(), time.monotonic())
        classname, name = _split_id(test)
        self.records.append(TestRecord(classname, name, status, time.monotonic() - started, message, details))

    def _error_text(self, test: unittest.TestCase, err: Any) -> tuple[str, str]:
        exc_type, value, _tb = err
        first_line = str(value).strip().splitlines()[0] if str(value).strip() else exc_type.__name__
        return first_line, self._exc_info_to_string(err, test)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "failure", *self._error_text(test, err))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._record(test, "error", *self._error_text(test, err))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._record(test, "passed")

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._record(test, "failure", "unexpected success")

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            status = "failure" if issubclass(err[0], test.failureException) else "error"
            message, details = self._error_text(subtest, err)
            self._record(test, status, f"{subtest}: {message}", details)


def write_junit_xml(records: list[TestRecord], path: str, suite_name: str, file: str = "") -> None:
    """Write ``records`` as one JUnit XML ``<testsuite>`` to ``path``."""
    counts = {status: sum(r.status == status for r in records) for status in ("failure", "error", "skipped")}
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites, "testsuite", name=suite_name, tests=str(len(records)), failures=str(counts["failure"]),
        errors=str(counts["error"]), skipped=str(counts["skipped"]),
        time=f"{sum(r.seconds for r in records):.3f}",
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for record in records:
        case = ET.SubElement(suite, "testcase", classname=record.classname, name=record.name,
                             time=f"{record.seconds:.3f}", file=file)
        if record.status in ("failure", "error"):
            ET.SubElement(case, record.status, message=record.message, type=record.status).text = record.details
        elif record.status == "skipped":
            ET.SubElement(case, "skipped", message=record.message)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
