"""The driver's command line: parse it, plan, run one shard, report, choose the exit status.

``python -m torch_testing_ext.run_test [PATH ...]`` (or the ``tte-run-test`` script, or this
repository's ``run_test.py``). Exit status: 0 when everything passed (flaky tests allowed), 1 on
a consistent failure, a timeout or a crash, 2 on bad usage (one line on stderr, never a
traceback), 5 when the test directory holds no test file, 130 after Ctrl-C and 143 after
SIGTERM. See ``docs/driver.md`` for the whole contract.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..reporting.status import Status
from ..runner.arg_types import positive_int
from .discover import NoTestsError, SelectionError, TestTree, find_tests, select_tests, source_path
from .execute import Executor, ShardSettings
from .file_reports import report_path, write_file_report
from .listing import list_splittable
from .measure import update_times
from .plan import PlanEntry, ShardPlan, plan_shards
from .processes import become_subreaper, kill_orphans
from .report import Progress, counted, plan_text, summary_text
from .results import EntryResult
from .runners import FileKind, TestArgs, file_kind, shown_command
from .times import RecordedTimes, TimesFileError, load_times
from .usage import PROG, OneLineParser, UsageError, warn

__all__ = ["build_parser", "build_plan", "main", "NO_TESTS_STATUS"]

DEFAULT_REPORT_DIR = "test-reports"
TIMES_FILE = ".test-times.json"
NO_TESTS_STATUS = 5  # as pytest's exit status when it collected no test


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
        description="Run test files, each in its own process, as one shard of a sharded run. "
                    "Options the driver does not know are passed through to every test file "
                    "(with their value as --opt=value), and so is everything after --.",
    )
    add = parser.add_argument
    add("paths", nargs="*", metavar="PATH",
        help="test files and directories (default: test/); a directory's test_*.py files run")
    add("-i", "--include", nargs="+", metavar="NAME", help="run only these test files "
        "(exact names: the path under the test root without .py, e.g. distributed/test_c10d_spawn_gloo)")
    add("-x", "--exclude", nargs="+", metavar="PREFIX", default=[],
        help="skip test files whose name starts with PREFIX")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--distributed-tests", dest="distributed", action="store_const", const=True,
                       help="run only the files of distributed/ directories")
    which.add_argument("--exclude-distributed-tests", dest="distributed", action="store_const",
                       const=False, help="skip the files of distributed/ directories")
    add("-k", dest="patterns", action="append", default=[], metavar="EXPR",
        help="passed to each test file: run only tests whose id contains EXPR")
    add("-v", "--verbose", action="store_true",
        help="passed to each test file; also print every file's output")
    script = parser.add_argument_group("passed to each file that calls run_tests() (not to pytest files)")
    script.add_argument("--seed", metavar="N", help="seed for every test's setUp")
    script.add_argument("--repeat", metavar="N", help="run each file's tests N times")
    script.add_argument("--accept", action="store_true", help="accept new expecttest output")
    script.add_argument("--use-pytest", action="store_true", help="run the file under pytest")
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
    add("--test-dir", metavar="DIR", help="the test tree: test names are paths under it "
        "(default: the directory that holds every PATH, else test/)")
    add("--times-file", metavar="PATH",
        help=f"recorded times (default: {TIMES_FILE} in the directory that holds the test tree)")
    return parser


def _load_times(path: Path, num_shards: int) -> RecordedTimes | None:
    """The recorded times; a corrupt file is a warning, and so is a missing one when the run
    is one of several shards (only a sharded plan needs the times to be balanced)."""
    try:
        times = load_times(path)
    except TimesFileError as error:
        warn(f"ignoring times file {path}: {error}; planning round-robin")
        return None
    if times is None and num_shards > 1:
        warn(f"no times file at {path}; planning round-robin")
    return times


def build_plan(
    test_dir: Path, names: Sequence[str], times: RecordedTimes | None, num_shards: int, jobs: int,
    kinds: dict[str, FileKind] | None = None,
) -> list[ShardPlan]:
    """The shards' plan, listing the tests of each file long enough to be split (files that
    run under pytest are not split)."""
    splittable = [name for name in names if (kinds or {}).get(name, FileKind.SCRIPT) is FileKind.SCRIPT]
    listed = list_splittable(test_dir, splittable, times, num_shards, jobs, warn)
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


def _split_passthrough(argv: list[str]) -> tuple[list[str], list[str]]:
    """The driver's own arguments, and what follows ``--`` (for every test file as it is)."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


def _test_args(args: argparse.Namespace, unknown: list[str], after: list[str]) -> TestArgs:
    script_only = [arg for option, value in (("--seed", args.seed), ("--repeat", args.repeat))
                   if value is not None for arg in (option, value)]
    script_only += ["--accept"] * args.accept + ["--use-pytest"] * args.use_pytest
    return TestArgs(tuple(args.patterns), args.verbose, tuple(script_only), tuple(unknown + after))


def _find(args: argparse.Namespace, root: Path, unknown: list[str]) -> TestTree:
    try:
        return find_tests(args.paths, Path(args.test_dir) if args.test_dir else None, root / "test")
    except SelectionError as error:
        hint = ""
        if unknown and "no such file" in str(error):
            hint = (f" (an option the driver does not know, such as {unknown[0]}, takes its value "
                    "as --opt=value, or after --)")
        raise UsageError(f"{error}{hint}") from None


def _check_pytest_is_there(test_dir: Path, kinds: dict[str, FileKind]) -> None:
    pytest_files = [name for name, kind in kinds.items() if kind is FileKind.PYTEST]
    if pytest_files and importlib.util.find_spec("pytest") is None:
        raise UsageError(f"{source_path(test_dir, pytest_files[0])} runs under pytest (its __main__ does "
                         "not call run_tests()), and pytest is not installed: pip install pytest")


def _main(argv: list[str], root: Path) -> int:
    own, after = _split_passthrough(argv)
    args, unknown = build_parser().parse_known_intermixed_args(own)
    shard_index, num_shards = _validate(args)
    if args.update_times is not None and not args.paths:
        test_root = Path(args.test_dir) if args.test_dir else root / "test"
        times_path = Path(args.times_file) if args.times_file else test_root.absolute().parent / TIMES_FILE
        return update_times(Path(args.update_times), times_path)
    try:
        tree = _find(args, root, unknown)
    except NoTestsError as error:
        print(f"{PROG}: {error}; nothing to run", file=sys.stderr)
        return NO_TESTS_STATUS
    # Absolute: test processes run in the tree's parent, not in the caller's directory.
    test_dir = tree.root
    times_path = Path(args.times_file) if args.times_file else test_dir.parent / TIMES_FILE
    if args.update_times is not None:
        return update_times(Path(args.update_times), times_path)
    try:
        names = select_tests(tree.names, args.include, args.exclude, args.distributed)
    except SelectionError as error:
        raise UsageError(str(error)) from None
    kinds = {name: file_kind(source_path(test_dir, name)) for name in names}
    _check_pytest_is_there(test_dir, kinds)
    signals = _Signals()
    signals.install()
    become_subreaper()
    times = _load_times(times_path, num_shards)
    shards = build_plan(test_dir, names, times, num_shards, args.jobs, kinds)
    if args.dry_run:
        print(plan_text(shards, shard_index, args.jobs))
        return 0
    return _run(args, shards[shard_index - 1].entries, test_dir, kinds,
                _test_args(args, unknown, after), signals, f"shard {shard_index} of {num_shards}")


def _run(args: argparse.Namespace, entries: Sequence[PlanEntry], test_dir: Path,
         kinds: dict[str, FileKind], test_args: TestArgs, signals: _Signals, shard_name: str) -> int:
    if not entries:
        print(f"{PROG}: {shard_name}: no test files to run")
        return 0
    report_dir = Path(args.save_xml)
    cwd = Path.cwd()

    def command_for(name: str, selection: Sequence[str]) -> str:
        path = os.path.relpath(source_path(test_dir, name), cwd)
        return shown_command(path, kinds[name], selection, test_args)

    files = len({entry.name for entry in entries})
    processes = f" in {len(entries)} processes" if len(entries) != files else ""
    print(f"{PROG}: {shard_name}: {counted(files, 'test file')}{processes}, jobs {args.jobs}, "
          f"reports in {report_dir}/", flush=True)
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
        settings = ShardSettings(test_dir, work_dir, test_args, args.jobs, args.timeout,
                               args.rerun, args.keep_going, kinds=kinds)
        executor = Executor(settings, on_finished=finished, on_rerun=progress.rerun_finished,
                            on_reruns_queued=progress.reruns_started)
        signals.executor = executor
        execution = executor.run(entries)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    reason = ""
    if execution.interrupted_by is not None:
        reason = f" (interrupted by {signal.Signals(execution.interrupted_by).name})"
    elif execution.not_started:
        reason = " (stopped after the first failure; --keep-going runs them)"
    print(summary_text(execution.results, execution.not_started, time.monotonic() - started,
                       command_for, reason), flush=True)
    if execution.interrupted_by is not None:
        return 128 + execution.interrupted_by
    return 1 if any(r.status != Status.PASSED for r in execution.results) else 0
