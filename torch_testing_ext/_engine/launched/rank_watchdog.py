"""The deadline of a test that a launched rank runs in its own process.

A test that hangs cannot be stopped from outside its thread, and this process is the rank:
at the deadline the watchdog thread calls the test's *expiry* (which dumps the stacks,
reports the timeout and ends the process, so that the launcher tears the job down: never a
hang). If the watchdog thread itself cannot run (C code that never releases the GIL),
faulthandler ends the process :data:`BACKSTOP_GRACE` seconds later with every thread's stack
(faulthandler's exit status is 1, not :data:`ABORT_EXIT_STATUS`, and nothing is reported).

Example::

    with Watchdog(time.monotonic() + 300, expire=report_and_exit) as watchdog:
        run_the_test()
        watchdog.move_deadline(time.monotonic() + 30)   # teardown gets 30 s more
        tear_down()
"""

from __future__ import annotations

import faulthandler
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["Watchdog", "BACKSTOP_GRACE", "ABORT_EXIT_STATUS"]

__unittest = True

BACKSTOP_GRACE = 30.0  # seconds after the deadline at which faulthandler ends the process
ABORT_EXIT_STATUS = 124  # the exit status of a process ended by a test's timeout
_TICK = 0.25  # seconds between two looks at the clock


class Watchdog:
    """Calls ``expire()`` in its own thread once ``time.monotonic()`` passes the deadline,
    unless the block ended first; ``expire`` should end the process (if it returns, the
    process exits with :data:`ABORT_EXIT_STATUS` all the same)."""

    def __init__(self, deadline: float, expire: Callable[[], None]) -> None:
        self._deadline = deadline
        self._expire = expire
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tte-launched-watchdog", daemon=True)

    def _arm_backstop(self) -> None:
        faulthandler.dump_traceback_later(max(0.0, self._deadline - time.monotonic()) + BACKSTOP_GRACE,
                                          exit=True)

    def move_deadline(self, deadline: float) -> None:
        """Expire at ``deadline`` instead (a ``time.monotonic()`` time)."""
        self._deadline = deadline
        self._arm_backstop()

    def _watch(self) -> None:
        while not self._stop.wait(min(_TICK, max(0.0, self._deadline - time.monotonic()))):
            if time.monotonic() >= self._deadline:
                try:
                    self._expire()
                finally:
                    os._exit(ABORT_EXIT_STATUS)

    def __enter__(self) -> Watchdog:
        self._arm_backstop()
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        faulthandler.cancel_dump_traceback_later()
