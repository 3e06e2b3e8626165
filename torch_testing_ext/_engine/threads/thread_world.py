"""The thread-ranks world: the ranks of one test as threads of the test's process
(``MultiThreadedTestCase``'s world; see ``torch_testing_ext._engine.worlds.world`` and ``rank_threads``)."""

from __future__ import annotations

import unittest

from .._torch_private import test_method_name
from ..worlds.outcomes import Verdict
from ..worlds.world import RunSettings
from .rank_threads import ThreadRankFailure, run_rank_threads, thread_verdict

__all__ = ["ThreadWorld"]

__unittest = True


class ThreadWorld:
    """Each rank thread makes its own instance of the test's class and runs
    ``perThreadSetUp()``, the method and ``perThreadTearDown()`` in the default ``threaded``
    group; nothing is kept between tests."""

    failure = ThreadRankFailure

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        cls, method = type(test), test_method_name(test)

        def body(rank: int) -> None:
            rank_test = cls(method)  # in a rank thread: the class's own method
            rank_test.perThreadSetUp()  # type: ignore[attr-defined]  # MultiThreadedTestCase's hooks
            try:
                getattr(rank_test, method)()
            finally:
                rank_test.perThreadTearDown()  # type: ignore[attr-defined]  # MultiThreadedTestCase's hooks

        return thread_verdict(run_rank_threads(body, settings.world_size, settings.timeout, test.id(),
                                               getattr(cls, method, None), cls))

    def close(self) -> str:
        """Nothing is kept between tests; a rank thread that could not be stopped is named in
        its test's verdict."""
        return ""
