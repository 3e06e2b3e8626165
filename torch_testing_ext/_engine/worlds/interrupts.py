"""Turn SIGTERM into an exception so that cleanup code (``finally``, context managers) runs,
and tell the process's own interrupts from a test's.

unittest lets ``KeyboardInterrupt`` through instead of recording it as a test error, so
:class:`Terminated` derives from it: a SIGTERM stops the run like Ctrl-C does, every rank
process is stopped and temporary files are removed, and the process exits with 143. A test
that raises ``KeyboardInterrupt`` itself on a rank that runs in the test's process (a launched
rank) has not stopped the run: :class:`InterruptListener` says which it was.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["Terminated", "install_sigterm_handler", "exit_status_for", "InterruptListener"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"received signal {signal.Signals(signum).name}")


def install_sigterm_handler() -> None:
    """Make SIGTERM raise :class:`Terminated` (only from the main thread; keeps custom handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _raise_terminated)


def exit_status_for(interrupt: KeyboardInterrupt) -> int:
    """The conventional exit status: 143 after SIGTERM, 130 after Ctrl-C."""
    return 128 + (signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT)


class InterruptListener:
    """While active (in the main thread, with Python's own SIGINT handler), notes whether this
    process received SIGINT: a ``KeyboardInterrupt`` is then the user's Ctrl-C, not the
    test's. SIGTERM's :class:`Terminated` is always a stop."""

    def __init__(self) -> None:
        self.received = False
        self._listening = False

    def __enter__(self) -> InterruptListener:
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._note)
            self._listening = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._listening:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._listening = False

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        signal.default_int_handler(signum, frame)

    def is_a_stop(self, error: KeyboardInterrupt) -> bool:
        """Whether ``error`` stops the run (Ctrl-C, SIGTERM, or SIGINT not listened for) rather than being
        the test's own."""
        return isinstance(error, Terminated) or self.received or not self._listening
