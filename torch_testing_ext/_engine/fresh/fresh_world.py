"""The fresh-ranks world: the ranks of one test, forked for it from the preloaded server and
ended after it (``MultiProcessTestCase``'s world; see ``torch_testing_ext._engine.worlds.world``)."""

from __future__ import annotations

import os
import unittest
import warnings

from ... import devices
from .._torch_private import test_method_name
from ..reporting.status import Status
from ..testcase.tensor_testcase import current_seed
from ..worlds.outcomes import RankFailure, Verdict, combine
from ..worlds.rank_facts import RankFacts, RankTask
from ..worlds.world import RunSettings
from . import fork_server, supervisor
from .leftovers import LeftoverProcessWarning, describe_leftovers
from .supervisor import RanksEnded

__all__ = ["FreshWorld", "world_facts", "verdict_with_leftovers"]

__unittest = True


class FreshWorld:
    """``world_size`` rank processes for one test, meeting in ``test_dir``."""

    failure = RankFailure

    def __init__(self, test_dir: str) -> None:
        self.test_dir = test_dir

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        """Fork the ranks, run the test's method on each, end them; their verdict."""
        cls = type(test)
        task = RankTask(cls.__module__, cls.__qualname__, test_method_name(test), current_seed(),
                        dict(os.environ))
        ended = supervisor.run_ranks(task, world_facts(settings.world_size, self.test_dir), settings.timeout,
                                     fork_server.forkserver_context(cls.__module__, settings.warm_inductor))
        return verdict_with_leftovers(ended, settings.leftover_policy, test.id())

    def close(self) -> str:
        """Nothing is kept between tests."""
        return ""


def world_facts(world_size: int, test_dir: str) -> list[RankFacts]:
    """The facts of ``world_size`` ranks on this machine's devices, meeting in ``test_dir``."""
    return [RankFacts(rank, world_size, devices.rank_device(rank),
                      devices.default_backend(devices.rank_device(rank)), test_dir)
            for rank in range(world_size)]


def verdict_with_leftovers(ended: RanksEnded, leftover_policy: str, test_id: str) -> Verdict:
    """The test's verdict from its ranks' outcomes; processes they left running fail the
    test under the ``fail`` policy, and are warned about otherwise."""
    verdict = combine(ended.outcomes)
    if not ended.leftovers:
        return verdict
    note = describe_leftovers(ended.leftovers)
    if leftover_policy == "fail":
        status = Status.ERROR if verdict.status in (Status.PASSED, Status.SKIPPED) else verdict.status
        return Verdict(status, "\n".join(filter(None, [verdict.message, note])),
                       verdict.headline or note.splitlines()[0])
    warnings.warn(LeftoverProcessWarning(f"{test_id}: {note}"), stacklevel=2)
    return verdict
