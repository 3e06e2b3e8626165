"""The test process's side of kept ranks: one world per class, each test sent to every rank.

A :class:`KeptRankGeneration` is one generation of a class's ranks, forked from the preloaded
server with their own directory (rendezvous file, rank logs). Each test is sent to every
rank and waited for with the supervisor's rules (every rank counts, a rank that dies is named,
the others are stopped ``FAIL_FAST_GRACE`` seconds after a problem, a rank still running at
the timeout is asked for its stack and killed); the output tail of a rank with a problem is
what it wrote during that test. A world is kept only while every test ends alike on every
rank, passed or skipped; after anything else (a failure, a crash, a hang, a leak, ranks that
disagree) it is closed and :class:`ClassWorlds` starts the next test on a fresh one.
:class:`ClassWorlds` is ``MultiProcContinuousTest``'s world (``torch_testing_ext._engine.worlds.world``).
"""

from __future__ import annotations

import os
import unittest
from collections.abc import Callable, Sequence
from multiprocessing.context import ForkServerContext

from .._torch_private import test_method_name
from ..fresh import fork_server
from ..fresh.fresh_world import verdict_with_leftovers, world_facts
from ..fresh.leftovers import Leftover, describe_leftovers
from ..fresh.supervisor import RankProcesses, RanksEnded, log_size, wait_for_outcomes
from ..ledger.rank_ledger import attach_ledger_files, remove_ledger_files
from ..reporting.status import Status
from ..testcase.tensor_testcase import current_seed
from ..worlds import interrupts
from ..worlds.outcomes import RankFailure, RankOutcome, Verdict
from ..worlds.rank_facts import RankFacts, RankTask
from ..worlds.world import RunSettings, WorldDir
from .kept_rank import WorldTask, serve_rank

__all__ = ["KeptRankGeneration", "ClassWorlds"]

__unittest = True

_KEPT = frozenset({Status.PASSED, Status.SKIPPED})


class KeptRankGeneration:
    """One generation of a class's kept ranks, meeting in ``directory`` (removed when the
    generation closes); each runs ``target(world, facts, connection, lifeline)``
    (:func:`serve_rank` for a ``WorldTask``), which answers every task sent."""

    def __init__(self, world: object, directory: WorldDir, facts: Sequence[RankFacts], context: ForkServerContext,
                 target: Callable[..., None] = serve_rank) -> None:
        self._dir = directory
        self.facts = list(facts)
        self.size = len(self.facts)
        self._ranks = RankProcesses(context, self.facts, target, world)

    def run(self, task: object, timeout: float) -> list[RankOutcome]:
        """Run ``task`` on every rank; every rank's outcome, sorted by rank."""
        log_sizes = {facts.rank: log_size(facts.log_path) for facts in self.facts}
        remove_ledger_files(self._ranks.test_dir, range(self.size))  # the last test's
        self._ranks.outcomes = {}
        self._ranks.send_all(task)
        wait_for_outcomes(self._ranks, timeout)
        self._ranks.attach_tails(since=log_sizes)  # what each rank wrote during this test
        attach_ledger_files(self._ranks.outcomes.values(), self._ranks.test_dir)
        return self._ranks.sorted_outcomes()

    def keeps_after(self, outcomes: list[RankOutcome]) -> bool:
        """Whether the next test may run on this world: every rank ended the last test the
        same way, passed or skipped, and is still running."""
        statuses = {outcome.status for outcome in outcomes}
        return (len(statuses) == 1 and statuses <= _KEPT
                and all(process.is_alive() for process in self._ranks.processes.values()))

    def leftovers(self) -> list[Leftover]:
        """Processes the ranks started and left running, killed."""
        return self._ranks.leftovers()

    def close(self) -> list[Leftover]:
        """Stop every rank (politely first) and kill whatever they started; what they started
        and left running is returned (killed by then)."""
        self._ranks.send_all(None)
        leftovers = self._ranks.end()
        self._ranks.close()
        self._dir.remove()
        return leftovers


class ClassWorlds:
    """The worlds of one test class: the current one, replaced after any test it cannot keep.

    What a world's ranks run is a subclass's choice (pytest tests on kept ranks run a pytest
    session): ``target`` with :meth:`_world_task`, on the ranks :meth:`_world_facts` gives.
    """

    failure = RankFailure
    target: Callable[..., None] = staticmethod(serve_rank)

    def __init__(self, test_class: type[unittest.TestCase]) -> None:
        self._module = test_class.__module__
        self._qualname = test_class.__qualname__
        self._open(self._qualname)

    def _open(self, name: str) -> None:
        """No world yet; the directory the worlds will live in."""
        self._dir = WorldDir(fork_server.run_directory(), name)
        self._current: KeptRankGeneration | None = None
        self._generation = 0

    def _world_task(self) -> object:
        """What every rank of a new world is told to run (the class's tests)."""
        # A world's ranks see the test process's environment as it is when the world starts.
        return WorldTask(self._module, self._qualname, dict(os.environ))

    def _world_facts(self, world_size: int, world_dir: str) -> list[RankFacts]:
        """The ranks of a new world, on this machine's devices."""
        return world_facts(world_size, world_dir)

    def _start(self, world_size: int, context: ForkServerContext) -> KeptRankGeneration:
        self._generation += 1
        world_dir = WorldDir(self._dir.path, f"world-{self._generation}")  # inside the class's: goes with it
        facts = self._world_facts(world_size, world_dir.path)
        return KeptRankGeneration(self._world_task(), world_dir, facts, context, self.target)

    def run(self, test: unittest.TestCase, settings: RunSettings) -> Verdict:
        """Run ``test``'s method on the kept world (a new one if none of its size is kept)."""
        task = RankTask(self._module, self._qualname, test_method_name(test), current_seed())
        # Processes a test leaves are found when its world closes; "fail" needs them per test.
        ended = self.run_task(task, settings.world_size, settings.timeout,
                              fork_server.forkserver_context(self._module, settings.warm_inductor),
                              look_for_leftovers=settings.leftover_policy == "fail")
        return verdict_with_leftovers(ended, settings.leftover_policy, test.id())

    def run_task(self, task: object, world_size: int, timeout: float, context: ForkServerContext,
                 look_for_leftovers: bool = False, last: bool = False) -> RanksEnded:
        """Run ``task`` on the kept world (a new one of ``world_size`` ranks if none is kept);
        close the world if it cannot be kept or the task is its ``last``, and say what its
        ranks left running: found when the world closes, and after every test if
        ``look_for_leftovers`` (a scan of /proc)."""
        interrupts.install_sigterm_handler()
        leftovers: list[Leftover] = []
        try:
            if self._current is not None and self._current.size != world_size:
                leftovers += self._current.close()
                self._current = None
            if self._current is None:
                self._current = self._start(world_size, context)
            outcomes = self._current.run(task, timeout)
            if look_for_leftovers:
                leftovers += self._current.leftovers()
            if last or not self._current.keeps_after(outcomes):
                leftovers += self._current.close()
                self._current = None
        except BaseException:  # Ctrl-C, SIGTERM: nothing of this world stays
            self.close()
            raise
        return RanksEnded(outcomes, leftovers)

    def close(self) -> str:
        """Close the current world, if any, and remove the class's directory; what its ranks
        left running, described."""
        leftovers: list[Leftover] = []
        if self._current is not None:
            world, self._current = self._current, None
            leftovers = world.close()
        self._dir.remove()
        return describe_leftovers(leftovers) if leftovers else ""
