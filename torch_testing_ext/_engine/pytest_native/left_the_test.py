"""A pytest test that leaves by ``KeyboardInterrupt`` or ``pytest.exit()`` on a rank.

pytest's runner lets these two through without a report (in an ordinary session they stop the
session), so a rank's session would end with no sign of the test's problem. On a rank they
are the test's own outcome, an error in the words of ``worlds.outcomes`` (``rank 1 left the
test with pytest.exit('why') at test_x.py:12``):

- in a rank process's session, :func:`carried` wraps them in :class:`LeftTheTest`, an
  ordinary exception that pytest reports (and then tears the test down as usual), and
  :func:`unwrapped` gives the report back the original;
- on a launched rank (``torchrun -m pytest``) the test runs inside the launched run, which
  takes a ``KeyboardInterrupt`` the test raised for its outcome and the process's own Ctrl-C
  or SIGTERM for a stop (``worlds.interrupts.InterruptListener`` tells them apart).

Torch-free.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

__all__ = ["LeftTheTest", "stops_a_session", "carried", "unwrapped"]

__unittest = True


class LeftTheTest(Exception):
    """Carries ``error`` (a ``KeyboardInterrupt`` or pytest's ``Exit`` the test raised on a
    rank) through pytest's runner, which would let the original through."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(repr(error))
        self.error = error


def stops_a_session(error: BaseException) -> bool:
    """Whether pytest's runner lets ``error`` through instead of reporting it."""
    return isinstance(error, (KeyboardInterrupt, pytest.exit.Exception))


def carried() -> Generator[None, Any, Any]:
    """The body of a ``wrapper=True`` hook around one phase of a test (setup, call,
    teardown): what would stop the session is carried as :class:`LeftTheTest`."""
    try:
        return (yield)
    except BaseException as error:
        if stops_a_session(error):
            raise LeftTheTest(error) from None
        raise


def unwrapped(excinfo: pytest.ExceptionInfo[BaseException] | None) -> pytest.ExceptionInfo[BaseException] | None:
    """``excinfo``, or the original's when it holds a :class:`LeftTheTest`."""
    if excinfo is not None and isinstance(excinfo.value, LeftTheTest):
        return pytest.ExceptionInfo.from_exception(excinfo.value.error)
    return excinfo
