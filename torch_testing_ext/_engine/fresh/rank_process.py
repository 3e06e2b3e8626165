"""What runs inside a rank process: run one test method and report its outcome.

A rank is forked from the preloaded fork server. It makes itself a process-group leader (so
the supervisor can kill it together with anything it started), sends its output to a log
file, arms faulthandler on SIGUSR1 (the supervisor asks for stacks on timeout), and kills
itself if the test process goes away (the *lifeline* pipe reaches end-of-file).
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import os
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from typing import Any, NoReturn

import torch

from .._torch_private import run_multiprocessing_finalizers
from ..ledger.rank_ledger import begin_test, end_test
from ..process_groups.teardown import destroy_process_groups, release_retired_process_groups
from ..reporting.status import Status
from ..testcase.tensor_testcase import seed_everything
from ..worlds.outcomes import RankOutcome, outcome_of
from ..worlds.rank_facts import RankFacts, RankHooks, RankTask, enter_rank
from .fork_server import adopt_environment
from .upstream_entry import overrides_rank_entry, run_upstream_entry

__all__ = ["run_rank", "become_rank", "run_test_method", "run_between_hooks", "watch_lifeline", "redirect_output",
           "resolve_class", "share_cpus", "report_and_exit", "leave_rank_process", "flush_output", "RELEASE_GC_AFTER",
           "RELEASE_WAIT"]

__unittest = True

# A rank that has reported waits for the release, so that peers can finish setting up their
# connections to it. The wait is bounded: after RELEASE_GC_AFTER seconds the rank collects its
# test's cyclic garbage (objects that may still hold process groups), and after RELEASE_WAIT
# it tears down anyway, so no peer ever depends on its release until the test's timeout.
RELEASE_GC_AFTER = 2.0
RELEASE_WAIT = 30.0


def watch_lifeline(lifeline: Connection) -> None:
    """Kill this rank's process group once ``lifeline`` reaches end-of-file (the test process
    is gone)."""

    def watch() -> None:
        try:
            lifeline.recv()
        except (EOFError, OSError):
            pass
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="tte-lifeline", daemon=True).start()


def flush_output() -> None:
    """Flush this rank's ``sys.stdout`` and ``sys.stderr`` as far as the test left them
    flushable (a test may close them, or the descriptors under them): the rank still reports."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed, its descriptor closed, or None
            pass


def redirect_output(log_path: str) -> Any:
    """Send this process's stdout and stderr to ``log_path``, with faulthandler's stacks on a
    crash and on SIGUSR1; return the open log."""
    log = open(log_path, "a", buffering=1)
    flush_output()
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    faulthandler.enable(file=log, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=log, all_threads=True)
    return log


def resolve_class(module: str, qualname: str) -> type:
    """The class ``qualname`` of ``module`` (imported if need be)."""
    target: Any = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _wait_for_release(result: Connection) -> None:
    try:
        if result.poll(RELEASE_GC_AFTER):
            result.recv()
            return
        gc.collect()
        if result.poll(RELEASE_WAIT - RELEASE_GC_AFTER):
            result.recv()
    except (EOFError, OSError):  # the supervisor closed the connection: released as well
        pass


def run_between_hooks(test: RankHooks, method: str, seed: int) -> None:
    """What a rank runs of a test: every RNG seeded with ``seed``, ``setUpRank()``, the class's
    own ``method`` (not an instance's replacement), then ``tearDownRank()`` whatever happened."""
    seed_everything(seed)
    test.setUpRank()
    try:
        getattr(type(test), method)(test)
    finally:
        test.tearDownRank()


def run_test_method(task: RankTask, facts: RankFacts) -> RankOutcome:
    """Run ``task``'s method as the rank ``facts`` describes (seeded, between the rank hooks,
    its collective calls recorded) and say how it ended."""
    try:
        cls = resolve_class(task.module, task.qualname)
    except BaseException as error:  # the test's class cannot be found: the rank's outcome
        return outcome_of(facts.rank, error)
    faults = begin_test(facts, getattr(cls, task.method, None), cls)
    if overrides_rank_entry(cls):  # upstream's _run sets the rank up, then calls run_test
        return end_test(run_upstream_entry(cls, task.method, facts, task.seed, run_between_hooks), faults)
    try:
        run_between_hooks(cls(task.method), task.method, task.seed)
    except BaseException as error:  # every ending of the test is the rank's outcome
        outcome = outcome_of(facts.rank, error)
    else:
        outcome = RankOutcome(facts.rank, Status.PASSED)
    return end_test(outcome, faults)


def share_cpus(world_size: int) -> None:
    """Give this rank its share of the CPUs for torch's intra-op threads: ``world_size``
    ranks that each used all of them would only fight over them (torchrun sets
    ``OMP_NUM_THREADS=1`` for several ranks per machine). ``OMP_NUM_THREADS`` in the test
    process's environment wins."""
    if "OMP_NUM_THREADS" in os.environ:
        return
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    torch.set_num_threads(max(1, cpus // world_size))


def become_rank(facts: RankFacts, environ: dict[str, str], lifeline: Connection) -> Any:
    """What every rank process does first: lead its own process group, die with the test
    process (``lifeline``), write its output to its log, take the test process's environment,
    take its share of the CPUs and enter ``facts``. Returns the open log."""
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the fork server's handler is not ours
    watch_lifeline(lifeline)
    log = redirect_output(facts.log_path)
    adopt_environment(environ)
    share_cpus(facts.world_size)
    enter_rank(facts)
    return log


def run_rank(task: RankTask, facts: RankFacts, result: Connection, lifeline: Connection) -> None:
    """Entry point of a rank process: run ``task`` as the rank ``facts`` describes, send a
    RankOutcome on ``result``, then wait for the supervisor's release on ``result`` before
    tearing down and exiting."""
    log = become_rank(facts, task.environ, lifeline)
    report_and_exit(run_test_method(task, facts), result, log)


def report_and_exit(outcome: RankOutcome, result: Connection, log: Any) -> NoReturn:
    """The end of every fresh rank process: send ``outcome`` on ``result``, wait for the
    supervisor's release, tear down the rank's process groups and leave at once."""
    flush_output()
    result.send(outcome)
    # Keep this rank's process groups (and their sockets) until every rank has finished its
    # test: a peer may still be completing a connection to us (gloo sets up its full mesh
    # pair by pair), and tearing down early makes that peer fail. The supervisor sends the
    # release once no rank is running any more.
    _wait_for_release(result)
    leave_rank_process(result, log)


def leave_rank_process(connection: Connection, log: Any) -> NoReturn:
    """The last thing a rank process does (fresh or kept): tear down its process groups and
    multiprocessing's finalizers, close its connection and log, and leave at once, without
    interpreter teardown (which could hang in library atexit handlers)."""
    try:
        destroy_process_groups()
        release_retired_process_groups()
        run_multiprocessing_finalizers()
    except BaseException:  # nobody waits for an outcome now; leave the reason in the rank's log
        traceback.print_exc()
    connection.close()
    log.flush()
    os._exit(0)
