"""``Status``: how a test, a rank or a test process ended. One vocabulary for the package.

The multi-process harness gives one to every rank, ``run_tests`` to every test, and the shard
driver to every test case it reads back and every process it ran. JUnit XML knows only three
words besides success; :func:`junit_tag` and :func:`status_from_junit_tag` are the one mapping.
"""

from __future__ import annotations

import enum

__all__ = ["Status", "junit_tag", "status_from_junit_tag", "JUNIT_TAGS"]


class Status(str, enum.Enum):
    """How something ended. The values are the words shown to people."""

    PASSED = "passed"
    FAILED = "failed"  # an assertion failed
    ERROR = "error"  # any other exception
    SKIPPED = "skipped"  # unittest.SkipTest, or an upstream skip exit code
    DIED = "died"  # exited without reporting an outcome: a crash, os._exit, a signal
    TIMED_OUT = "timed out"  # still running at its deadline; killed
    STOPPED = "stopped"  # stopped by the harness because another rank had failed
    INTERRUPTED = "interrupted"  # Ctrl-C or SIGTERM stopped the run

    @property
    def is_problem(self) -> bool:
        """True for the endings that make a run fail (STOPPED is only a consequence of one)."""
        return self in _PROBLEMS

    def __str__(self) -> str:
        return self.value


_PROBLEMS = frozenset({Status.FAILED, Status.ERROR, Status.DIED, Status.TIMED_OUT,
                       Status.INTERRUPTED})

# The child element of a JUnit <testcase> for each status; success has none.
_JUNIT_TAG = {
    Status.PASSED: None,
    Status.SKIPPED: "skipped",
    Status.FAILED: "failure",
    Status.ERROR: "error",
    Status.DIED: "error",
    Status.TIMED_OUT: "error",
    Status.STOPPED: "error",
    Status.INTERRUPTED: "error",
}
JUNIT_TAGS = ("failure", "error", "skipped")


def junit_tag(status: Status) -> str | None:
    """The JUnit child element (``failure``, ``error``, ``skipped``) for ``status``, or None."""
    return _JUNIT_TAG[status]


def status_from_junit_tag(tag: str | None) -> Status:
    """The status a JUnit ``<testcase>`` child element stands for (None: passed)."""
    return {None: Status.PASSED, "failure": Status.FAILED, "error": Status.ERROR,
            "skipped": Status.SKIPPED}[tag]
