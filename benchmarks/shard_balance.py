"""How evenly ``run_test.py --shard i M`` splits the suite, planned and measured.

``plan`` prints, for M = 1..4, each shard's estimated seconds from the committed
``.test-times.json`` and the ratio max / mean (1.00 is perfect balance)::

    python benchmarks/shard_balance.py plan

``run`` runs the M shards one after the other (so they do not compete for the CPU), timing
each, then checks from their JUnit reports that every test ran exactly once. With
``--unsharded DIR`` (the ``test-reports/`` of a plain ``python run_test.py`` run) it also
checks that the shards' union is exactly the unsharded run's tests::

    python run_test.py --continue-through-error --save-xml /tmp/unsharded
    python benchmarks/shard_balance.py run --shards 2 --unsharded /tmp/unsharded

``check`` does the same for reports of shards run elsewhere (CI artifacts)::

    python benchmarks/shard_balance.py check shard-1/ shard-2/ --unsharded test-reports/

Exit status 1 when a test ran twice, a test is missing, or a shard's run failed.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from torch_testing_ext._engine.driver.discover import discover_tests
from torch_testing_ext._engine.driver.file_reports import read_file_runs
from torch_testing_ext._engine.driver.listing import list_splittable
from torch_testing_ext._engine.driver.plan import plan_shards
from torch_testing_ext._engine.driver.report import duration
from torch_testing_ext._engine.driver.times import load_times

ROOT = Path(__file__).resolve().parents[1]


def _ratio(loads: list[float]) -> float:
    mean = sum(loads) / len(loads)
    return max(loads) / mean if mean else 1.0


def plan(max_shards: int) -> int:
    times = load_times(ROOT / ".test-times.json")
    if times is None:
        print("no .test-times.json: nothing to balance", file=sys.stderr)
        return 1
    names = discover_tests(ROOT / "test")
    # List each file once (a --list imports torch): the files split for the most shards include
    # those split for fewer, and plan_shards ignores a listing it does not need.
    listed = list_splittable(ROOT / "test", names, times, max_shards, jobs=1,
                             warn=lambda message: print(message, file=sys.stderr))
    print(f"{len(names)} test files, committed times\n")
    print(f"{'M':>2}  {'max/mean':>8}  shard estimates")
    for num_shards in range(1, max_shards + 1):
        shards = plan_shards(names, times, num_shards, listed=listed)
        loads = [shard.seconds for shard in shards]
        covered = sorted({entry.name for shard in shards for entry in shard.entries})
        missing = "" if covered == sorted(names) else "  (NOT every file planned!)"
        estimates = ", ".join(f"{duration(s)} ({len(shard.entries)})"
                              for s, shard in zip(loads, shards, strict=True))
        print(f"{num_shards:>2}  {_ratio(loads):>8.2f}  {estimates}{missing}")
    return 0


def _test_ids(report_dir: Path) -> collections.Counter[tuple[str, str, str]]:
    """(file, class, test) of every test case a driver report recorded, counted."""
    runs, _ = read_file_runs(report_dir)
    return collections.Counter((run.name, case.class_name, case.name)
                               for run in runs for case in run.outcomes)


def check(shard_reports: list[Path], unsharded: Path | None) -> list[str]:
    """Print how often each test ran across the shards; return the problems found."""
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    for reports in shard_reports:
        counts += _test_ids(reports)
    twice = [test for test, count in counts.items() if count > 1]
    print(f"tests: {len(counts)} distinct, {sum(counts.values())} reported, "
          f"{len(twice)} reported more than once")
    problems = [f"ran {counts[test]} times: {test}" for test in sorted(twice)]
    if unsharded is not None:
        expected = set(_test_ids(unsharded))
        missing, extra = expected - set(counts), set(counts) - expected
        print(f"unsharded run: {len(expected)} tests; missing from the shards {len(missing)}, "
              f"only in the shards {len(extra)}")
        problems += [f"missing: {test}" for test in sorted(missing)]
        problems += [f"not in the unsharded run: {test}" for test in sorted(extra)]
    for problem in problems:
        print(f"  {problem}")
    return problems


def run(num_shards: int, unsharded: Path | None, work: Path) -> int:
    walls, failed = [], []
    for index in range(1, num_shards + 1):
        command = [sys.executable, "run_test.py", "--shard", str(index), str(num_shards),
                   "--continue-through-error", "--save-xml", str(work / f"shard-{index}")]
        print(f"running shard {index} of {num_shards} ...", flush=True)
        started = time.monotonic()
        code = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL).returncode
        walls.append(time.monotonic() - started)
        if code != 0:
            failed.append(f"shard {index} exited {code}")
    print(f"\nreports in {work}")
    for index, wall in enumerate(walls, 1):
        print(f"shard {index}: {duration(wall)}")
    print(f"max/mean: {_ratio(walls):.2f}")
    problems = check([work / f"shard-{i}" for i in range(1, num_shards + 1)], unsharded)
    for problem in failed:
        print(f"  {problem}")
    return 1 if problems or failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    plan_parser = commands.add_parser("plan", help="planned balance for M = 1..N")
    plan_parser.add_argument("--max-shards", type=int, default=4)
    run_parser = commands.add_parser("run", help="run M shards and check every test ran once")
    run_parser.add_argument("--shards", type=int, default=2)
    run_parser.add_argument("--unsharded", type=Path, help="report dir of an unsharded run")
    run_parser.add_argument("--work-dir", type=Path, help="where the shards' reports go")
    check_parser = commands.add_parser("check", help="check the reports of shards run elsewhere")
    check_parser.add_argument("shard_reports", type=Path, nargs="+", help="each shard's report dir")
    check_parser.add_argument("--unsharded", type=Path, help="report dir of an unsharded run")
    args = parser.parse_args()
    if args.command == "plan":
        return plan(args.max_shards)
    for directory in [args.unsharded, *getattr(args, "shard_reports", [])]:
        if directory is not None and not directory.is_dir():
            parser.error(f"no such directory: {directory}")
    if args.command == "check":
        return 1 if check(args.shard_reports, args.unsharded) else 0
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="shard-balance-"))
    return run(args.shards, args.unsharded, work)


if __name__ == "__main__":
    sys.exit(main())
