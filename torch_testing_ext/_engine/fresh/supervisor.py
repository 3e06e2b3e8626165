"""Start a test's ranks, wait for their outcomes, and clean up whatever happens.

The supervisor collects one :class:`RankOutcome` per rank. A rank that exits without
reporting is *died* (exit code or signal named). Once any rank has a problem, the others get
``FAIL_FAST_GRACE`` seconds to finish and are then stopped. A rank that has reported keeps its
process groups until every rank has reported or been stopped; then the supervisor sends it
the release and it tears down and exits. At the deadline, the ranks still
running are asked for their Python stacks (faulthandler on SIGUSR1), reported as *timed out*
with the test's stack (the dump without the harness's frames and watcher threads), and
killed. Every rank is killed with its whole process group on the way out, also on Ctrl-C
or SIGTERM. The test's directory is the world's (``fresh_world``), made and removed there.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from ..ledger.rank_ledger import attach_ledger_files
from ..reporting.stack_dumps import trim_dump
from ..reporting.status import Status
from ..skips.skip_codes import skip_reason_for_exit_code
from ..worlds import interrupts
from ..worlds.outcomes import RankOutcome
from ..worlds.rank_facts import RankFacts
from .fork_server import server_pid
from .leftovers import Leftover, find_leftovers, kill_leftovers
from .rank_process import run_rank

__all__ = ["RanksEnded", "RankProcesses", "AwaitedRanks", "run_ranks", "wait_for_outcomes", "kill_process_group",
           "output_tail", "log_size", "await_dumps", "FAIL_FAST_GRACE", "STACK_DUMP_WAIT", "DUMP_SETTLED",
           "EXIT_GRACE"]

__unittest = True

FAIL_FAST_GRACE = 3.0  # seconds the other ranks get after one rank failed
STACK_DUMP_WAIT = 1.0  # seconds a timed-out rank gets to write its stacks, at most
DUMP_SETTLED = 0.05  # seconds a rank's log holds still once its dump is there: the dump is done
EXIT_GRACE = 5.0  # seconds a rank that reported may take to exit once released
RELEASE = "release"  # sent to every rank once no rank is running
_TAIL_LINES = 40
_TAIL_BYTES = 16_000


@dataclasses.dataclass
class RanksEnded:
    """Every rank's outcome, sorted by rank, and what the ranks left running (now killed)."""

    outcomes: list[RankOutcome]
    leftovers: list[Leftover]


def log_size(path: str) -> int:
    """How many bytes a rank's log holds (0 before it exists)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def await_dumps(logs: dict[int, str], asked_at: dict[int, int], clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait until every rank's log has grown since it was asked for its stacks (``asked_at``:
    the log's size then) and then held still for ``DUMP_SETTLED`` seconds, or for
    ``STACK_DUMP_WAIT`` seconds in all. faulthandler writes a dump from its signal handler at
    once, so a rank that can dump has done so within milliseconds; one that cannot (stopped,
    or gone) costs the whole wait."""
    deadline = clock() + STACK_DUMP_WAIT
    before: dict[int, int] = {}
    while clock() < deadline:
        sleep(min(DUMP_SETTLED, max(deadline - clock(), 0.0)))
        sizes = {rank: log_size(path) for rank, path in logs.items()}
        if sizes == before and all(size > asked_at[rank] for rank, size in sizes.items()):
            return
        before = sizes


def _read_log(path: str, since: int, until: int | None = None) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(since)
            data = log.read() if until is None else log.read(max(0, until - since))
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def output_tail(path: str, since: int = 0, until: int | None = None) -> str:
    """The last lines of a rank's log file between bytes ``since`` and ``until`` (the end when
    None); "" if it has none."""
    end = log_size(path) if until is None else until
    text = _read_log(path, max(since, end - _TAIL_BYTES), end)
    return "\n".join(text.splitlines()[-_TAIL_LINES:])


def kill_process_group(process: BaseProcess) -> None:
    """SIGKILL a rank and its process group (everything it started in its session)."""
    if process.pid is None:
        return
    for kill in (lambda: os.killpg(process.pid, signal.SIGKILL), lambda: os.kill(process.pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            continue


def _death_notice(rank: int, exitcode: int | None) -> RankOutcome:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        return RankOutcome(rank, Status.DIED, f"rank {rank} died from signal {name}")
    reason = skip_reason_for_exit_code(exitcode)
    if reason:
        return RankOutcome(rank, Status.SKIPPED, reason)
    return RankOutcome(rank, Status.DIED, f"rank {rank} exited with code {exitcode} without reporting an outcome")


class RankProcesses:
    """Rank processes forked from the server, our ends of their connections, and what they
    have reported about the current test.

    Each rank runs ``target(task, facts, connection, lifeline)``: it reports on its duplex
    connection and is told there what to do next; it kills itself when the lifeline (whose
    write end we hold) closes. A rank that cannot start takes those already started with it.
    """

    # Every RankProcesses whose ranks may be running: another world's ranks are not leftovers.
    _live: weakref.WeakSet[RankProcesses] = weakref.WeakSet()

    def __init__(self, context: ForkServerContext, world: Sequence[RankFacts], target: Callable[..., None],
                 task: object) -> None:
        self.processes: dict[int, BaseProcess] = {}
        self.connections: dict[int, Connection] = {}
        self.outcomes: dict[int, RankOutcome] = {}
        self.logs = {facts.rank: facts.log_path for facts in world}
        self.test_dir = world[0].test_dir if world else ""
        self._dumps_at: dict[int, int] = {}  # where a rank's stack dump starts in its log
        lifeline, self._lifeline = context.Pipe(duplex=False)
        RankProcesses._live.add(self)
        try:
            for facts in world:
                ours, theirs = context.Pipe(duplex=True)
                self.connections[facts.rank] = ours
                process = context.Process(target=target, args=(task, facts, theirs, lifeline),
                                          name=f"rank-{facts.rank}", daemon=False)
                self.processes[facts.rank] = process
                try:
                    process.start()
                finally:
                    theirs.close()
        except BaseException:  # a rank that could not start (or Ctrl-C): none of them stays
            self.close()
            raise
        finally:
            lifeline.close()

    def running(self) -> list[int]:
        """The ranks that have not reported (or died) yet."""
        return [rank for rank in self.processes if rank not in self.outcomes]

    def collect(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for reports or exits, and record what arrived."""
        waiting: dict[Any, int] = {self.connections[r]: r for r in self.running()}
        waiting.update({self.processes[r].sentinel: r for r in self.running()})
        for ready in wait(list(waiting), timeout=max(timeout, 0.0)):
            rank = waiting[ready]
            if rank in self.outcomes:
                continue
            connection = self.connections[rank]
            try:
                if connection.poll():
                    self.outcomes[rank] = connection.recv()
                    continue
            except (EOFError, OSError):
                pass
            process = self.processes[rank]
            if not process.is_alive():
                process.join()
                self.outcomes[rank] = _death_notice(rank, process.exitcode)

    def stop(self, ranks: list[int], status: Status, detail: str, dump_stacks: bool) -> None:
        """Kill ``ranks``; their outcome is ``status`` with ``detail``. With ``dump_stacks``,
        each is first asked for its stacks, and its detail gains the test's stack
        (:func:`~torch_testing_ext._engine.reporting.stack_dumps.trim_dump`)."""
        details = {rank: detail for rank in ranks}
        if dump_stacks:
            for rank in ranks:
                self._dumps_at[rank] = log_size(self.logs[rank])
                pid = self.processes[rank].pid
                try:
                    if pid is not None:
                        os.kill(pid, signal.SIGUSR1)
                except ProcessLookupError:
                    pass
            await_dumps({rank: self.logs[rank] for rank in ranks}, {rank: self._dumps_at[rank] for rank in ranks})
            details = {rank: self._with_stack(rank, detail) for rank in ranks}
        for rank in ranks:
            kill_process_group(self.processes[rank])
            self.outcomes.setdefault(rank, RankOutcome(rank, status, details[rank]))

    def _with_stack(self, rank: int, detail: str) -> str:
        """``detail`` and the test's stack from the rank's dump; when the dump cannot be read,
        the raw dump stays in the output tail and the detail says so."""
        stack = trim_dump(_read_log(self.logs[rank], self._dumps_at[rank]))
        if stack is None:
            del self._dumps_at[rank]
            return f"{detail} (its stacks are in the output below)"
        return f"{detail}\n{stack}"

    def send_all(self, message: object) -> None:
        """Send ``message`` to every rank (ranks already gone are passed over: their exit is
        what they report)."""
        for connection in self.connections.values():
            try:
                connection.send(message)
            except (OSError, ValueError):
                pass

    def leftovers(self) -> list[Leftover]:
        """Processes the ranks started and left running (below the fork server), killed."""
        others = [pid for ranks in list(RankProcesses._live) if ranks is not self for pid in ranks._pids()]
        leftovers = find_leftovers(server_pid(), self._pids(), spared=others)
        kill_leftovers(leftovers)
        return leftovers

    def _pids(self) -> list[int]:
        return [process.pid for process in self.processes.values() if process.pid]

    def end(self) -> list[Leftover]:
        """Give the ranks ``EXIT_GRACE`` s to exit, then kill them and what they left running
        (found first, while the ranks' process groups still say who started it); return that."""
        deadline = time.monotonic() + EXIT_GRACE
        for process in self.processes.values():
            process.join(max(0.0, deadline - time.monotonic()))
        leftovers = self.leftovers()
        for process in self.processes.values():
            kill_process_group(process)
            process.join()
        return leftovers

    def attach_tails(self, since: dict[int, int] | None = None) -> None:
        """Give each problem outcome the last lines of its rank's log (from byte ``since[rank]``,
        up to the stack dump that a timeout asked for: the outcome shows the dump trimmed)."""
        for rank, outcome in self.outcomes.items():
            if outcome.status.is_problem:
                outcome.output_tail = output_tail(self.logs[rank], (since or {}).get(rank, 0),
                                                  self._dumps_at.get(rank))
        self._dumps_at.clear()

    def sorted_outcomes(self) -> list[RankOutcome]:
        return [self.outcomes[rank] for rank in sorted(self.outcomes)]

    def close(self) -> None:
        """Kill every rank with its process group, reap it, and close our connections."""
        for process in self.processes.values():
            kill_process_group(process)
        for process in self.processes.values():
            if process.pid is not None:
                process.join()
        for connection in self.connections.values():
            connection.close()
        self._lifeline.close()
        RankProcesses._live.discard(self)


class _FreshRanks(RankProcesses):
    """The fresh ranks of one test: started for it, released and gone after it."""

    def __init__(self, task: object, world: Sequence[RankFacts], context: ForkServerContext,
                 target: Callable[..., None] = run_rank) -> None:
        super().__init__(context, world, target, task)

    def release(self) -> None:
        """Tell every rank that no rank is running any more: a rank that reported may now
        tear down its process groups and exit."""
        self.send_all(RELEASE)

    def finish(self) -> RanksEnded:
        """Make sure every rank and whatever the ranks started is gone; attach output tails
        to the problem outcomes, and the ledgers of ranks that never reported."""
        leftovers = self.end()
        self.attach_tails()
        attach_ledger_files(self.outcomes.values(), self.test_dir)
        return RanksEnded(self.sorted_outcomes(), leftovers)


class AwaitedRanks(Protocol):
    """What :func:`wait_for_outcomes` needs of the ranks it waits for (a :class:`RankProcesses`)."""

    outcomes: dict[int, RankOutcome]

    def running(self) -> list[int]: ...

    def collect(self, timeout: float) -> None: ...

    def stop(self, ranks: list[int], status: Status, detail: str, dump_stacks: bool) -> None: ...


def wait_for_outcomes(ranks: AwaitedRanks, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
    """Wait until every rank of ``ranks`` has an outcome: its report, its death, or (a rank
    still running ``FAIL_FAST_GRACE`` s after another's problem, or at ``timeout``) stopped."""
    deadline = clock() + timeout
    failed_at: float | None = None
    while ranks.running():
        now = clock()
        limit = deadline if failed_at is None else min(deadline, failed_at + FAIL_FAST_GRACE)
        ranks.collect(limit - now)
        problems = [o for o in ranks.outcomes.values() if o.status.is_problem]
        if problems and failed_at is None:
            failed_at = clock()
        still = ranks.running()
        if not still:
            break
        if clock() >= deadline:
            ranks.stop(still, Status.TIMED_OUT,
                       f"timed out after {timeout:g} s; ranks still running: {', '.join(map(str, still))}",
                       dump_stacks=True)
        elif failed_at is not None and clock() >= failed_at + FAIL_FAST_GRACE:
            first = min(problems, key=lambda o: o.rank).rank
            ranks.stop(still, Status.STOPPED, f"stopped after rank {first} failed", dump_stacks=False)


def run_ranks(
    task: object, world: Sequence[RankFacts], timeout: float, context: ForkServerContext,
    target: Callable[..., None] = run_rank,
) -> RanksEnded:
    """Run ``task`` on one rank per entry of ``world`` (forked from ``context``'s server);
    return every rank's outcome and what the ranks left running (killed by then). Each rank
    runs ``target(task, facts, connection, lifeline)`` (a :class:`RankTask` with
    :func:`run_rank`, by default), which reports one outcome and waits for the release."""
    interrupts.install_sigterm_handler()
    ranks: _FreshRanks | None = None
    try:
        ranks = _FreshRanks(task, world, context, target)
        wait_for_outcomes(ranks, timeout)
        ranks.release()
        return ranks.finish()
    finally:
        if ranks is not None:
            ranks.close()
