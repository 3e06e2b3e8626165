"""``--update-times``: measure a run's reports and merge the times into ``.test-times.json``.

::

    update_times(Path("test-reports"), Path(".test-times.json"))   # what --update-times does
    times = measure_runs(read_file_runs(Path("test-reports"))[0])  # the measuring alone
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from ..reporting.status import Status
from .file_reports import read_file_runs
from .results import FileRun
from .times import RecordedTimes, TimesFileError, load_times, merge_times, save_times
from .usage import PROG, UsageError, warn

__all__ = ["measure_runs", "update_times"]


def measure_runs(runs: Iterable[FileRun]) -> RecordedTimes:
    """Per-file, per-class and per-test seconds measured by the process runs of a report set.

    A file may have run as several processes (split by class, or in several shards). Its
    whole-file time is the sum of its test times plus one process's overhead (the mean of
    wall time minus test time over its runs), which is what running it in one process costs.
    Interrupted runs measured nothing and are left out; a timed-out run counts with the time
    it was given (a lower bound, better than no time at all). A flaky test counts with the
    time of its passing rerun: a hang that a rerun cured says nothing about the test's length.
    """
    test_seconds: dict[str, float] = {}
    overheads: dict[str, list[float]] = {}
    classes: dict[str, dict[str, float]] = {}
    tests: dict[str, dict[str, float]] = {}
    for run in runs:
        if run.status == Status.INTERRUPTED:
            continue
        spent = sum(outcome.seconds for outcome in run.outcomes)
        overheads.setdefault(run.name, []).append(max(0.0, run.wall_seconds - spent))
        per_class = classes.setdefault(run.name, {})
        per_test = tests.setdefault(run.name, {})
        for outcome in run.outcomes:
            seconds = run.rerun_seconds.get(outcome.selector, outcome.seconds)
            test_seconds[run.name] = test_seconds.get(run.name, 0.0) + seconds
            cls = outcome.class_name
            per_class[cls] = per_class.get(cls, 0.0) + seconds
            if "." in outcome.selector:  # a test, not a class- or module-level error
                per_test[outcome.selector] = per_test.get(outcome.selector, 0.0) + seconds
    times = RecordedTimes()
    for name, overhead in overheads.items():
        times.files[name] = test_seconds.get(name, 0.0) + sum(overhead) / len(overhead)
        if classes[name]:
            times.classes[name] = classes[name]
        if tests[name]:
            times.tests[name] = tests[name]
    return times


def update_times(report_dir: Path, times_path: Path) -> int:
    """Merge what the driver reports under ``report_dir`` measured into ``times_path``.

    Returns the exit status (1 if the file cannot be written); raises :class:`UsageError`
    when ``report_dir`` holds no driver report. An unusable times file is replaced, with a
    warning.
    """
    if not report_dir.is_dir():
        raise UsageError(f"--update-times: no such directory: {report_dir}")
    runs, ignored = read_file_runs(report_dir)
    if not runs:
        raise UsageError(f"--update-times: no {PROG} reports found under {report_dir}")
    try:
        old = load_times(times_path)
    except TimesFileError as error:
        warn(f"replacing unusable times file {times_path}: {error}")
        old = None
    measured = measure_runs(runs)
    try:
        save_times(times_path, merge_times(old, measured))
    except OSError as error:
        print(f"{PROG}: error: cannot write {times_path}: {error}", file=sys.stderr)
        return 1
    classes = sum(len(c) for c in measured.classes.values())
    tests = sum(len(t) for t in measured.tests.values())
    note = f"; ignored {len(ignored)} other XML files" if ignored else ""
    print(f"{PROG}: updated {times_path}: {len(measured.files)} files, {classes} classes, "
          f"{tests} tests from {len(runs)} process reports{note}")
    return 0
