"""Run one test in this process as the rank a launcher (``torchrun``) started it as.

:func:`run_as_launched_rank` is the whole protocol, usable by any test base:

1. the test's ranks agree on its keys in the launcher's store (``<test id>/run-<n>``) and on
   its directory, which rank 0 makes and publishes (another machine sees it only on a shared
   filesystem; a rank that cannot see it gets a private one);
2. this rank enters its facts (rank, world size, its local rank's device, backend, directory,
   a rendezvous in the launcher's store) and runs the task under a :class:`Watchdog`;
3. it publishes its :class:`RankOutcome`; a rank with a problem destroys its process groups at
   once, so that peers waiting in a collective with it raise instead of hanging (an error that
   follows another rank's failure is reported as *stopped* by it);
4. it waits for every other rank's outcome (until the deadline and :data:`EXCHANGE_GRACE`), and
   returns the verdict of all ranks: every rank reports the same.

A hung task ends the process at the deadline: the stacks of its threads go to stderr, a *timed
out* outcome to the store, the abort hooks run (``run_tests`` writes its JUnit XML), and the
process exits with status 124. Ranks beyond the test's ``world_size`` run nothing and report
the verdict of those that ran it.
"""

from __future__ import annotations

import collections
import faulthandler
import gc
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import unittest
from collections.abc import Callable

from .. import devices
from .._torch_private import thread_frames
from ..multiprocess.rank_outcome import RankOutcome, Verdict, combine, outcome_of
from ..multiprocess.rank_protocol import RankFacts, enter_rank, leave_rank
from ..process_groups.teardown import (
    destroy_process_groups,
    holds_process_groups,
    release_retired_process_groups,
)
from ..reporting.status import Status
from ..reporting.tracebacks import format_stack_below_harness
from ..run import interrupts
from .launched_reports import run_abort_hooks
from .launched_world import LaunchedRank, launched_rank
from .launcher_store import MAIN, WATCHDOG, launcher_store, rendezvous_base
from .outcome_exchange import OutcomeExchange
from .rank_watchdog import ABORT_EXIT_STATUS, Watchdog

__all__ = ["run_as_launched_rank", "EXCHANGE_GRACE", "TEARDOWN_GRACE", "TEST_DIR_PREFIX"]

__unittest = True

EXCHANGE_GRACE = 10.0  # seconds past the deadline a rank waits for its peers' outcomes
TEARDOWN_GRACE = 30.0  # seconds past that for destroying the test's process groups
TEST_DIR_PREFIX = "torch_testing_ext-launched-"
ABORT_LINGER = 10.0  # seconds a timed-out rank waits for the others to take its outcome

_runs: collections.Counter[str] = collections.Counter()  # runs of each test id so far


def _destroy_groups() -> None:
    # The test's objects go first (a DDP module holds its group; dropped after the group, it
    # could deadlock), then the groups, whose last reference then closes their connections.
    if not holds_process_groups():
        return  # nothing to destroy: spare the collection (a tenth of a second with torch)
    gc.collect()
    destroy_process_groups()
    release_retired_process_groups()


class _LaunchedTest:
    """One run of one test on this launched rank."""

    def __init__(self, launched: LaunchedRank, test: unittest.TestCase, timeout: float,
                 world_size: int) -> None:
        self.launched = launched
        self.rank = launched.rank
        self.test = test
        self.timeout = timeout
        self.world_size = world_size
        test_id = test.id()
        self.key = f"{test_id}/run-{_runs[test_id]}"
        _runs[test_id] += 1
        self.exchange = OutcomeExchange(launcher_store(launched, MAIN), self.key)
        self.watch_exchange = OutcomeExchange(launcher_store(launched, WATCHDOG), self.key)
        self.deadline = time.monotonic() + timeout
        self.own_dir: str | None = None  # a directory this rank made, and removes
        self.thread = threading.get_ident()

    def _dir_prefix(self) -> str:
        return f"{TEST_DIR_PREFIX}{type(self.test).__name__}-"

    def agree_on_test_dir(self) -> str | None:
        """The test's directory: made by rank 0, seen by the others (None if rank 0 did not
        publish one in time)."""
        if self.rank == 0:
            self.own_dir = tempfile.mkdtemp(prefix=self._dir_prefix())
            self.exchange.publish_test_dir(self.own_dir)
            return self.own_dir
        path = self.exchange.wait_for_test_dir(self.deadline)
        if path is None or os.path.isdir(path):
            return path
        # Rank 0 is on another machine and the filesystem is not shared.
        self.own_dir = tempfile.mkdtemp(prefix=f"{self._dir_prefix()}rank{self.rank}-")
        return self.own_dir

    def facts(self, test_dir: str) -> RankFacts:
        device = devices.rank_device(self.launched.local_rank)
        return RankFacts(self.rank, self.world_size, device, devices.default_backend(device),
                         test_dir, rendezvous_base(self.key))

    def run_task(self, task: Callable[[], None]) -> RankOutcome:
        try:
            task()
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # every other ending of the test is this rank's outcome
            outcome = outcome_of(self.rank, error)
        else:
            return RankOutcome(self.rank, Status.PASSED)
        if outcome.status is Status.ERROR:
            peers = [r for r in range(self.world_size) if r != self.rank]
            earlier = [o for o in self.exchange.published(peers) if o.status.is_problem]
            if earlier:
                outcome = RankOutcome(self.rank, Status.STOPPED,
                                      f"rank {self.rank} raised after rank {earlier[0].rank} had failed:\n"
                                      f"{outcome.detail}")
        return outcome

    def expire(self) -> None:
        """At the deadline (in the watchdog's thread): stacks, report, abort hooks, clean up;
        the watchdog then ends the process."""
        what = f"rank {self.rank} timed out after {self.timeout:g} s"
        print(f"[rank {self.rank}] {self.test.id()}: {what}; the stacks of this process's threads "
              f"follow, then it exits with status {ABORT_EXIT_STATUS}", file=sys.stderr, flush=True)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        stack = format_stack_below_harness(thread_frames().get(self.thread))
        outcome = RankOutcome(self.rank, Status.TIMED_OUT, f"{what}; its stack:\n{stack}")
        try:
            self.watch_exchange.publish(outcome)
            self.watch_exchange.mark_done()
            # Give the others the time to record the verdict: once this process ends, the
            # launcher stops them.
            self.watch_exchange.wait_until_done(self.launched.world_size, time.monotonic() + ABORT_LINGER)
        except Exception:
            traceback.print_exc()
        run_abort_hooks(self.test, f"{what} (its process then exited with status {ABORT_EXIT_STATUS})\n"
                                   f"{outcome.detail}")
        self.remove_own_dir()
        sys.stdout.flush()
        sys.stderr.flush()

    def remove_own_dir(self) -> None:
        if self.own_dir is not None:
            shutil.rmtree(self.own_dir, ignore_errors=True)

    def finish(self, absent: list[int]) -> None:
        """This rank is done with the test; rank 0 waits (boundedly) for the others, except
        the ``absent`` ones that never reported, before its directory goes."""
        self.exchange.mark_done()
        if self.rank == 0:
            deadline = max(self.deadline + EXCHANGE_GRACE + TEARDOWN_GRACE, time.monotonic() + 5.0)
            self.exchange.wait_until_done(self.launched.world_size - len(absent), deadline)


def _not_started(rank: int, timeout: float) -> Verdict:
    return Verdict(Status.ERROR, f"rank 0 did not start this test within {timeout:g} s (rank {rank} "
                                 "waited for it): the ranks run different tests, or rank 0 is gone")


def run_as_launched_rank(test: unittest.TestCase, task: Callable[[], None], timeout: float,
                         world_size: int | None = None, launched: LaunchedRank | None = None) -> Verdict:
    """Run ``task`` (the test body with its rank hooks) here, as this process's launched rank,
    and return the verdict of every rank of the test.

    ``world_size`` is the test's (default: the launcher's); ranks at or beyond it run nothing.
    ``timeout`` bounds the task; past it this process ends (see the module docstring).
    """
    launched = launched or launched_rank()
    if launched is None:
        raise RuntimeError("run_as_launched_rank needs a process started by a launcher (RANK set)")
    world_size = world_size or launched.world_size
    interrupts.install_sigterm_handler()
    run = _LaunchedTest(launched, test, timeout, world_size)
    try:
        test_dir = run.agree_on_test_dir()  # bounded by the deadline, before the watchdog's
        if test_dir is None:
            return _not_started(run.rank, timeout)
        with Watchdog(run.deadline, run.expire) as watchdog:
            if run.rank < world_size:
                enter_rank(run.facts(test_dir))
                try:
                    outcome = run.run_task(task)
                except KeyboardInterrupt:
                    run.exchange.publish(RankOutcome(run.rank, Status.INTERRUPTED, "interrupted"))
                    run.exchange.mark_done()
                    raise
                run.exchange.publish(outcome)
                if outcome.status.is_problem:
                    _destroy_groups()  # peers blocked in a collective with us raise now
            watchdog.move_deadline(run.deadline + EXCHANGE_GRACE + TEARDOWN_GRACE)
            outcomes, absent = run.exchange.collect(range(world_size), run.deadline + EXCHANGE_GRACE,
                                                    waited=timeout + EXCHANGE_GRACE)
            _destroy_groups()
            run.finish(absent)
        return combine(outcomes)
    finally:
        leave_rank()
        run.remove_own_dir()
