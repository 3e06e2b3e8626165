"""Marginal cost per test: the measurement the harness-against-harness benchmarks share.

A benchmark writes a test file whose text includes :data:`NOTE_STARTS` and whose test class
mixes in ``NotesStarts`` first: each test's start is noted in the test's own process (its
``TestCase.run``) and printed at exit. :func:`test_gaps` reads them back: how long the first
test took (it pays for starting ranks), and the time from each later test's start to the
next's. The median of the latter is the cost of one more test. Interpreter start, imports
and a fork server's start, which vary by seconds on a loaded machine, do not enter it (the
difference of two files' wall times, used before, drowned milliseconds in that noise).
:func:`marginal` runs a file ``repeats`` times and returns that median; :func:`parse_counts`
reads ``--tests`` and ``--repeats``; :func:`run_marked` runs a benchmark file as a marked run
(``torch_testing_ext._engine.process_tree.marked_run``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

__all__ = ["NOTE_STARTS", "parse_counts", "test_gaps", "marginal", "run_marked"]

NOTE_STARTS = '''
import atexit as _atexit
import time as _time

_STARTS = []


@_atexit.register
def _print_starts():
    if _STARTS:  # spawned workers import this file too: only the test process prints
        print("TEST_STARTS " + " ".join(map(repr, _STARTS)), flush=True)


class NotesStarts:
    def run(self, result=None):
        _STARTS.append(_time.perf_counter())  # in the test's own process, as each test starts
        return super().run(result)
'''
_STARTS = re.compile(r"^TEST_STARTS (.*)$", re.M)
FILE_TIMEOUT = 3600.0


def parse_counts(description: str, tests: int, repeats: int = 1) -> argparse.Namespace:
    """``--tests`` (tests per file, at least 3) and ``--repeats`` from the command line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tests", type=int, default=tests, help=f"tests per file, at least 3 ({tests})")
    parser.add_argument("--repeats", type=int, default=repeats, help=f"runs of each file ({repeats})")
    args = parser.parse_args()
    if args.tests < 3 or args.repeats < 1:
        parser.error("need --tests >= 3 and --repeats >= 1")
    return args


def test_gaps(output: str, count: int) -> tuple[float, list[float]]:
    """From a run's output: the first test's time and the start-to-start times of the others
    (SystemExit if the run did not note ``count`` starts)."""
    found = _STARTS.search(output)
    starts = [float(t) for t in found.group(1).split()] if found else []
    if len(starts) != count:
        raise SystemExit(f"the benchmark file noted {len(starts)} test starts, expected {count}")
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]  # neighbours: one fewer
    return gaps[0], gaps[1:]


def marginal(directory: str, text: str, count: int, repeats: int) -> float:
    """Seconds one more test costs in the file ``text`` (``count`` tests, written into
    ``directory``): the median start-to-start time after the first test, over ``repeats`` runs."""
    handle, path = tempfile.mkstemp(prefix="bench_", suffix=".py", dir=directory)
    with os.fdopen(handle, "w") as f:
        f.write(text)
    gaps = []
    for _ in range(repeats):
        completed = subprocess.run([sys.executable, path], capture_output=True, text=True,
                                   timeout=FILE_TIMEOUT)
        if completed.returncode != 0:
            raise SystemExit(f"benchmark file {path} failed:\n{completed.stderr[-3000:]}")
        gaps += test_gaps(completed.stdout, count)[1]
    return statistics.median(gaps)


def run_marked(argv: list[str], timeout: float) -> tuple[int, str, list[object]]:
    """``python *argv`` as a marked run (its own TMPDIR, every process it starts seen): its exit
    status, its output, and the processes still there 1 s after it exited (killed by then).
    SystemExit if it runs over ``timeout`` seconds."""
    from torch_testing_ext._engine.process_tree.marked_run import MarkedRun

    run = MarkedRun(*argv)
    try:
        try:
            status, output = run.finish(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"{' '.join(argv)} took over {timeout:.0f} s (killed)") from None
        return status, output, run.left_after_bound()
    finally:
        run.close()  # kills whatever of it is left
