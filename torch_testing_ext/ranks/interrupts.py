"""Turn SIGTERM into an exception so that cleanup code (``finally``, context managers) runs.

unittest lets ``KeyboardInterrupt`` through instead of recording it as a test error, so
:class:`Terminated` derives from it: a SIGTERM stops the run like Ctrl-C does, every rank
process is stopped and temporary files are removed, and the process exits with 143.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

__all__ = ["Terminated", "install_sigterm_handler", "exit_status_for"]


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
