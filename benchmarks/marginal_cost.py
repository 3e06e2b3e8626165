"""Marginal wall time per test: the measurement the harness-against-harness benchmarks share.

A benchmark gives the text of a test file with N tests; :func:`marginal` runs it in a fresh
interpreter for two values of N and returns (T(N_large) - T(N_small)) / (N_large - N_small),
in which interpreter start and imports cancel out. :func:`parse_sizes` reads the two values
of N and the number of repeats (the best of them counts) from the command line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

__all__ = ["parse_sizes", "marginal"]


def parse_sizes(description: str, small: int, large: int) -> argparse.Namespace:
    """``--small``, ``--large`` (the two test counts) and ``--repeats`` from the command line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--small", type=int, default=small)
    parser.add_argument("--large", type=int, default=large)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if not 0 < args.small < args.large or args.repeats < 1:
        parser.error("need 0 < --small < --large and --repeats >= 1")
    return args


def _time_file(path: str) -> float:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"benchmark file {path} failed:\n{completed.stderr[-3000:]}")
    return elapsed


def marginal(directory: str, source: Callable[[int], str], small: int, large: int,
             repeats: int) -> float:
    """Seconds per test of the file ``source(count)`` (its text with ``count`` tests), written
    into ``directory``, from ``small`` vs ``large`` tests, each timed best of ``repeats``."""
    best = []
    for count in (small, large):
        handle, path = tempfile.mkstemp(prefix="bench_", suffix=".py", dir=directory)
        with os.fdopen(handle, "w") as f:
            f.write(source(count))
        best.append(min(_time_file(path) for _ in range(repeats)))
    return (best[1] - best[0]) / (large - small)
