"""The process table as ``/proc`` shows it: who is whose child, and what a process runs.

::

    table = process_table()
    for pid in descendants([os.getpid()], table):
        print(pid, table[pid].state, command_line(pid))

Without ``/proc`` (not Linux) the table is empty and nothing is found.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "ProcessInfo",
    "process_table",
    "descendants",
    "command_line",
    "environment",
    "environment_value",
    "signal_all",
    "is_exiting",
]

_PF_EXITING = 0x4  # the kernel's per-task flag "getting shut down", set first thing in exit


class ProcessInfo(NamedTuple):
    """One row of the process table. ``state`` is ``Z`` for a zombie, ``X`` for a dead one;
    ``started`` (clock ticks after boot) tells a process from a later one with the same pid."""

    state: str
    ppid: int
    pgid: int
    sid: int
    started: int

    @property
    def gone(self) -> bool:
        """True for a zombie or a dead process: it runs no more."""
        return self.state in ("Z", "X")


def process_table() -> dict[int, ProcessInfo]:
    """pid -> :class:`ProcessInfo` for every process visible in /proc ({} without /proc)."""
    table: dict[int, ProcessInfo] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        fields = _stat_fields(entry) if entry.isdigit() else None
        if fields is not None:
            table[int(entry)] = ProcessInfo(fields[0], int(fields[1]), int(fields[2]), int(fields[3]),
                                            int(fields[19]))
    return table


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after "pid (comm) ", from the state on (None if the
    process is gone): state ppid pgrp session tty_nr tpgid flags ... starttime (index 19)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            stat = stream.read().decode(errors="replace")
    except OSError:
        return None
    # comm may hold spaces and parentheses: the fields start after its last ")".
    fields = stat[stat.rfind(")") + 2:].split()
    return fields if len(fields) > 19 else None


def is_exiting(pid: int) -> bool:
    """True when ``pid`` has begun to exit (killed, or in the kernel's exit path), is a
    zombie, or is gone. A dying process closes its files before its children are handed to
    a new parent, so a child that sees its parent's pipe close may still see that parent as
    its own ``getppid()``: this tells it the parent is on its way out."""
    fields = _stat_fields(pid)
    return fields is None or fields[0] in ("Z", "X") or bool(int(fields[6]) & _PF_EXITING)


def descendants(roots: Iterable[int], table: dict[int, ProcessInfo] | None = None) -> set[int]:
    """Every process below ``roots`` in the parent tree (roots excluded)."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def command_line(pid: int) -> str:
    """The command line of ``pid`` ("" if it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            return stream.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def environment(pid: int) -> dict[str, str]:
    """The environment ``pid`` was started with ({} if it is gone, unreadable, or in the
    middle of an ``exec``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as stream:
            entries = stream.read().decode(errors="replace").split("\0")
    except OSError:
        return {}
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def environment_value(pid: int, name: str) -> str | None:
    """The value of environment variable ``name`` in ``pid`` (as it was started), or None."""
    return environment(pid).get(name)


def signal_all(pids: Iterable[int], signum: int = signal.SIGKILL) -> None:
    """Send ``signum`` to each of ``pids``, passing over those already gone."""
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
