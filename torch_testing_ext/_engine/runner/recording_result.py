"""A unittest result that also records each test's outcome and time, and writes JUnit XML."""

from __future__ import annotations

import re
import sys
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .._torch_private import test_method_name
from ..reporting.junit_xml import CaseRecord, add_testcase, write_document
from ..reporting.status import Status, junit_tag
from ..reporting.tracebacks import format_test_exception

__all__ = ["RecordingTestResult", "write_junit_xml"]

__unittest = True


# unittest's _ErrorHolder describes a class- or module-level error as "setUpClass (mod.Cls)",
# "tearDownModule (mod)" (also class and module cleanups, under the same names).
_HOLDER = re.compile(r"(?P<what>\S+) \((?P<where>.+)\)")


def _split_holder(description: str) -> tuple[str, str]:
    """(classname, name) of an _ErrorHolder: ``setUpClass (mod.Cls)`` -> ``("Cls", "setUpClass")``
    (the class's qualified name, as tests are recorded); ``setUpModule (mod)`` -> ``("mod",
    "setUpModule")``."""
    match = _HOLDER.fullmatch(description)
    if match is None:
        return "unknown", description
    what, where = match.group("what", "where")
    parts = where.split(".")
    # The longest leading run of names that is an imported module is the module.
    for length in range(len(parts), 0, -1):
        if ".".join(parts[:length]) in sys.modules:
            return ".".join(parts[length:]) or where, what
    return where, what


def _split_id(test: unittest.TestCase) -> tuple[str, str]:
    if isinstance(test, unittest.TestCase):
        return type(test).__qualname__, test_method_name(test)
    # unittest's _ErrorHolder: a failing setUpClass/tearDownClass/setUpModule/tearDownModule.
    return _split_holder(str(test))


class RecordingTestResult(unittest.TextTestResult):
    """A TextTestResult that keeps a :class:`CaseRecord` per finished test."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[CaseRecord] = []
        self._started: dict[str, float] = {}

    def startTest(self, test: unittest.TestCase) -> None:
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def _record(self, test: unittest.TestCase, status: Status, message: str = "", details: str = "") -> None:
        started = self._started.get(test.id(), time.monotonic())
        classname, name = _split_id(test)
        self.records.append(CaseRecord(classname, name, status, time.monotonic() - started, message, details))

    def record_ending(self, test: unittest.TestCase, status: Status, message: str, details: str = "") -> None:
        """Record how ``test`` ended when unittest will not say so (its process ends first)."""
        self._record(test, status, message, details)

    def _explain(self, test: unittest.TestCase, err: Any) -> tuple[str, str]:
        exc_type, value, _tb = err
        first_line = str(value).strip().splitlines()[0] if str(value).strip() else exc_type.__name__
        # An _ErrorHolder (a class- or module-level error) has failureException None.
        failure_type = getattr(test, "failureException", None) or AssertionError
        return first_line, format_test_exception(value, failure_type)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, Status.PASSED)

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, Status.FAILED, *self._explain(test, err))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._record(test, Status.ERROR, *self._explain(test, err))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, Status.SKIPPED, reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._record(test, Status.PASSED)

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._record(test, Status.FAILED, "unexpected success")

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            status = Status.FAILED if issubclass(err[0], test.failureException) else Status.ERROR
            message, details = self._explain(subtest, err)
            self._record(test, status, f"{subtest}: {message}", details)


def write_junit_xml(records: list[CaseRecord], path: str, suite_name: str, file: str = "") -> None:
    """Write ``records`` as one JUnit XML ``<testsuite>`` to ``path``."""
    counts = {tag: sum(junit_tag(r.status) == tag for r in records)
              for tag in ("failure", "error", "skipped")}
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites, "testsuite", name=suite_name, tests=str(len(records)), failures=str(counts["failure"]),
        errors=str(counts["error"]), skipped=str(counts["skipped"]),
        time=f"{sum(r.seconds for r in records):.3f}",
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )
    for record in records:
        add_testcase(suite, record.classname, record.name, record.seconds, record.status,
                     message=record.message, details=record.details, file=file)
    write_document(suites, Path(path))
