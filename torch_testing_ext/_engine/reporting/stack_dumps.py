"""faulthandler's dump of a hung rank, cut down to the test's own stack.

A rank that overran its timeout is asked for its stacks by faulthandler (a C-level signal
handler: it answers even when the rank's main thread holds the GIL in C code forever). Its
dump lists every thread, most recent call first: the harness's own watcher threads, and
below the test's frame the harness and multiprocessing frames that started it. What a reader
needs is the test's frame and what it called, and the threads the test started.
:func:`trim_dump` keeps exactly that, most recent call last as in a traceback, with each
line's source::

    dump = log_text[offset_before_the_signal:]
    text = trim_dump(dump)      # None when the text holds no dump it can read
    # Stack of the test (most recent call last):
    #   File "/home/me/tests/test_x.py", line 12, in test_all_reduce
    #     dist.barrier()
    #   File ".../torch/distributed/distributed_c10d.py", line 5356, in barrier
    #     work.wait()

A frame is the harness's when its file is in this package, in the standard library's
``multiprocessing``, ``threading``, ``unittest`` or ``runpy``, in pytest's runner (``_pytest``,
``pluggy``: a rank of a pytest test runs a session), or has no file (``<string>``).
Each thread loses its outermost run of harness frames, and the collective ledger's wrapper
(``ledger/recording.py``) wherever it is. A thread the harness started (its
target is in this package) or that is nothing but harness frames (a watcher) is left out. A
dump without the test's thread, or whose test thread is all harness, gives None. Torch-free.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import linecache
import os
import re
import threading
from pathlib import Path

from .._torch_private import HIDDEN_FROM_WARNINGS

__all__ = ["DumpFrame", "DumpThread", "parse_dump", "trim_dump", "is_harness_file"]

__unittest = True

_THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \(most recent call first\))?:\s*$")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')
_PACKAGE = str(Path(__file__).resolve().parents[2]) + os.sep  # torch_testing_ext/
_STDLIB = Path(threading.__file__).resolve().parent
_STDLIB_HARNESS = tuple(str(_STDLIB / name) for name in
                        ("multiprocessing" + os.sep, "unittest" + os.sep, "threading.py", "runpy.py"))


def _package_dir(name: str) -> tuple[str, ...]:
    """The directory of an installed package (found, not imported), or nothing."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(os.path.realpath(location) + os.sep for location in spec.submodule_search_locations)


# A rank that runs a pytest session: pytest's runner and its hook caller start the test.
_RUNNER_HARNESS = _package_dir("_pytest") + _package_dir("pluggy")
# The collective ledger's wrapper, between the test's call and torch's function: not shown
# (its frames name recording.py, or the made-up file of a wrapper hidden from warnings).
_TRANSPARENT = frozenset({str(Path(__file__).resolve().parents[1] / "ledger" / "recording.py"),
                          HIDDEN_FROM_WARNINGS})
_THREADING = str(_STDLIB / "threading.py")


@dataclasses.dataclass(frozen=True)
class DumpFrame:
    """One ``File "...", line N in name`` line of a dump."""

    path: str
    line: int
    name: str


@dataclasses.dataclass(frozen=True)
class DumpThread:
    """One thread of a dump: its id, whether it ran the signal handler, its frames outermost
    first."""

    ident: str
    current: bool
    frames: tuple[DumpFrame, ...]


def is_harness_file(path: str) -> bool:
    """True for a file of the harness's own machinery (see the module doc)."""
    if path.startswith("<"):
        return True
    resolved = os.path.realpath(path)
    return resolved.startswith(_PACKAGE) or resolved.startswith(_STDLIB_HARNESS + _RUNNER_HARNESS)


def parse_dump(text: str) -> list[DumpThread]:
    """The threads of the last faulthandler dump in ``text`` (empty if there is none).

    Within a dump, each thread's block follows the previous one after one blank line; a thread
    header anywhere else, or naming a thread already seen, starts a new dump. (The thread that
    took the signal, ``Current thread``, may come anywhere in the dump.)
    """
    threads: list[DumpThread] = []
    header: tuple[str, bool] | None = None
    frames: list[DumpFrame] = []
    after_block = False  # the previous line closed a thread's block (a blank line after it)

    def close() -> None:
        if header is not None:
            threads.append(DumpThread(header[0], header[1], tuple(reversed(frames))))

    for line in text.splitlines():
        started = _THREAD.match(line)
        if started:
            close()
            if not after_block or any(thread.ident == started.group(2) for thread in threads):
                threads.clear()
            header, frames, after_block = (started.group(2), started.group(1) == "Current thread"), [], False
            continue
        frame = _FRAME.match(line)
        if frame and header is not None:
            frames.append(DumpFrame(frame.group(1), int(frame.group(2)), frame.group(3)))
        after_block = header is not None and not line.strip()
    close()
    return threads


def _outer_harness_run(frames: tuple[DumpFrame, ...]) -> int:
    """How many of ``frames`` (outermost first) are the outermost run of harness frames."""
    count = 0
    while count < len(frames) and is_harness_file(frames[count].path):
        count += 1
    return count


def _format(frames: tuple[DumpFrame, ...]) -> list[str]:
    lines = []
    for frame in frames:
        lines.append(f'  File "{frame.path}", line {frame.line}, in {frame.name}')
        source = linecache.getline(frame.path, frame.line).strip()
        if source:
            lines.append(f"    {source}")
    return lines


def _started_by_harness(frames: tuple[DumpFrame, ...]) -> bool:
    """Whether a thread was started by this package: its target, the first frame after
    ``threading``'s start-up, is ours (a watcher, whatever it is blocked in)."""
    start = 0
    while start < len(frames) and os.path.realpath(frames[start].path) == _THREADING:
        start += 1
    return 0 < start < len(frames) and os.path.realpath(frames[start].path).startswith(_PACKAGE)


def _runs_the_test(outer: tuple[DumpFrame, ...]) -> bool:
    """Whether a thread's outermost harness frames ``outer`` are the runner's (this package's,
    or the fork server's ``<string>``): the thread that runs the test."""
    return any(frame.path.startswith("<") or os.path.realpath(frame.path).startswith(_PACKAGE)
               for frame in outer)


def trim_dump(text: str) -> str | None:
    """The test's stack and the stacks of the threads it started, from the last dump in
    ``text``; None when there is no dump to read or the test's thread is not in it or is in the
    harness's own code (the caller shows the raw text instead)."""
    test: str | None = None
    others: list[str] = []
    for thread in parse_dump(text):
        if _started_by_harness(thread.frames):
            continue  # the harness's own watcher thread
        cut = _outer_harness_run(thread.frames)
        frames = tuple(frame for frame in thread.frames[cut:]
                       if frame.path not in _TRANSPARENT and os.path.realpath(frame.path) not in _TRANSPARENT)
        if test is None and _runs_the_test(thread.frames[:cut]):
            if not frames:
                return None
            test = "\n".join(["Stack of the test (most recent call last):", *_format(frames)])
        elif frames:  # a thread the test (or a library) started, not only harness frames
            others.append("\n".join([f"Thread {thread.ident} (most recent call last):", *_format(frames)]))
    return None if test is None else "\n".join([test, *others])
