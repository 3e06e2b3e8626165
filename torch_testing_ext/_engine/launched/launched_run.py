"""Run one test in this process as the rank a launcher (``torchrun``) started it as.

:func:`run_as_launched_rank` is the whole protocol, usable by any test base; a base whose
``setUp``/``tearDown`` need the test's directory (``file_name``) uses its three phases,
:class:`LaunchedTest` ``begin``, ``run`` and ``end``:

1. ``begin``: the test's ranks agree on its keys in the launcher's store (``<test id>/run-<n>``)
   and on its directory, which rank 0 makes and publishes (another machine sees it only on a
   shared filesystem; a rank that cannot see it gets a private one);
2. ``run``: this rank enters its facts (rank, world size, its local rank's device, backend,
   directory, a rendezvous in the launcher's store) and runs the task under a
   :class:`Watchdog` (what the task changes in the environment is undone after it); it
   publishes its :class:`RankOutcome` (a rank with a problem destroys its process groups at
   once, so that peers waiting in a collective with it raise instead of hanging; an error
   that follows another rank's failure is reported as *stopped* by it); it waits for every
   other rank's outcome (until the deadline and :data:`EXCHANGE_GRACE`), destroys the test's
   groups and returns the verdict of all ranks: every rank reports the same;
3. ``end`` (after the test's ``tearDown``, also for a test that skipped before ``run``):
   this rank leaves its facts and says it is done with the test; rank 0, whose directory it
   is, waits for the others before removing it (so a peer's ``tearDown`` still finds it, and
   rank 0, which may host the store, outlives every peer's last use of it).

A hung task ends the process at the deadline: the stacks of its threads go to stderr, a *timed
out* outcome to the store, the abort hooks run (``run_tests`` writes its JUnit XML), and the
process exits with status 124. Ranks beyond the test's ``world_size`` run nothing and report
the verdict of those that ran it.
"""

from __future__ import annotations

import atexit
import collections
import faulthandler
import gc
import os
import sys
import tempfile
import threading
import time
import traceback
import unittest
from collections.abc import Callable

import torch.distributed as dist

from ... import devices
from .._torch_private import test_method_name, thread_frames
from ..ledger.rank_ledger import begin_test, end_test
from ..ledger.recording import current_recorder
from ..process_groups.teardown import destroy_process_groups, release_retired_process_groups
from ..reporting.status import Status
from ..reporting.tracebacks import format_user_stack
from ..worlds import interrupts
from ..worlds.interrupts import InterruptListener
from ..worlds.outcomes import RankOutcome, Verdict, combine, outcome_of
from ..worlds.rank_facts import RankFacts, enter_rank, leave_rank
from ..worlds.world import WorldDir
from .launched_reports import run_abort_hooks
from .launcher_env import LaunchedRank, launched_rank
from .launcher_store import MAIN, WATCHDOG, launcher_store, rendezvous_base
from .outcome_exchange import OutcomeExchange
from .rank_watchdog import ABORT_EXIT_STATUS, Watchdog

__all__ = ["run_as_launched_rank", "LaunchedTest", "EXCHANGE_GRACE", "TEARDOWN_GRACE", "TEST_DIR_PREFIX"]

__unittest = True

EXCHANGE_GRACE = 10.0  # seconds past the deadline a rank waits for its peers' outcomes
TEARDOWN_GRACE = 30.0  # seconds past that for destroying the test's process groups
TEST_DIR_PREFIX = "torch_testing_ext-launched-"
ABORT_LINGER = 10.0  # seconds a timed-out rank waits for the others to take its outcome
END_WAIT = 30.0  # seconds rank 0 waits, at a test's end, for the others to be done with it
# Seconds a rank waits at least for rank 0 to start a test: the ranks of a job reach their
# first test at different times (each imports torch), whatever the test's timeout.
START_WAIT_MIN = 60.0

_runs: collections.Counter[str] = collections.Counter()  # runs of each test id so far
# Directories this process made and has not removed yet: an interrupt (the launcher's SIGTERM)
# skips unittest's cleanups, so what is left goes at exit.
_own_dirs: dict[str, WorldDir] = {}
_removal_registered = False


def _make_own_dir(name: str) -> str:
    global _removal_registered
    if not _removal_registered:
        atexit.register(_remove_own_dirs)
        _removal_registered = True
    directory = WorldDir(tempfile.gettempdir(), name)
    _own_dirs[directory.path] = directory
    return directory.path


def _remove_own_dir(path: str) -> None:
    directory = _own_dirs.pop(path, None)
    if directory is not None:
        directory.remove()


def _remove_own_dirs() -> None:
    for path in list(_own_dirs):
        _remove_own_dir(path)


def _destroy_groups(failed: bool) -> None:
    """Destroy the test's process groups, and drop them.

    After a failure the test's objects are collected first: a DDP module in a reference cycle
    would keep its group, and its connections, open (peers waiting in a collective would hang)
    and could deadlock if it dropped the group later while a collective is still finishing.
    After a pass every rank is done with its collectives, and the collection (a tenth of a
    second or more with torch loaded) is left to Python.
    """
    if failed and dist.is_available() and dist.is_initialized():
        gc.collect()
    destroy_process_groups()
    release_retired_process_groups()


class LaunchedTest:
    """One run of one test on this launched rank: ``begin``, ``run``, ``end`` (always)."""

    def __init__(self, test: unittest.TestCase, launched: LaunchedRank | None = None) -> None:
        launched = launched or launched_rank()
        if launched is None:
            raise RuntimeError("a launched test needs a process that a launcher started (RANK set)")
        self.launched = launched
        self.rank = launched.rank
        self.test = test
        test_id = test.id()
        self.key = f"{test_id}/run-{_runs[test_id]}"
        _runs[test_id] += 1
        self.exchange = OutcomeExchange(launcher_store(launched, MAIN), self.key)
        self.watch_exchange = OutcomeExchange(launcher_store(launched, WATCHDOG), self.key)
        self.test_dir: str | None = None  # agreed by begin()
        self.own_dir: str | None = None  # a directory this rank made, and removes
        self.timeout = 0.0  # of the running task, for expire()
        self.thread = threading.get_ident()
        self._absent = 0  # ranks that did not report: rank 0 does not wait for them at the end
        self._done = False  # this rank said it is done with the test's directory

    # -- begin -------------------------------------------------------------------------------

    def begin(self, timeout: float) -> None:
        """Agree on the test's directory: rank 0 makes it, the others wait for it (for
        ``timeout`` seconds, and at least :data:`START_WAIT_MIN`; ``test_dir`` stays None if
        rank 0 does not announce one)."""
        prefix = f"{TEST_DIR_PREFIX}{type(self.test).__name__}"
        if self.rank == 0:
            self.test_dir = self.own_dir = _make_own_dir(prefix)
            self.exchange.publish_test_dir(self.test_dir)
            return
        path = self.exchange.wait_for_test_dir(time.monotonic() + max(timeout, START_WAIT_MIN))
        if path is not None and not os.path.isdir(path):
            # Rank 0 is on another machine and the filesystem is not shared.
            path = self.own_dir = _make_own_dir(f"{prefix}-rank{self.rank}")
        self.test_dir = path

    # -- run ---------------------------------------------------------------------------------

    def run(self, task: Callable[[], None], timeout: float, world_size: int | None = None) -> Verdict:
        """Run ``task`` (the test body with its rank hooks) as this rank, within ``timeout``
        seconds, and return the verdict of the test's ``world_size`` ranks (default: all)."""
        world_size = world_size or self.launched.world_size
        if self.test_dir is None:
            return Verdict(Status.ERROR, f"rank 0 did not start this test in time (rank {self.rank} "
                                         "waited for it): the ranks run different tests, or rank 0 is gone")
        interrupts.install_sigterm_handler()
        self.timeout = timeout
        deadline = time.monotonic() + timeout
        # What the task changes in the environment dies with it, as with a rank process.
        saved_environ = dict(os.environ)
        with Watchdog(deadline, self.expire) as watchdog:
            if self.rank < world_size:
                facts = self._facts(world_size)
                enter_rank(facts)
                faults = begin_test(facts, *self._test_function())
                try:
                    outcome = end_test(self._run_task(task, world_size), faults)
                except KeyboardInterrupt:
                    self.exchange.publish(RankOutcome(self.rank, Status.INTERRUPTED, "interrupted"))
                    self._mark_done()
                    raise
                self.exchange.publish(outcome)
                if outcome.status.is_problem:
                    _destroy_groups(failed=True)  # peers blocked in a collective with us raise now
            watchdog.move_deadline(deadline + EXCHANGE_GRACE + TEARDOWN_GRACE)
            outcomes, absent = self.exchange.collect(range(world_size), deadline + EXCHANGE_GRACE,
                                                     waited=timeout + EXCHANGE_GRACE)
            _destroy_groups(failed=False)
            leave_rank()
            os.environ.clear()
            os.environ.update(saved_environ)
            self._absent = len(absent)
        return combine(outcomes)

    def _test_function(self) -> tuple[object, object]:
        """The test's function and class (their injected faults and lockstep wish)."""
        if isinstance(self.test, unittest.TestCase):
            cls = type(self.test)
            return getattr(cls, test_method_name(self.test), None), cls
        return getattr(self.test, "function", None), getattr(self.test, "cls", None)  # a pytest test's

    def _facts(self, world_size: int) -> RankFacts:
        assert self.test_dir is not None
        device = devices.rank_device(self.launched.local_rank)
        return RankFacts(self.rank, world_size, device, devices.default_backend(device),
                         self.test_dir, rendezvous_base(self.key))

    def _run_task(self, task: Callable[[], None], world_size: int) -> RankOutcome:
        with InterruptListener() as listener:
            try:
                task()
            except KeyboardInterrupt as error:
                if listener.is_a_stop(error):  # this process's Ctrl-C or SIGTERM: the run stops
                    raise
                outcome = outcome_of(self.rank, error)  # the test raised it: it left the test
            except BaseException as error:  # every other ending of the test is this rank's outcome
                outcome = outcome_of(self.rank, error)
            else:
                return RankOutcome(self.rank, Status.PASSED)
        if outcome.status is Status.ERROR:
            peers = [r for r in range(world_size) if r != self.rank]
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
        stack = format_user_stack(thread_frames().get(self.thread))
        recorder = current_recorder()  # the test's calls so far (its thread is stuck, not gone)
        outcome = RankOutcome(self.rank, Status.TIMED_OUT, f"{what}; its stack:\n{stack}",
                              ledger=None if recorder is None else recorder.ledger)
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
        self._done = True  # said above, through the watchdog's own connection
        self.end()
        sys.stdout.flush()
        sys.stderr.flush()

    # -- end ---------------------------------------------------------------------------------

    def _mark_done(self) -> None:
        if not self._done:
            self._done = True
            self.exchange.mark_done()

    def end(self) -> None:
        """After the test's ``tearDown`` (also when it skipped before running): leave the rank's
        facts and say this rank is done with the test; rank 0, whose directory it is, waits
        for the others (at most ``END_WAIT`` s) before removing it. A rank removes the private
        directory it made, if any."""
        leave_rank()
        if self.test_dir is not None and not self._done:
            self._mark_done()
            if self.rank == 0:
                self.exchange.wait_until_done(self.launched.world_size - self._absent,
                                              time.monotonic() + END_WAIT)
        if self.own_dir is not None:
            _remove_own_dir(self.own_dir)


def run_as_launched_rank(test: unittest.TestCase, task: Callable[[], None], timeout: float,
                         world_size: int | None = None, launched: LaunchedRank | None = None) -> Verdict:
    """Run ``task`` (the test body with its rank hooks) here, as this process's launched rank,
    and return the verdict of every rank of the test: :class:`LaunchedTest`'s three phases.

    ``world_size`` is the test's (default: the launcher's); ranks at or beyond it run nothing.
    ``timeout`` bounds the task; past it this process ends (see the module docstring).
    """
    run = LaunchedTest(test, launched)
    try:
        run.begin(timeout)
        return run.run(task, timeout, world_size)
    finally:
        run.end()
