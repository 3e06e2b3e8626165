"""The fresh-ranks world: the ranks of one test, forked for it from the preloaded server and
ended after it (``MultiProcessTestCase``'s world; see ``torch_testing_ext._engine.worlds.world``).

A :class:`FreshWorld` is made for one test and owns the test's directory: made with the world
(so that ``MultiProcessTestCase.file_name`` names a path from ``setUp`` on, as upstream's does),
removed when the world closes (after ``tearDown``), or at once when an interrupt stops the run.
"""

from __future__ import annotations

import os
import unittest
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.context import ForkServerContext

from ... import devices
from .._torch_private import test_method_name
from ..reporting.status import Status
from ..testcase.tensor_testcase import current_seed
from ..worlds.outcomes import RankFailure, Verdict, combine
from ..worlds.rank_facts import RankFacts, RankTask
from ..worlds.world import RunSettings, WorldDir
from . import fork_server, supervisor
from .leftovers import LeftoverProcessWarning, describe_leftovers
from .rank_process import run_rank
from .supervisor import RanksEnded

__all__ = ["FreshWorld", "world_facts", "verdict_with_leftovers"]

__unittest = True


class FreshWorld:
    """The rank processes of one test, meeting in the directory this world makes (named
    after ``name``, in the run directory) and removes when it closes."""

    failure = RankFailure

    def __init__(self, name: str) -> None:
        self._dir = WorldDir(fork_server.run_directory(), name)
        self.test_dir = self._dir.path

    def __enter__(self) -> FreshWorld:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        """Fork the ranks, run the test's method on each, end them; their verdict."""
        cls = type(test)
        task = RankTask(cls.__module__, cls.__qualname__, test_method_name(test), current_seed(),
                        dict(os.environ))
        ended = self.run_task(task, world_facts(settings.world_size, self.test_dir), settings.timeout,
                              fork_server.forkserver_context(cls.__module__, settings.warm_inductor))
        return verdict_with_leftovers(ended, settings.leftover_policy, test.id())

    def run_task(self, task: object, facts: Sequence[RankFacts], timeout: float, context: ForkServerContext,
                 target: Callable[..., None] = run_rank) -> RanksEnded:
        """Run ``task`` on one rank process per entry of ``facts`` (``supervisor.run_ranks``);
        an interrupt (Ctrl-C, SIGTERM) removes the directory on its way out."""
        try:
            return supervisor.run_ranks(task, facts, timeout, context, target)
        except KeyboardInterrupt:  # unittest runs no tearDown after it: nothing stays
            self.close()
            raise

    def close(self) -> str:
        """Remove the test's directory; nothing else is kept between tests."""
        self._dir.remove()
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
