"""Where a launched rank reports: its unittest summary, its JUnit XML, and what it reports
when its test hangs and the process must end at once.

Every rank of a launched job runs the same tests and reports the same verdicts. Rank 0 writes
its summary to stdout; the other ranks write theirs to stderr (``torchrun --local-ranks-filter
0`` shows only rank 0's; ``--log-dir DIR --redirects 3`` keeps each rank's in a file). A JUnit
XML path gets the suffix ``-rank<N>`` on every rank but 0 (``TEST-x.xml`` becomes
``TEST-x-rank1.xml``). Torch-free.

A rank whose test overruns its timeout ends its process (its main thread cannot be
interrupted); before that it calls the *abort hooks*, so that what was reported so far is not
lost: ``run_tests`` registers one that writes the JUnit XML with the tests run so far and the
one that hung.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import unittest
from collections.abc import Callable, Iterator
from typing import TextIO

from .launcher_env import LaunchedRank

__all__ = ["summary_stream", "rank_report_path", "abort_hook", "run_abort_hooks", "AbortHook"]

__unittest = True

# Called with the test that hung and the message of its outcome.
AbortHook = Callable[[unittest.TestCase, str], None]
_abort_hooks: list[AbortHook] = []


def summary_stream(launched: LaunchedRank | None) -> TextIO:
    """Where the unittest summary goes: stderr, as unittest's default, except stdout on a
    launched rank 0."""
    return sys.stdout if launched is not None and launched.rank == 0 else sys.stderr


def rank_report_path(path: str, launched: LaunchedRank | None) -> str:
    """``path`` on rank 0 (or without a launcher); ``<stem>-rank<N><ext>`` on rank N > 0."""
    if launched is None or launched.rank == 0:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-rank{launched.rank}{ext}"


@contextlib.contextmanager
def abort_hook(hook: AbortHook) -> Iterator[None]:
    """Call ``hook`` if a launched test hangs in this process while the block runs."""
    _abort_hooks.append(hook)
    try:
        yield
    finally:
        _abort_hooks.remove(hook)


def run_abort_hooks(test: unittest.TestCase, message: str) -> None:
    """Call every abort hook (from the watchdog's thread); a hook that raises is reported on
    stderr and the others still run."""
    for hook in list(_abort_hooks):
        try:
            hook(test, message)
        except Exception:
            traceback.print_exc()
