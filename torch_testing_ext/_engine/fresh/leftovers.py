"""Processes a test's ranks started and left behind: found after the test, named, killed.

The fork server is a child subreaper, so every process a rank started stays below the server
even when the rank exits or the process starts a session of its own. Once a test's ranks are
gone, whatever is still below the server belongs to that test (except the ranks of other live
worlds, such as a class's kept ranks, and what they started): it is killed, and named in the
test's output as a :class:`LeftoverProcessWarning`, or, with
``TORCH_TESTING_EXT_LEFTOVER_PROCESSES=fail``, it fails the test.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Sequence

from ..process_tree.proc_table import command_line, descendants, environment_value, process_table, signal_all
from ..worlds.rank_facts import RANK_ENV

__all__ = ["Leftover", "LeftoverProcessWarning", "find_leftovers", "kill_leftovers", "describe_leftovers"]

__unittest = True

KILL_WAIT = 1.0  # seconds to wait for killed leftovers to be reaped


class LeftoverProcessWarning(UserWarning):
    """A test's ranks left processes running; they were killed."""


@dataclasses.dataclass(frozen=True)
class Leftover:
    """A process still running below the fork server after a test's ranks ended."""

    pid: int
    rank: int | None  # the rank that started it (None if it cleared its environment)
    command: str

    def __str__(self) -> str:
        started_by = f"rank {self.rank}" if self.rank is not None else "an unknown rank"
        return f"pid {self.pid} (started by {started_by}): {self.command or '?'}"


def find_leftovers(server: int | None, ranks: Collection[int], spared: Collection[int] = ()) -> list[Leftover]:
    """Running processes below ``server`` other than the rank processes ``ranks``, and other
    than the processes ``spared`` (the ranks of other live worlds) and their descendants."""
    if server is None:
        return []
    table = process_table()
    found = []
    others = set(spared) | descendants(spared, table)
    for pid in sorted(descendants([server], table) - set(ranks) - others):
        if not table[pid].gone:
            rank = environment_value(pid, RANK_ENV)
            found.append(Leftover(pid, int(rank) if rank and rank.isdigit() else None,
                                  command_line(pid)))
    return found


def kill_leftovers(leftovers: Sequence[Leftover]) -> None:
    """SIGKILL each leftover and wait (briefly) until the server has reaped it."""
    pids = {leftover.pid for leftover in leftovers}
    if not pids:  # the common case: no second scan of /proc after every test
        return
    signal_all(pids)
    deadline = time.monotonic() + KILL_WAIT
    while pids & process_table().keys() and time.monotonic() < deadline:
        time.sleep(0.01)


def describe_leftovers(leftovers: Sequence[Leftover]) -> str:
    """One paragraph naming every leftover."""
    count = f"{len(leftovers)} process{'es' * (len(leftovers) != 1)}"
    lines = [f"the test's ranks left {count} running; killed:"]
    lines += [f"  {leftover}" for leftover in leftovers]
    return "\n".join(lines)
