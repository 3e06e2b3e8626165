"""How one pytest test ended on a rank, from the reports of its phases (setup, call, teardown).

A rank's outcome is its test's phases taken together, before pytest's xfail handling (the
test process applies ``xfail`` to the verdict of all ranks): the first problem decides; an
error in setup or teardown is an error, an assertion or ``pytest.fail()`` in the call a
failure; ``pytest.skip()`` a skip, ``pytest.xfail()`` an xfail. Leaving a phase by
``sys.exit()``, ``KeyboardInterrupt``, ``pytest.exit()`` or another ``BaseException`` is an
error in ``worlds.outcomes``' words (``rank 1 left the test with sys.exit(0) at
test_x.py:12``); upstream's skip exit codes stay skips. A test passes only when its protocol
ran to its teardown and the session did not end interrupted or broken: otherwise the rank is
*interrupted* (``rank 1 did not finish the test: its pytest session never tore it down``).
"""

from __future__ import annotations

import dataclasses
import traceback

import pytest

from ..reporting.status import Status
from ..reporting.tracebacks import format_test_exception
from ..worlds.outcomes import RankOutcome, left_the_test_with, outcome_of

__all__ = ["PytestRankOutcome", "PhaseRecord", "UNFINISHED_EXIT_STATUSES"]

__unittest = True

# pytest's exit statuses that say a session did not run its tests to their end.
UNFINISHED_EXIT_STATUSES = (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                            pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED)


@dataclasses.dataclass
class PytestRankOutcome(RankOutcome):
    """A rank's outcome; ``xfail_reason`` when its test called ``pytest.xfail()``."""

    xfail_reason: str | None = None


class PhaseRecord:
    """The phases of one test on rank ``rank``, as pytest reported them."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.phases: list[str] = []
        self.problem: tuple[Status, str] | None = None
        self.skip: str | None = None
        self.xfail: str | None = None

    def add(self, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
        """Take one phase's report (made from ``call``, before pytest's xfail handling)."""
        self.phases.append(call.when)
        excinfo = call.excinfo
        if excinfo is None or self.problem is not None:
            return
        error = excinfo.value
        where = "" if call.when == "call" else f"error in {call.when} of {report.nodeid.split('::')[-1]}:\n"
        if isinstance(error, pytest.xfail.Exception):
            self.xfail = str(getattr(error, "msg", error))
        elif isinstance(error, pytest.skip.Exception):
            self.skip = str(getattr(error, "msg", error))
        elif isinstance(error, (AssertionError, pytest.fail.Exception)):
            failed = call.when == "call"
            self.problem = (Status.FAILED if failed else Status.ERROR, where + report.longreprtext)
        elif left_the_test_with(error) is not None:
            left = outcome_of(self.rank, error)
            if left.status is Status.SKIPPED:  # one of upstream's skip exit codes
                self.skip = left.detail
            else:
                self.problem = (Status.ERROR, f"{left.detail.splitlines()[0]}\n{where}{report.longreprtext}")
        else:
            self.problem = (Status.ERROR, where + report.longreprtext)

    def outcome(self, exit_status: int | None = None) -> PytestRankOutcome:
        """How the test ended; ``exit_status``: what the session's ``pytest.main`` returned."""
        if self.problem is not None:
            return PytestRankOutcome(self.rank, *self.problem)
        unfinished = self._unfinished(exit_status)
        if unfinished:  # the session was stopped (or broke) before the test's end
            return PytestRankOutcome(self.rank, Status.INTERRUPTED, unfinished)
        if self.xfail is not None:
            return PytestRankOutcome(self.rank, Status.PASSED, xfail_reason=self.xfail)
        if self.skip is not None:
            return PytestRankOutcome(self.rank, Status.SKIPPED, self.skip)
        return PytestRankOutcome(self.rank, Status.PASSED)

    def _unfinished(self, exit_status: int | None) -> str | None:
        if "teardown" not in self.phases:
            return f"rank {self.rank} did not finish the test: its pytest session never tore it down {self._ran()}"
        if exit_status is not None and exit_status in UNFINISHED_EXIT_STATUSES:
            name = pytest.ExitCode(exit_status).name
            return (f"rank {self.rank} did not finish the test: its pytest session ended with exit status "
                    f"{exit_status} ({name}) {self._ran()}")
        return None

    def broken(self, error: BaseException) -> PytestRankOutcome:
        """The outcome when the rank's session itself raised ``error``: the test's own problem
        if it had one, with the breakage after it noted; else the breakage."""
        if self.problem is not None:
            status, detail = self.problem
            last = (traceback.format_exception_only(error) or [""])[-1].strip()
            return PytestRankOutcome(self.rank, status, f"{detail}\n(then the rank's pytest session broke: {last})")
        return PytestRankOutcome(self.rank, Status.ERROR, f"rank {self.rank}'s pytest session broke {self._ran()}:\n"
                                                          f"{format_test_exception(error)}")

    def _ran(self) -> str:
        return f"(the test's phases that ran: {', '.join(self.phases) or 'none'})"
