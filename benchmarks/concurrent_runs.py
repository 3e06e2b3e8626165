"""Concurrent runs on one machine: do they all pass, collide, or leave processes behind?

Three scenarios, each started at once and watched to the end:

- ``files``: ``--runs`` (default 4) concurrent ``python test/<file>.py`` runs of each file in
  ``--files`` (default ``distributed/_composable/test_replicate`` and
  ``distributed/test_c10d_spawn_gloo``), one table row per file;
- ``driver``: ``--runs`` concurrent ``python run_test.py --shard i N --save-xml DIR_i``
  (i = 1..N, N = ``--runs``), each with its own report directory; ``--driver-include`` and
  ``--driver-exclude`` are passed on as ``-i``/``-x`` to keep it short on a small machine
  (default: the multi-process files other than the Dynamo one);
- ``xdist``: ``python -m pytest -n 2 -k <--xdist-k> <--xdist-files>`` (pytest-xdist: each
  worker is a test process with its own fork server; default: ``test/distributed`` without
  its longest Dynamo tests).

Every run gets its own empty TMPDIR and a fresh marker in an environment variable that every
process it starts inherits. While the runs go, ``/proc`` is polled for every process carrying
a marker (the test processes, fork servers, resource trackers, ranks, xdist workers...). Once
a run has exited, its processes must be gone from the process table, zombies included, within
``EXIT_BOUND`` (1 s); whatever is still there is counted as left (and killed at the end). The
run's TMPDIR must be empty. Torch's inductor cache is kept outside the TMPDIRs and shared, as
concurrent jobs on one machine share it (the part of it that torch always puts in
``$TMPDIR/torchinductor_<user>`` is torch's, and not counted).

Collisions: runs whose output (and JUnit reports) mention EADDRINUSE, "Address already in use",
a store or rendezvous error, a missing or existing file of the multiprocessing machinery, or a
socket path too long to bind.

Usage:

    python benchmarks/concurrent_runs.py                       # all three scenarios
    python benchmarks/concurrent_runs.py --scenario files      # only the file runs
    python benchmarks/concurrent_runs.py --scenario driver --driver-include all
    python benchmarks/concurrent_runs.py --scenario xdist --xdist-k ''   # every distributed test
    python benchmarks/concurrent_runs.py --keep                # keep logs, reports and TMPDIRs

It prints one table row per scenario (runs; tests passed, failed, skipped; collisions;
processes seen and left 1 s after exit; TMPDIR entries left; wall time), then each run's
details, and exits 1 if any run failed, collided or left anything behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run from a checkout without installing the package.
sys.path.insert(0, str(ROOT))

from torch_testing_ext._engine.process_tree.marked_run import EXIT_BOUND, MarkedRun, watch_all  # noqa: E402

# Not the self-tests' marker: the driver scenario runs the self-tests that start marked runs,
# and what those start must still carry this marker.
MARKER_ENV = "TTE_CONCURRENT_RUN_MARKER"
TAIL_LINES = 12  # lines of a failed run's output shown
# Torch's own on-disk inductor cache: parts of it ignore TORCHINDUCTOR_CACHE_DIR and always go to
# $TMPDIR/torchinductor_<user> (torch 2.13). It is torch's, kept on purpose, so not counted.
TORCH_CACHE = "torchinductor_"
DEFAULT_FILES = ["distributed/_composable/test_replicate", "distributed/test_c10d_spawn_gloo"]
# Four concurrent shards of the whole suite take far too long on a 2-core machine (the Dynamo
# file alone is ~6 min of CPU). By default the driver runs every multi-process file except
# that one: the other distributed files and the harness's multi-process self-tests.
DEFAULT_DRIVER_INCLUDE = [
    "distributed/_composable/test_replicate",
    "harness/fresh/test_multiprocess_test_case",
    "distributed/test_c10d_spawn",
    "distributed/test_c10d_spawn_gloo",
    "harness/fresh/test_fork_server",
    "harness/dynamo_bases/test_dynamo_distributed_cases",
    "harness/testcase/test_ranks_testcase",
    "harness/fresh/test_rank_process",
    "harness/process_tree/test_nothing_outlives",
    "harness/fresh/test_concurrent_runs",
]
DEFAULT_XDIST_FILES = ["test/distributed"]
# Likewise pytest -n 2 on all of test/distributed takes ~7 min here; by default it leaves out
# the Dynamo file's longest tests (BERT models, autotuning, layout optimizations: ~4 min).
DEFAULT_XDIST_K = "not hf_bert and not autotune and not layout_optimizations"

COLLISION = re.compile(
    r"EADDRINUSE|Address already in use|Errno 98\b|DistNetworkError|DistStoreError"
    r"|server socket has failed to (listen|bind)|Connection refused|ECONNREFUSED"
    r"|Timed? ?out waiting for (key|store|rendezvous)|wait timeout after|Socket Timeout"
    r"|FileExistsError|FileNotFoundError: .*(torch_testing_ext-|pymp-|listener-|/store\b)"
    r"|ConnectionRefusedError|rendezvous.*(error|fail|timed? ?out)|AF_UNIX path too long",
    re.IGNORECASE,
)
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
UNITTEST_VERDICT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.MULTILINE)
PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)\b")
DRIVER_SUMMARY = re.compile(r"^summary: (\d+) passed, (\d+) failed, (\d+) skipped", re.MULTILINE)


@dataclasses.dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped)


def unittest_counts(output: str) -> Counts | None:
    """Counts from unittest's closing lines (``Ran 17 tests`` and ``OK (skipped=4)``)."""
    ran, verdict = UNITTEST_RAN.findall(output), UNITTEST_VERDICT.findall(output)
    if not ran or not verdict:
        return None
    details = dict(item.strip().split("=") for item in verdict[-1][1].split(",") if "=" in item)
    failed = int(details.get("failures", 0)) + int(details.get("errors", 0))
    skipped = int(details.get("skipped", 0))
    others = int(details.get("expected failures", 0)) + int(details.get("unexpected successes", 0))
    return Counts(int(ran[-1]) - failed - skipped - others, failed, skipped)


def pytest_counts(output: str) -> Counts | None:
    """Counts from pytest's last summary line (``22 passed, 6 skipped in 17.90s``)."""
    lines = [line for line in output.splitlines() if PYTEST_COUNT.search(line) and " in " in line]
    if not lines:
        return None
    found = {kind: int(n) for n, kind in PYTEST_COUNT.findall(lines[-1])}
    failed = found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0)
    return Counts(found.get("passed", 0), failed, found.get("skipped", 0))


def driver_counts(output: str) -> Counts | None:
    """Counts from run_test.py's closing line (``summary: 40 passed, 0 failed, 3 skipped``)."""
    found = DRIVER_SUMMARY.findall(output)
    return Counts(*map(int, found[-1])) if found else None


@dataclasses.dataclass
class Run:
    """One ``python`` command, started as a :class:`MarkedRun` (its own TMPDIR and marker), and
    what was seen of it."""

    label: str
    args: list[str]  # what python runs
    directory: Path  # its TMPDIR (tmp/), output (output.log) and reports
    parse: Callable[[str], Counts | None]  # the counts in its output
    reports: Path | None = None
    marked: MarkedRun | None = None  # from start() on
    left: list[int] | None = None  # EXIT_BOUND s after its exit; None: not known
    returncode: int | None = None  # from here on, filled in by conclude()
    counts: Counts | None = None
    collisions: list[str] = dataclasses.field(default_factory=list)
    tmp_left: list[str] = dataclasses.field(default_factory=list)
    tail: list[str] = dataclasses.field(default_factory=list)

    def start(self, inductor_cache: str) -> None:
        self.directory.mkdir(parents=True)
        self.marked = MarkedRun(*self.args, keep_in=self.directory, inductor_cache=inductor_cache,
                                cwd=ROOT, marker_env=MARKER_ENV)

    def conclude(self, returncode: int, output: str, left: list | None) -> None:
        """Note how it ended and read what it produced (before its directory is removed)."""
        self.returncode = returncode
        # None from watch_all: still going after the timeout and the kill's wait.
        self.left = None if left is None else [pid for pid, _info in left]
        self.counts = self.parse(output)
        self.tail = output.splitlines()[-TAIL_LINES:]
        texts = [output]
        if self.reports is not None:
            texts += [p.read_text(errors="replace") for p in sorted(self.reports.rglob("*.xml"))]
        # Lines of its output and reports that look like a port, store or file collision.
        self.collisions = [line.strip() for text in texts for line in text.splitlines()
                           if COLLISION.search(line)]
        self.tmp_left = sorted(name for name in os.listdir(self.marked.tmpdir)
                               if not name.startswith(TORCH_CACHE))

    def command(self, pid: int) -> str:
        seen = self.marked.seen.get(pid)
        return seen.command if seen else "?"

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and self.counts is not None and self.counts.failed == 0

    @property
    def clean(self) -> bool:
        return self.passed and self.left == [] and not (self.collisions or self.tmp_left)


@dataclasses.dataclass
class Scenario:
    name: str
    runs: list[Run]
    note: str = ""
    wall: float = 0.0


def file_scenarios(args: argparse.Namespace, work: Path) -> list[Scenario]:
    scenarios = []
    for name in args.files:
        script = f"test/{name}.py"
        runs = [Run(f"{Path(name).name} #{i}", [script], work / f"{Path(name).name}-{i}",
                    unittest_counts) for i in range(1, args.runs + 1)]
        scenarios.append(Scenario(f"{args.runs} x {script}", runs))
    return scenarios


def driver_scenario(args: argparse.Namespace, work: Path) -> Scenario:
    selection = []
    if args.driver_include != ["all"]:
        selection += ["-i", *args.driver_include]
    if args.driver_exclude:
        selection += ["-x", *args.driver_exclude]
    runs = []
    for i in range(1, args.runs + 1):
        directory = work / f"driver-{i}"
        reports = directory / "reports"
        command = ["run_test.py", "--shard", str(i), str(args.runs), "--save-xml", str(reports),
                   "--continue-through-error", *selection]
        runs.append(Run(f"shard {i}/{args.runs}", command, directory, driver_counts, reports))
    note = ("whole suite" if args.driver_include == ["all"] else
            f"subset: -i {' '.join(args.driver_include)}") + (
            f" -x {' '.join(args.driver_exclude)}" if args.driver_exclude else "")
    return Scenario(f"{args.runs} x run_test.py --shard i {args.runs}", runs, note)


def xdist_scenario(args: argparse.Namespace, work: Path) -> Scenario:
    # -p no:cacheprovider: the pytest run must not write .pytest_cache into the checkout.
    selection = ["-k", args.xdist_k] if args.xdist_k else []
    # --basetemp: pytest keeps its base temp directory on purpose; keep it out of the TMPDIR.
    command = ["-m", "pytest", "-n", str(args.xdist_workers), "-q", "-p", "no:cacheprovider",
               f"--basetemp={work / 'xdist' / 'pytest-basetemp'}", *selection, *args.xdist_files]
    runs = [Run(f"pytest -n {args.xdist_workers}", command, work / "xdist", pytest_counts)]
    note = f"subset: -k {shlex.quote(args.xdist_k)}" if args.xdist_k else "every test"
    return Scenario(f"pytest -n {args.xdist_workers} {' '.join(args.xdist_files)}", runs, note)


def run_scenario(scenario: Scenario, args: argparse.Namespace, inductor_cache: str) -> None:
    print(f"== {scenario.name}" + (f"  ({scenario.note})" if scenario.note else ""), flush=True)
    started = time.monotonic()
    try:
        for run in scenario.runs:
            run.start(inductor_cache)
        results = watch_all([run.marked for run in scenario.runs], args.timeout, args.poll)
        for run, result in zip(scenario.runs, results, strict=True):
            run.conclude(*result)
    finally:
        for run in scenario.runs:
            if run.marked is not None:
                run.marked.close()  # leave nothing of ours behind, whatever was found
    scenario.wall = time.monotonic() - started
    for run in scenario.runs:
        counts, marked = run.counts, run.marked
        shown = "?" if counts is None else f"{counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped"
        print(f"  {run.label}: exit {run.returncode}, {shown}, {len(marked.seen)} processes seen, "
              f"{_count(run.left)} left, {marked.exited_at - marked.started_at:.1f} s", flush=True)


def _count(pids: list[int] | None) -> str:
    return "?" if pids is None else str(len(pids))


def table(scenarios: list[Scenario]) -> str:
    header = ("scenario", "runs", "passed", "failed", "skipped", "collisions", "procs seen",
              "procs left 1 s after exit", "tmp left", "wall")
    rows = [header]
    for s in scenarios:
        counts = [run.counts for run in s.runs]
        total = sum((c for c in counts if c is not None), Counts())
        unknown = sum(c is None for c in counts)
        failed = f"{total.failed}" + (f" (+{unknown} unparsed)" if unknown else "")
        ok_runs = sum(run.passed for run in s.runs)
        rows.append((s.name, f"{ok_runs}/{len(s.runs)} ok", str(total.passed), failed, str(total.skipped),
                     str(sum(bool(run.collisions) for run in s.runs)),
                     str(sum(len(run.marked.seen) for run in s.runs)),
                     _count(None if any(run.left is None for run in s.runs)
                            else [pid for run in s.runs for pid in run.left or []]),
                     str(sum(len(run.tmp_left) for run in s.runs)), f"{s.wall:.0f} s"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def details(scenarios: list[Scenario]) -> str:
    lines = []
    for s in scenarios:
        for run in s.runs:
            problems = []
            if not run.passed:
                problems.append(f"failed (exit {run.returncode}); the end of its output:")
                problems += [f"  | {line}" for line in run.tail]
            problems += [f"collision? {line[:200]}" for line in run.collisions[:5]]
            if run.left is None:
                problems.append("still running after the timeout and the kill: what it left is not known")
            problems += [f"left: pid {pid}: {run.command(pid)[:200]}" for pid in run.left or []]
            problems += [f"left in TMPDIR: {name}" for name in run.tmp_left[:10]]
            if problems:
                lines.append(f"{s.name} / {run.label}: {shlex.join(run.marked.argv)}")
                lines += [f"    {p}" for p in problems]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", nargs="+", choices=("files", "driver", "xdist"),
                        default=["files", "driver", "xdist"], help="which scenarios to run (default: all)")
    parser.add_argument("--runs", type=int, default=4, help="concurrent runs (and shards) per scenario")
    parser.add_argument("--files", nargs="+", default=DEFAULT_FILES, metavar="NAME",
                        help="test files for the 'files' scenario (path under test/ without .py)")
    parser.add_argument("--driver-include", nargs="+", default=DEFAULT_DRIVER_INCLUDE, metavar="NAME",
                        help="passed as -i to run_test.py ('all': the whole suite)")
    parser.add_argument("--driver-exclude", nargs="+", default=[], metavar="PREFIX",
                        help="passed as -x to run_test.py")
    parser.add_argument("--xdist-files", nargs="+", default=DEFAULT_XDIST_FILES, metavar="PATH",
                        help="what 'pytest -n' runs (default: test/distributed)")
    parser.add_argument("--xdist-k", default=DEFAULT_XDIST_K, metavar="EXPR",
                        help="pytest -k EXPR for the 'xdist' scenario ('': every test)")
    parser.add_argument("--xdist-workers", type=int, default=2, help="pytest -n N")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per scenario before killing")
    parser.add_argument("--poll", type=float, default=0.05, help="seconds between /proc scans")
    parser.add_argument("--keep", action="store_true", help="keep logs, reports and TMPDIRs")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.xdist_workers < 1:
        parser.error("--runs and --xdist-workers must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Torch's inductor cache lives in the default temp dir; keep it there (shared and warm),
    # not in each run's TMPDIR.
    inductor_cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"torchinductor_{getpass.getuser()}")
    work = Path(tempfile.mkdtemp(prefix="concurrent_runs-"))
    scenarios = []
    if "files" in args.scenario:
        scenarios += file_scenarios(args, work)
    if "driver" in args.scenario:
        scenarios.append(driver_scenario(args, work))
    if "xdist" in args.scenario:
        scenarios.append(xdist_scenario(args, work))
    started = time.monotonic()
    try:
        for scenario in scenarios:
            run_scenario(scenario, args, inductor_cache)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.keep:
        print(f"\nlogs, reports and TMPDIRs kept in {work}")
    print()
    print(table(scenarios))
    for scenario in scenarios:
        if scenario.note:
            print(f"{scenario.name}: {scenario.note}")
    print(f"total {time.monotonic() - started:.0f} s; processes left = still in the process table "
          f"(zombies included) {EXIT_BOUND:g} s after the run exited")
    problems = details(scenarios)
    if problems:
        print("\nProblems:\n" + problems)
    return 0 if all(run.clean for s in scenarios for run in s.runs) else 1


if __name__ == "__main__":
    sys.exit(main())
