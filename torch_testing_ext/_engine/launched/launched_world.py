"""The launched-ranks world: this process and its peers, started by a launcher; each test runs
here as this process's rank (see ``torch_testing_ext._engine.worlds.world`` and ``launched_run``)."""

from __future__ import annotations

import unittest
from collections.abc import Callable

from ..reporting.status import Status
from ..worlds.outcomes import RankFailure, Verdict
from ..worlds.world import RunSettings
from .launched_run import LaunchedTest, run_as_launched_rank
from .launcher_env import LaunchedRank, too_few_ranks_reason

__all__ = ["LaunchedWorld"]

__unittest = True


class LaunchedWorld:
    """Run ``body`` (the test's method between its rank hooks) as this launched rank.

    ``begun`` is the test's :class:`LaunchedTest` when its ``setUp`` already agreed on the
    test's directory with the other ranks (and its cleanup ends it); without one the whole
    run, begin to end, happens here. A test that needs more ranks than the launcher started
    skips on every rank.
    """

    failure = RankFailure

    def __init__(self, launched: LaunchedRank, body: Callable[[], None],
                 begun: LaunchedTest | None = None) -> None:
        self.launched = launched
        self.body = body
        self.begun = begun

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        reason = too_few_ranks_reason(type(test).__name__, settings.world_size, self.launched)
        if reason:
            return Verdict(Status.SKIPPED, reason)
        if self.begun is None:
            return run_as_launched_rank(test, self.body, settings.timeout, settings.world_size, self.launched)
        return self.begun.run(self.body, settings.timeout, settings.world_size)

    def close(self) -> str:
        """The launcher, not this world, keeps the processes."""
        return ""
