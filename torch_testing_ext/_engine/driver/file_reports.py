"""JUnit XML: read what a test file wrote, write the driver's one report per test file.

The driver gives every process its own report directory, reads the outcomes back with
:func:`read_outcomes`, and writes ``<save-xml>/<name>.xml`` (``test-reports/distributed/
test_x.xml``) with :func:`write_file_report`: one ``<testsuite>`` per process of that file, each
with the properties ``test_file``, ``selection``, ``wall_time``, ``exit_code`` and ``status``
(the entry's :class:`Status` value). Test cases go through ``reporting.junit_xml``; reruns add
the Maven Surefire elements that CI systems understand: a flaky test carries
``<flakyFailure>``/``<flakyError>`` children and no ``<failure>``; a consistent failure has its
``<failure>`` plus one ``<rerunFailure>``/``<rerunError>`` per failed rerun. A timed-out,
crashed or interrupted process gets a test case of its own (attribute ``synthetic="true"``) so
that the failure is visible. A flaky test case also records the time of its passing rerun
(``rerun_time``), which is what the test costs when nothing goes wrong. :func:`read_file_runs`
reads these reports back for ``--update-times``, older reports' status words included.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ..reporting.junit_xml import add_testcase, read_testcase, write_document, xml_text
from ..reporting.status import Status, junit_tag
from .results import Attempt, CaseOutcome, EntryResult, FileRun, exit_text

__all__ = [
    "JUnitError",
    "read_outcomes",
    "read_file_runs",
    "write_file_report",
    "report_path",
]

# How much of a process's output a report keeps (the end is what explains a failure).
_OUTPUT_LIMIT = 100_000

# The process status words of reports written before Status (read by --update-times).
_OLD_STATUS_WORDS = {"ok": Status.PASSED, "timeout": Status.TIMED_OUT, "crash": Status.DIED}


class JUnitError(ValueError):
    """A report that cannot be parsed."""


def _parse(path: Path) -> ET.Element:
    """The root of the report at ``path``. A report that another writer left with characters
    XML cannot carry (a NUL, a colour code) is read with them escaped, not given up on."""
    try:
        return ET.parse(path).getroot()
    except OSError as error:
        raise JUnitError(f"{path}: {error}") from None
    except ET.ParseError as error:
        first_error = error
    try:
        return ET.fromstring(xml_text(path.read_bytes().decode("utf-8", "replace")))
    except (ET.ParseError, OSError):
        raise JUnitError(f"{path}: {first_error}") from None


def _seconds(value: str | None) -> float:
    try:
        return float(value or 0)
    except ValueError:
        return 0.0


def _outcome(case: ET.Element) -> CaseOutcome:
    status, message, details = read_testcase(case)
    return CaseOutcome(case.get("classname", ""), case.get("name", ""), status,
                       _seconds(case.get("time")), message, details)


def read_outcomes(path: Path) -> list[CaseOutcome]:
    """Every ``<testcase>`` of a JUnit file, in order."""
    return [_outcome(case) for case in _parse(path).iter("testcase")]


def report_path(report_dir: Path, name: str) -> Path:
    """Where the report of test file ``name`` goes (mirrors the test tree)."""
    return report_dir / f"{name}.xml"


def _clip(text: str) -> str:
    return text if len(text) <= _OUTPUT_LIMIT else "[...]\n" + text[-_OUTPUT_LIMIT:]


def _failure_tag(status: Status) -> str:
    """``failure`` or ``error``: the JUnit element of a failed ``status``."""
    tag = junit_tag(status)
    if tag is None or tag == "skipped":
        raise ValueError(f"a {status} test has no failure element")
    return tag


def _surefire_tag(prefix: str, status: Status) -> str:
    """``flakyFailure``, ``rerunError``...: a Surefire rerun element for a failed ``status``."""
    return prefix + _failure_tag(status).capitalize()


def _rerun_children(case: ET.Element, runs: Sequence[Attempt], selector: str, flaky: bool) -> None:
    for run in runs:
        if run.passed(selector):
            continue
        failed = [o for o in run.outcomes if o.failing and o.selector == selector]
        # A rerun that failed no test (it crashed, timed out, or did not run it) is a failure.
        status = failed[0].status if failed else Status.FAILED
        if failed:
            message = failed[0].message
        elif run.status == Status.PASSED:
            message = f"rerun did not run {selector} ({exit_text(run.exit_code)})"
        else:
            message = f"rerun {run.status} ({exit_text(run.exit_code)})"
        child = ET.SubElement(case, _surefire_tag("flaky" if flaky else "rerun", status),
                              message=message, type=_failure_tag(status))
        ET.SubElement(child, "stackTrace").text = failed[0].details if failed else _clip(run.output)
        ET.SubElement(child, "system-out").text = _clip(run.output)


def _testcase(suite: ET.Element, outcome: CaseOutcome, result: EntryResult, file: str) -> None:
    runs = result.reruns.get(outcome.selector, [])
    flaky = outcome.failing and outcome.selector in result.flaky
    case = add_testcase(suite, outcome.classname, outcome.name, outcome.seconds,
                        Status.PASSED if flaky else outcome.status, message=outcome.message,
                        details=outcome.details, file=file)
    if flaky:
        passing = next(run for run in runs if run.passed(outcome.selector))
        rerun_seconds = sum(o.seconds for o in passing.outcomes if o.selector == outcome.selector)
        case.set("rerun_time", f"{rerun_seconds:.3f}")
        child = ET.SubElement(case, _surefire_tag("flaky", outcome.status),
                              message=outcome.message, type=outcome.status.value)
        ET.SubElement(child, "stackTrace").text = outcome.details
    if outcome.failing:
        _rerun_children(case, runs, outcome.selector, flaky=flaky)


def _synthetic_case(attempt: Attempt) -> tuple[str, str]:
    """Name and message of the test case that stands for a process that ended badly.

    The names predate :class:`Status` and stay: CI systems key a test's history on them.
    """
    if attempt.status == Status.TIMED_OUT:
        return "timeout", f"timed out after {attempt.seconds:.0f}s, killed"
    if attempt.status == Status.DIED:
        return "crash", f"{exit_text(attempt.exit_code)} without a test failure"
    return "interrupted", "interrupted"


def _suite(root: ET.Element, result: EntryResult, file: str) -> dict[str, int]:
    attempt, entry = result.attempt, result.entry
    suite = ET.SubElement(root, "testsuite", name=entry.label, time=f"{attempt.seconds:.3f}")
    properties = ET.SubElement(suite, "properties")
    for key, value in (("test_file", entry.name), ("selection", " ".join(entry.selection)),
                       ("wall_time", f"{attempt.seconds:.3f}"), ("exit_code", str(attempt.exit_code)),
                       ("status", result.status.value)):
        ET.SubElement(properties, "property", name=key, value=value)
    for outcome in attempt.outcomes:
        _testcase(suite, outcome, result, file)
    counts = {"tests": len(attempt.outcomes), "failures": 0, "errors": 0,
              "skipped": result.count(Status.SKIPPED)}
    consistent = set(result.consistent)
    for outcome in attempt.outcomes:
        if outcome.failing and outcome.selector in consistent:
            counts[_failure_tag(outcome.status) + "s"] += 1  # "failures" or "errors"
    if attempt.status not in (Status.PASSED, Status.FAILED):
        name, message = _synthetic_case(attempt)
        case = add_testcase(suite, entry.name.replace("/", "."), name, attempt.seconds,
                            attempt.status, message=message, details=_clip(attempt.output),
                            file=file)
        case.set("synthetic", "true")
        counts["tests"] += 1
        counts[_failure_tag(attempt.status) + "s"] += 1
    ET.SubElement(suite, "system-out").text = _clip(attempt.output)
    for key, count in counts.items():
        suite.set(key, str(count))
    return counts


def write_file_report(path: Path, results: Sequence[EntryResult], file: str) -> None:
    """Write the report of one test file: every process that ran some of it."""
    root = ET.Element("testsuites", name=results[0].entry.name if results else "")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for result in results:
        for key, value in _suite(root, result, file).items():
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{sum(r.attempt.seconds for r in results):.3f}")
    write_document(root, path)


def _process_status(word: str) -> Status | None:
    """The status a report's ``status`` property names (older words too); None if unknown."""
    try:
        return _OLD_STATUS_WORDS.get(word) or Status(word or Status.PASSED)
    except ValueError:
        return None


def read_file_runs(report_dir: Path) -> tuple[list[FileRun], list[Path]]:
    """Process runs recorded by driver reports under ``report_dir`` (recursively).

    Returns the runs and the XML files that were not driver reports (or could not be read).
    """
    runs: list[FileRun] = []
    ignored: list[Path] = []
    for path in sorted(report_dir.rglob("*.xml")):
        try:
            root = _parse(path)
        except JUnitError:
            ignored.append(path)
            continue
        found = False
        for suite in root.iter("testsuite"):
            props = {p.get("name"): p.get("value", "") for p in suite.iter("property")}
            if "test_file" not in props:
                continue
            try:
                wall = float(props.get("wall_time") or suite.get("time") or 0)
            except ValueError:
                continue
            status = _process_status(props.get("status", ""))
            if status is None:
                continue
            cases = [c for c in suite.iter("testcase") if c.get("synthetic") != "true"]
            outcomes = [_outcome(c) for c in cases]
            rerun_seconds = {outcome.selector: _seconds(case.get("rerun_time"))
                             for outcome, case in zip(outcomes, cases, strict=True) if case.get("rerun_time")}
            runs.append(FileRun(props["test_file"], wall, outcomes, status, rerun_seconds))
            found = True
        if not found:
            ignored.append(path)
    return runs, ignored
