"""What one more small distributed test costs on each way of running ranks, ours and PyTorch's
own harness side by side, in one run.

The same test everywhere: 2 ranks, a gloo ``all_reduce`` of ones whose sum must be 2 (on
thread ranks the ``threaded`` group's). The ways, each written into a file of N such tests:

* ``fresh``: ``MultiProcessTestCase``, ranks started for every test; the test makes its group
  (``file://`` rendezvous) and PyTorch's test destroys it, as upstream tests do;
* ``kept``: ``MultiProcContinuousTest``, the class's ranks and group made once;
* ``threads``: ``MultiThreadedTestCase``, ranks as threads of the test's process;
* ``launched``: ours under ``torchrun --standalone --nproc-per-node 2`` (the launched processes
  are the ranks; a fresh rendezvous per test from ``rendezvous_init_method()``); PyTorch's
  harness spawns its own ranks and has no such mode;
* ``skipped``: ``MultiProcessTestCase`` tests skipped by ``skip_if_lt_x_gpu(8)``.

The cost of a test is ``marginal_cost``'s: the median time from one test's start to the next's
in the test's own process (rank 0's under torchrun), after the first test, which pays for
starting the class's ranks and is shown apart. Repeats are interleaved (each repeat runs every
file once, in a rotated order), so every figure shares the machine's load. Each file runs as a
marked run with a TMPDIR of its own; a file that does not pass all its tests stops the run, and
so does one of ours that leaves a process behind. It imports ``torch.testing._internal`` in
the files it writes: it measures us against it.

Usage::

    python benchmarks/per_test_cost.py [--tests 10] [--tests-spawn 4] [--repeats 3]
    python benchmarks/per_test_cost.py --only kept threads --tests 5 --repeats 1
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run from a checkout without installing the package; the self-tests' marked runs serve here too.
sys.path[:0] = [str(ROOT), str(ROOT / "test" / "harness")]

from marginal_cost import NOTE_STARTS, run_marked, test_gaps  # noqa: E402

OURS, THEIRS = "torch_testing_ext", "torch.testing._internal"
WAYS = ("fresh", "kept", "threads", "launched", "skipped")
SLOW = {("fresh", THEIRS), ("skipped", THEIRS)}  # seconds a test: these files get --tests-spawn

HEADER = '''
import torch
import torch.distributed as dist
from {pkg}.common_distributed import {base}, rendezvous_init_method, skip_if_lt_x_gpu
from {pkg}.common_utils import run_tests
{notes}

class Bench(NotesStarts, {base}):
    world_size = 2
{hooks}
'''
THEIR_IMPORTS = ("from {pkg}.common_distributed import {base}, rendezvous_init_method, skip_if_lt_x_gpu",
                 "from {pkg}.common_distributed import {base}, skip_if_lt_x_gpu")
FOOTER = '''

if __name__ == "__main__":
    run_tests()
'''
CHECK = "t = torch.ones(1)\n        dist.all_reduce(t)\n        assert t.item() == 2.0"
BODIES = {  # way: (base class, class hooks, one test with {i})
    "fresh": ("MultiProcessTestCase", "", '''
    def test_{i}(self):
        dist.init_process_group("gloo", init_method=f"file://{{self.file_name}}", rank=self.rank,
                                world_size=2)
        CHECK{destroy}
'''),
    "kept": ("MultiProcContinuousTest", '''
    @classmethod
    def backend_str(cls):
        return "gloo"
''', '''
    def test_{i}(self):
        CHECK
'''),
    "threads": ("MultiThreadedTestCase", '''
    def setUp(self):
        super().setUp()
        self._spawn_threads()
''', '''
    def test_{i}(self):
        CHECK
'''),
    "launched": ("MultiProcessTestCase", "", '''
    def test_{i}(self):
        dist.init_process_group("gloo", init_method=rendezvous_init_method(), rank=self.rank,
                                world_size=2)
        CHECK
'''),
    "skipped": ("MultiProcessTestCase", "", '''
    @skip_if_lt_x_gpu(8)
    def test_{i}(self):
        raise AssertionError("a skipped test ran")
'''),
}
SPAWN_HOOK = '''
    def setUp(self):
        super().setUp()
        self._spawn_processes()
'''
RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
RUN_TIMEOUT = 1800.0


def source(way: str, pkg: str, count: int) -> str:
    """The test file of ``count`` tests of ``way`` on harness package ``pkg``."""
    base, hooks, test = BODIES[way]
    if pkg == THEIRS and base == "MultiProcessTestCase":
        hooks += SPAWN_HOOK  # upstream tests start their ranks themselves
    destroy = "\n        dist.destroy_process_group()" if pkg == THEIRS else ""
    tests = "".join(test.replace("CHECK", CHECK).format(i=i, destroy=destroy) for i in range(count))
    header = HEADER.format(pkg=pkg, base=base, notes=NOTE_STARTS, hooks=hooks)
    if pkg == THEIRS:  # upstream has no rendezvous_init_method; the file does not need it
        header = header.replace(THEIR_IMPORTS[0].format(pkg=pkg, base=base),
                                THEIR_IMPORTS[1].format(pkg=pkg, base=base))
    return header + tests + FOOTER


def command(way: str, path: str) -> list[str]:
    """The arguments of ``python`` that run the file ``path`` of ``way``."""
    if way == "launched":
        return ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", path]
    return [path]


def run_file(way: str, pkg: str, path: str, count: int) -> tuple[float, list[float]]:
    """The first test's time and the start-to-start times of the others, from one run."""
    status, output, left = run_marked(command(way, path), RUN_TIMEOUT)
    ran = RAN.findall(output)
    if status != 0 or not ran or any(n != str(count) for n in ran):
        raise SystemExit(f"{way}, {pkg}: {path} did not pass its {count} tests (exit {status}); "
                         f"its output ends:\n{output[-3000:]}")
    if left:
        note = f"{way}, {pkg}: {path} left {len(left)} processes behind (killed)"
        if pkg == OURS:
            raise SystemExit(note)
        print(f"  note: {note}", flush=True)
    return test_gaps(output, count)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=10, help="tests in each file (10)")
    parser.add_argument("--tests-spawn", type=int, default=4,
                        help="tests in PyTorch's fresh and skipped files, seconds each (4)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each file, interleaved (3)")
    parser.add_argument("--only", nargs="+", choices=WAYS, default=list(WAYS), help="ways to measure")
    args = parser.parse_args(argv)
    if min(args.tests, args.tests_spawn) < 3 or args.repeats < 1:
        parser.error("need --tests >= 3, --tests-spawn >= 3 and --repeats >= 1")
    return args


def _git_head() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def _seconds(values: list[float]) -> str:
    if not values:
        return "n/a"
    median = statistics.median(values)
    return f"{median * 1000:.1f} ms" if median < 1 else f"{median:.2f} s"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    import torch  # after the arguments: a bad command line fails fast

    runs = [(way, pkg) for way in args.only for pkg in (OURS, THEIRS) if (way, pkg) != ("launched", THEIRS)]
    counts = {run: args.tests_spawn if run in SLOW else args.tests for run in runs}
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = os.getloadavg()[0]
    print(f"{started}; torch {torch.__version__}; commit {_git_head()}; {os.cpu_count()} CPUs; "
          f"load {load_before:.2f} at the start", flush=True)
    gaps: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    firsts: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    with tempfile.TemporaryDirectory(prefix="per-test-cost-") as directory:
        paths = {}
        for way, pkg in runs:
            paths[way, pkg] = os.path.join(directory, f"bench_{way}_{pkg.split('.')[0]}.py")
            Path(paths[way, pkg]).write_text(source(way, pkg, counts[way, pkg]))
        for repeat in range(args.repeats):
            order = runs[repeat % len(runs):] + runs[:repeat % len(runs)]
            for run in order:
                first, rest = run_file(*run, paths[run], counts[run])
                firsts[run].append(first)
                gaps[run] += rest
                print(f"  repeat {repeat + 1}: {run[0]:<8} {run[1]:<24} first {first:6.2f} s, "
                      f"then {_seconds(rest)} a test", flush=True)
    print(f"load {os.getloadavg()[0]:.2f} at the end\n")
    print("| 2-rank all_reduce test | ours, per test | PyTorch's, per test | ratio | ours, first test | PyTorch's, first test |")
    print("|---|---|---|---|---|---|")
    for way in args.only:
        ours, theirs = gaps.get((way, OURS), []), gaps.get((way, THEIRS), [])
        ratio = (f"{statistics.median(theirs) / statistics.median(ours):.0f}x"
                 if ours and theirs and statistics.median(ours) > 0 else "n/a")
        print(f"| {way} | {_seconds(ours)} | {_seconds(theirs)} | {ratio} | "
              f"{_seconds(firsts.get((way, OURS), []))} | {_seconds(firsts.get((way, THEIRS), []))} |")
    print(f"\npython benchmarks/per_test_cost.py {' '.join(argv)}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
