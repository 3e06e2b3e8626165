"""The output streams of a rank process's pytest session, safe from a test that closes its own.

A rank's stdout and stderr (file descriptors 1 and 2, ``sys.stdout``, ``sys.stderr``) are its
log. A test may close them (``os.close(1)``, ``sys.stdout.close()``); pytest's terminal
reporter, which writes to ``sys.stdout`` as it was when the session was configured, would then
fail with ``OSError: [Errno 9] Bad file descriptor`` or ``ValueError: I/O operation on closed
file`` after the test, and the session would break before the rank reports the test's own
failure. So:

- :class:`SessionTerminal`: the session's terminal writes to a file of its own, on a
  duplicate of the log's descriptor (``sys.stdout`` is that file only while pytest configures
  its plugins);
- :func:`reopen_closed_streams`: after each test, what the test closed points at the log again
  (for the rank's own end, and the next test of a kept rank).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import IO, Any

import pytest

__all__ = ["SessionTerminal", "reopen_closed_streams"]

__unittest = True


class SessionTerminal:
    """A plugin of the rank's session: its terminal reporter's file, a duplicate of ``log``.

    Hand it to pytest with ``plugins=[...]`` inside :meth:`configuring`: pytest's terminal
    plugin takes ``sys.stdout`` in ``pytest_configure``; this plugin's own configure hook runs
    after that one's and gives the rank's ``sys.stdout`` back.
    """

    def __init__(self, log: IO[str]) -> None:
        self.file = os.fdopen(os.dup(log.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")
        self._saved: Any = None

    def configuring(self) -> SessionTerminal:
        """Make ``sys.stdout`` this file until the session is configured (or :meth:`close`)."""
        self._saved, sys.stdout = sys.stdout, self.file
        return self

    def __enter__(self) -> SessionTerminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _give_back(self) -> None:
        if self._saved is not None:
            sys.stdout, self._saved = self._saved, None

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        """The terminal reporter has its file: the rank's ``sys.stdout`` is the test's again."""
        self._give_back()

    def close(self) -> None:
        """Give ``sys.stdout`` back if pytest never configured, flush and close the file."""
        self._give_back()
        try:
            self.file.close()
        except OSError:  # nothing more can be written to the log
            pass


def _not_on(fd: int, log: IO[str]) -> bool:
    """Whether ``fd`` is closed, or open on another file than ``log`` (the test closed it and
    the number came back for a file of its own)."""
    try:
        here = os.fstat(fd)
    except OSError as error:
        return error.errno == errno.EBADF
    there = os.fstat(log.fileno())
    return (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino)


def reopen_closed_streams(log: IO[str]) -> None:
    """Descriptors 1 and 2 back on ``log`` if the test closed them (or left another file on
    their numbers), and ``sys.stdout`` or ``sys.stderr`` reopened on them if it closed those
    (streams it replaced stay as they are)."""
    for fd in (1, 2):
        if _not_on(fd, log):
            os.dup2(log.fileno(), fd)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None or getattr(stream, "closed", False):
            setattr(sys, name, open(fd, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False))
