"""What running a plan produced: per-test outcomes, per-process attempts, per-entry results.

The vocabulary shared by the executor, the JUnit writer and the reporter, in terms of
:class:`~torch_testing_ext._engine.reporting.status.Status`. An entry's first process is its
*attempt*; each test that failed in it may be rerun alone (``reruns``). A test that passes on
a rerun is *flaky*; one that fails every time is a *consistent failure*.
"""

from __future__ import annotations

import dataclasses
import signal

from ..reporting.junit_xml import CaseRecord
from ..reporting.status import Status
from .plan import PlanEntry

__all__ = [
    "CaseOutcome",
    "Attempt",
    "EntryResult",
    "FileRun",
    "exit_text",
]

# The names run_tests() records a module-level error under (unittest's _ErrorHolder's).
_MODULE_LEVEL = frozenset({"setUpModule", "tearDownModule"})


@dataclasses.dataclass(frozen=True)
class CaseOutcome(CaseRecord):
    """One test's result as a JUnit report records it, with what the driver asks of it.

    ``node``: the test's pytest node id within its file (``TestA::test_x[1]``; ``""`` for a
    collection error) when the file runs under pytest; None for a file that runs ``run_tests()``.
    """

    node: str | None = None

    @property
    def class_name(self) -> str:
        """The bare class name (``mod.TestX`` -> ``TestX``)."""
        return self.classname.rsplit(".", 1)[-1]

    @property
    def failing(self) -> bool:
        return self.status in (Status.FAILED, Status.ERROR)

    @property
    def selector(self) -> str:
        """What to pass to the test file to run this test alone.

        ``TestX.test_y`` for a test; ``TestX`` for a class-level error such as a failing
        ``setUpClass``; ``""`` (the whole entry) for a module-level error (``setUpModule``,
        ``tearDownModule``). Under pytest, the node id (``TestX::test_y[1]``; ``""`` for a
        collection error).
        """
        if self.node is not None:
            return self.node
        cls = self.class_name
        if not cls or cls == "__main__" or "/" in cls or self.name in _MODULE_LEVEL:
            return ""
        if self.name.startswith("test"):
            return f"{cls}.{self.name.split(' ')[0]}"
        return cls


def exit_text(code: int | None) -> str:
    """``exit status 3``, ``killed by SIGSEGV`` (negative codes) or ``still running``."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _covers(selector: str, other: str) -> bool:
    # "" covers everything, "TestX" covers "TestX", "TestX.test_y" and "TestX::test_y".
    return not selector or other == selector or other.startswith((selector + ".", selector + "::"))


@dataclasses.dataclass
class Attempt:
    """One process of an entry: the first run or a rerun of one test.

    ``status``: ``PASSED`` (exit 0, no test failed), ``FAILED`` (tests failed), ``TIMED_OUT``,
    ``DIED`` (a non-zero exit without a failed test to show for it) or ``INTERRUPTED``.
    """

    status: Status
    exit_code: int | None
    seconds: float
    outcomes: list[CaseOutcome]
    output: str = ""

    def failing_selectors(self) -> list[str]:
        """Distinct selectors of the failed tests, in report order."""
        return list(dict.fromkeys(o.selector for o in self.outcomes if o.failing))

    def passed(self, selector: str) -> bool:
        """True if this attempt ran ``selector`` and nothing of it failed."""
        if self.status != Status.PASSED:
            return False
        ran = [o for o in self.outcomes if _covers(selector, o.selector)]
        return bool(ran) and not any(o.failing for o in ran)


@dataclasses.dataclass
class EntryResult:
    """An entry's first attempt and the reruns of the tests that failed in it."""

    entry: PlanEntry
    attempt: Attempt
    reruns: dict[str, list[Attempt]] = dataclasses.field(default_factory=dict)

    @property
    def flaky(self) -> list[str]:
        """Selectors that failed first and then passed on a rerun."""
        return [s for s, runs in self.reruns.items() if any(r.passed(s) for r in runs)]

    @property
    def consistent(self) -> list[str]:
        """Selectors that failed and never passed, of a process that ended with failures (not
        rerun counts as never passed)."""
        return self.failed if self.attempt.status == Status.FAILED else []

    @property
    def failed(self) -> list[str]:
        """Selectors that failed and never passed on a rerun: the consistent failures, and the
        failures of a process that then timed out, crashed or was interrupted (not rerun)."""
        flaky = set(self.flaky)
        return [s for s in self.attempt.failing_selectors() if s not in flaky]

    @property
    def status(self) -> Status:
        """PASSED (flaky allowed), FAILED, or the attempt's TIMED_OUT, DIED or INTERRUPTED."""
        if self.attempt.status in (Status.PASSED, Status.FAILED):
            return Status.FAILED if self.consistent else Status.PASSED
        return self.attempt.status

    def count(self, *statuses: Status) -> int:
        """Number of tests in the first attempt with one of ``statuses``."""
        return sum(o.status in statuses for o in self.attempt.outcomes)


@dataclasses.dataclass
class FileRun:
    """One process of a test file as a driver report recorded it (for ``--update-times``).

    ``rerun_seconds`` maps each flaky test's selector to the time of its passing rerun.
    """

    name: str
    wall_seconds: float
    outcomes: list[CaseOutcome]
    status: Status = Status.PASSED  # EntryResult.status of the process's entry
    rerun_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
