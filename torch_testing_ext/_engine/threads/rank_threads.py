"""One test body on ``world_size`` rank threads: the threaded world's start, outcomes and end.

:func:`run_rank_threads` installs the thread-local c10d world, starts one thread per rank, and
in each enters the rank's facts (``worlds.rank_facts``, for that thread only), creates the
default ``threaded`` group (rank r of N, one shared ``HashStore``), runs the body, destroys
the rank's groups and records the rank's :class:`RankOutcome`. A rank that fails tears the
world down, so ranks waiting for it in a collective stop at once (``stopped``) instead of
waiting for the timeout. At the timeout the ranks still running are reported with their
Python stacks (``timed out``), the world is torn down to wake them, a rank busy in Python is
interrupted, and every thread is joined: no rank thread outlives the test. Then the process's
own c10d world comes back.
"""

from __future__ import annotations

import dataclasses
import datetime
import threading
import time
from collections.abc import Callable
from typing import Any

import torch.distributed as dist

from ... import devices
from .._torch_private import raise_in_thread, thread_frames
from ..ledger.rank_ledger import begin_test, end_test
from ..ledger.recording import Recorder, current_recorder
from ..process_groups import threaded_pg
from ..process_groups.c10d_world_per_thread import install_thread_local_world, uninstall_thread_local_world
from ..process_groups.collective_exchange import CollectiveAborted, Exchange
from ..process_groups.teardown import destroy_process_groups
from ..reporting.status import Status
from ..reporting.tracebacks import format_user_stack
from ..worlds.outcomes import (
    RankFailure,
    RankOutcome,
    Verdict,
    combine,
    outcome_of,
    raise_verdict,
)
from ..worlds.rank_facts import RankFacts, enter_thread_rank, leave_thread_rank

__all__ = ["ThreadedRun", "ThreadRankFailure", "run_rank_threads", "thread_verdict", "raise_for_outcome"]

__unittest = True

WAKE_GRACE = 1.0  # seconds the rank threads woken from collectives have to end
STOP_GRACE = 5.0  # seconds a rank thread interrupted in Python has to end

class ThreadRankFailure(RankFailure, RuntimeError):
    """One or more rank threads failed an assertion (a RuntimeError too, as upstream raises)."""


@dataclasses.dataclass
class ThreadedRun:
    """How the ranks ended; ``left_running`` names ranks whose thread could not be stopped."""

    outcomes: list[RankOutcome]
    left_running: list[int]


class _RankThreads:
    """The rank threads of one run and the outcomes they record (the first per rank counts)."""

    def __init__(self, world_size: int, test_function: Any = None, test_class: Any = None) -> None:
        self.world_size = world_size
        self.test_function = test_function  # whose faults and lockstep wish the ranks read
        self.test_class = test_class
        self.recorders: dict[int, Recorder | None] = {}  # each rank's: a stuck rank's calls so far
        self.exchange = Exchange()
        self.store = dist.HashStore()
        self.threads: list[threading.Thread] = []
        self._outcomes: dict[int, RankOutcome] = {}
        self._lock = threading.Lock()

    def record(self, outcome: RankOutcome, fail_fast: bool = True) -> None:
        """Keep a rank's outcome unless it has one; a problem tears the world down (fail fast)."""
        with self._lock:
            self._outcomes.setdefault(outcome.rank, outcome)
        if outcome.status.is_problem and fail_fast:
            self.exchange.abort(f"rank {outcome.rank} {outcome.status}")

    def outcomes(self) -> list[RankOutcome]:
        with self._lock:
            return [self._outcomes.get(rank) or RankOutcome(rank, Status.DIED, "its thread ended "
                                                            "without reporting an outcome")
                    for rank in range(self.world_size)]

    def alive(self) -> list[int]:
        return [rank for rank, thread in enumerate(self.threads) if thread.is_alive()]

    def join(self, deadline: float) -> None:
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _outcome_of(rank: int, error: BaseException) -> RankOutcome:
    if isinstance(error, CollectiveAborted):  # woken because another rank failed or timed out
        return RankOutcome(rank, Status.STOPPED, str(error))
    return outcome_of(rank, error)


def _rank_main(ranks: _RankThreads, rank: int, body: Callable[[int], None], timeout: float) -> None:
    facts = RankFacts(rank, ranks.world_size, devices.rank_device(rank), threaded_pg.THREADED_BACKEND, test_dir="")
    enter_thread_rank(facts)
    faults = begin_test(facts, ranks.test_function, ranks.test_class, thread=True)
    ranks.recorders[rank] = current_recorder()
    try:
        dist.init_process_group(threaded_pg.THREADED_BACKEND, rank=rank,
                                world_size=ranks.world_size, store=ranks.store,
                                timeout=datetime.timedelta(seconds=timeout))
        try:
            body(rank)
        finally:
            destroy_process_groups()
    except BaseException as error:  # every ending of a rank is its outcome
        outcome = _outcome_of(rank, error)
    else:
        outcome = RankOutcome(rank, Status.PASSED)
    finally:
        leave_thread_rank()
    ranks.record(end_test(outcome, faults, thread=True))


def _stop_stuck(ranks: _RankThreads, timeout: float) -> list[int]:
    """Report the ranks still running as timed out, wake them, and return those that stay."""
    stuck = ranks.alive()
    frames = thread_frames()
    for rank in stuck:
        ident = ranks.threads[rank].ident
        stack = format_user_stack(frames.get(ident) if ident is not None else None)
        recorder = ranks.recorders.get(rank)
        ranks.record(RankOutcome(rank, Status.TIMED_OUT, f"still running after {timeout:g} s; its stack:\n{stack}",
                                 ledger=None if recorder is None else recorder.ledger), fail_fast=False)
    ranks.exchange.abort(f"the test timed out after {timeout:g} s")
    ranks.join(time.monotonic() + WAKE_GRACE)
    for rank in ranks.alive():  # not in a collective: busy in Python, or blocked in C
        ident = ranks.threads[rank].ident
        if ident is not None:  # a started thread has one
            raise_in_thread(ident, CollectiveAborted)
    ranks.join(time.monotonic() + STOP_GRACE)
    return ranks.alive()


def run_rank_threads(body: Callable[[int], None], world_size: int, timeout: float,
                     name: str, test_function: Any = None, test_class: Any = None) -> ThreadedRun:
    """Run ``body(rank)`` on ``world_size`` rank threads, each in the default threaded group,
    its collective calls recorded (``test_function`` and ``test_class``: the test, whose
    injected faults and lockstep wish apply)."""
    ranks = _RankThreads(world_size, test_function, test_class)
    install_thread_local_world()
    threaded_pg.set_active_exchange(ranks.exchange)
    left_running: list[int] = []
    try:
        for rank in range(world_size):
            thread = threading.Thread(target=_rank_main, args=(ranks, rank, body, timeout),
                                      name=f"rank {rank} of {name}", daemon=True)
            ranks.threads.append(thread)
            thread.start()
        ranks.join(time.monotonic() + timeout)
        if ranks.alive():
            left_running = _stop_stuck(ranks, timeout)
    finally:
        if ranks.alive():  # interrupted (Ctrl-C): wake the ranks before the world goes
            ranks.exchange.abort("the test was interrupted")
            ranks.join(time.monotonic() + STOP_GRACE)
        uninstall_thread_local_world()  # also tears down the exchange
    return ThreadedRun(ranks.outcomes(), left_running)


def thread_verdict(run: ThreadedRun) -> Verdict:
    """The verdict of the rank threads (see ``worlds.outcomes.combine``); rank threads that could
    not be stopped make it an error that names them."""
    verdict = combine(run.outcomes)
    if not run.left_running:
        return verdict
    listed = ", ".join(map(str, run.left_running))
    note = (f"rank {listed} could not be stopped (blocked outside Python); its thread is "
            "left running as a daemon thread")
    headline = "; ".join(filter(None, [verdict.headline, f"rank {listed} could not be stopped"]))
    return Verdict(Status.ERROR, "\n".join(filter(None, [verdict.message, note])), headline)


def raise_for_outcome(run: ThreadedRun) -> None:
    """Return if every rank passed; else raise SkipTest (all skipped), ThreadRankFailure (only
    assertion failures) or RankError, with each failing rank's traceback or stack."""
    raise_verdict(thread_verdict(run), ThreadRankFailure)
