"""What one more small distributed test costs on each way of running ranks, ours and PyTorch's
own harness (``torch.testing._internal``) side by side, all measured in one run.

The same test everywhere: 2 ranks, ``dist.all_reduce`` of ``torch.ones(1)``, asserting the sum
is 2 (gloo; on thread ranks the ``threaded`` group). The ways, each a file of N such tests:

* ``fresh``: ``MultiProcessTestCase``, new ranks for every test; the test makes its group with
  ``init_process_group(self.backend, init_method=f"file://{self.file_name}", ...)`` (PyTorch's
  class has no ``backend``: its file sets ``backend = "gloo"`` and spawns in ``setUp``, as
  upstream tests do);
* ``kept``: ``MultiProcContinuousTest``, the class's ranks and gloo group made once;
* ``threads``: ``MultiThreadedTestCase``, ranks as threads of the test's process;
* ``launched``: ours under ``torchrun --standalone --nproc-per-node 2`` (the launched processes
  are the ranks; each test makes its group with ``rendezvous_init_method()``). PyTorch's
  harness spawns its own ranks: n/a;
* ``skipped``: ``MultiProcessTestCase`` tests skipped by ``skip_if_lt_x_gpu(8)``.

The cost of a test is ``marginal_cost``'s: the median time from one test's start to the next's,
noted in the test's own process (rank 0's under torchrun), leaving out the first test, whose
time (the class's or ranks' start-up) is shown apart. Repeats are interleaved: each repeat runs
every file once, in an order rotated by one, so all figures share the machine's load. Each file
runs as a marked run (``process_tree.marked_run``: its own TMPDIR, and every process it starts is
killed when it ends, on Ctrl-C too); a file that does not pass all its tests stops the run with
its output, and so does one of ours that leaves a process behind. Progress goes to stderr; the
report (a header line, a markdown table, the command) to stdout.

Usage::

    python benchmarks/per_test_cost.py [--tests 10] [--repeats 3]
    python benchmarks/per_test_cost.py --only kept threads --tests 5 --repeats 1
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run from a checkout without installing the package.
sys.path.insert(0, str(ROOT))

from marginal_cost import NOTE_STARTS, run_marked, test_gaps  # noqa: E402

OURS, THEIRS = "torch_testing_ext", "torch.testing._internal"
WAYS = {  # name: (base class, the table's label)
    "fresh": ("MultiProcessTestCase", "fresh ranks per test"),
    "kept": ("MultiProcContinuousTest", "ranks kept for the class"),
    "threads": ("MultiThreadedTestCase", "ranks as threads"),
    "launched": ("MultiProcessTestCase", "launched ranks (`torchrun`)"),
    "skipped": ("MultiProcessTestCase", "skipped by `skip_if_lt_x_gpu(8)`, fresh ranks"),
}
TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
RUN_TIMEOUT = 1200.0  # seconds for one file
ByRun = dict[tuple[str, str], list[float]]  # (way, harness): seconds

FILE = '''
import os
import torch
import torch.distributed as dist
from {pkg}.common_distributed import {imports}
from {pkg}.common_utils import run_tests
{notes}{rank0_only}

class Bench(NotesStarts, {base}):
    world_size = 2
{hooks}{tests}

if __name__ == "__main__":
    run_tests()
'''
RANK0_ONLY = '''
if os.environ.get("RANK", "0") != "0":  # launched: only rank 0 prints its test starts
    _atexit.unregister(_print_starts)
'''
GLOO_GROUP = '''
    @classmethod
    def backend_str(cls):
        return "gloo"
'''
THEIR_FRESH = '''
    backend = "gloo"

    def setUp(self):
        super().setUp()
        self._spawn_processes()
'''
THEIR_THREADS = '''
    def setUp(self):
        super().setUp()
        self._spawn_threads()
'''
HOOKS = {  # (way, harness): the class body before the tests
    ("kept", OURS): GLOO_GROUP, ("kept", THEIRS): GLOO_GROUP,
    ("fresh", THEIRS): THEIR_FRESH, ("skipped", THEIRS): THEIR_FRESH,
    ("threads", THEIRS): THEIR_THREADS,
}
INIT = {"fresh": 'f"file://{self.file_name}"', "launched": "rendezvous_init_method()"}
GROUP = '''
        dist.init_process_group(self.backend, init_method=INIT, rank=self.rank,
                                world_size=self.world_size)'''
CHECK = '''
        t = torch.ones(1)
        dist.all_reduce(t)
        assert t.item() == 2.0
'''
SKIPPED = '''
    @skip_if_lt_x_gpu(8)
    def test_NUMBER(self):
        raise AssertionError("a skipped test ran")
'''
RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)


def source(way: str, pkg: str, count: int) -> str:
    """The test file of ``count`` tests of ``way`` on the harness package ``pkg``."""
    base = WAYS[way][0]
    group = GROUP.replace("INIT", INIT[way]) if way in INIT else ""  # else the harness made it
    test = SKIPPED if way == "skipped" else f"\n    def test_NUMBER(self):{group}{CHECK}"
    imports = f"{base}, skip_if_lt_x_gpu" + (", rendezvous_init_method" if way == "launched" else "")
    return FILE.format(pkg=pkg, imports=imports, notes=NOTE_STARTS, base=base,
                       rank0_only=RANK0_ONLY if way == "launched" else "",
                       hooks=HOOKS.get((way, pkg), ""),
                       tests="".join(test.replace("NUMBER", str(i)) for i in range(count)))


def run_file(way: str, pkg: str, path: str, count: int) -> tuple[float, list[float]]:
    """The first test's time and the start-to-start times of the others, from one run of the
    file; SystemExit (with the file's output) unless it passed all ``count`` tests."""
    argv = [*TORCHRUN, path] if way == "launched" else [path]
    status, output, left = run_marked(argv, RUN_TIMEOUT)
    ran = RAN.findall(output)  # under torchrun, one line per rank
    if status != 0 or not ran or any(n != str(count) for n in ran):
        raise SystemExit(f"{way}, {pkg}: {shlex.join(argv)} did not pass its {count} tests "
                         f"(exit {status}); its output:\n{output[-6000:]}")
    if left:
        note = f"{way}, {pkg}: {path} left {len(left)} processes behind (killed)"
        if pkg == OURS:
            raise SystemExit(note)
        print(f"  note: {note}", file=sys.stderr, flush=True)
    return test_gaps(output, count)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=10, help="tests in each file, at least 3 (10)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each file, interleaved (3)")
    parser.add_argument("--only", nargs="+", choices=list(WAYS), metavar="NAME",
                        help=f"measure only these ways ({', '.join(WAYS)})")
    args = parser.parse_args(argv)
    if args.tests < 3 or args.repeats < 1:
        parser.error("need --tests >= 3 and --repeats >= 1")
    return args


def git_head() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def seconds(values: list[float]) -> str:
    return f"{statistics.median(values):.3g}" if values else "n/a"


def ratio(theirs: list[float], ours: list[float]) -> str:
    if not theirs or not ours or statistics.median(ours) <= 0:
        return "n/a"
    times = statistics.median(theirs) / statistics.median(ours)
    return f"{times:.0f}x" if times >= 10 else f"{times:.1f}x"


def measure(args: argparse.Namespace, directory: str) -> tuple[ByRun, ByRun]:
    """Every (way, harness) file run ``args.repeats`` times, interleaved: the first tests'
    times and the pooled start-to-start times after them, by (way, harness)."""
    ways = [way for way in WAYS if not args.only or way in args.only]
    runs = [(way, pkg) for way in ways for pkg in (OURS, THEIRS) if (way, pkg) != ("launched", THEIRS)]
    paths = {}
    for way, pkg in runs:
        paths[way, pkg] = os.path.join(directory, f"bench_{way}_{pkg.split('.')[0]}.py")
        Path(paths[way, pkg]).write_text(source(way, pkg, args.tests))
    firsts: ByRun = {run: [] for run in runs}
    gaps: ByRun = {run: [] for run in runs}
    for repeat in range(args.repeats):
        shift = repeat % len(runs)
        for way, pkg in runs[shift:] + runs[:shift]:
            first, rest = run_file(way, pkg, paths[way, pkg], args.tests)
            firsts[way, pkg].append(first)
            gaps[way, pkg] += rest
            print(f"  repeat {repeat + 1}/{args.repeats}: {way:8} {pkg:23} first test {first:7.3f} s, "
                  f"then {statistics.median(rest):.4f} s a test", file=sys.stderr, flush=True)
    return firsts, gaps


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # SIGTERM as Ctrl-C: the marked run in progress is killed, temporary files removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load_at_start, commit = os.getloadavg()[0], git_head()
    with tempfile.TemporaryDirectory(prefix="per-test-cost-") as directory:
        firsts, gaps = measure(args, directory)
    print(f"{started}; torch {importlib.metadata.version('torch')}; commit {commit}; "
          f"{os.cpu_count()} CPUs; load (1 min) {load_at_start:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end; {args.tests} tests a file, "
          f"{args.repeats} interleaved repeat(s)\n")
    print("| 2-rank all_reduce test | ours, per test (s) | PyTorch's, per test (s) "
          "| ratio (PyTorch's / ours) | ours, first test (s) | PyTorch's, first test (s) |")
    print("|---|---|---|---|---|---|")
    for way, (_, label) in WAYS.items():
        if (way, OURS) not in gaps:
            continue
        ours, theirs = (way, OURS), (way, THEIRS)
        print(f"| {label} | {seconds(gaps[ours])} | {seconds(gaps.get(theirs, []))} | "
              f"{ratio(gaps.get(theirs, []), gaps[ours])} | {seconds(firsts[ours])} | "
              f"{seconds(firsts.get(theirs, []))} |")
    print(f"\n{shlex.join(['python', sys.argv[0], *argv])}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("interrupted: the file running was stopped, its processes killed", file=sys.stderr)
        sys.exit(130)
