"""Ask test files for their tests: the listings the planner splits long files by.

Planning itself (``plan``) is pure; this is the one step before it that starts processes::

    listed = list_splittable(test_dir, names, times, num_shards=3, jobs=2, warn=print)
    shards = plan_shards(names, times, 3, jobs=2, listed=listed)
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from .discover import source_path
from .plan import files_to_split
from .processes import FileProcess
from .times import RecordedTimes

__all__ = ["LIST_TIMEOUT", "list_splittable", "list_tests"]

LIST_TIMEOUT = 300.0
_TEST_ID = re.compile(r"^(?:\w+\.)*?([A-Za-z_]\w*\.\w+)$")


def list_tests(
    python: str, test_dir: Path, name: str, timeout: float = LIST_TIMEOUT
) -> list[str] | None:
    """A file's test ids (``Class.test_x``), from ``python test/<name>.py --list``.

    None if that fails or prints anything that is not a test id.
    """
    with tempfile.TemporaryDirectory(prefix="run_test-list-") as work:
        process = FileProcess([python, str(source_path(test_dir, name)), "--list"], test_dir.parent,
                              dict(os.environ), Path(work) / "list.out", discard_stderr=True)
        try:
            process.wait(timeout)
        finally:
            process.kill()
        if process.poll() != 0:
            return None
        lines = [line.strip() for line in process.output().splitlines() if line.strip()]
    # Ids are "Class.test_x" (or "module.Class.test_x"). Anything else means the listing cannot
    # be trusted, and a test missing from it would never run: better not to split at all.
    ids = set()
    for line in lines:
        match = _TEST_ID.match(line)
        if match is None:
            return None
        ids.add(match.group(1))
    return sorted(ids) or None


def list_splittable(
    test_dir: Path,
    names: Sequence[str],
    times: RecordedTimes | None,
    num_shards: int,
    jobs: int,
    warn: Callable[[str], None],
) -> dict[str, list[str]]:
    """The test ids of each file long enough to split (:func:`~.plan.files_to_split`).

    A file that cannot be listed is left out (it runs as one process), with a ``warn``.
    """
    listed = {}
    for name in files_to_split(names, times, num_shards, jobs):
        tests = list_tests(sys.executable, test_dir, name)
        if tests is None:
            warn(f"could not list the tests of {name}; it runs as one process")
        else:
            listed[name] = tests
    return listed
