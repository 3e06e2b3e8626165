"""JUnit XML ``<testcase>`` elements: written by ``run_tests`` and the driver, read by the driver.

::

    suite = ET.SubElement(ET.Element("testsuites"), "testsuite", name="test_x")
    add_testcase(suite, "TestX", "test_y", 0.25, Status.FAILED, message="1 != 2", details=tb)
    write_document(suite_root, Path("test-reports/test_x.xml"))

Whatever a test prints or raises may hold characters that XML 1.0 cannot carry (a NUL, the
ESC of a terminal colour code): one of them makes the whole file unreadable. So every text and
attribute is passed through :func:`xml_text` when the document is written: colour and cursor
codes are dropped, any other illegal character is shown as its escape (``\\x00``).
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from .status import JUNIT_TAGS, Status, junit_tag, status_from_junit_tag

__all__ = ["CaseRecord", "add_testcase", "read_testcase", "write_document", "xml_text"]

# A terminal's escape sequences: CSI (colours, cursor moves), OSC (titles, links), and the
# two-character ones; what they do means nothing in a report.
_TERMINAL_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# Characters XML 1.0 does not allow anywhere (its Char production, complemented).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """``text`` made legal in XML 1.0: terminal escape sequences dropped, other characters XML
    cannot carry written as escapes (``"\\x1b[31mred\\x00"`` becomes ``"red\\\\x00"``)."""
    if text.isprintable():  # the usual case, and printable characters are all legal
        return text
    return _NOT_XML.sub(_escape, _TERMINAL_ESCAPES.sub("", text))


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


def _make_legal(root: ET.Element) -> None:
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        if element.tail:
            element.tail = xml_text(element.tail)
        for key, value in element.attrib.items():
            element.set(key, xml_text(value))


def write_document(root: ET.Element, path: Path) -> None:
    """Write ``root`` to ``path`` (parent directories created), indented, with a declaration;
    every text and attribute made legal XML first (:func:`xml_text`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _make_legal(root)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
