"""What runs inside a rank process: run one test method and report its outcome.

A rank is forked from the preloaded fork server. It makes itself a process-group leader (so
the supervisor can kill it together with anything it started), sends its output to a log
file, arms faulthandler on SIGUSR1 (the supervisor asks for stacks on timeout), and kills
itself if the test process goes away (the *lifeline* pipe reaches end-of-file).
"""

from __future__ import annotations

import dataclasses
import faulthandler
import gc
import importlib
import os
import signal
import sys
import threading
import traceback
import unittest
from multiprocessing.connection import Connection
from typing import Any

from .context import RankContext, current_rank_context, set_rank_context
from .outcome import RankOutcome, Status, skip_reason_for_exit_code

__all__ = ["RankSpec", "run_rank"]


@dataclasses.dataclass(frozen=True)
class RankSpec:
    """Everything a rank needs to find and run its test."""

    module: str
    qualname: str
    method: str
    context: RankContext
    log_path: str
    seed: int


def _watch_lifeline(lifeline: Connection) -> None:
    def watch() -> None:
        try:
            lifeline.recv()
        except (EOFError, OSError):
            pass
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="tte-lifeline", daemon=True).start()


def _redirect_output(log_path: str) -> Any:
    log = open(log_path, "a", buffering=1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    faulthandler.enable(file=log, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=log, all_threads=True)
    return log


def _resolve(module: str, qualname: str) -> type:
    target: Any = sys.modules.get(module) or importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


# Process groups this rank has destroyed (or is destroying) but still references; see
# retire_process_groups.
_retired_groups: list[Any] = []


def retire_process_groups() -> None:
    """Keep every live process group referenced until this rank tears down; call it just
    before ``destroy_process_group``.

    Whoever drops the last reference to a gloo group runs its destructor, which joins the
    group's worker threads. A worker that finishes a collective drops tensors that have
    Python objects, for which it needs the GIL. A ``ProcessGroup`` Python object drops its
    reference with the GIL released, but a DDP ``Reducer`` drops its group with the GIL
    held: if a test's DDP module outlives the destroyed group (freed with the test's locals,
    or by gc) and its Reducer holds the last reference while a worker is still finishing a
    collective, the rank deadlocks in the join. Retired groups keep the Reducer's reference
    from being the last one; the rank drops them at teardown (``_destroy_process_groups``).
    Outside a rank nothing would ever drop them, so there it does nothing.
    """
    import torch.distributed as dist

    if current_rank_context() is not None and dist.is_available() and dist.is_initialized():
        # torch's registry of live groups; if a future torch renames it, nothing is retired
        # (the work-around is lost, never the teardown).
        world = getattr(dist.distributed_c10d, "_world", None)
        _retired_groups.extend(getattr(world, "pg_map", ()))


def _destroy_process_groups() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        retire_process_groups()
        dist.destroy_process_group()
    # The last references to the groups, unless the test's objects still hold some (then
    # os._exit leaves them): pybind drops them with the GIL released.
    _retired_groups.clear()


# A rank that has reported waits for the release, so that peers can finish setting up their
# connections to it. The wait is bounded: after RELEASE_GC_AFTER seconds the rank collects its
# test's cyclic garbage (objects that may still hold process groups), and after RELEASE_WAIT
# it tears down anyway, so no peer ever depends on its release until the test's timeout.
# (This is a precaution; it did not cure the intermittent teardown hang of
# test_compiler_collectives_automatic_dynamic_tensor: see retire_process_groups.)
RELEASE_GC_AFTER = 2.0
RELEASE_WAIT = 30.0


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


def _run(spec: RankSpec) -> RankOutcome:
    rank = spec.context.rank
    try:
        cls = _resolve(spec.module, spec.qualname)
        test = cls(spec.method)
        test._apply_rank_context(spec.context)
        from ..testcase import seed_everything

        seed_everything(spec.seed)
        test._rank_set_up()
        try:
            getattr(cls, spec.method)(test)
        finally:
            test._rank_tear_down()
    except unittest.SkipTest as skip:
        return RankOutcome(rank, Status.SKIPPED, str(skip))
    except SystemExit as exit_request:
        code = exit_request.code
        reason = skip_reason_for_exit_code(code) if isinstance(code, int) else None
        if reason:
            return RankOutcome(rank, Status.SKIPPED, reason)
        if code in (0, None):
            return RankOutcome(rank, Status.PASSED)
        return RankOutcome(rank, Status.ERROR, f"SystemExit({code!r})\n{traceback.format_exc()}")
    except AssertionError:
        return RankOutcome(rank, Status.FAILED, traceback.format_exc())
    except BaseException:
        return RankOutcome(rank, Status.ERROR, traceback.format_exc())
    return RankOutcome(rank, Status.PASSED)


def run_rank(spec: RankSpec, result: Connection, lifeline: Connection) -> None:
    """Entry point of a rank process: run ``spec``'s test, send a RankOutcome on ``result``,
    then wait for the supervisor's release on ``result`` before tearing down and exiting."""
    os.setsid()
    _watch_lifeline(lifeline)
    log = _redirect_output(spec.log_path)
    set_rank_context(spec.context)
    outcome = _run(spec)
    sys.stdout.flush()
    sys.stderr.flush()
    result.send(outcome)
    # Keep this rank's process groups (and their sockets) until every rank has finished its
    # test: a peer may still be completing a connection to us (gloo sets up its full mesh
    # pair by pair), and tearing down early makes that peer fail. The supervisor sends the
    # release once no rank is running any more.
    _wait_for_release(result)
    try:
        _destroy_process_groups()
    except BaseException:  # the outcome is sent; leave the reason in the rank's log
        traceback.print_exc()
    result.close()
    log.flush()
    # Leave at once: interpreter teardown could hang in library atexit handlers.
    os._exit(0)
