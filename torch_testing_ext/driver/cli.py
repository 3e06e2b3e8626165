"""``run_test.py``'s command line: parse it, plan, run one shard, report, choose the exit status.

Exit status: 0 when everything passed (flaky tests allowed), 1 on a consistent failure, a
timeout or a crash, 2 on bad usage (one line on stderr, never a traceback), 130 after Ctrl-C
and 143 after SIGTERM. See ``docs/driver.md`` for the whole contract.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..reporting.status import Status
from ..run.arg_types import positive_int
from .discover import SelectionError, discover_tests, select_tests, source_path
from .execute import Executor, RunSettings
from .file_reports import report_path, write_file_report
from .listing import list_splittable
from .measure import update_times
from .plan import PlanEntry, ShardPlan, plan_shards
from .processes import become_subreaper, kill_orphans
from .report import Progress, plan_text, summary_text
from .results import EntryResult
from .times import RecordedTimes, TimesFileError, load_times
from .usage import PROG, OneLineParser, UsageError, warn

__all__ = ["build_parser", "build_plan", "main"]

DEFAULT_REPORT_DIR = "test-reports"
TIMES_FILE = ".test-times.json"


class _Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:  # also rejects nan
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def build_parser() -> OneLineParser:
    """The argument parser; arguments it does not know are passed through to every test file."""
    parser = OneLineParser(
        prog=PROG, allow_abbrev=False,
        description="Run the test files under test/, each in its own process, as one shard of a "
                    "sharded run. Unknown arguments are passed through to every test file.",
    )
    add = parser.add_argument
    add("-i", "--include", nargs="+", metavar="NAME", help="run only these test files "
        "(exact names: the path under test/ without .py, e.g. distributed/test_c10d_spawn_gloo)")
    add("-x", "--exclude", nargs="+", metavar="PREFIX", default=[],
        help="skip test files whose name starts with PREFIX")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--distributed-tests", dest="distributed", action="store_const", const=True,
                       help="run only the files under distributed/")
    which.add_argument("--exclude-distributed-tests", dest="distributed", action="store_const",
                       const=False, help="skip the files under distributed/")
    add("-k", dest="patterns", action="append", default=[], metavar="EXPR",
        help="passed to each test file: run only tests whose id contains EXPR")
    add("-v", "--verbose", action="store_true",
        help="passed to each test file; also print every file's output")
    add("--shard", nargs=2, type=int, metavar=("N", "M"), help="run shard N of M (1 <= N <= M)")
    add("-j", "--jobs", type=positive_int, default=1, metavar="N",
        help="run up to N non-distributed files at once (default 1); distributed/ files run alone")
    add("--timeout", type=_positive_seconds, metavar="SECONDS",
        help="per-process timeout (default: 5x the recorded time, at least 2 minutes; "
             "30 minutes when unknown)")
    add("--no-rerun", dest="rerun", action="store_false", help="do not rerun failed tests")
    add("--continue-through-error", "--keep-going", dest="keep_going", action="store_true",
        help="run everything even after a failure")
    add("--dry-run", action="store_true", help="print the plan of the selected shard and run nothing")
    add("--save-xml", default=DEFAULT_REPORT_DIR, metavar="DIR",
        help=f"where the JUnit XML reports go (default {DEFAULT_REPORT_DIR}/)")
    add("--update-times", nargs="?", const=DEFAULT_REPORT_DIR, metavar="DIR",
        help=f"merge the times measured by the reports in DIR (default {DEFAULT_REPORT_DIR}/) "
             f"into the times file, and run nothing")
    add("--test-dir", metavar="DIR", help="the test tree to run (default: test/ beside run_test.py)")
    add("--times-file", metavar="PATH",
        help=f"recorded times (default: {TIMES_FILE} in the directory that holds the test tree)")
    return parser


def _load_times(path: Path) -> RecordedTimes | None:
    try:
        times = load_times(path)
    except TimesFileError as error:
        warn(f"ignoring times file {path}: {error}; planning round-robin")
        return None
    if times is None:
        warn(f"no times file at {path}; planning round-robin")
    return times


def build_plan(
    test_dir: Path, names: Sequence[str], times: RecordedTimes | None, num_shards: int, jobs: int
) -> list[ShardPlan]:
    """The shards' plan, listing the tests of each file long enough to be split."""
    listed = list_splittable(test_dir, names, times, num_shards, jobs, warn)
    return plan_shards(names, times, num_shards, jobs=jobs, listed=listed)


class _Signals:
    """SIGINT/SIGTERM: stop the executor if one runs, else interrupt the planning."""

    def __init__(self) -> None:
        self.executor: Executor | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.executor is not None:
            self.executor.request_stop(signum)
        else:
            raise _Interrupted(signum)

    def install(self) -> None:
        signal.signal(signal.SIGINT, self)
        signal.signal(signal.SIGTERM, self)


def _validate(args: argparse.Namespace) -> tuple[int, int]:
    if args.shard is None:
        return 1, 1
    index, count = args.shard
    if count < 1:
        raise UsageError(f"--shard {index} {count}: M must be at least 1")
    if not 1 <= index <= count:
        raise UsageError(f"--shard {index} {count}: N must be between 1 and M={count}")
    return index, count


def main(argv: Sequence[str] | None = None, root: Path | None = None) -> int:
    """Run the command line ``argv``; returns the exit status. ``root`` holds ``test/``.

    Meant to own its process (``run_test.py``): it installs SIGINT/SIGTERM handlers, becomes
    a child subreaper and, on the way out, kills every descendant process that is left.
    """
    try:
        return _main(list(sys.argv[1:] if argv is None else argv), root or Path.cwd())
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except _Interrupted as interrupt:
        print(f"\n{PROG}: interrupted by {signal.Signals(interrupt.signum).name} while planning",
              file=sys.stderr)
        kill_orphans()
        return 128 + interrupt.signum


def _main(argv: list[str], root: Path) -> int:
    args, unknown = build_parser().parse_known_args(argv)
    shard_index, num_shards = _validate(args)
    test_dir = Path(args.test_dir) if args.test_dir else root / "test"
    if not test_dir.is_dir():
        raise UsageError(f"test directory not found: {test_dir}")
    # Absolute: test processes run in the tree's root, not in the caller's directory.
    test_dir = test_dir.resolve()
    times_path = Path(args.times_file) if args.times_file else test_dir.parent / TIMES_FILE
    if args.update_times is not None:
        return update_times(Path(args.update_times), times_path)
    try:
        names = select_tests(discover_tests(test_dir), args.include, args.exclude, args.distributed)
    except SelectionError as error:
        raise UsageError(str(error)) from None
    passthrough = [arg for pattern in args.patterns for arg in ("-k", pattern)]
    passthrough += ["-v"] * args.verbose + unknown
    signals = _Signals()
    signals.install()
    become_subreaper()
    times = _load_times(times_path)
    shards = build_plan(test_dir, names, times, num_shards, args.jobs)
    if args.dry_run:
        print(plan_text(shards, shard_index, args.jobs))
        return 0
    return _run(args, shards[shard_index - 1].entries, test_dir, passthrough, signals,
                f"shard {shard_index} of {num_shards}")


def _run(args: argparse.Namespace, entries: Sequence[PlanEntry], test_dir: Path,
         passthrough: list[str], signals: _Signals, shard_name: str) -> int:
    if not entries:
        print(f"{PROG}: {shard_name}: no test files to run")
        return 0
    report_dir = Path(args.save_xml)
    cwd = Path.cwd()

    def command_for(name: str, selection: Sequence[str]) -> str:
        path = os.path.relpath(source_path(test_dir, name), cwd)
        return shlex.join(["python", path, *selection, *passthrough])

    print(f"{PROG}: {shard_name}: {len(entries)} entries, jobs {args.jobs}, reports in {report_dir}/",
          flush=True)
    progress = Progress(entries, args.jobs, sys.stdout, verbose=args.verbose)
    by_file: dict[str, list[EntryResult]] = {}

    def finished(result: EntryResult) -> None:
        progress.entry_finished(result)
        by_file.setdefault(result.entry.name, []).append(result)
        source = os.path.relpath(source_path(test_dir, result.entry.name), cwd)
        write_file_report(report_path(report_dir, result.entry.name), by_file[result.entry.name], source)

    work_dir = Path(tempfile.mkdtemp(prefix="run_test-"))
    started = time.monotonic()
    try:
        settings = RunSettings(test_dir, work_dir, passthrough, args.jobs, args.timeout,
                               args.rerun, args.keep_going)
        executor = Executor(settings, on_finished=finished, on_rerun=progress.rerun_finished)
        signals.executor = executor
        execution = executor.run(entries)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    reason = ""
    if execution.interrupted_by is not None:
        reason = f" (interrupted by {signal.Signals(execution.interrupted_by).name})"
    elif execution.not_started:
        reason = " (stopped after the first failure; --keep-going runs everything)"
    print(summary_text(execution.results, execution.not_started, time.monotonic() - started,
                       command_for, reason), flush=True)
    if execution.interrupted_by is not None:
        return 128 + execution.interrupted_by
    return 1 if any(r.status != Status.PASSED for r in execution.results) else 0
