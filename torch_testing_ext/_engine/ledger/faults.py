"""Fault injection at the ledger's interception point: make one rank's nth call of an op fail.

::

    from torch_testing_ext.collectives import inject_fault

    class TestRecovery(MultiProcessTestCase):
        world_size = 2

        @inject_fault(rank=1, op="all_reduce", nth=2, action="kill")
        def test_survives_a_lost_rank(self):
            ...

When rank ``rank`` makes its ``nth`` call of ``op`` (counted from the test's start, any group,
both ``torch.distributed`` and functional collectives), the fault acts before the call reaches
the backend: ``raise`` (:class:`InjectedFault`), ``exit`` (the rank's process exits with status
1), ``kill`` (SIGKILL), ``hang`` (the call never returns: the test's timeout ends it) or
``delay`` (``seconds`` of sleep, then the call goes on). The call is marked in the ledger; a
call a fault stopped is not compared across ranks. A test whose fault never fired fails on
that rank, naming the fault. Thread ranks share the test's process: ``exit`` and ``kill`` need
rank processes and fail the test there, saying so. Faults stack (several decorators).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Fault", "ArmedFault", "InjectedFault", "inject_fault", "not_in_lockstep", "armed_faults",
           "in_lockstep", "ACTIONS", "FAULTS_ATTR", "LOCKSTEP_ATTR"]

__unittest = True

ACTIONS = ("raise", "exit", "kill", "hang", "delay")
FAULTS_ATTR = "__tte_faults__"
LOCKSTEP_ATTR = "collectives_lockstep"  # False on a test or its class: its ranks may differ
_PROCESS_ONLY = ("exit", "kill")
_F = TypeVar("_F", bound=Callable[..., Any])


class InjectedFault(RuntimeError):
    """The error an injected ``raise`` fault raises in its rank."""


@dataclasses.dataclass(frozen=True)
class Fault:
    """Rank ``rank``'s ``nth`` call of ``op`` fails by ``action`` (``seconds`` for delay and
    hang: how long; a hang without seconds lasts until the test's timeout)."""

    rank: int
    op: str
    nth: int = 1
    action: str = "raise"
    seconds: float | None = None

    def describe(self) -> str:
        return f"inject_fault(rank={self.rank}, op={self.op!r}, nth={self.nth}, action={self.action!r})"


def inject_fault(rank: int, op: str, nth: int = 1, action: str = "raise",
                 seconds: float | None = None) -> Callable[[_F], _F]:
    """Make rank ``rank``'s ``nth`` call of ``op`` in the decorated test fail by ``action``
    (see the module docstring); a bad argument is a one-line ``ValueError``."""
    if action not in ACTIONS:
        raise ValueError(f"inject_fault(action={action!r}): expected one of {', '.join(ACTIONS)}")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        raise ValueError(f"inject_fault(rank={rank!r}): expected a rank number, 0 or more")
    if isinstance(nth, bool) or not isinstance(nth, int) or nth < 1:
        raise ValueError(f"inject_fault(nth={nth!r}): expected a call number, 1 or more")
    if not isinstance(op, str) or not op:
        raise ValueError(f"inject_fault(op={op!r}): expected an op name such as 'all_reduce'")
    if action == "delay" and not (isinstance(seconds, (int, float)) and seconds > 0):
        raise ValueError(f"inject_fault(action='delay', seconds={seconds!r}): expected a positive number of seconds")
    fault = Fault(rank, op, nth, action, None if seconds is None else float(seconds))

    def decorate(test: _F) -> _F:
        setattr(test, FAULTS_ATTR, (*getattr(test, FAULTS_ATTR, ()), fault))
        return test

    return decorate


def not_in_lockstep(test: _F) -> _F:
    """Let the decorated test's (or class's) ranks make different collective calls: its
    ledgers are still shown when it fails, but a pass stays a pass."""
    setattr(test, LOCKSTEP_ATTR, False)
    return test


def in_lockstep(*owners: Any) -> bool:
    """Whether a test must make the same calls on every rank: no owner (the test function,
    its class) says ``collectives_lockstep = False``."""
    return all(getattr(owner, LOCKSTEP_ATTR, True) is not False for owner in owners if owner is not None)


class ArmedFault:
    """One fault during one test on its rank: counts the matching calls, fires at the nth."""

    def __init__(self, fault: Fault, in_thread: bool) -> None:
        self.fault = fault
        self.in_thread = in_thread
        self.count = 0
        self.fired = False

    def fires_on(self, op: str) -> bool:
        """Count a call of ``op``: whether this fault fires on it (the ledger marks the call)."""
        if op != self.fault.op or self.fired:
            return False
        self.count += 1
        self.fired = self.count == self.fault.nth
        return self.fired

    def act(self) -> None:
        """Do what the fault says, once it fired (after the ledger noted the call)."""
        action, where = self.fault.action, f"{self.fault.op} call {self.fault.nth} on rank {self.fault.rank}"
        if action == "delay":
            time.sleep(self.fault.seconds or 0.0)
            return
        if action in _PROCESS_ONLY and self.in_thread:
            raise InjectedFault(f"{self.fault.describe()} needs rank processes: a thread rank shares the "
                                "test's process")
        for stream in (sys.stdout, sys.stderr):  # what the rank printed, before it ends
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        if action == "exit":
            os._exit(1)
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "hang":
            deadline = time.monotonic() + (self.fault.seconds or float("inf"))
            while time.monotonic() < deadline:
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        raise InjectedFault(f"injected fault: {where}")

    def never_fired(self) -> str | None:
        """Why the test fails when this fault never fired, else None."""
        if self.fired:
            return None
        return (f"the fault {self.fault.describe()} never fired: rank {self.fault.rank} made "
                f"{self.count} {self.fault.op} call{'s' if self.count != 1 else ''}")


def armed_faults(rank: int, test: Any, in_thread: bool = False) -> list[ArmedFault]:
    """The faults of ``test`` (a test function) for ``rank``, armed."""
    return [ArmedFault(fault, in_thread) for fault in getattr(test, FAULTS_ATTR, ()) if fault.rank == rank]
