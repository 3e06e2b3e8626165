"""Start a test process in its own session and make sure nothing it started outlives it.

Every test process is a session leader (``start_new_session``), so its children and theirs
share its session and process group. :meth:`FileProcess.kill` kills that whole session, plus
the descendants of its members that started sessions of their own. On Linux the driver also
makes itself a *child subreaper* (:func:`become_subreaper`): processes orphaned by a dying test
process are re-parented to the driver instead of init, so :func:`kill_orphans` can still find
and reap them; and each test process gets SIGTERM if the driver itself is killed outright.
Elsewhere the process group is the limit of what can be found.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from ..process_tree.linux_prctl import PRCTL_AVAILABLE, become_subreaper, set_parent_death_signal
from ..process_tree.proc_table import descendants, process_table, signal_all

__all__ = ["FileProcess", "RunningTestFile", "StartProcess", "become_subreaper", "kill_orphans", "descendants"]


def _stop_with_driver() -> None:
    # Runs in the child between fork and exec: if the driver is killed outright (SIGKILL),
    # the test process gets SIGTERM and its harness stops its own children.
    set_parent_death_signal(signal.SIGTERM)


def _reap(pids: Iterable[int]) -> None:
    """Collect the exit status of our own zombie children so that they disappear."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def kill_orphans() -> int:
    """Kill and reap every descendant of the driver; returns how many processes were killed.

    With the subreaper flag, a process whose test process died is our child. Call it only
    when no test process should be running: it spares nothing.
    """
    me = os.getpid()
    killed = 0
    for _ in range(20):
        table = process_table()
        mine = descendants([me], table)
        alive = [pid for pid in mine if not table[pid].gone]
        _reap(pid for pid in mine if table[pid].ppid == me and table[pid].gone)
        if not alive:
            return killed
        signal_all(alive, signal.SIGKILL)
        killed += len(alive)
        time.sleep(0.02)
        _reap(pid for pid in alive if table[pid].ppid == me)
    return killed


class RunningTestFile(Protocol):
    """What the executor needs of a test file's process (:class:`FileProcess` is the real one;
    the self-tests give the executor scripted ones)."""

    started: float  # time.monotonic() at the start

    def poll(self) -> int | None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...
    def elapsed(self) -> float: ...
    def output(self) -> str: ...


# Starts ``command`` in ``cwd`` with ``env``, its output to ``log_path``.
StartProcess = Callable[[Sequence[str], Path, "dict[str, str]", Path], RunningTestFile]


class FileProcess:
    """A test file's process: its own session, output to a log file, killable as a tree."""

    def __init__(
        self,
        command: Sequence[str],
        cwd: Path,
        env: dict[str, str],
        log_path: Path,
        discard_stderr: bool = False,
    ) -> None:
        """Start ``command``; stdout and stderr go to ``log_path`` (stderr nowhere if discarded)."""
        self.command = list(command)
        self.started = time.monotonic()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self._popen = subprocess.Popen(
                self.command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.DEVNULL if discard_stderr else subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_stop_with_driver if PRCTL_AVAILABLE else None,
            )
        self.pid = self._popen.pid

    def poll(self) -> int | None:
        """The exit status (negative: killed by that signal), or None while it runs."""
        return self._popen.poll()

    def wait(self, timeout: float) -> int | None:
        """Wait at most ``timeout`` seconds for the exit status; None if it still runs."""
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def _members(self) -> set[int]:
        table = process_table()
        session = {pid for pid, info in table.items()
                   if self.pid in (info.sid, info.pgid) and not info.gone}
        if self.poll() is None:
            session.add(self.pid)
        tree = session | descendants(session, table)
        return {pid for pid in tree if pid in table and not table[pid].gone} - {os.getpid()}

    def terminate(self) -> None:
        """Ask the whole tree to stop (SIGTERM): lets a test harness clean up its ranks."""
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        signal_all(self._members(), signal.SIGTERM)

    def kill(self) -> None:
        """Kill the process, its session and every descendant (SIGKILL), then reap it."""
        for _ in range(20):
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            members = self._members()
            signal_all(members, signal.SIGKILL)
            if self.poll() is None:
                try:
                    self._popen.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    continue
            if not members:
                break
            time.sleep(0.02)
        # Members orphaned by the test process were adopted by us (subreaper): reap them.
        me = os.getpid()
        _reap(pid for pid, info in process_table().items()
              if info.ppid == me and info.sid == self.pid and pid != self.pid and info.gone)

    def output(self, limit: int = 200_000) -> str:
        """The end of what the process printed (at most ``limit`` bytes)."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                size = log.tell()
                log.seek(max(0, size - limit))
                data = log.read()
        except OSError:
            return ""
        text = data.decode("utf-8", errors="replace")
        return text if size <= limit else text[text.find("\n") + 1:]
