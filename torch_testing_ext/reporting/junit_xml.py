"""JUnit XML ``<testcase>`` elements: written by ``run_tests`` and the driver, read by the driver.

::

    suite = ET.SubElement(ET.Element("testsuites"), "testsuite", name="test_x")
    add_testcase(suite, "TestX", "test_y", 0.25, Status.FAILED, message="1 != 2", details=tb)
    write_document(suite_root, Path("test-reports/test_x.xml"))
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

from .status import JUNIT_TAGS, Status, junit_tag, status_from_junit_tag

__all__ = ["CaseRecord", "add_testcase", "read_testcase", "write_document"]


@dataclasses.dataclass(frozen=True)
class CaseRecord:
    """What a ``<testcase>`` says of one test: passed, failed, error or skipped, its time, and
    the first line (``message``) and whole text (``details``) of its explanation."""

    classname: str
    name: str
    status: Status
    seconds: float = 0.0
    message: str = ""
    details: str = ""


def add_testcase(
    parent: ET.Element,
    classname: str,
    name: str,
    seconds: float,
    status: Status,
    *,
    message: str = "",
    details: str = "",
    file: str = "",
) -> ET.Element:
    """Append a ``<testcase>`` for one test's ``status`` to ``parent`` and return it."""
    case = ET.SubElement(parent, "testcase", classname=classname, name=name, time=f"{seconds:.3f}")
    if file:
        case.set("file", file)
    tag = junit_tag(status)
    if tag == "skipped":
        ET.SubElement(case, tag, message=message)
    elif tag is not None:
        ET.SubElement(case, tag, message=message, type=status.value).text = details
    return case


def read_testcase(case: ET.Element) -> tuple[Status, str, str]:
    """``(status, message, details)`` of a ``<testcase>`` element."""
    for tag in JUNIT_TAGS:
        child = case.find(tag)
        if child is not None:
            return status_from_junit_tag(tag), child.get("message", ""), child.text or ""
    return Status.PASSED, "", ""


def write_document(root: ET.Element, path: Path) -> None:
    """Write ``root`` to ``path`` (parent directories created), indented, with a declaration."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
