"""How a multi-rank test whose ranks did not all pass reads in pytest's report.

The exception (``RankFailure`` or ``RankError``) is raised in the test's own process, by the
harness, after the ranks ended: none of its traceback is the user's code. What the user needs
is in its message: which ranks did not pass, and each one's traceback from the test's own
frame, with the tail of its output. So the report shows that message, headed by the
exception's name, instead of pytest's traceback of the harness::

    ____________________ TestRanks.test_all_reduce ____________________
    RankFailure: 1 of 2 ranks did not pass (rank 1)
    rank 1 failed:
    [rank 1] Traceback (most recent call last):
    [rank 1]   File "tests/test_ranks.py", line 16, in test_all_reduce
    ...

and the short test summary line names the ranks first, so that it survives being cut to the
terminal's width: ``FAILED tests/test_ranks.py::TestRanks::test_all_reduce - rank 1 failed:
AssertionError: 2.0 != 3.0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ..worlds.outcomes import RanksDidNotPass

__all__ = ["rank_failure_longrepr"]


def rank_failure_longrepr(excinfo: pytest.ExceptionInfo[BaseException]) -> Any | None:
    """The report of ``excinfo`` if it is a :class:`RanksDidNotPass`, else None.

    Built from pytest's own ``"value"`` style (the message without a traceback), so that it
    serializes like any other report (pytest-xdist sends reports between processes).
    """
    error = excinfo.value
    if not isinstance(error, RanksDidNotPass):
        return None
    longrepr = excinfo.getrepr(style="value", chain=False)
    # Changed in place: the report and its one-link chain hold the same traceback and crash
    # location objects, made for this call.
    entries: Sequence[Any] = longrepr.reprtraceback.reprentries
    if entries and getattr(entries[-1], "lines", None):
        entries[-1].lines[0] = f"{type(error).__name__}: {entries[-1].lines[0]}"
    if longrepr.reprcrash is not None and error.headline:
        longrepr.reprcrash.message = error.headline
    return longrepr
